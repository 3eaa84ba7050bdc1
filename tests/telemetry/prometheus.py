"""Prometheus for the telemetry tests (TOOLS.md item 5): `promtool check metrics` as the validator of an exposition,
and a real Prometheus server (the Debian `prometheus` binary, run by hand on loopback, never its systemd unit) that
scrapes one target every second and answers PromQL over its HTTP API.

promtool's exit codes: 0 valid, 1 parse error, 3 lint problems only (missing HELP, a counter without `_total`...).

Prometheus 2.42 throttles service discovery to one update per 5 s, so a target's first series are queryable about
6 to 10 s after start; `wait_for_series` polls for them, bounded.
"""

import json
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx

PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")


def promtool_check(text: str, *, timeout: float = 30.0) -> tuple[int, str]:
    """`promtool check metrics` on `text` (stdin): its exit code and its stdout + stderr."""
    if PROMTOOL is None:
        raise RuntimeError("promtool is not installed (Debian package `prometheus`, TOOLS.md item 5a)")
    done = subprocess.run(
        [PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=timeout, check=False
    )
    return done.returncode, done.stdout + done.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrometheusServer:
    """A Prometheus on 127.0.0.1 (a free port, a temporary TSDB) scraping `target` ("host:port") at `metrics_path`
    every `scrape_interval`; a context manager. The scrape job is named `job` and has no other target."""

    def __init__(
        self,
        target: str,
        metrics_path: str = "/metrics",
        *,
        job: str = "svc",
        scrape_interval: str = "1s",
        startup_timeout: float = 20.0,
        binary: str | None = None,
    ) -> None:
        self.target = target
        self.metrics_path = metrics_path
        self.job = job
        self.scrape_interval = scrape_interval
        self.startup_timeout = startup_timeout
        self.binary = binary or PROMETHEUS
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._directory: Path | None = None
        self._log: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        if self.binary is None:
            raise RuntimeError("prometheus is not installed (Debian package `prometheus`, TOOLS.md item 5c)")
        self._directory = Path(tempfile.mkdtemp(prefix="svc-prometheus-"))
        config = {
            "global": {"scrape_interval": self.scrape_interval, "evaluation_interval": self.scrape_interval},
            "scrape_configs": [
                {
                    "job_name": self.job,
                    "scrape_interval": self.scrape_interval,
                    "scrape_timeout": self.scrape_interval,
                    "metrics_path": self.metrics_path,
                    "static_configs": [{"targets": [self.target]}],
                }
            ],
        }
        config_file = self._directory / "prometheus.yml"
        config_file.write_text(json.dumps(config, indent=2))  # JSON is YAML
        self.port = _free_port()
        self._log = (self._directory / "prometheus.log").open("wb")
        self._process = subprocess.Popen(
            [
                self.binary,
                f"--config.file={config_file}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                f"--storage.tsdb.path={self._directory / 'data'}",
                "--storage.tsdb.retention.time=1h",
                "--log.level=info",
            ],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self._process.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/-/ready", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() >= deadline:
                raise RuntimeError(f"prometheus not ready after {self.startup_timeout:g}s:\n{self.log()}")
            time.sleep(0.1)

    def stop(self, timeout: float = 10.0) -> None:
        if self._process is not None:
            if self._process.poll() is None:
                self._process.terminate()
                try:
                    self._process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait(timeout=timeout)
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def log(self, tail: int = 4000) -> str:
        """The last `tail` characters of the server's log."""
        if self._directory is None:
            return ""
        try:
            return (self._directory / "prometheus.log").read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def _api(self, path: str, params: dict[str, str] | None = None) -> Any:
        answer = httpx.get(f"{self.url}{path}", params=params, timeout=10)
        body = answer.json()
        if answer.status_code != 200 or body.get("status") != "success":
            raise RuntimeError(f"prometheus {path} {params}: {answer.status_code} {body}")
        return body["data"]

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query: the `result` list of /api/v1/query (for vectors, dicts with `metric` and `value`)."""
        return self._api("/api/v1/query", {"query": promql})["result"]

    def targets(self) -> list[dict[str, Any]]:
        """The active targets (`health` "up"/"down"/"unknown", `lastError`, `scrapeUrl`...)."""
        return self._api("/api/v1/targets", {"state": "active"})["activeTargets"]

    def wait_for_series(self, metric_name: str, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Poll `query(metric_name)` (any PromQL) until it is not empty and return it; AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(metric_name)
            if result:
                return result
            if time.monotonic() >= deadline:
                targets = [
                    {k: t.get(k) for k in ("scrapeUrl", "health", "lastError", "lastScrape")} for t in self.targets()
                ]
                raise AssertionError(f"no series for {metric_name!r} after {timeout:g}s; targets: {targets}")
            time.sleep(0.25)
