"""The scale-out drill (issue 20) as a test: three `svc run` processes on one primary and one streaming standby,
under mixed load for about 24 seconds while one instance is SIGKILLed and started again, the standby is stopped and
started again and then its replay paused for 2 s, lose no acknowledged write, miss no read-your-write (X-WAL-Position sent back as
X-Min-WAL-Position to another instance), lose no change event, deliver each cron slot once with no gap, and answer
no 5xx but 503. Throughput is the bench's business (bench/drill.py): here only that both read phases measured."""

from contextlib import nullcontext

import pytest
import trio

from tests.support.drill import run_drill
from tests.support.standby import Standby

pytestmark = pytest.mark.slow
DATABASE_FIXTURES = ["drill.sql"]


async def test_three_instances_lose_nothing_through_a_kill_and_a_standby_restart(
    tmp_path, database_url, standby: Standby
):
    with trio.fail_after(100):  # about 40 s on two cores; the drill's own waits are bounded too
        figures = await run_drill(
            database_url,
            tmp_path,
            seconds=24,
            concurrency=8,
            phase_seconds=3,
            drain_timeout=30,
            standby=lambda _: nullcontext(standby),
            progress=print,
        )
    report = figures.text()
    print(report)
    assert figures.reads_per_second_1 > 0 and figures.reads_per_second_3 > 0, report
    assert figures.acknowledged > 0 and figures.ryw_checks > 0, report
    assert figures.acknowledged_lost == [], report
    assert figures.without_position == 0, report  # every committed write answers its X-WAL-Position
    assert figures.ryw_while_paused > 0, report  # some checks met a standby behind their write
    assert figures.ryw_misses == [], report
    assert figures.ryw_unanswered == 0, report
    assert figures.rows_inserted >= figures.acknowledged, report
    assert figures.events_lost == [], report
    assert figures.bad_signatures == 0, report
    assert figures.cron_slots >= 10, report
    assert figures.cron_gaps == [] and figures.cron_slot_duplicates == [], report
    assert figures.duplicates_not_from_kill == [], report  # duplicates by webhook-id only from deliveries in flight
    assert figures.status_5xx == {}, report
    assert figures.unexpected == [], report
