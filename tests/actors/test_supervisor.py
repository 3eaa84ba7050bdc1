"""The supervisor (ARCHITECTURE.md "Actors"): a crashed actor is logged and restarted with jittered backoff, readiness
is reported once, `Fatal` is not restarted, and an actor that returns is done."""

import logging

import pytest
import trio
import trio.testing

from svc.actors import Fatal, backoff, supervise
from svc.actors._supervisor import BACKOFF_MAX, BACKOFF_MIN


def test_backoff_grows_exponentially_with_jitter_and_is_capped():
    for failures in range(1, 12):
        nominal = min(BACKOFF_MAX, BACKOFF_MIN * 2 ** (failures - 1))
        delays = {backoff(failures) for _ in range(50)}
        assert all(nominal / 2 <= delay <= nominal for delay in delays)
        assert len(delays) > 1  # jittered
    assert backoff(100) <= BACKOFF_MAX


async def test_a_crashing_actor_is_restarted_and_each_crash_logged(caplog, autojump_clock):
    starts: list[float] = []

    async def flaky(*, task_status=trio.TASK_STATUS_IGNORED):
        starts.append(trio.current_time())
        task_status.started()
        if len(starts) < 4:
            raise RuntimeError(f"crash {len(starts)}")
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        await nursery.start(supervise, "flaky", flaky)
        await trio.sleep(60)
        nursery.cancel_scope.cancel()

    assert len(starts) == 4
    gaps = [later - earlier for earlier, later in zip(starts, starts[1:], strict=False)]
    for failures, gap in enumerate(gaps, start=1):
        nominal = BACKOFF_MIN * 2 ** (failures - 1)
        assert nominal / 2 <= gap <= nominal
    crashes = [r for r in caplog.records if r.name == "svc.actors" and r.levelno == logging.ERROR]
    assert [r.getMessage().split(";")[0] for r in crashes] == [
        "actor flaky crashed (RuntimeError: crash 1)",
        "actor flaky crashed (RuntimeError: crash 2)",
        "actor flaky crashed (RuntimeError: crash 3)",
    ]
    assert crashes[0].exc_info is not None  # the first crash of a series carries its traceback


async def test_readiness_is_reported_once_after_the_first_start(autojump_clock):
    started_count = 0

    async def actor(*, task_status=trio.TASK_STATUS_IGNORED):
        nonlocal started_count
        started_count += 1
        task_status.started()
        if started_count < 3:
            raise RuntimeError("again")
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        await nursery.start(supervise, "actor", actor)
        assert started_count == 1
        await trio.sleep(60)
        nursery.cancel_scope.cancel()
    assert started_count == 3


async def test_fatal_is_not_restarted(caplog):
    calls = 0

    async def fatal(*, task_status=trio.TASK_STATUS_IGNORED):
        nonlocal calls
        calls += 1
        task_status.started()
        raise Fatal("the database does not fit the configuration")

    with pytest.RaisesGroup(Fatal, allow_unwrapped=True, flatten_subgroups=True):
        async with trio.open_nursery() as nursery:
            await nursery.start(supervise, "fatal", fatal)
    assert calls == 1
    assert "actor fatal failed and cannot be restarted" in caplog.text


async def test_an_actor_that_returns_is_done(caplog):
    caplog.set_level(logging.INFO, logger="svc.actors")

    async def once(*, task_status=trio.TASK_STATUS_IGNORED):
        task_status.started()

    async with trio.open_nursery() as nursery:
        await nursery.start(supervise, "once", once)
    assert "actor once finished" in caplog.text
