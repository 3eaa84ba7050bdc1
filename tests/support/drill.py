"""The scale-out drill (issue 20), shared by `bench/drill.py` (figures for bench/RESULTS.md) and
`tests/replicas/test_drill.py` (the invariants): three `svc run` processes on loopback, one primary and one streaming
standby (`DATABASE_REPLICA_URLS`), mixed load from Trio + httpx clients, one instance SIGKILLed and started again,
the standby stopped and started again, then its replay paused for 2 s (read-your-writes against a lagging standby).

`run_drill` measures and records; it asserts nothing. What it gathers (`Figures`):

- reads/s of a list query with one instance, then with three, each in its own phase with the same client count;
- writes (`createNote`, a unique body per write, the client's own key): acknowledged = 200 without errors; each one's
  `X-WAL-Position` is sent back as `X-Min-WAL-Position` on a read of that key from another instance
  (read-your-writes), and at the end every acknowledged key is looked for in the primary;
- a write whose request went out and got no answer (connection reset by the kill) is *unknown*: not acknowledged, and
  not retried (it may have committed; its row, if any, must still have its event);
- every row the drill inserted has its insert event at the webhook receiver, signatures verified with
  `standardwebhooks`; duplicates by `webhook-id` are counted and told apart: a duplicate whose first delivery reached
  the receiver before the kill was in flight at the kill (the lease of a dead instance expires and another delivers
  again), any other is not;
- a cron schedule firing every second: each slot between the first and the last is delivered once (gaps, slots with
  more than one event, duplicates by `webhook-id`);
- every HTTP status the clients saw (5xx other than 503 must not happen; 503 is counted on its own).

A client whose instance refuses the connection tries the next instance; reads are also tried again on the next
instance after a 503 or a reset. Bounded everywhere: each phase runs for its seconds, each request has a timeout,
every wait for the service is under `trio.fail_after` or `trio.move_on_after`.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
import signal
import socket
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import attrs
import httpx
import psycopg
import trio
import yaml

from tests.support.process import SVC, ServiceProcess, service_process
from tests.support.receiver import Received, Slow, running_receiver

SECRET = "whsec_" + base64.b64encode(b"drill-secret-key-of-issue-20").decode()
#: The PostgreSQL text form of an LSN, as the contract fixes it for X-Min-WAL-Position.
LSN = re.compile(r"^[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}$")
#: The list the readers ask for, over and over.
LIST = "{ notes(first: 20, orderBy: [ROW_ID_DESC]) { rowId body createdAt } }"
CREATE = "mutation($body: String!) { createNote(input: {body: $body}) { note { rowId body } } }"
BY_BODY = "query($body: String!) { noteByBody(body: $body) { rowId } }"
#: Connection failures before anything was sent: the same request may go to another instance.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
#: Failures after the request went out: a write's outcome is unknown.
NO_ANSWER = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadTimeout, httpx.WriteTimeout)
#: How many unexpected answers are kept verbatim for the report.
SAMPLES = 8


def free_port() -> int:
    """A loopback port free now; an instance keeps it across its restart so clients find it again."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def config(receiver_url: str, port: int) -> dict[str, Any]:
    """One instance's svc.yaml: events on notes (inserts) and a cron slot every second to the receiver; replica
    health checked every second, so a standby that comes back is in the rotation again within the drill."""
    return {
        "server": {"host": "127.0.0.1", "port": port, "shutdown_timeout": "2s"},
        "database": {"pool_size": 6, "replicas": {"health_interval": "1s"}},
        "events": {
            "poll_interval": "1s",
            # A dead instance's claims come back after the lease; longer than the target timeout, so a live
            # instance's slow delivery is never claimed twice.
            "lease": "5s",
            "concurrency": 16,
            "retry": {"attempts": 10, "initial": "200ms", "max": "1s"},
            "targets": {"default": {"url": receiver_url, "secret_env": "DRILL_SECRET", "timeout": "4s"}},
            "schedules": {"tick": {"cron": "* * * * * *", "payload": {"kind": "tick"}}},
        },
        "entities": {"notes": {"events": {"operations": ["insert"]}}},
    }


