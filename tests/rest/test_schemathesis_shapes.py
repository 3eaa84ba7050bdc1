"""The OpenAPI document of the rarer schema shapes tells the truth too (issue 23, "Done when"): schemathesis, run as in
tests/rest/test_schemathesis.py against the `svc` command on loopback, finds no 5xx and no undocumented answer on
each shape's fixture, served alone: JSON Schema columns, postgres_fdw foreign tables over a second database,
exclusive arcs, table-per-type subtypes, and temporal keys (on PostgreSQL 18: `pg18_server`)."""

from collections.abc import Callable
from contextlib import ExitStack

import pytest
import yaml

from tests.rest.test_schemathesis import assert_schemathesis_passes
from tests.support.fdw import make_foreign_tables
from tests.support.postgres import fresh_database
from tests.support.process import SVC, service_process

pytestmark = pytest.mark.slow


def _foreign_tables(stack: ExitStack, server: str, database_url: str) -> None:
    remote_url = stack.enter_context(fresh_database(server, "fdw_remote", ["fdw_remote.sql"]))
    make_foreign_tables(database_url, remote_url, broken=False)


#: shape -> (fixtures, schemas, what else its database needs, on PostgreSQL 18)
SHAPES: dict[str, tuple[list[str], list[str], Callable[[ExitStack, str, str], None] | None, bool]] = {
    "json_schema_columns": (["json_schema.sql"], ["app"], None, False),
    "foreign_tables": (["fdw_local.sql"], ["app"], _foreign_tables, False),
    "exclusive_arcs": (["arcs.sql"], ["app"], None, False),
    "table_per_type_subtypes": (["subtypes.sql"], ["app"], None, False),
    "temporal_keys": (["temporal.sql"], ["public"], None, True),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_generated_requests_find_no_server_error_and_no_undocumented_answer(
    tmp_path, request: pytest.FixtureRequest, shape
):
    fixtures, schemas, prepare, pg18 = SHAPES[shape]
    pg_server = request.getfixturevalue("pg18_server" if pg18 else "pg_server")
    settings = {"server": {"host": "127.0.0.1", "port": 0}, "database": {"schemas": schemas}, "openapi": {"spec": True}}
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump(settings))
    with ExitStack() as stack:
        database_url = stack.enter_context(fresh_database(pg_server, f"shapes_{shape}", fixtures))
        if prepare is not None:
            prepare(stack, pg_server, database_url)
        async with service_process([SVC], cwd=tmp_path, env={"DATABASE_URL": database_url}) as service:
            assert service.url is not None, service.log
            await assert_schemathesis_passes(service.url, tmp_path)
