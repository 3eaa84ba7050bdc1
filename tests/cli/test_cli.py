"""The `svc` command as an operator runs it (SPEC "Command line", "Configuration", "Operations"): configuration
errors name their key and exit non-zero, the config JSON Schema is exported, `svc run` serves and stops gracefully
on SIGTERM (exit 0) after in-flight requests complete, and a startup check that fails stops the service."""

import json
import signal
import sys

import httpx
import jsonschema
import pytest
import trio
import yaml

from svc.config._load import _Loader
from tests.support.process import ROOT, SVC, run_svc, service_process

pytestmark = pytest.mark.slow

LOOPBACK = "server: {host: 127.0.0.1, port: 0}\n"


# --- configuration errors ----------------------------------------------------------------------------------------


def test_unknown_key_is_named_and_the_service_does_not_start(tmp_path):
    (tmp_path / "svc.yaml").write_text("limits:\n  page_sise: 10\ndev:\n  server: {prot: 1}\n")
    result = run_svc("run", cwd=tmp_path, env={"DATABASE_URL": "postgresql:///unused"})
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["svc: limits.page_sise: unknown key", "svc: dev.server.prot: unknown key"]


def test_missing_database_url(tmp_path):
    result = run_svc(cwd=tmp_path)
    assert result.returncode == 2
    assert "DATABASE_URL is not set" in result.stderr


def test_named_config_file_must_exist(tmp_path):
    result = run_svc("--config", "missing.yaml", "run", cwd=tmp_path, env={"DATABASE_URL": "postgresql:///x"})
    assert (result.returncode, result.stderr.strip()) == (2, "svc: --config: file not found: missing.yaml")
    result = run_svc("run", "--config", "missing.yaml", cwd=tmp_path, env={"DATABASE_URL": "postgresql:///x"})
    assert result.returncode == 2


def test_secret_in_the_file_is_refused(tmp_path):
    (tmp_path / "svc.yaml").write_text("database:\n  url: postgresql://user:pw@db/app\n")
    result = run_svc(cwd=tmp_path, env={"DATABASE_URL": "postgresql:///x"})
    assert result.returncode == 2
    assert "database.url: secrets are read from the environment only; set DATABASE_URL" in result.stderr


# --- export-config-schema ----------------------------------------------------------------------------------------


def test_exported_config_schema_validates_the_sample(tmp_path):
    result = run_svc("export-config-schema", "--out", "schema.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    schema = json.loads((tmp_path / "schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    sample = yaml.load((ROOT / "svc.yaml.sample").read_text(), Loader=_Loader)
    jsonschema.validate(sample, schema, cls=jsonschema.Draft202012Validator)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"limits": {"page_sise": 1}}, schema, cls=jsonschema.Draft202012Validator)


def test_config_schema_goes_to_the_configured_path_by_default(tmp_path):
    (tmp_path / "svc.yaml").write_text("export: {config_schema: out/config.schema.json}\n")
    (tmp_path / "out").mkdir()
    result = run_svc("export-config-schema", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "out/config.schema.json").read_text())["title"] == "svc.yaml"


# --- serving and stopping ----------------------------------------------------------------------------------------


async def test_run_serves_and_sigterm_exits_zero(tmp_path, database_url):
    (tmp_path / "svc.yaml").write_text(LOOPBACK + "prod: {graphql: {ui: true}}\n")
    async with service_process([SVC, "run"], cwd=tmp_path, env={"DATABASE_URL": database_url}) as service:
        async with httpx.AsyncClient(base_url=service.url) as client:
            assert (await client.get("/live")).status_code == 200
            assert (await client.get("/ready")).json() == {"status": "ok", "database": "connected"}
        service.send_signal(signal.SIGTERM)
        assert await service.wait() == 0
    assert "dev feature enabled in prod mode: graphql.ui = true" in service.log
    assert "SIGTERM" in service.log and "stopped" in service.log


async def test_sigterm_lets_a_request_in_flight_finish_then_exits_zero(tmp_path, database_url):
    (tmp_path / "svc.yaml").write_text(LOOPBACK)
    entry = [sys.executable, "-m", "tests.support.slow_service", str(tmp_path / "svc.yaml")]
    async with service_process(entry, cwd=tmp_path, env={"DATABASE_URL": database_url}) as service:
        async with httpx.AsyncClient(base_url=service.url, timeout=10) as client, trio.open_nursery() as nursery:
            answers = []

            async def slow_request() -> None:
                response = await client.get("/slow", params={"seconds": "1.5"})
                answers.append((response.status_code, response.json(), trio.current_time()))

            nursery.start_soon(slow_request)
            await trio.sleep(0.5)
            service.send_signal(signal.SIGTERM)
            await trio.sleep(0.3)
            with pytest.raises(httpx.ConnectError):  # no new connections once stopping
                async with httpx.AsyncClient(base_url=service.url) as fresh:
                    await fresh.get("/live")
        assert await service.wait() == 0
        exited = trio.current_time()
    ((status, body, answered),) = answers
    assert (status, body) == (200, {"slept": 1.5})
    assert answered <= exited


async def test_shutdown_timeout_bounds_the_wait(tmp_path, database_url):
    (tmp_path / "svc.yaml").write_text("server: {host: 127.0.0.1, port: 0, shutdown_timeout: 500ms}\n")
    entry = [sys.executable, "-m", "tests.support.slow_service", str(tmp_path / "svc.yaml")]
    async with service_process(entry, cwd=tmp_path, env={"DATABASE_URL": database_url}) as service:
        async with httpx.AsyncClient(base_url=service.url, timeout=10) as client, trio.open_nursery() as nursery:
            failures = []

            async def endless_request() -> None:
                try:
                    await client.get("/slow", params={"seconds": "60"})
                except httpx.HTTPError as exc:
                    failures.append(exc)

            nursery.start_soon(endless_request)
            await trio.sleep(0.5)
            started = trio.current_time()
            service.send_signal(signal.SIGTERM)
            assert await service.wait(timeout=10) == 0
            assert trio.current_time() - started < 5
    assert len(failures) == 1


async def test_a_failed_startup_check_stops_the_service(tmp_path, database_url):
    (tmp_path / "svc.yaml").write_text(LOOPBACK + "database: {schemas: [app_public, no_such_schema]}\n")
    async with service_process([SVC], cwd=tmp_path, env={"DATABASE_URL": database_url}) as service:
        assert await service.wait() == 1
    assert service.url is None
    assert "schema 'no_such_schema' does not exist in the database" in service.log