@attrs.define
class Figures:
    """What one drill saw. Times are seconds from the start of the mixed phase."""

    seconds: float
    concurrency: int
    reads_per_second_1: float = 0.0
    reads_per_second_3: float = 0.0
    #: Transactions on the standby's and on the primary's database during the two read phases: where reads went.
    phase_transactions: tuple[int, int] = (0, 0)
    #: CPU the drill's own process (clients and receiver) used in each read phase, in cores: near 1, the phase
    #: measured the clients rather than the service.
    client_cores: tuple[float, float] = (0.0, 0.0)
    reads: int = 0
    read_failovers: int = 0
    writes: int = 0
    acknowledged: int = 0
    unknown: int = 0
    rejected: int = 0
    write_failovers: int = 0
    acknowledged_lost: list[str] = attrs.Factory(list)
    without_position: int = 0
    ryw_checks: int = 0
    ryw_misses: list[str] = attrs.Factory(list)
    ryw_unanswered: int = 0
    ryw_while_paused: int = 0
    rows_inserted: int = 0
    events_delivered: int = 0
    events_lost: list[str] = attrs.Factory(list)
    event_duplicates: int = 0
    cron_slots: int = 0
    cron_first: str = ""
    cron_last: str = ""
    cron_gaps: list[str] = attrs.Factory(list)
    cron_slot_duplicates: list[str] = attrs.Factory(list)
    cron_duplicates: int = 0
    duplicates_not_from_kill: list[str] = attrs.Factory(list)
    bad_signatures: int = 0
    statuses: Counter[int] = attrs.Factory(Counter)
    unexpected: list[str] = attrs.Factory(list)
    timeline: dict[str, float] = attrs.Factory(dict)
    #: Acknowledged keys and their X-WAL-Position (not in the summary).
    acknowledged_keys: dict[str, str | None] = attrs.Factory(dict)
    replica_states: dict[str, Any] = attrs.Factory(dict)
    logs: list[Path] = attrs.Factory(list)

    @property
    def status_503(self) -> int:
        return self.statuses[503]

    @property
    def status_5xx(self) -> dict[int, int]:
        """5xx answers other than 503, by status."""
        return {code: n for code, n in sorted(self.statuses.items()) if code >= 500 and code != 503}

    def summary(self) -> list[tuple[str, str]]:
        """(figure, value) pairs, in the order the bench prints them."""
        t = self.timeline
        return [
            ("reads/s, 1 instance", f"{self.reads_per_second_1:.0f}"),
            ("reads/s, 3 instances", f"{self.reads_per_second_3:.0f}"),
            (
                "transactions in the read phases",
                f"standby {self.phase_transactions[0]}, primary {self.phase_transactions[1]}",
            ),
            ("client CPU in the read phases", " / ".join(f"{c:.2f} cores" for c in self.client_cores)),
            ("mixed phase", f"{self.seconds:g} s, {self.concurrency} clients"),
            ("reads (mixed phase)", f"{self.reads} ({self.read_failovers} tried again on another instance)"),
            (
                "writes",
                f"{self.writes}: {self.acknowledged} acknowledged, {self.unknown} unknown, {self.rejected} rejected "
                f"({self.write_failovers} sent to another instance after a refused connection)",
            ),
            ("acknowledged writes lost", str(len(self.acknowledged_lost))),
            (
                "read-your-writes misses",
                f"{len(self.ryw_misses)} of {self.ryw_checks} checks ({self.ryw_while_paused} while replay was "
                f"paused, {self.ryw_unanswered} unanswered, "
                f"{self.without_position} acknowledged without X-WAL-Position)",
            ),
            ("rows inserted / insert events delivered", f"{self.rows_inserted} / {self.events_delivered}"),
            ("events lost", str(len(self.events_lost))),
            ("event duplicates (by webhook-id)", str(self.event_duplicates)),
            (
                "cron slots",
                f"{self.cron_slots} ({self.cron_first} .. {self.cron_last}), {len(self.cron_gaps)} gaps, "
                f"{len(self.cron_slot_duplicates)} slots twice, {self.cron_duplicates} duplicates by webhook-id",
            ),
            ("duplicates not in flight at the kill", str(len(self.duplicates_not_from_kill))),
            ("bad signatures", str(self.bad_signatures)),
            ("503 answers", str(self.status_503)),
            ("other 5xx answers", str(sum(self.status_5xx.values()))),
            ("statuses", ", ".join(f"{code}: {n}" for code, n in sorted(self.statuses.items()))),
            (
                "timeline",
                ", ".join(f"{name} {at:.1f} s" for name, at in t.items()),
            ),
            ("replicas at the end", ", ".join(f"{k}: {v}" for k, v in self.replica_states.items()) or "-"),
        ]

    def text(self) -> str:
        lines = [f"{name}: {value}" for name, value in self.summary()]
        lines += [f"unexpected: {u}" for u in self.unexpected]
        return "\n".join(lines)


