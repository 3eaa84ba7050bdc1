"""The service as a separate process, the way an operator runs it: the real `svc` console script (or a test
entry point on the same `svc.server.run` path), its log read as it is written, signals sent to it."""

import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import trio

SVC = str(Path(sys.executable).with_name("svc"))


def run_svc(*args: str, cwd: Path, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The `svc` command run to completion, without DATABASE_URL or SVC_MODE from the test's environment."""
    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SVC_MODE")}
    return subprocess.run(
        [SVC, *args],
        cwd=cwd,
        env={**environment, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


ROOT = Path(__file__).resolve().parents[2]
#: The line the server logs once it listens (svc.server.serve).
_SERVING = re.compile(r"serving .* on (http://\S+)")


class ServiceProcess:
    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.log = ""
        self.url: str | None = None
        self.listening = trio.Event()
        self.exited = trio.Event()

    def send_signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    async def wait(self, timeout: float = 30.0) -> int:
        with trio.fail_after(timeout):
            await self.exited.wait()
        assert self.process.returncode is not None
        return self.process.returncode

    async def _read_log(self) -> None:
        assert self.process.stderr is not None
        buffer = b""
        async for chunk in self.process.stderr:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                text = line.decode(errors="replace")
                self.log += text + "\n"
                if self.url is None and (match := _SERVING.search(text)):
                    self.url = match.group(1).replace("0.0.0.0", "127.0.0.1")
                    self.listening.set()
        self.log += buffer.decode(errors="replace")
        await self.process.wait()
        self.exited.set()
        self.listening.set()  # whoever waits for it learns it will not listen


@asynccontextmanager
async def service_process(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    listen_timeout: float = 30.0,
) -> AsyncIterator[ServiceProcess]:
    """Start `args`, wait until it listens (or exits), yield it; on exit kill it if it still runs."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    environment.pop("SVC_MODE", None)
    process = await trio.lowlevel.open_process(
        list(args), cwd=cwd, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    service = ServiceProcess(process)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(service._read_log)
        try:
            with trio.fail_after(listen_timeout):
                await service.listening.wait()
            yield service
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGKILL)
            with trio.CancelScope(shield=True):
                await service.exited.wait()
