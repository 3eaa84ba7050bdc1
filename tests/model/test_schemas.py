"""Several schemas and name collisions (SPEC "Naming"): a name unique across schemas stays plain; a table name two
schemas share gets the schema prefix in both; a derived name colliding with one of the service's own types (or a
type generated for another table) is prefixed, with a warning naming the `type_name` setting; a `type_name` naming
one of the service's own types is refused."""

import pytest

from svc.model import EntityRef, ModelError
from tests.support.model import read_model

DATABASE_FIXTURES = ["model_schemas.sql"]
BOTH = {"database": {"schemas": ["app", "auth"]}}


def names(model):
    return {(e.schema, e.table): e.type_name for e in model.entities}


async def test_a_table_name_in_two_schemas_is_prefixed_in_both(database_url, tmp_path):
    _, model = await read_model(database_url, tmp_path, BOTH)
    found = names(model)
    assert found[("app", "audit_log")] == "AppAuditLog"
    assert found[("auth", "audit_log")] == "AuthAuditLog"
    assert found[("auth", "sessions")] == "Session"  # unique across schemas: plain
    assert model.entity(EntityRef("auth", "audit_log")).roots.list == "authAuditLogs"
    assert model.entity(EntityRef("app", "audit_log")).roots.connection == "appAuditLogsConnection"
    assert any(
        "auth.audit_log is served as type AuthAuditLog" in w and "entities.auth.audit_log.type_name" in w
        for w in model.warnings
    )


async def test_one_schema_alone_keeps_plain_names(database_url, tmp_path):
    _, model = await read_model(database_url, tmp_path, {"database": {"schemas": ["auth"]}})
    assert names(model)[("auth", "audit_log")] == "AuditLog"


async def test_names_of_the_service_own_types_are_prefixed(database_url, tmp_path):
    _, model = await read_model(database_url, tmp_path, {"database": {"schemas": ["app"]}})
    found = names(model)
    assert found[("app", "node")] == "AppNode"
    assert found[("app", "page_infos")] == "AppPageInfo"
    assert any("app.node is served as type AppNode" in w for w in model.warnings)


async def test_a_name_generated_for_another_table_is_prefixed(database_url, tmp_path):
    _, model = await read_model(database_url, tmp_path, {"database": {"schemas": ["app"]}})
    assert names(model)[("app", "post_filters")] == "AppPostFilter"
    assert model.entity(EntityRef("app", "posts")).names.filter == "PostFilter"


async def test_type_name_setting_wins_and_stops_the_prefix(database_url, tmp_path):
    settings = {**BOTH, "entities": {"app.audit_log": {"type_name": "ActivityEntry"}}}
    _, model = await read_model(database_url, tmp_path, settings)
    found = names(model)
    assert found[("app", "audit_log")] == "ActivityEntry"
    assert found[("auth", "audit_log")] == "AuditLog"


async def test_type_name_naming_a_service_type_is_refused(database_url, tmp_path):
    settings = {"database": {"schemas": ["app"]}, "entities": {"posts": {"type_name": "PageInfo"}}}
    with pytest.raises(ModelError) as info:
        await read_model(database_url, tmp_path, settings)
    assert info.value.problems == ["entities.posts.type_name: 'PageInfo' is one of the service's own types"]


async def test_an_ambiguous_entities_key_must_name_its_schema(database_url, tmp_path):
    with pytest.raises(ModelError) as info:
        await read_model(database_url, tmp_path, {**BOTH, "entities": {"audit_log": {"omit": True}}})
    assert info.value.problems == [
        "entities.audit_log: ambiguous (app.audit_log, auth.audit_log); write it as schema.table"
    ]