def payload_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON object of a GraphQL answer; empty when the body is not one (a proxy's or server's error page)."""
    try:
        payload = response.json()
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}


def answered(response: httpx.Response, field: str) -> tuple[bool, Any]:
    """(200 with data and no errors, the value of `field` in data)."""
    payload = payload_of(response)
    data = payload.get("data")
    if response.status_code != 200 or payload.get("errors") or not isinstance(data, dict) or field not in data:
        return False, None
    return True, data[field]


class NoAnswer(Exception):
    """The request went out and no answer came back (the instance died or reset the connection)."""


class AllDown(Exception):
    """No instance took the connection."""


class Instance:
    """One `svc run` process directory and port; started again on the same port after a kill."""

    def __init__(self, name: str, directory: Path, port: int, env: dict[str, str]) -> None:
        self.name = name
        self.directory = directory
        self.port = port
        self.env = env
        self.url = f"http://127.0.0.1:{port}"
        self.process: ServiceProcess | None = None
        self.lives = 0
        self.logs: list[Path] = []

    async def life(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the process until it exits (killed, or stopped by `stop`), started once it is ready."""
        self.lives += 1
        log = self.directory / f"svc-{self.lives}.log"
        self.logs.append(log)
        try:
            async with service_process([SVC, "run"], cwd=self.directory, env=self.env) as process:
                self.process = process
                await ready(self.url, process)
                task_status.started()
                await process.exited.wait()
        finally:
            if self.process is not None:
                log.write_text(self.process.log)

    async def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait(timeout=10)

    async def stop(self) -> None:
        if self.process is not None and self.process.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            with trio.move_on_after(10):
                await self.process.wait(timeout=10)


