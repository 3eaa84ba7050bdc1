"""Exported schema files and pinning (SPEC "Command line", "Versioning"): `svc schema export` writes every export file
beside svc.yaml; `--check` writes nothing and exits 1 when one is missing or differs (the OpenAPI file compared as a
document: formatting and key order do not count); `export-graphql` writes the SDL, `export-openapi` the OpenAPI
document (YAML for a .yaml/.yml path); at startup and on reload the pinned SDL is compared per `export.pin` (fail
refuses, listing +/-/~ items; warn logs; off skips; a missing file pins nothing)."""

import json
import logging

import pytest
import yaml

from svc.config import load_config
from svc.server import StartupError, serve
from tests.support.postgres import execute, notify
from tests.support.process import run_svc
from tests.support.service import running_service, wait_until

pytestmark = pytest.mark.slow


def test_export_writes_every_file_then_check_passes(tmp_path, database_url):
    (tmp_path / "svc.yaml").write_text("export: {graphql: out/schema.graphql}\n")
    env = {"DATABASE_URL": database_url}
    result = run_svc("schema", "export", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"wrote {tmp_path}/out/schema.graphql",
        f"wrote {tmp_path}/openapi.json",
        f"wrote {tmp_path}/svc.schema.json",
    ]
    sdl = (tmp_path / "out/schema.graphql").read_text()
    assert "type Post implements Node" in sdl and "type Author implements Node" in sdl
    again = run_svc("schema", "export", cwd=tmp_path, env=env)
    assert again.stdout.splitlines()[0] == f"unchanged {tmp_path}/out/schema.graphql"
    check = run_svc("schema", "export", "--check", cwd=tmp_path, env=env)
    assert (check.returncode, check.stderr) == (0, "")


def test_check_reports_drift_and_missing_files_and_writes_nothing(tmp_path, database_url):
    env = {"DATABASE_URL": database_url}
    assert run_svc("schema", "export", cwd=tmp_path, env=env).returncode == 0
    before = (tmp_path / "schema.graphql").read_text()
    execute(database_url, "alter table app_public.authors add column drift_check text")
    try:
        (tmp_path / "svc.schema.json").unlink()
        check = run_svc("schema", "export", "--check", cwd=tmp_path, env=env)
    finally:
        execute(database_url, "alter table app_public.authors drop column drift_check")
    assert check.returncode == 1
    lines = check.stderr.splitlines()
    assert lines[0].startswith(f"svc: {tmp_path}/schema.graphql: differs from the generated graphql (")
    assert "+ Author.driftCheck" in lines[0] and "+ AuthorFilter.driftCheck" in lines[0]
    assert lines[1].startswith(f"svc: {tmp_path}/openapi.json: differs from the generated openapi (")
    assert "+ /components/schemas/Author/properties/driftCheck" in lines[1]
    assert lines[2] == f"svc: {tmp_path}/svc.schema.json: missing"
    assert (tmp_path / "schema.graphql").read_text() == before
    assert not (tmp_path / "svc.schema.json").exists()


def test_export_graphql_writes_the_sdl(tmp_path, database_url):
    env = {"DATABASE_URL": database_url}
    result = run_svc("export-graphql", "--out", "api.graphql", cwd=tmp_path, env=env)
    assert (result.returncode, result.stdout.strip()) == (0, "wrote api.graphql")
    run_svc("schema", "export", cwd=tmp_path, env=env)
    assert (tmp_path / "api.graphql").read_text() == (tmp_path / "schema.graphql").read_text()


def test_export_openapi_writes_json_or_yaml(tmp_path, database_url):
    env = {"DATABASE_URL": database_url}
    for out in ("api.json", "api.yaml"):
        result = run_svc("export-openapi", "--out", out, cwd=tmp_path, env=env)
        assert (result.returncode, result.stdout.strip()) == (0, f"wrote {out}")
    document = json.loads((tmp_path / "api.json").read_text())
    assert yaml.safe_load((tmp_path / "api.yaml").read_text()) == document
    assert document["openapi"] == "3.1.0"
    assert {"/rest/posts", "/rest/posts/{id}", "/rest/authors"} <= set(document["paths"])
    run_svc("schema", "export", cwd=tmp_path, env=env)
    assert (tmp_path / "openapi.json").read_text() == (tmp_path / "api.json").read_text()


def test_check_ignores_the_formatting_and_key_order_of_the_openapi_file(tmp_path, database_url):
    env = {"DATABASE_URL": database_url}
    assert run_svc("schema", "export", cwd=tmp_path, env=env).returncode == 0
    path = tmp_path / "openapi.json"
    path.write_text(json.dumps(json.loads(path.read_text()), indent=4, sort_keys=True))
    check = run_svc("schema", "export", "--check", cwd=tmp_path, env=env)
    assert (check.returncode, check.stderr) == (0, "")


def test_check_reports_openapi_drift_as_json_pointers(tmp_path, database_url):
    (tmp_path / "svc.yaml").write_text("export: {openapi: pinned/openapi.yaml}\n")
    env = {"DATABASE_URL": database_url}
    assert run_svc("schema", "export", cwd=tmp_path, env=env).returncode == 0
    path = tmp_path / "pinned/openapi.yaml"
    document = yaml.safe_load(path.read_text())
    assert document["openapi"] == "3.1.0"  # a .yaml path is written as YAML
    del document["paths"]["/rest/posts/search"]
    document["components"]["schemas"]["Post"]["properties"]["title"]["type"] = "integer"
    document["x-pinned"] = True
    path.write_text(yaml.safe_dump(document))
    check = run_svc("schema", "export", "--check", cwd=tmp_path, env=env)
    assert check.returncode == 1
    assert check.stderr.splitlines() == [
        f"svc: {path}: differs from the generated openapi (~ /components/schemas/Post/properties/title/type,"
        " + /paths/~1rest~1posts~1search, - /x-pinned)"
    ]


