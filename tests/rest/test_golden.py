"""Golden files of REST (STYLE.md habit 14): for each `golden/X.http` (a request: its method and target on the first
line, then its headers, then a blank line and its body, if any), the compiled statement `X.sql` and the response
`X.json` (status, the headers REST defines, the body) are kept beside it, so a review shows exactly what a change
does to the SQL and to the answer. `SVC_UPDATE_GOLDEN=1` rewrites them.

The request goes through the REST stages without HTTP, as `RestEndpoint.handle` takes it: parsed into an
`ApiRequest`, planned, run through the pipeline, answered. A read's plan compiles to one statement; a write's to its
statements and its payload read (`test_write_golden.py` has those cases: writes change the database).
"""

from pathlib import Path

import pytest

from tests.support.rest import assert_rest_golden

DATABASE_FIXTURES = ["reads.sql", "rest_reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}}
GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(path.stem for path in GOLDEN.glob("*.http"))


@pytest.mark.parametrize("case", CASES)
async def test_golden(case, database_url, tmp_path):
    await assert_rest_golden(GOLDEN / case, database_url, tmp_path, SETTINGS)
