"""The OpenAPI document tells the truth (issue 6, "Done when"): schemathesis, run against the service as an operator
runs it (the `svc` command on loopback), generates requests for every documented operation from the document alone
and finds no 5xx and no answer the document does not describe (status, content type, headers, body schema).

Stateless and bounded: examples and fuzzing phases, a fixed seed, a few examples per operation, two workers. The
two fixture schemas are served together (several schemas: shortcut and schema paths). The functions the fixtures
make fail are left out, since a database error a function raises is a masked 500 by SPEC "Masking": `fail`,
`failing_books` and `refuse` (any status, 5xx included) raise by design, `divide` divides by zero and `add` overflows
an integer for the extreme arguments schemathesis sends; `slow` sleeps.
"""

import os
import sys
from pathlib import Path

import pytest
import trio
import yaml

from tests.support.process import SVC, service_process

pytestmark = pytest.mark.slow

DATABASE_FIXTURES = ["reads.sql", "writes.sql"]
SCHEMATHESIS = str(Path(sys.executable).with_name("schemathesis"))
CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,"
    "response_schema_conformance"
)
FAILING_ON_PURPOSE = r"/rest/(app_public/)?rpc/(fail|failing_books|slow|add)$|/rest/(app/)?rpc/(divide|refuse)$"


async def assert_schemathesis_passes(url: str, cwd: Path, *options: str) -> None:
    """Run schemathesis over the document the service at `url` serves (bounded, seeded) and fail on any finding."""
    command = [
        SCHEMATHESIS, "run", f"{url}/openapi.json", "--checks", CHECKS, "--max-examples", "6", "--seed", "1",
        "--workers", "2", "--phases", "examples,fuzzing", "--no-color", *options,
    ]  # fmt: skip
    with trio.fail_after(600):
        result = await trio.run_process(
            command, capture_stdout=True, capture_stderr=True, check=False, cwd=cwd,
            env={**os.environ, "SCHEMATHESIS_TELEMETRY": "false"},
        )  # fmt: skip
    report = result.stdout.decode(errors="replace")
    assert result.returncode == 0, report[-8000:] + result.stderr.decode(errors="replace")[-2000:]
    assert " passed" in report and "Operations:" in report


async def test_generated_requests_find_no_server_error_and_no_undocumented_answer(tmp_path, database_url):
    settings = {
        "server": {"host": "127.0.0.1", "port": 0},
        "database": {"schemas": ["app_public", "app"]},
        "openapi": {"spec": True},
    }
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump(settings))
    async with service_process([SVC], cwd=tmp_path, env={"DATABASE_URL": database_url}) as service:
        assert service.url is not None, service.log
        await assert_schemathesis_passes(service.url, tmp_path, "--exclude-path-regex", FAILING_ON_PURPOSE)
