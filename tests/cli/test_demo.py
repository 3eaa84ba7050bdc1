"""`svc demo` (the README's first command): an embedded PostgreSQL under the data directory with the demo schema,
served in dev mode. The embedded server is also a real PostgreSQL this test may stop and start: `/ready` turns 503
within two seconds of the stop and 200 again after the start, without restarting the service."""

import os
import signal
import subprocess
from pathlib import Path

import httpx
import psycopg
import pytest
import trio

from tests.support.process import SVC, service_process
from tests.support.service import wait_until

pytestmark = pytest.mark.slow


def pg_ctl(data: Path, *args: str) -> None:
    """Run the embedded server's own pg_ctl as the system user pgserver runs it as (root may not)."""
    import pgserver

    binary = Path(pgserver.__file__).parent / "pginstall" / "bin" / "pg_ctl"
    command = [str(binary), "-D", str(data), "-w", *args]
    if os.geteuid() == 0:
        command = ["runuser", "-u", "pgserver", "--", *command]
    subprocess.run(command, check=True, capture_output=True, timeout=60)


async def ready(client: httpx.AsyncClient, status: int) -> bool:
    return (await client.get("/ready")).status_code == status


def demo_rows(pgdata: Path) -> int:
    """People in the demo database, over the socket the running embedded server names in postmaster.pid."""
    lines = (pgdata / "postmaster.pid").read_text().splitlines()
    port, socket_dir = lines[3], lines[4]
    with psycopg.connect(host=socket_dir, port=port, dbname="svc_demo", user="postgres") as conn:
        return conn.execute("select count(*) from app_public.people").fetchone()[0]


async def test_demo_serves_the_demo_schema_and_survives_a_database_restart(tmp_path):
    (tmp_path / "svc.yaml").write_text("server: {host: 127.0.0.1, port: 0}\n")
    data = tmp_path / "data"
    pgdata = data / "pgdata"
    async with service_process([SVC, "demo", "--data", str(data)], cwd=tmp_path, listen_timeout=120) as service:
        assert "in dev mode" in service.log
        assert demo_rows(pgdata) == 3
        async with httpx.AsyncClient(base_url=service.url, timeout=10) as client:
            assert (await client.get("/live")).status_code == 200
            assert (await client.get("/ready")).json() == {"status": "ok", "database": "connected"}
            assert "server-timing" in (await client.get("/live")).headers  # dev mode

            pg_ctl(pgdata, "stop", "-m", "fast")
            started = trio.current_time()
            await wait_until(lambda: ready(client, 503), timeout=2)
            assert trio.current_time() - started < 2

            pg_ctl(pgdata, "restart", "-l", str(pgdata / "log"))  # starts it with the options it last ran with
            await wait_until(lambda: ready(client, 200), timeout=10)
        service.send_signal(signal.SIGTERM)
        assert await service.wait() == 0
    assert not (pgdata / "postmaster.pid").exists()  # the embedded server stopped with the demo

    # A second run reuses the data: the demo is not loaded again, and what it holds is kept.
    async with service_process([SVC, "demo", "--data", str(data)], cwd=tmp_path, listen_timeout=60) as service:
        assert demo_rows(pgdata) == 3
        async with httpx.AsyncClient(base_url=service.url) as client:
            assert (await client.get("/ready")).status_code == 200
        service.send_signal(signal.SIGTERM)
        assert await service.wait() == 0
