"""A PostgreSQL cluster of the tests' own with `pg_stat_statements` loaded (`shared_preload_libraries`), which the
machine's server does not load and cannot be changed to without a restart: `initdb` into a temporary directory,
trust authentication, a free loopback port, started and stopped with `pg_ctl`, every command as the `postgres` user
(tests/support/standby.py: PostgreSQL refuses to run as root). `hypopg` is whatever the machine's binaries have
(`apt-get install -y postgresql-15-hypopg`, which .ci/run does).
"""

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from tests.support.standby import COMMAND_TIMEOUT, StandbyUnavailable, _binaries, _free_port, _run_as_postgres


@contextmanager
def stats_cluster(primary_url: str) -> Iterator[str]:
    """The URL of the new cluster's `postgres` database; the cluster is removed on the way out. Skips the test (with
    the reason) when this machine cannot run one."""
    try:
        prefix = _run_as_postgres()
        bin_dir = _binaries(primary_url)
    except StandbyUnavailable as exc:
        pytest.skip(f"no PostgreSQL cluster can be started here: {exc}")
    home = Path(tempfile.mkdtemp(prefix="svc-stats-", dir="/tmp"))
    data, port = home / "data", _free_port()
    if prefix:
        shutil.chown(home, "postgres", "postgres")

    def pg(command: str, *args: str) -> None:
        result = subprocess.run(
            [*prefix, str(bin_dir / command), *args], cwd=home, capture_output=True, text=True,
            timeout=COMMAND_TIMEOUT, check=False,
        )  # fmt: skip
        if result.returncode != 0:
            raise RuntimeError(f"{command} failed: {result.stdout} {result.stderr}")

    try:
        pg("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync")
        settings = {
            "port": str(port),
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{home}'",
            "shared_preload_libraries": "'pg_stat_statements'",
            "pg_stat_statements.track": "all",
            "fsync": "off",
            "logging_collector": "off",
        }
        with (data / "postgresql.conf").open("a") as conf:
            conf.write("".join(f"{k} = {v}\n" for k, v in settings.items()))
        pg("pg_ctl", "-D", str(data), "-l", str(home / "server.log"), "-w", "-t", "50", "start")
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            conn.execute("select 1")
        yield url
    finally:
        subprocess.run(
            [*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-t", "30", "stop", "-m", "immediate"],
            capture_output=True, timeout=COMMAND_TIMEOUT, check=False,
        )  # fmt: skip
        shutil.rmtree(home, ignore_errors=True)