async def ready(url: str, process: ServiceProcess, timeout: float = 30.0) -> None:
    """Wait until the instance answers /ready with 200 (it listens before it has read the schema)."""
    async with httpx.AsyncClient(timeout=2) as client:
        with trio.fail_after(timeout):
            while True:
                if process.exited.is_set():
                    raise RuntimeError(f"{url} exited before it was ready:\n{process.log[-3000:]}")
                try:
                    if (await client.get(f"{url}/ready")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await trio.sleep(0.1)


class Load:
    """The clients: one httpx client per instance, the instances in play, and what they saw."""

    def __init__(self, instances: list[Instance], figures: Figures, run_id: str) -> None:
        self.instances = instances
        self.clients = {
            i.name: httpx.AsyncClient(
                base_url=i.url,
                timeout=httpx.Timeout(10.0, connect=2.0),
                limits=httpx.Limits(max_connections=64, max_keepalive_connections=64),
            )
            for i in instances
        }
        self.figures = figures
        self.run_id = run_id
        self.targets: list[Instance] = []
        #: While the standby's replay is paused (read-your-writes checks then count in `ryw_while_paused`).
        self.paused = False

    async def aclose(self) -> None:
        for client in self.clients.values():
            await client.aclose()

    def note(self, what: str) -> None:
        if len(self.figures.unexpected) < SAMPLES:
            self.figures.unexpected.append(what)

    async def post(self, start: int, body: dict[str, Any], headers: dict[str, str] | None = None):
        """POST /graphql to the instance `start` of the targets, or the next ones when the connection is refused:
        (index of the instance that answered, response, instances skipped). NoAnswer when it went out unanswered."""
        targets = self.targets
        for skipped in range(len(targets)):
            index = (start + skipped) % len(targets)
            try:
                response = await self.clients[targets[index].name].post("/graphql", json=body, headers=headers)
            except NOT_SENT:
                continue
            except NO_ANSWER as error:
                raise NoAnswer(f"{targets[index].name}: {type(error).__name__}") from error
            self.figures.statuses[response.status_code] += 1
            return index, response, skipped
        raise AllDown

    async def read_list(self, start: int) -> tuple[bool, int]:
        """One list read, tried on the next instance after a refused connection, a reset or a 503: (answered with
        data, instances tried again)."""
        again = 0
        for attempt in range(2 * len(self.targets)):
            try:
                _, response, skipped = await self.post(start + attempt, {"query": LIST})
            except (NoAnswer, AllDown):
                again += 1
                await trio.sleep(0.02)
                continue
            again += skipped
            if response.status_code == 503:
                again += 1
                continue
            ok, notes = answered(response, "notes")
            if ok and notes is not None:
                return True, again
            self.note(f"list read: {response.status_code} {response.text[:300]}")
            return False, again
        return False, again

    async def reader(self, k: int, until: float, counts: list[int]) -> None:
        n = 0
        while trio.current_time() < until:
            ok, again = await self.read_list(k + n)
            n += 1
            if ok:
                counts[0] += 1
            counts[1] += again

    async def writer(self, k: int, until: float) -> None:
        figures = self.figures
        n = 0
        while trio.current_time() < until:
            n += 1
            key = f"drill-{self.run_id}-w{k}-{n}"
            figures.writes += 1
            try:
                index, response, skipped = await self.post(k + n, {"query": CREATE, "variables": {"body": key}})
            except NoAnswer:
                figures.unknown += 1
                continue
            except AllDown:
                figures.rejected += 1
                await trio.sleep(0.1)
                continue
            figures.write_failovers += skipped
            ok, created = answered(response, "createNote")
            if not ok or not created:
                figures.rejected += 1
                if response.status_code != 503:
                    self.note(f"write: {response.status_code} {response.text[:300]}")
                continue
            position = response.headers.get("x-wal-position")
            figures.acknowledged += 1
            figures.acknowledged_keys[key] = position
            if position is None or not LSN.match(position):
                figures.without_position += 1
                if position is not None:
                    self.note(f"write: malformed X-WAL-Position {position!r}")
                continue
            await self.read_your_write(index + 1, key, position)

    async def read_your_write(self, start: int, key: str, position: str) -> None:
        """Read `key` back from another instance (the next one) with X-Min-WAL-Position: it must be there."""
        figures = self.figures
        figures.ryw_checks += 1
        figures.ryw_while_paused += self.paused
        headers = {"X-Min-WAL-Position": position}
        for attempt in range(2 * len(self.targets)):
            try:
                _, response, _ = await self.post(
                    start + attempt, {"query": BY_BODY, "variables": {"body": key}}, headers
                )
            except (NoAnswer, AllDown):
                await trio.sleep(0.02)
                continue
            if response.status_code == 503:
                continue
            ok, note = answered(response, "noteByBody")
            if ok:
                if note is None:
                    figures.ryw_misses.append(f"{key} at {position}")
                return
            self.note(f"read-your-write: {response.status_code} {response.text[:300]}")
            break
        figures.ryw_unanswered += 1


async def measure_reads(load: Load, targets: list[Instance], seconds: float, concurrency: int) -> tuple[float, float]:
    """Reads/s of `concurrency` readers on `targets` for `seconds` (answered with data only), and the cores this
    process used meanwhile."""
    load.targets = targets
    counts = [0, 0]
    started, cpu = trio.current_time(), time.process_time()
    until = started + seconds
    async with trio.open_nursery() as nursery:
        for k in range(concurrency):
            nursery.start_soon(load.reader, k, until, counts)
    elapsed = trio.current_time() - started
    return counts[0] / elapsed, (time.process_time() - cpu) / elapsed


async def replica_states(instances: list[Instance]) -> dict[str, Any]:
    """`/health` replicas of each live instance: {instance: [state of each replica]} (None: no `replicas` member)."""
    states: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=3) as client:
        for instance in instances:
            try:
                health = (await client.get(f"{instance.url}/health")).json()
            except (httpx.TransportError, ValueError):
                states[instance.name] = "no answer"
                continue
            replicas = health.get("replicas")
            states[instance.name] = None if replicas is None else [r.get("state") for r in replicas]
    return states


