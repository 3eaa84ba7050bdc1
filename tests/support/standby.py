"""A real streaming standby of the tests' primary (TOOLS.md section 10): `pg_basebackup -R -X stream -c fast` into a
temporary directory, a minimal `postgresql.conf` on a free loopback port, started and stopped with `pg_ctl`.

PostgreSQL refuses to run as root, and the tests run as root: every PostgreSQL command runs as the `postgres` user
(`runuser -u postgres --`), which owns the data directory (mode 0700). Replication must be allowed by the primary's
`pg_hba.conf`; `ensure_replication_allowed` adds a loopback `trust` line when none allows it (the tests' primary is
a throwaway server with trust authentication already). No replication slot is made, so nothing is left on the
primary when the standby is removed.
"""

import ipaddress
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

#: Bounds of every PostgreSQL command the standby runs (backup, start, stop), in seconds.
COMMAND_TIMEOUT = 60
REPLICATION_LINE = "host replication all 127.0.0.1/32 trust"
#: Settings a hot standby must have at least as high as its primary, or it refuses to start.
AT_LEAST_PRIMARY = (
    "max_connections",
    "max_worker_processes",
    "max_wal_senders",
    "max_prepared_transactions",
    "max_locks_per_transaction",
)
LOOPBACK = ipaddress.ip_address("127.0.0.1")


class StandbyUnavailable(Exception):
    """A standby cannot be made here (no binaries, no user to run PostgreSQL as, a primary out of reach)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run_as_postgres() -> list[str]:
    """The prefix that runs a command as the `postgres` user."""
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise StandbyUnavailable("there is no `postgres` user to run PostgreSQL as") from None
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            raise StandbyUnavailable("running as root without `runuser`")
        return ["runuser", "-u", "postgres", "--"]
    if pwd.getpwuid(os.geteuid()).pw_name == "postgres":
        return []
    raise StandbyUnavailable("neither root nor postgres: cannot run a PostgreSQL server here")


def _binaries(primary_url: str) -> Path:
    """The directory of the PostgreSQL binaries of the primary's major version (pg_basebackup must not be older)."""
    with psycopg.connect(primary_url, autocommit=True, connect_timeout=5) as conn:
        major = int(conn.execute("show server_version_num").fetchone()[0]) // 10000  # type: ignore[index]
    for directory in (Path(f"/usr/lib/postgresql/{major}/bin"), Path(f"/usr/pgsql-{major}/bin")):
        if (directory / "pg_basebackup").exists() and (directory / "pg_ctl").exists():
            return directory
    found = shutil.which("pg_basebackup")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    raise StandbyUnavailable(f"no pg_basebackup/pg_ctl of PostgreSQL {major} on this machine")


def _covers_loopback(address: str | None, netmask: str | None) -> bool:
    if address in ("all", "samehost", "samenet"):
        return True
    if not address:
        return False
    try:
        network = ipaddress.ip_network(f"{address}/{netmask}" if netmask else address, strict=False)
    except ValueError:
        return address == "localhost"
    return LOOPBACK in network


def _replication_allowed(conn: psycopg.Connection, user: str) -> bool:
    """Whether the first hba rule matching a replication connection of `user` from 127.0.0.1 admits it."""
    rules = conn.execute(
        "select type, database, user_name, address, netmask, auth_method from pg_hba_file_rules"
        " where error is null order by line_number"
    ).fetchall()
    for kind, databases, users, address, netmask, method in rules:
        if kind not in ("host", "hostnossl") or "replication" not in (databases or []):
            continue
        if not ({"all", user} & set(users or [])) or not _covers_loopback(address, netmask):
            continue
        return method != "reject"
    return False


def ensure_replication_allowed(primary_url: str) -> None:
    """Make the primary accept replication connections from 127.0.0.1: when no `pg_hba.conf` rule does, append
    `host replication all 127.0.0.1/32 trust` and reload the configuration. Idempotent."""
    user = conninfo_to_dict(primary_url).get("user") or "postgres"
    with psycopg.connect(primary_url, autocommit=True, connect_timeout=5) as conn:
        if _replication_allowed(conn, user):
            return
        hba = Path(conn.execute("show hba_file").fetchone()[0])  # type: ignore[index]
        if not os.access(hba, os.W_OK):
            raise StandbyUnavailable(f"replication from 127.0.0.1 is not allowed and {hba} cannot be changed here")
        text = hba.read_text()
        if REPLICATION_LINE not in text.splitlines():
            hba.write_text(text + ("" if text.endswith("\n") or not text else "\n") + REPLICATION_LINE + "\n")
        conn.execute("select pg_reload_conf()")
        if not _replication_allowed(conn, user):
            raise StandbyUnavailable(f"{hba} still refuses replication from 127.0.0.1 after adding a rule")


