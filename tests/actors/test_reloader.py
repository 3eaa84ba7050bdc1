"""The reloader's first snapshot (SPEC "States and transitions"): while the database is unreachable at startup it
retries with backoff, and once a build succeeds exactly one snapshot is served, however slow that build was."""

import gc
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, cast

import attrs
import trio

from svc.actors import Reloader
from svc.actors._reloader import FIRST_SNAPSHOT_RETRY, SCHEMA_CHANGE_INTERVAL
from svc.config import load_config
from svc.errors import Code, SvcError
from svc.snapshot import Snapshot, SnapshotHolder


@attrs.define
class Cycle:
    itself: object = None


@attrs.frozen
class Built:
    """Stands in for a Snapshot: the reloader reads only these two of its fields, and the holder numbers it."""

    warnings: tuple[str, ...] = ()
    generation: int = 0
    cycle: Cycle | None = None


def reloader_of(tmp_path: Any, build: Callable[[Any], Awaitable[Snapshot]]) -> tuple[Reloader, SnapshotHolder]:
    """A reloader building with `build`, listening to nothing, and the holder it swaps snapshots into."""
    loaded = load_config(environ={"DATABASE_URL": "postgresql:///unused"}, cwd=tmp_path)
    config = attrs.evolve(loaded.config, reload=attrs.evolve(loaded.config.reload, enabled=False))
    holder = SnapshotHolder()
    return Reloader(conninfo="postgresql:///unused", config=config, holder=holder, build=build), holder


async def test_a_retry_asked_for_during_a_slow_first_build_builds_no_second_snapshot(tmp_path, autojump_clock):
    builds: list[float] = []

    async def build(_config: Any) -> Snapshot:
        builds.append(trio.current_time())
        if len(builds) == 1:
            raise SvcError(Code.DATABASE_UNAVAILABLE, "the database is unavailable; the request can be retried")
        await trio.sleep(3 * FIRST_SNAPSHOT_RETRY)  # the retry loop asks again meanwhile
        return cast(Snapshot, Built())

    reloader, holder = reloader_of(tmp_path, build)
    async with trio.open_nursery() as nursery:
        await nursery.start(reloader.run)
        await trio.sleep(10 * FIRST_SNAPSHOT_RETRY)
        nursery.cancel_scope.cancel()
    served = holder.current
    assert len(builds) == 2
    assert served is not None and served.generation == 1


async def test_a_served_snapshot_is_frozen_and_the_one_it_replaced_collected(tmp_path):
    # The collector's full passes skip what a snapshot holds (gc.freeze) and a replaced snapshot is not kept: each
    # snapshot here holds a reference cycle, which only the collector frees.
    built: list[weakref.ref[Cycle]] = []

    async def build(_config: Any) -> Snapshot:
        cycle = Cycle()
        cycle.itself = cycle
        built.append(weakref.ref(cycle))
        return cast(Snapshot, Built(cycle=cycle))

    reloader, holder = reloader_of(tmp_path, build)
    try:
        assert await reloader.reload("first")
        assert not any(tracked is built[0]() for tracked in gc.get_objects()), "the served snapshot is not frozen"
        assert await reloader.reload("second")
        assert built[0]() is None, "the replaced snapshot was kept"
        assert not any(tracked is built[1]() for tracked in gc.get_objects())
    finally:
        gc.unfreeze()


async def test_statements_failing_on_a_changed_schema_rebuild_at_most_once_per_interval(tmp_path, autojump_clock):
    # A statement that keeps failing as on a changed schema, though the catalog is the same (the service's own
    # mistake), must not rebuild the snapshot once per request.
    builds: list[float] = []

    async def build(_config: Any) -> Snapshot:
        builds.append(trio.current_time())
        await trio.sleep(0.05)
        return cast(Snapshot, Built())

    reloader, holder = reloader_of(tmp_path, build)
    async with trio.open_nursery() as nursery:
        await nursery.start(reloader.run)
        started = trio.current_time()
        while trio.current_time() - started < 4 * SCHEMA_CHANGE_INTERVAL:
            reloader.schema_changed()  # each request failing so asks again
            await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    # The first request's rebuild (here also the first snapshot) at once, then one per interval.
    assert builds and builds[0] - started < 0.1, builds
    assert len(builds) <= 5, f"{len(builds)} rebuilds in {4 * SCHEMA_CHANGE_INTERVAL} s"
    assert all(b - a >= SCHEMA_CHANGE_INTERVAL for a, b in zip(builds, builds[1:], strict=False)), builds