def default_standby(primary_url: str) -> AbstractContextManager[Any]:
    from tests.support.standby import standby  # imported when used: the bench starts without it

    return standby(primary_url)


def database_rows(database_url: str) -> list[str]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        return [body for (body,) in conn.execute("select body from app_public.notes").fetchall()]


def transactions(url: str) -> int:
    """Transactions ended in the database of `url` so far (the statistics lag by up to a second)."""
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        conn.execute("select pg_stat_clear_snapshot()")
        row = conn.execute(
            "select xact_commit + xact_rollback from pg_stat_database where datname = current_database()"
        ).fetchone()
    assert row is not None
    return row[0]


def pending_before(database_url: str, cutoff: dt.datetime) -> int:
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(
            "select count(*) from svc_events.outbox where state <> 'delivered' and created_at <= %s", [cutoff]
        ).fetchone()
    assert row is not None
    return row[0]


async def run_drill(
    database_url: str,
    workdir: Path,
    *,
    seconds: float = 60.0,
    concurrency: int = 16,
    phase_seconds: float = 5.0,
    drain_timeout: float = 60.0,
    answer_after: float = 0.2,
    standby: Callable[[str], AbstractContextManager[Any]] = default_standby,
    progress: Callable[[str], None] = lambda _: None,
) -> Figures:
    """The drill on `database_url` (a database on 127.0.0.1:5432 loaded with tests/fixtures/drill.sql), the
    instances' directories and logs under `workdir`: `phase_seconds` of reads on one instance, as long on three,
    then `seconds` of mixed load with the kill and the standby restart, then the wait (at most `drain_timeout`)
    for every event. The receiver answers each delivery after `answer_after` seconds, so that some are in flight
    when the instance is killed. `standby(database_url)` makes the streaming standby (tests/support/standby.py)."""
    figures = Figures(seconds=seconds, concurrency=concurrency)
    seed = set(database_rows(database_url))
    async with running_receiver(lambda _: Slow(answer_after)) as receiver:
        with standby(database_url) as replica:
            progress(f"standby on port {replica.port}")
            env = {"DATABASE_URL": database_url, "DATABASE_REPLICA_URLS": replica.url_for(database_url),
                   "DRILL_SECRET": SECRET}  # fmt: skip
            instances = []
            for name in "abc":
                directory = workdir / name
                directory.mkdir(parents=True, exist_ok=True)
                port = free_port()
                (directory / "svc.yaml").write_text(yaml.safe_dump(config(receiver.url, port)))
                instances.append(Instance(name, directory, port, env))
            drill = Drill(Load(instances, figures, f"{int(time.time()) % 100000:05d}"), replica, receiver)
            try:
                async with trio.open_nursery() as lives:
                    try:
                        await drill.run(
                            lives, database_url=database_url, seed=seed, phase_seconds=phase_seconds,
                            drain_timeout=drain_timeout, progress=progress,
                        )  # fmt: skip
                    finally:
                        with trio.CancelScope(shield=True):
                            for instance in instances:
                                await instance.stop()
                        lives.cancel_scope.cancel()
            finally:
                await drill.load.aclose()
                figures.logs = [log for i in instances for log in i.logs]
        received = list(receiver.received)
    rows = set(database_rows(database_url))
    tally(figures, received, seed=seed, rows=rows, kill_clock=drill.kill_clock, cutoff=drill.cutoff)
    return figures


