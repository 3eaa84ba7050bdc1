"""The OpenAPI document of the rarer schema shapes tells the truth too (issue 23, "Done when"): schemathesis, run as in
tests/rest/test_schemathesis.py against the `svc` command on loopback, finds no 5xx and no undocumented answer on
each shape's fixture, served alone: JSON Schema columns, and postgres_fdw foreign tables over a second database."""

import os
from collections.abc import Callable
from contextlib import ExitStack

import pytest
import trio
import yaml

from tests.rest.test_schemathesis import CHECKS, SCHEMATHESIS
from tests.support.fdw import make_foreign_tables
from tests.support.postgres import fresh_database
from tests.support.process import SVC, service_process

pytestmark = pytest.mark.slow


def _foreign_tables(stack: ExitStack, server: str, database_url: str) -> None:
    remote_url = stack.enter_context(fresh_database(server, "fdw_remote", ["fdw_remote.sql"]))
    make_foreign_tables(database_url, remote_url, broken=False)


#: shape -> (fixtures, schemas, what else its database needs)
SHAPES: dict[str, tuple[list[str], list[str], Callable[[ExitStack, str, str], None] | None]] = {
    "json_schema_columns": (["json_schema.sql"], ["app"], None),
    "foreign_tables": (["fdw_local.sql"], ["app"], _foreign_tables),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_generated_requests_find_no_server_error_and_no_undocumented_answer(tmp_path, pg_server, shape):
    fixtures, schemas, prepare = SHAPES[shape]
    settings = {"server": {"host": "127.0.0.1", "port": 0}, "database": {"schemas": schemas}, "openapi": {"spec": True}}
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump(settings))
    with ExitStack() as stack:
        database_url = stack.enter_context(fresh_database(pg_server, f"shapes_{shape}", fixtures))
        if prepare is not None:
            prepare(stack, pg_server, database_url)
        async with service_process([SVC], cwd=tmp_path, env={"DATABASE_URL": database_url}) as service:
            assert service.url is not None, service.log
            command = [
                SCHEMATHESIS, "run", f"{service.url}/openapi.json", "--checks", CHECKS, "--max-examples", "6",
                "--seed", "1", "--workers", "2", "--phases", "examples,fuzzing", "--no-color",
            ]  # fmt: skip
            with trio.fail_after(600):
                result = await trio.run_process(
                    command, capture_stdout=True, capture_stderr=True, check=False, cwd=tmp_path,
                    env={**os.environ, "SCHEMATHESIS_TELEMETRY": "false"},
                )  # fmt: skip
    report = result.stdout.decode(errors="replace")
    assert result.returncode == 0, report[-8000:] + result.stderr.decode(errors="replace")[-2000:]
    assert " passed" in report and "Operations:" in report
