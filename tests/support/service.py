"""The service under test: configuration from a dict, the ASGI app in-process, or the whole server on loopback.

`running_service` runs `svc.server.serve` (pool, first snapshot, reloader, hypercorn) in the test's Trio run on
127.0.0.1 and an ephemeral port, and talks to it with httpx over real TCP. Leaving the block cancels it.
"""

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio
import yaml

from svc.config import LoadedConfig, load_config
from svc.http import Route
from svc.server import serve

#: Loopback and an ephemeral port, so tests never collide with each other or a running demo.
LOOPBACK = {"server": {"host": "127.0.0.1", "port": 0}}


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        merged[key] = merge(merged[key], value) if isinstance(value, Mapping) and key in merged else value
    return merged


def configure(
    directory: Path,
    settings: Mapping[str, Any] | None = None,
    *,
    mode: str = "prod",
    database_url: str = "",
    environ: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Write `settings` (over loopback defaults) as `svc.yaml` in `directory` and load it for `mode`, with
    `environ` as the environment (secrets such as AUTH_JWT_SECRET)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "svc.yaml").write_text(yaml.safe_dump(merge(LOOPBACK, settings or {})))
    variables = {**(environ or {}), **({"DATABASE_URL": database_url} if database_url else {})}
    return load_config(mode=mode, environ=variables, cwd=directory)


@attrs.frozen
class Service:
    url: str
    client: httpx.AsyncClient
    loaded: LoadedConfig


@asynccontextmanager
async def running_service(
    directory: Path,
    database_url: str,
    settings: Mapping[str, Any] | None = None,
    *,
    mode: str = "prod",
    routes: Sequence[Route] = (),
    environ: Mapping[str, str] | None = None,
) -> AsyncIterator[Service]:
    loaded = configure(directory, settings, mode=mode, database_url=database_url, environ=environ)
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(partial(serve, loaded, routes=routes))
        async with httpx.AsyncClient(base_url=binds[0], timeout=10) as client:
            yield Service(binds[0], client, loaded)
        nursery.cancel_scope.cancel()


async def wait_until(predicate: Any, *, timeout: float = 5.0, interval: float = 0.05) -> None:
    """Poll an async predicate until it is true; fail the test after `timeout` seconds."""
    with trio.fail_after(timeout):
        while not await predicate():
            await trio.sleep(interval)