class Standby:
    """A running (or stopped) standby on 127.0.0.1:`port`, its data in a temporary directory."""

    def __init__(self, primary_url: str, bin_dir: Path, prefix: list[str]) -> None:
        self.primary_url = primary_url
        self.port = _free_port()
        self._bin = bin_dir
        self._prefix = prefix
        self._home = Path(tempfile.mkdtemp(prefix="svc-standby-", dir="/tmp"))
        self.data = self._home / "data"
        self.log = self._home / "standby.log"
        self._primary = conninfo_to_dict(primary_url)
        self._user = self._primary.get("user") or "postgres"

    # Building and running.

    def _pg(self, command: str, *args: str, timeout: float = COMMAND_TIMEOUT) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self._prefix, str(self._bin / command), *args],
            cwd=self._home,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, "LC_ALL": "C"},
        )

    def _own(self) -> None:
        """The directory belongs to postgres, mode 0700 (PostgreSQL refuses a data directory others can read)."""
        if self._prefix:
            postgres = pwd.getpwnam("postgres")
            for path in (self._home, *self._home.rglob("*")):
                os.chown(path, postgres.pw_uid, postgres.pw_gid, follow_symlinks=False)
        self._home.chmod(0o700)

    def make(self) -> None:
        self.data.mkdir(mode=0o700)
        self._own()
        primary = {k: v for k, v in self._primary.items() if k in ("host", "port", "user", "password", "hostaddr")}
        primary.setdefault("host", "127.0.0.1")
        backup = ["-d", make_conninfo(**primary), "-D", str(self.data), "-R", "-X", "stream", "-c", "fast"]
        for attempt in range(10):
            result = self._pg("pg_basebackup", *backup)
            # A rule just added is in force once the postmaster has handled the reload signal: a moment later.
            if result.returncode == 0 or "pg_hba.conf" not in result.stderr or attempt == 9:
                break
            time.sleep(0.2)
        if result.returncode != 0:
            raise RuntimeError(f"pg_basebackup failed ({result.returncode}): {result.stderr.strip()}")
        with psycopg.connect(self.primary_url, autocommit=True, connect_timeout=5) as conn:
            at_least = {name: conn.execute(f"show {name}").fetchone()[0] for name in AT_LEAST_PRIMARY}  # type: ignore[index]
            hba = Path(conn.execute("show hba_file").fetchone()[0])  # type: ignore[index]
        settings = {
            "port": str(self.port),
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self._home}'",
            "hot_standby": "on",
            "logging_collector": "off",
            **at_least,
        }
        (self.data / "postgresql.conf").write_text("".join(f"{k} = {v}\n" for k, v in settings.items()))
        # Debian keeps pg_hba.conf outside the data directory, so the backup has none.
        shutil.copyfile(hba, self.data / "pg_hba.conf")
        (self.data / "pg_ident.conf").touch()
        self._own()

    def start(self) -> None:
        result = self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "50", "start")
        if result.returncode != 0:
            raise RuntimeError(f"the standby did not start: {result.stdout.strip()} {self._log_tail()}")

    def stop(self) -> None:
        result = self._pg("pg_ctl", "-D", str(self.data), "-w", "-t", "50", "stop", "-m", "fast")
        if result.returncode != 0:
            raise RuntimeError(f"the standby did not stop: {result.stderr.strip()} {self._log_tail()}")

    def running(self) -> bool:
        return self._pg("pg_ctl", "-D", str(self.data), "status", timeout=10).returncode == 0

    def remove(self) -> None:
        """Stop the server if it still runs (fast, then immediate) and delete its directory."""
        try:
            stopping = self.data.exists() and self.running()
            if stopping and self._pg("pg_ctl", "-D", str(self.data), "-w", "-t", "30", "stop", "-m", "fast").returncode:
                self._pg("pg_ctl", "-D", str(self.data), "-w", "-t", "20", "stop", "-m", "immediate")
        finally:
            shutil.rmtree(self._home, ignore_errors=True)

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    # SQL on the standby.

    def url_for(self, database_url: str) -> str:
        """`database_url`'s database and user, on the standby (a URL, so it fits in DATABASE_REPLICA_URLS)."""
        params = conninfo_to_dict(database_url)
        user = params.get("user") or self._user
        password = params.get("password")
        credentials = quote(user, safe="") + (f":{quote(password, safe='')}" if password else "")
        return f"postgresql://{credentials}@127.0.0.1:{self.port}/{quote(params.get('dbname') or user, safe='')}"

    def _sql(self, statement: str, params: tuple[object, ...] = ()) -> object:
        url = make_conninfo(self.url_for(self.primary_url), dbname="postgres", connect_timeout="5")
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(statement, params).fetchone()  # type: ignore[arg-type]
            return row[0] if row else None

    def pause_replay(self) -> None:
        """Stop applying WAL: from here on the standby shows nothing the primary commits, until `resume_replay`."""
        self._sql("select pg_wal_replay_pause()")

    def resume_replay(self) -> None:
        self._sql("select pg_wal_replay_resume()")

    def replay_lsn(self) -> str:
        return str(self._sql("select pg_last_wal_replay_lsn()::text"))

    def wait_for(self, lsn: str, timeout: float = 20) -> None:
        """Return once the standby has replayed up to `lsn`; raise TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not self._sql("select pg_wal_lsn_diff(pg_last_wal_replay_lsn(), %s::pg_lsn) >= 0", (lsn,)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the standby replayed up to {self.replay_lsn()}, not {lsn}, in {timeout} s")
            time.sleep(0.05)


@contextmanager
def standby(primary_url: str) -> Iterator[Standby]:
    """A streaming standby of the server of `primary_url`, started; stopped and removed on the way out. Skips the
    test when this machine cannot make one."""
    try:
        prefix = _run_as_postgres()
        bin_dir = _binaries(primary_url)
        ensure_replication_allowed(primary_url)
    except StandbyUnavailable as reason:
        pytest.skip(f"no standby: {reason}")
    server = Standby(primary_url, bin_dir, prefix)
    try:
        server.make()
        server.start()
        yield server
    finally:
        server.remove()
