"""`svc advise` (SPEC "Command line", issue 21): schema advice printed, exit 0. On a schema with one of each problem
it finds (and near misses it must not report), and on one with none."""

from tests.support.postgres import execute
from tests.support.process import run_svc
from tests.support.service import running_service

DATABASE_FIXTURES = ["advise.sql"]
APP = "database: {schemas: [app]}\nentities: {authors: {columns: {secret_code: {omit: true}}}}\n"


def advise(tmp_path, database_url, config: str, **env: str) -> list[str]:
    (tmp_path / "svc.yaml").write_text(config)
    result = run_svc("advise", cwd=tmp_path, env={"DATABASE_URL": database_url, **env})
    assert (result.returncode, result.stderr) == (0, ""), result
    return result.stdout.splitlines()


def findings(lines: list[str]) -> dict[str, list[str]]:
    """The printed advice: the subjects under each heading."""
    found: dict[str, list[str]] = {}
    heading = None
    for line in lines:
        if line.endswith(":") and not line.startswith(" "):
            heading = line[:-1]
            found[heading] = []
        elif line.startswith("  "):
            assert heading is not None, lines
            found[heading].append(line.strip().split(": ", 1)[0])
    return found


def test_advise_finds_each_problem_and_none_of_the_near_misses(tmp_path, database_url):
    lines = advise(tmp_path, database_url, APP, AUTH_JWT_SECRET="s" * 32)
    assert findings(lines) == {
        "foreign key without an index": ["app.books (author_id)", "app.loans (book_id)"],
        "table without a primary key": ["app.log_lines"],
        "foreign table while requests are authenticated": ["app.remote_notes"],
        "function that should be STABLE": ["app.count_books"],
        "hidden column with an index": ["app.authors.secret_code"],
    }, "\n".join(lines)
    text = "\n".join(lines)
    assert "`create index on app.books (author_id)`" in text
    assert "`alter function app.count_books stable`" in text


def test_foreign_tables_are_advised_only_while_requests_are_authenticated(tmp_path, database_url):
    found = findings(advise(tmp_path, database_url, APP))
    assert "foreign table while requests are authenticated" not in found
    assert found["table without a primary key"] == ["app.log_lines"]


def test_a_hypertable_without_a_primary_key_is_told_its_dimension_columns(tmp_path, database_url):
    """timescaledb cannot be installed where this is built (neither Debian's packages nor PyPI carry it): the view it
    keeps its hypertables' dimensions in, `timescaledb_information.dimensions`, is stood in for by a table of the
    same columns the extension documents, naming one hypertable."""
    execute(
        database_url,
        "create schema metrics; create table metrics.readings (device_id integer, at timestamptz, value float8);"
        " create schema timescaledb_information; create table timescaledb_information.dimensions"
        " (hypertable_schema name, hypertable_name name, dimension_number bigint, column_name name,"
        " column_type regtype, dimension_type text, num_partitions smallint);"
        " insert into timescaledb_information.dimensions values"
        " ('metrics', 'readings', 2, 'device_id', 'integer', 'Space', 4),"
        " ('metrics', 'readings', 1, 'at', 'timestamptz', 'Time', null)",
    )
    try:
        lines = advise(tmp_path, database_url, "database: {schemas: [metrics]}\n")
        assert findings(lines) == {"table without a primary key": ["metrics.readings"]}, lines
        assert "it is a hypertable, whose keys must hold its dimension columns (at, device_id)" in "\n".join(lines)
        off = "database: {schemas: [metrics]}\nextensions: {integrations: {timescaledb: off}}\n"
        assert "hypertable" not in "\n".join(advise(tmp_path, database_url, off))
    finally:
        execute(database_url, "drop schema metrics, timescaledb_information cascade")


def test_a_schema_without_problems_gets_no_advice(tmp_path, database_url):
    lines = advise(tmp_path, database_url, "database: {schemas: [clean]}\n", AUTH_JWT_SECRET="s" * 32)
    assert lines == ["no advice: nothing to change found"]


async def test_the_service_reports_foreign_tables_at_startup_while_requests_are_authenticated(
    tmp_path, database_url, caplog
):
    settings = {"database": {"schemas": ["app"]}}
    for secret, reported in ((None, []), ("s" * 32, ["app.remote_notes"])):
        caplog.clear()
        environ = {"AUTH_JWT_SECRET": secret} if secret else {}
        async with running_service(tmp_path / str(bool(secret)), database_url, settings, environ=environ) as service:
            assert (await service.client.get("/ready")).status_code == 200
        advice = [r.getMessage() for r in caplog.records if r.name == "svc.server" and "advice:" in r.getMessage()]
        assert [message.split(" ", 2)[1] for message in advice] == reported, advice
        assert all("row-level security does not apply to foreign tables" in message for message in advice)