def test_export_needs_a_database(tmp_path):
    result = run_svc("schema", "export", cwd=tmp_path)
    assert result.returncode == 2 and "DATABASE_URL is not set" in result.stderr


def pinned(tmp_path, database_url, extra: str = "") -> None:
    """Export the current SDL beside svc.yaml, then remove a type from it so the generated schema differs."""
    (tmp_path / "svc.yaml").write_text("server: {host: 127.0.0.1, port: 0}\n" + extra)
    result = run_svc("schema", "export", cwd=tmp_path, env={"DATABASE_URL": database_url})
    assert result.returncode == 0, result.stderr
    path = tmp_path / "schema.graphql"
    path.write_text(path.read_text().replace("  title: String!\n", "  title: String\n  subtitle: String\n", 1))


async def test_pin_fail_refuses_to_start_listing_the_items(tmp_path, database_url):
    pinned(tmp_path, database_url)
    loaded = load_config(cwd=tmp_path, environ={"DATABASE_URL": database_url})
    with pytest.raises(StartupError) as info:
        await serve(loaded)
    message = str(info.value)
    assert "export.pin is fail and" in message
    assert "- Post.subtitle" in message and "~ Post.title" in message
    assert "re-export with `svc schema export`" in message


async def test_pin_warn_logs_and_serves(tmp_path, database_url, caplog):
    pinned(tmp_path, database_url)
    async with running_service(tmp_path, database_url, {"export": {"pin": "warn"}}) as service:
        assert (await service.client.get("/ready")).status_code == 200
    warning = next(r for r in caplog.records if "differs from the generated schema" in r.getMessage())
    assert warning.levelno == logging.WARNING
    assert "- Post.subtitle" in warning.getMessage()


async def test_pin_off_and_missing_files_pin_nothing(tmp_path, database_url, caplog):
    pinned(tmp_path, database_url)
    async with running_service(tmp_path, database_url, {"export": {"pin": "off"}}) as service:
        assert (await service.client.get("/ready")).status_code == 200
    (tmp_path / "schema.graphql").unlink()
    async with running_service(tmp_path, database_url) as service:
        assert (await service.client.get("/ready")).status_code == 200
    assert not any("differs from the generated schema" in r.getMessage() for r in caplog.records)


async def test_a_reload_that_breaks_the_pin_keeps_the_old_schema(tmp_path, database_url, caplog):
    (tmp_path / "svc.yaml").write_text("server: {host: 127.0.0.1, port: 0}\n")
    assert run_svc("schema", "export", cwd=tmp_path, env={"DATABASE_URL": database_url}).returncode == 0
    async with running_service(tmp_path, database_url) as service:
        execute(database_url, "alter table app_public.authors add column pin_check text")
        try:
            notify(database_url)
            await wait_until(lambda: _logged(caplog, "export.pin is fail"))
            assert (await service.client.get("/health")).json()["schema"]["generation"] == 1
        finally:
            execute(database_url, "alter table app_public.authors drop column pin_check")
    failure = next(r.getMessage() for r in caplog.records if "export.pin is fail" in r.getMessage())
    assert "still serving generation 1" in failure and "+ Author.pinCheck" in failure


async def _logged(caplog, text: str) -> bool:
    return any(text in record.getMessage() for record in caplog.records)


def test_check_uses_the_configured_mode(tmp_path, database_url):
    """`--mode` reaches the export commands (a dev-only schema list is honoured)."""
    (tmp_path / "svc.yaml").write_text("dev: {database: {schemas: [app_public, missing_schema]}}\n")
    env = {"DATABASE_URL": database_url}
    assert run_svc("schema", "export", cwd=tmp_path, env=env).returncode == 0
    dev = run_svc("schema", "export", "--mode", "dev", cwd=tmp_path, env=env)
    assert dev.returncode == 2 and "schema 'missing_schema' does not exist" in dev.stderr


async def test_export_subgraph_writes_the_subgraph_sdl_and_it_is_pinned(tmp_path, database_url):
    env = {"DATABASE_URL": database_url}
    off = run_svc("export-subgraph", "--out", "sub.graphql", cwd=tmp_path, env=env)
    assert (off.returncode, off.stderr.strip()) == (
        1,
        "svc: graphql.federation.enabled is off: there is no subgraph to export",
    )
    (tmp_path / "svc.yaml").write_text("graphql: {federation: {enabled: true}}\n")
    result = run_svc("export-subgraph", "--out", "sub.graphql", cwd=tmp_path, env=env)
    assert (result.returncode, result.stdout.strip()) == (0, "wrote sub.graphql")
    exported = run_svc("schema", "export", cwd=tmp_path, env=env)
    assert f"wrote {tmp_path}/subgraph.graphql" in exported.stdout.splitlines()
    sdl = (tmp_path / "subgraph.graphql").read_text()
    assert (tmp_path / "sub.graphql").read_text() == sdl
    assert 'type Post implements Node @key(fields: "rowId") @key(fields: "id") {' in sdl
    (tmp_path / "subgraph.graphql").write_text(sdl.replace(' @key(fields: "id") {', " {", 1))
    loaded = load_config(cwd=tmp_path, environ={"DATABASE_URL": database_url})
    with pytest.raises(StartupError) as info:
        await serve(loaded)
    assert "subgraph.graphql differs from the generated subgraph (1 items): ~ " in str(info.value)
