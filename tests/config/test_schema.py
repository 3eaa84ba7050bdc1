"""The JSON Schema of svc.yaml is generated from the declarations and agrees with the loader."""

import base64
import shutil
from pathlib import Path

import attrs
import jsonschema
import pytest
import yaml

from svc.config import MODES, Config, config_json_schema, load_config
from svc.config._load import _Loader

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "svc.yaml.sample"


@pytest.fixture(scope="module")
def validator():
    schema = config_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def parse(text: str):
    return yaml.load(text, Loader=_Loader)


def test_the_sample_validates_against_the_schema(validator):
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(parse(SAMPLE.read_text()))]
    assert errors == []


@pytest.mark.parametrize("mode", MODES)
def test_the_sample_loads(tmp_path, mode):
    shutil.copy(SAMPLE, tmp_path / "svc.yaml")
    secret = "whsec_" + base64.b64encode(b"0123456789abcdef").decode()
    loaded = load_config(
        mode=mode, environ={"DATABASE_URL": "postgresql:///x", "SVC_WEBHOOK_SECRET": secret}, cwd=tmp_path
    )
    assert loaded.config.entities["people"].columns["password_hash"].omit is True
    assert loaded.config.limits.statement_timeout.seconds == (5 if mode == "dev" else 30)


def test_the_sample_shows_every_section():
    sections = set(parse(SAMPLE.read_text()))
    declared = {f.name for f in attrs.fields(Config) if not f.metadata.get("internal")} - {"debug"}
    assert declared | {"dev", "prod"} == sections


@pytest.mark.parametrize(
    "text",
    [
        "limits: {page_sise: 1}",
        "limits: {statement_timeout: 5000}",
        "debug: {sql: true}",
        "prod: {debug: {sql: true}}",
        "errors: {detail: verbose}",
        "entities: {t: {columns: {c: {fieldname: x}}}}",
    ],
)
def test_the_schema_refuses_what_the_loader_refuses(validator, text):
    assert not validator.is_valid(parse(text))


@pytest.mark.parametrize(
    "text",
    [
        "dev: {debug: {sql: true}}",
        "limits: {depth: off, statement_timeout: off}",
        "server: {port: '${PORT}'}",
        "rbac: {enabled: yes}",
        "openapi: {rest: false, schema: true, spec_path: /o.json}",
        "",
    ],
)
def test_the_schema_accepts_what_the_loader_accepts(validator, text):
    assert validator.is_valid(parse(text))


def test_defaults_and_docs_are_carried():
    database = config_json_schema()["$defs"]["DatabaseConfig"]["properties"]
    assert database["statement_cache"]["default"] == 512
    assert database["statement_cache"]["description"].startswith("Prepared statements cached")
    assert database["schemas"]["default"] == ["app_public"]