@attrs.define
class Drill:
    load: Load
    replica: Any
    receiver: Any
    #: trio.current_time() of the SIGKILL (the receiver's arrival times are on the same clock).
    kill_clock: float = float("inf")
    #: When the load stopped: every event created before it must be delivered.
    cutoff: dt.datetime = attrs.Factory(lambda: dt.datetime.now(dt.UTC))

    async def run(
        self, lives: trio.Nursery, *, database_url: str, seed: set[str], phase_seconds: float,
        drain_timeout: float, progress: Callable[[str], None],
    ) -> None:  # fmt: skip
        load, figures = self.load, self.load.figures
        a, b, c = load.instances
        concurrency, seconds = figures.concurrency, figures.seconds
        await lives.start(a.life)
        progress(f"instance a ready on {a.url}")
        standby_url = self.replica.url_for(database_url)
        before = [await trio.to_thread.run_sync(transactions, url) for url in (standby_url, database_url)]
        figures.reads_per_second_1, one = await measure_reads(load, [a], phase_seconds, concurrency)
        progress(f"reads/s with 1 instance: {figures.reads_per_second_1:.0f}")
        for instance in (b, c):
            await lives.start(instance.life)
        progress(f"instances b, c ready on {b.url}, {c.url}")
        figures.reads_per_second_3, three = await measure_reads(load, [a, b, c], phase_seconds, concurrency)
        figures.client_cores = (one, three)
        progress(f"reads/s with 3 instances: {figures.reads_per_second_3:.0f}")
        after = [await trio.to_thread.run_sync(transactions, url) for url in (standby_url, database_url)]
        figures.phase_transactions = (after[0] - before[0], after[1] - before[1])

        load.targets = [a, b, c]
        started = trio.current_time()
        until = started + seconds
        writers = max(1, concurrency // 4)
        counts = [0, 0]

        def mark(name: str) -> None:
            figures.timeline[name] = trio.current_time() - started
            progress(f"{figures.timeline[name]:5.1f} s: {name}")

        async def chaos() -> None:
            await trio.sleep_until(started + 0.25 * seconds)
            mark("kill b")
            self.kill_clock = trio.current_time()
            await b.kill()
            await trio.sleep(1.0)  # down for a moment: clients meet refused connections
            mark("start b")
            await lives.start(b.life)
            mark("b ready")
            await trio.sleep_until(started + 0.55 * seconds)
            mark("stop standby")
            await trio.to_thread.run_sync(self.replica.stop)
            await trio.sleep(2.0)
            mark("start standby")
            await trio.to_thread.run_sync(self.replica.start)
            mark("standby started")
            # A standby that streams on loopback is only milliseconds behind: without a pause, a read that ignored
            # X-Min-WAL-Position would still find its write. Paused, it does not (unless it goes to the primary).
            await trio.sleep_until(started + 0.8 * seconds)
            mark("pause replay")
            load.paused = True
            await trio.to_thread.run_sync(self.replica.pause_replay)
            await trio.sleep(2.0)
            await trio.to_thread.run_sync(self.replica.resume_replay)
            load.paused = False
            mark("resume replay")

        mark("mixed load")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(chaos)
            for k in range(writers):
                nursery.start_soon(load.writer, k, until)
            for k in range(concurrency - writers):
                nursery.start_soon(load.reader, k, until, counts)
        mark("load over")
        figures.reads, figures.read_failovers = counts

        # Every row the drill inserted (acknowledged or not) must reach the receiver, and the outbox must have
        # nothing undelivered from before now, a killed instance's claims included (they come back after the lease).
        self.cutoff = dt.datetime.now(dt.UTC)
        with trio.move_on_after(drain_timeout):
            while True:
                rows = set(await trio.to_thread.run_sync(database_rows, database_url)) - seed
                bodies = {body_of(r) for r in self.receiver.received}
                if rows <= bodies and await trio.to_thread.run_sync(pending_before, database_url, self.cutoff) == 0:
                    break
                await trio.sleep(0.2)
        mark("drained")
        with trio.move_on_after(15):
            while True:
                figures.replica_states = await replica_states(load.instances)
                if all(v == ["healthy"] for v in figures.replica_states.values()):
                    break
                await trio.sleep(0.5)
        mark("replica states read")


def body_of(received: Received) -> str | None:
    """The body of the row of an insert event, else None."""
    try:
        payload = received.json()
    except ValueError:
        return None
    return (payload.get("new") or {}).get("body") if payload.get("op") == "insert" else None


def tally(
    figures: Figures, received: list[Received], *, seed: set[str], rows: set[str], kill_clock: float,
    cutoff: dt.datetime,
) -> None:  # fmt: skip
    """The figures of writes and deliveries, from the receiver's records and the primary's rows."""
    inserted = rows - seed
    figures.rows_inserted = len(inserted)
    figures.acknowledged_lost = sorted(k for k in figures.acknowledged_keys if k not in rows)

    by_id: dict[str, list[Received]] = {}
    for r in received:
        by_id.setdefault(r.id, []).append(r)
    for deliveries in by_id.values():
        for r in deliveries:
            try:
                r.verified(SECRET)
            except Exception:  # any failure of the reference library's check
                figures.bad_signatures += 1
        # A duplicate is expected only of a delivery the killed instance had sent and not recorded.
        if len(deliveries) > 1 and deliveries[0].at > kill_clock + 0.05:
            figures.duplicates_not_from_kill.append(f"{deliveries[0].id} x{len(deliveries)}")

    firsts = [deliveries[0] for deliveries in by_id.values()]
    bodies = {body_of(r) for r in firsts} - {None}
    figures.events_delivered = len(bodies & inserted)
    figures.events_lost = sorted(inserted - bodies)
    figures.event_duplicates = sum(len(d) - 1 for d in by_id.values() if body_of(d[0]) is not None)

    ticks = [r for r in firsts if "scheduledAt" in r.json()]
    figures.cron_duplicates = sum(len(by_id[r.id]) - 1 for r in ticks)
    slots = Counter(dt.datetime.fromisoformat(r.json()["scheduledAt"]) for r in ticks)
    # Slots before the cutoff had all their time to be delivered; later ones may still have been under way.
    settled = sorted(s for s in slots if s <= cutoff - dt.timedelta(seconds=2))
    if settled:
        first, last = settled[0], settled[-1]
        figures.cron_first, figures.cron_last = f"{first:%H:%M:%S}", f"{last:%H:%M:%S}"
        figures.cron_slots = len(settled)
        expected = {first + dt.timedelta(seconds=n) for n in range(int((last - first).total_seconds()) + 1)}
        figures.cron_gaps = [f"{s:%H:%M:%S}" for s in sorted(expected - set(settled))]
        figures.cron_slot_duplicates = [f"{s:%H:%M:%S} x{slots[s]}" for s in settled if slots[s] > 1]
