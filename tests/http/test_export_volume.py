"""`POST /export` of 1,000,000 generated rows (issue 21's test): the service (its own process, so its memory is its
own) streams them in NDJSON and CSV with flat memory, its resident size sampled while it streams, and the bytes are
exactly those `COPY ... TO STDOUT` writes for the same query (CSV: COPY ends records with LF, RFC 4180 and REST CSV
with CRLF; the data holds no line breaks, so that is the one difference).
"""

import hashlib
from pathlib import Path

import httpx
import psycopg
import pytest
import trio
import yaml

from tests.support.postgres import execute
from tests.support.process import SVC, service_process

pytestmark = pytest.mark.slow

DATABASE_FIXTURES = ["basic.sql"]
ROWS = 1_000_000
#: What the service's resident size may grow by while it streams (the export is ~100 MB of NDJSON, ~70 MB of CSV).
RSS_GROWTH_BOUND = 16 * 1024 * 1024
QUERY = "{ millionsConnection(orderBy: ROW_ID_ASC) { nodes { id: rowId label twice } } }"


@pytest.fixture(scope="module", autouse=True)
def million(database_url):
    execute(
        database_url,
        "create table app_public.millions (id integer primary key, label text not null, twice bigint not null);"
        f" insert into app_public.millions select n, 'row ' || n || ' of a million, generated for the export test', 2 * n from generate_series(1, {ROWS}) n;"
        " analyze app_public.millions",
    )


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def copied(database_url: str, copy: str) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with psycopg.connect(database_url) as conn, conn.cursor().copy(copy) as stream:
        for chunk in stream:
            digest.update(bytes(chunk))
            size += len(chunk)
    return digest.hexdigest(), size


@pytest.mark.parametrize("format_", ["ndjson", "csv"])
async def test_a_million_rows_stream_with_flat_memory_byte_for_byte_as_copy_writes_them(
    tmp_path, database_url, format_
):
    settings = {"server": {"host": "127.0.0.1", "port": 0}, "database": {"schemas": ["app_public"]}}
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump(settings))
    digest, size, peak = hashlib.sha256(), 0, 0
    with trio.fail_after(240):
        async with service_process([SVC, "run"], cwd=tmp_path, env={"DATABASE_URL": database_url}) as service:
            assert service.url is not None, service.log
            pid = service.process.pid
            async with httpx.AsyncClient(base_url=service.url, timeout=60) as client:
                warm = await client.post("/export", json={"query": QUERY.replace("ROW_ID_ASC", "ROW_ID_DESC")})
                assert warm.status_code == 200  # a first export: what the service holds after one is its floor
                before = rss(pid)
                body = {"query": QUERY, "format": format_}
                async with client.stream("POST", "/export", json=body) as response:
                    assert response.status_code == 200
                    async for chunk in response.aiter_raw():
                        digest.update(chunk)
                        size += len(chunk)
                        peak = max(peak, rss(pid))
    if format_ == "ndjson":
        line = "json_build_object('id', id, 'label', label, 'twice', twice::text)::text"
        expected = copied(database_url, f"copy (select {line} from app_public.millions order by id) to stdout")
    else:
        lf, crlf = hashlib.sha256(), 0
        with psycopg.connect(database_url) as conn:
            copy = "copy (select id, label, twice from app_public.millions order by id) to stdout (format csv, header)"
            with conn.cursor().copy(copy) as stream:
                for chunk in stream:
                    records = bytes(chunk).replace(b"\n", b"\r\n")
                    lf.update(records)
                    crlf += len(records)
        expected = (lf.hexdigest(), crlf)
    assert (digest.hexdigest(), size) == expected
    assert size > RSS_GROWTH_BOUND  # holding the answer would show
    assert peak - before < RSS_GROWTH_BOUND, (before, peak)
