"""Golden files of REST writes (STYLE.md habit 14): for each `golden/writes/X.http` (a request as
`tests/rest/test_golden.py` reads them) the statements it runs, its write's then its payload read's, are kept in
`X.sql`, and the response in `X.json`. The request goes through the REST stages without HTTP; each case gets a
database of its own, loaded with this module's fixtures, so every case starts from the same rows. A JSON or merge
patch, two round trips the endpoint runs itself, is not a case here. `SVC_UPDATE_GOLDEN=1` rewrites them."""

from pathlib import Path

import pytest

from tests.support.postgres import fresh_database
from tests.support.rest import assert_rest_golden

FIXTURES = ["writes.sql", "rest_writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}
GOLDEN = Path(__file__).parent / "golden" / "writes"
CASES = sorted(path.stem for path in GOLDEN.glob("*.http"))


@pytest.mark.parametrize("case", CASES)
async def test_write_golden(case, pg_server, tmp_path):
    with fresh_database(pg_server, f"rest_write_{case}", FIXTURES) as database_url:
        await assert_rest_golden(GOLDEN / case, database_url, tmp_path, SETTINGS)
