"""The reloader's first snapshot (SPEC "States and transitions"): while the database is unreachable at startup it
retries with backoff, and once a build succeeds exactly one snapshot is served, however slow that build was."""

from typing import Any, cast

import attrs
import trio

from svc.actors import Reloader
from svc.actors._reloader import FIRST_SNAPSHOT_RETRY
from svc.config import load_config
from svc.errors import Code, SvcError
from svc.snapshot import Snapshot, SnapshotHolder


@attrs.frozen
class Built:
    """Stands in for a Snapshot: the reloader reads only these two of its fields, and the holder numbers it."""

    warnings: tuple[str, ...] = ()
    generation: int = 0


async def test_a_retry_asked_for_during_a_slow_first_build_builds_no_second_snapshot(tmp_path, autojump_clock):
    loaded = load_config(environ={"DATABASE_URL": "postgresql:///unused"}, cwd=tmp_path)
    config = attrs.evolve(loaded.config, reload=attrs.evolve(loaded.config.reload, enabled=False))
    builds: list[float] = []

    async def build(_config: Any) -> Snapshot:
        builds.append(trio.current_time())
        if len(builds) == 1:
            raise SvcError(Code.DATABASE_UNAVAILABLE, "the database is unavailable; the request can be retried")
        await trio.sleep(3 * FIRST_SNAPSHOT_RETRY)  # the retry loop asks again meanwhile
        return cast(Snapshot, Built())

    holder = SnapshotHolder()
    reloader = Reloader(conninfo="postgresql:///unused", config=config, holder=holder, build=build)
    async with trio.open_nursery() as nursery:
        await nursery.start(reloader.run)
        await trio.sleep(10 * FIRST_SNAPSHOT_RETRY)
        nursery.cancel_scope.cancel()
    served = holder.current
    assert len(builds) == 2
    assert served is not None and served.generation == 1
