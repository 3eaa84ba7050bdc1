"""The reference GraphQL clients and tools, run as Node subprocesses for the tests.

tests/clients/ pins graphql-ws, graphql-sse and meros (Apollo's multipart protocol), graphql-http (the
GraphQL-over-HTTP audit), Apollo's client (its persisted-query link), composition, gateway and subgraph, and holds
one script per kind: `node tests/clients/<kind>-client.mjs '<json args>'` (the stub subgraph: `stub-subgraph.mjs`)
prints one JSON object a line (`{"ready": true}`, `{"next": ...}`, `{"part": ...}`, `{"complete": true}`,
`{"error": ...}`, ...; each script's header lists them).
`run_client` runs one to completion; `start_client` keeps one running so a test can change data between its lines.
"""

import functools
import json
import math
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Literal, Self

import attrs
import trio

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "clients"
Kind = Literal["ws", "sse", "multipart", "audit", "apq", "compose", "gateway", "stub-subgraph"]
#: Scripts not named `<kind>-client.mjs`.
_SCRIPTS = {"stub-subgraph": "stub-subgraph.mjs"}
Line = dict[str, Any]

_install_lock = threading.Lock()


class NodeClientsUnavailable(RuntimeError):
    """Node or npm is missing, or `npm ci` failed: the clients cannot run."""


def ensure_installed() -> None:
    """Install tests/clients' pinned packages (`npm ci`, from the lock file) unless they are there; once a process."""
    # A lock as well as the cache: tests running in threads must not start two `npm ci` in the same directory.
    with _install_lock:
        _install()


@functools.cache  # a failure raises, is not cached, and is tried again by the next caller
def _install() -> None:
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise NodeClientsUnavailable(f"`{tool}` is not on PATH; the reference GraphQL clients need Node 20+")
    # npm writes node_modules/.package-lock.json last: without it an install was interrupted and is redone.
    if not (CLIENTS / "node_modules" / ".package-lock.json").exists():
        command = ["npm", "ci", "--prefix", str(CLIENTS), "--no-audit", "--no-fund"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        except subprocess.TimeoutExpired as error:
            raise NodeClientsUnavailable(f"{' '.join(command)} took more than {error.timeout} s") from error
        if done.returncode != 0:
            raise NodeClientsUnavailable(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-4000:]}")


def _command(kind: Kind, args: dict[str, Any], timeout: float) -> list[str]:
    # The script's own timeout comes first, so a stuck client still reports the lines it printed (and exits 2);
    # the caller's deadline stays as the backstop.
    args = {"timeout_ms": max(1000, round((timeout - 2) * 1000)), **args}
    node = shutil.which("node")
    assert node is not None  # ensure_installed checked it
    return [node, str(CLIENTS / _SCRIPTS.get(kind, f"{kind}-client.mjs")), json.dumps(args)]


def _parse(line: bytes) -> Line:
    try:
        parsed = json.loads(line)
    except ValueError:
        # Not ours (the scripts print JSON only): kept whole so the failing assertion shows it.
        return {"raw": line.decode(errors="replace")}
    return parsed if isinstance(parsed, dict) else {"raw": parsed}


@attrs.frozen
class ClientRun:
    """A client run to its end: the lines it printed, its exit code (0 done, 1 error, 2 timed out) and stderr."""

    lines: list[Line]
    returncode: int
    stderr: str

    def values(self, key: str) -> list[Any]:
        """What the lines that have `key` hold there, in order: `run.values("next")` are the results."""
        return [line[key] for line in self.lines if key in line]


async def run_client(kind: Kind, args: dict[str, Any], *, timeout: float = 30) -> ClientRun:
    """Run the `kind` client with `args` to completion, in at most `timeout` seconds."""
    await trio.to_thread.run_sync(ensure_installed)
    with trio.fail_after(timeout):
        done = await trio.run_process(
            _command(kind, args, timeout), stdin=subprocess.DEVNULL, capture_stdout=True, capture_stderr=True,
            check=False,
        )  # fmt: skip
    lines = [_parse(line) for line in done.stdout.splitlines() if line.strip()]
    return ClientRun(lines=lines, returncode=done.returncode, stderr=done.stderr.decode(errors="replace"))


class LiveClient:
    """A running client whose lines a test reads one at a time, e.g. wait for `ready`, change data, read `next`."""

    def __init__(self, process: trio.Process, stderr: IO[bytes]) -> None:
        self.process = process
        #: Every line read so far, for assertions and for the messages of timeouts.
        self.lines: list[Line] = []
        self._stderr = stderr
        self._buffer = b""

    @property
    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def _too_slow(self, what: str, timeout: float) -> trio.TooSlowError:
        return trio.TooSlowError(f"no {what} in {timeout} s; lines so far: {self.lines}; stderr: {self.stderr}")

    async def next_line(self, timeout: float = 10) -> Line:
        """The next line the client prints; EOFError once it exited without printing another."""
        assert self.process.stdout is not None
        try:
            with trio.fail_after(timeout):
                # Reads return whatever the pipe holds: part of a line, or several lines; split on "\n" ourselves.
                while b"\n" not in self._buffer:
                    chunk = await self.process.stdout.receive_some()
                    if not chunk:
                        returncode = await self.process.wait()
                        raise EOFError(f"client exited ({returncode}) after {self.lines}; stderr: {self.stderr}")
                    self._buffer += chunk
        except trio.TooSlowError as error:
            raise self._too_slow("line", timeout) from error
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.lines.append(_parse(line))
        return self.lines[-1]

    async def wait_for(self, predicate: Callable[[Line], bool], timeout: float = 10) -> Line:
        """Read lines until one satisfies `predicate` and return it (the ones before stay in `lines`)."""
        try:
            with trio.fail_after(timeout):
                while not predicate(line := await self.next_line(timeout=math.inf)):
                    pass
        except trio.TooSlowError as error:
            raise self._too_slow("matching line", timeout) from error
        return line

    async def wait(self, timeout: float = 10) -> int:
        """The exit code, once the client exited by itself (after `complete`, an error or `take` results)."""
        try:
            with trio.fail_after(timeout):
                return await self.process.wait()
        except trio.TooSlowError as error:
            raise self._too_slow("exit", timeout) from error

    def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()

    async def aclose(self) -> None:
        self.kill()
        with trio.CancelScope(shield=True):
            await self.process.wait()
            if self.process.stdout is not None:
                await self.process.stdout.aclose()
        self._stderr.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def start_client(kind: Kind, args: dict[str, Any], nursery: trio.Nursery, *, lifetime: float = 60) -> LiveClient:
    """Start the `kind` client with `args` in `nursery`; it exits by itself at the latest after `lifetime` seconds.

    The process runs under `trio.run_process` in `nursery`, so cancelling the nursery kills it; `aclose()` (or
    `async with`) kills it earlier. Its stderr goes to a temporary file: a pipe nobody reads could fill and block it.
    """
    await trio.to_thread.run_sync(ensure_installed)
    # Closed by LiveClient.aclose: it lives as long as the client, not this call.
    stderr = tempfile.TemporaryFile()  # noqa: SIM115
    run = functools.partial(
        trio.run_process, _command(kind, args, lifetime), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=stderr, check=False,
    )  # fmt: skip
    process: trio.Process = await nursery.start(run)
    return LiveClient(process, stderr)
