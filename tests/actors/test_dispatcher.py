"""The event dispatcher's lifecycle (ARCHITECTURE.md "Actors"): it delivers only once the capture is in place (the
first snapshot swap), and a service stopping before that, say while the database never came, does not wait on it."""

from typing import Any, cast

import trio
import yaml

from svc.actors import Dispatcher
from svc.db import Executor
from tests.config.test_load import load
from tests.events.support import ENVIRON, settings


async def test_stopping_before_the_capture_is_in_place_stops_at_once(tmp_path, autojump_clock):
    loaded = load(tmp_path, yaml.safe_dump(settings("http://127.0.0.1:9/hook")), env=ENVIRON)
    stopping = trio.Event()
    dispatcher = Dispatcher(
        conninfo="postgresql:///unused",
        executor=cast(Executor, cast(Any, None)),  # never reached: nothing is claimed before the capture is ready
        config=loaded.config,
        secrets=loaded.secrets.webhook_secrets,
        stopping=stopping,
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(dispatcher.run)
        await trio.sleep(30)
        assert not dispatcher.stopped.is_set()
        stopping.set()
        with trio.fail_after(0.1):
            await dispatcher.stopped.wait()
