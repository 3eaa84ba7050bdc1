"""The reloader actor: rebuild the Snapshot off to the side and swap it in, on request.

SPEC "Operations" and "States and transitions": a notification on `reload.channel` (listened for on a dedicated
session connection) or SIGHUP (forwarded by the server, which owns signals) reloads the schema without a restart;
only the database is re-read. A reload whose startup checks fail, or that cannot reach the database, keeps the
previous snapshot serving and logs why. Requests arriving while a rebuild runs are coalesced into one more rebuild.

SPEC "Retryable": a statement that failed on a schema the database no longer has (`SCHEMA_CHANGED`) asks for a
rebuild too (`schema_changed`): once for all the failures until that rebuild is done, since the requests failing
together fail on the same change, which the rebuild reads. Such rebuilds run at most once per
`SCHEMA_CHANGE_INTERVAL`: a statement that keeps failing so although the catalog did not change (the service's own
mistake, say a function it names wrongly) would otherwise rebuild the snapshot once per request.

Until a first snapshot exists (the database was unreachable at startup), the reloader retries with backoff; a
failed startup check at that point is `Fatal`, since there is nothing to keep serving. The listener reconnects
with backoff when its connection is lost, and reloads once reconnected, since notifications sent meanwhile were
missed.

Once a snapshot is swapped in, the heap is collected and what is alive frozen (`gc.freeze`): the snapshot's schema,
model and caches, which live until the next reload (some 185,000 objects on pagila), are left out of the collector's
later full passes, which would otherwise walk them all in the middle of a request (about 100 ms each time on pagila:
the tail of the latency). The next reload unfreezes them first, so a replaced snapshot is collected then; one still
held by requests in flight while the new one is frozen waits for the reload after.
"""

import gc
import logging
import math
from collections.abc import Awaitable, Callable, Sequence

import trio

from svc.config import Config
from svc.errors import SvcError
from svc.snapshot import Snapshot, SnapshotError, SnapshotHolder

from ._listener import listen
from ._supervisor import Fatal, backoff

log = logging.getLogger("svc.reload")

#: Longest wait between attempts at the first snapshot while the database is unreachable.
FIRST_SNAPSHOT_RETRY = 2.0
#: The reason the first-snapshot retry gives: moot, and dropped, once a snapshot is served.
_NO_SNAPSHOT_YET = "no schema snapshot yet"
_SCHEMA_CHANGED = "a statement failed on a changed schema"
#: Shortest time between two rebuilds asked for by statements failing on a changed schema.
SCHEMA_CHANGE_INTERVAL = 5.0


class Reloader:
    """Builds snapshots with `build(config)` from the running configuration, and swaps them in."""

    def __init__(
        self,
        *,
        conninfo: str,
        config: Config,
        holder: SnapshotHolder,
        build: Callable[[Config], Awaitable[Snapshot]],
        connect_timeout: float = 5.0,
        on_swap: Sequence[Callable[[Snapshot], Awaitable[None]]] = (),
    ) -> None:
        self._conninfo = conninfo
        #: The configuration the next snapshot is built with (the dev watcher replaces it when svc.yaml changes).
        self.config = config
        self._reload = config.reload  # restart-only: the listener keeps its channel
        self._holder = holder
        self._build = build
        self._connect_timeout = connect_timeout
        #: Called after each swap with the new snapshot (the dev watcher re-exports the schema files).
        self._on_swap = tuple(on_swap)
        self._requests_in, self._requests = trio.open_memory_channel[str](math.inf)
        #: A rebuild for a changed schema is asked for and not done yet.
        self._schema_change_pending = False
        #: When the last rebuild for a changed schema began.
        self._schema_rebuilt_at = -math.inf

    def request(self, reason: str) -> None:
        """Ask for a rebuild (never blocks; requests pending together make one rebuild)."""
        self._requests_in.send_nowait(reason)

    def schema_changed(self) -> None:
        """A statement failed on a schema the database no longer has: rebuild, unless a rebuild for that is pending."""
        if not self._schema_change_pending:
            self._schema_change_pending = True
            self.request(_SCHEMA_CHANGED)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            if self._reload.enabled:
                await nursery.start(self._listen)
            if self._holder.current is None:
                nursery.start_soon(self._until_first_snapshot)
            task_status.started()
            await self._rebuild_on_request()

    async def reload(self, reason: str) -> bool:
        """Build a snapshot now and swap it in; on failure keep the current one. True when swapped."""
        started = trio.current_time()
        try:
            snapshot = await self._build(self.config)
        except (SnapshotError, SvcError) as exc:
            current = self._holder.current
            if current is None and isinstance(exc, SnapshotError):
                raise Fatal(f"startup check failed: {exc}") from exc
            serving = f"still serving generation {current.generation}" if current else "no schema served yet"
            log.error("schema reload (%s) failed; %s: %s", reason, serving, exc)
            return False
        previous = self._holder.current
        served = self._holder.swap(snapshot)
        log.info("schema reloaded (%s): generation %d in %.0f ms", reason, served.generation,
                 (trio.current_time() - started) * 1000)  # fmt: skip
        for warning in served.warnings:
            if previous is None or warning not in previous.warnings:
                log.warning("%s", warning)
        del previous
        _settle_heap()
        for callback in self._on_swap:
            await callback(served)
        return True

    async def _rebuild_on_request(self) -> None:
        async for reason in self._requests:
            reasons = [reason]
            while True:
                try:
                    reasons.append(self._requests.receive_nowait())
                except trio.WouldBlock:
                    break
            if self._holder.current is not None:
                # A retry asked for while the first build was still running must not build a second snapshot.
                reasons = [reason for reason in reasons if reason != _NO_SNAPSHOT_YET]
            if reasons:
                changed = _SCHEMA_CHANGED in reasons
                if changed:
                    await trio.sleep_until(self._schema_rebuilt_at + SCHEMA_CHANGE_INTERVAL)
                    self._schema_rebuilt_at = trio.current_time()
                try:
                    await self.reload(", ".join(dict.fromkeys(reasons)))
                finally:
                    if changed:
                        self._schema_change_pending = False

    async def _until_first_snapshot(self) -> None:
        """Retry the first build with backoff, at most `FIRST_SNAPSHOT_RETRY` apart: a database that comes back
        makes the service ready within that."""
        failures = 0
        while self._holder.current is None:
            failures += 1
            await trio.sleep(min(FIRST_SNAPSHOT_RETRY, backoff(failures)))
            if self._holder.current is None:
                self.request(_NO_SNAPSHOT_YET)

    async def _listen(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """LISTEN on the reload channel; after a reconnection ask for a reload: notifications sent meanwhile were
        missed."""
        channel = self._reload.channel

        def listening(again: bool) -> None:
            if again:
                self.request("reload listener reconnected")

        await listen(
            self._conninfo,
            channel,
            on_notify=lambda: self.request(f"notification on {channel}"),
            on_listening=listening,
            log=log,
            connect_timeout=self._connect_timeout,
            task_status=task_status,
        )


def _settle_heap() -> None:
    """Collect what earlier snapshots left, then freeze what is alive (the new snapshot with it)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
