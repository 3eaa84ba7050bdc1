"""The export benchmark (issue 21): rows per second of `POST /export` against `COPY ... TO STDOUT` of the same rows in
the same form, the limit of what any client can get out of PostgreSQL.

Run from the repository root with the project's virtualenv (`just bench-export` does this):

    .venv/bin/python bench/export.py [--rows 1000000] [--rounds 3]

It (re)creates the database `bench_export` on the local PostgreSQL (127.0.0.1:5432, user postgres, trust auth) with
one table of `--rows` generated rows (an integer key, two texts, a numeric, a timestamp), starts `svc run` in prod
mode, and times each form `--rounds` times, alternating the two sides: NDJSON (svc's lines against COPY of
`json_build_object(...)::text`, the same bytes) and CSV (svc's records against COPY's CSV with a header, the
timestamp in its JSON form as svc's CSV cells have it). Each side
is read by one client to the end over loopback and counted; a round's rate is rows over its wall time, and the
report gives the median round. The result replaces the export section of bench/RESULTS.md (`--out` to write
elsewhere).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psycopg
import trio
import yaml
from sections import markers, write_section  # bench/ is the script's directory, on the path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.process import SVC, service_process  # noqa: E402  (the repository root is on the path now)

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
DB_NAME = "bench_export"
DB_URL = f"postgresql://postgres@127.0.0.1:5432/{DB_NAME}"
BEGIN, END = markers("export")
QUERY = "{ itemsConnection(orderBy: ROW_ID_ASC) { nodes { id: rowId label region amount createdAt } } }"
#: COPY of the same rows in the same form as svc writes them.
COPIES = {
    "ndjson": (
        "copy (select json_build_object('id', id, 'label', label, 'region', region, 'amount', amount::text,"
        " 'createdAt', created_at)::text from app_public.items order by id) to stdout"
    ),
    "csv": "copy (select id, label, region, amount, to_json(created_at) #>> '{}' as \"createdAt\""
    " from app_public.items order by id) to stdout (format csv, header)",
}


def create_database(rows: int) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f"drop database if exists {DB_NAME} with (force)")
        conn.execute(f"create database {DB_NAME}")
    with psycopg.connect(DB_URL, autocommit=True) as conn:
        conn.execute(
            "create schema app_public;"
            " create table app_public.items (id integer primary key, label text not null, region text not null,"
            " amount numeric(12, 2) not null, created_at timestamptz not null);"
        )
        conn.execute(
            "insert into app_public.items select n, 'item ' || n || ' of the export benchmark',"
            " (array['north', 'south', 'east', 'west'])[1 + n %% 4], (n %% 10000) / 100.0,"
            " timestamptz '2026-01-01 00:00+00' + n * interval '1 minute' from generate_series(1, %s) n",
            (rows,),
        )
        conn.execute("vacuum analyze app_public.items")


def copy_round(form: str) -> tuple[float, int]:
    started, size = time.perf_counter(), 0
    with psycopg.connect(DB_URL) as conn, conn.cursor().copy(COPIES[form]) as stream:
        for chunk in stream:
            size += len(chunk)
    return time.perf_counter() - started, size


async def svc_round(client: httpx.AsyncClient, form: str) -> tuple[float, int]:
    started, size = time.perf_counter(), 0
    async with client.stream("POST", "/export", json={"query": QUERY, "format": form}) as response:
        assert response.status_code == 200, response.status_code
        async for chunk in response.aiter_raw():
            size += len(chunk)
    return time.perf_counter() - started, size


async def measure(args: argparse.Namespace, work: Path) -> dict[str, dict[str, list[float]]]:
    settings = {
        "server": {"host": "127.0.0.1", "port": 0},
        "database": {"schemas": ["app_public"]},
        "export": {"pin": "off"},
        "watch": {"enabled": False},
    }
    (work / "svc.yaml").write_text(yaml.safe_dump(settings))
    times: dict[str, dict[str, list[float]]] = {form: {"svc": [], "copy": []} for form in COPIES}
    async with service_process([SVC, "run", "--mode", "prod"], cwd=work, env={"DATABASE_URL": DB_URL}) as service:
        assert service.url is not None, service.log
        async with httpx.AsyncClient(base_url=service.url, timeout=300) as client:
            for form in COPIES:
                await svc_round(client, form)  # warm: the plan, the statement, the table in the cache
                copy_round(form)
                for round_ in range(args.rounds):
                    svc_seconds, svc_size = await svc_round(client, form)
                    copy_seconds, copy_size = await trio.to_thread.run_sync(copy_round, form)
                    crlf = copy_size + (args.rows + 1 if form == "csv" else 0)  # COPY ends CSV records with LF
                    assert svc_size == crlf, (form, svc_size, copy_size)
                    times[form]["svc"].append(svc_seconds)
                    times[form]["copy"].append(copy_seconds)
                    print(f"{form} round {round_ + 1}: svc {svc_seconds:.2f} s, COPY {copy_seconds:.2f} s", flush=True)
    return times


def report(times: dict[str, dict[str, list[float]]], args: argparse.Namespace) -> str:
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        BEGIN,
        "## Export: rows per second against COPY",
        "",
        f"Generated by `bench/export.py --rows {args.rows} --rounds {args.rounds}` on {started}"
        f" ({platform.machine()}, {os.cpu_count()} cores): one `svc run --mode prod` and `COPY ... TO STDOUT` of"
        " the same rows in the same bytes (NDJSON: `json_build_object(...)::text`; CSV: COPY's CSV with a header,"
        " LF where svc writes CRLF), each read to the end by one loopback client; the median of the rounds.",
        "",
        "| form | rows | svc rows/s | COPY rows/s | svc / COPY | goal |",
        "|---|---|---|---|---|---|",
    ]
    for form, sides in times.items():
        svc_rate = args.rows / statistics.median(sides["svc"])
        copy_rate = args.rows / statistics.median(sides["copy"])
        ratio = svc_rate / copy_rate
        lines.append(
            f"| {form} | {args.rows:,} | {svc_rate:,.0f} | {copy_rate:,.0f} | {ratio:.2f}"
            f" | 0.5 ({'met' if ratio >= 0.5 else 'NOT met'}) |"
        )
    lines += ["", END, ""]
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> None:
    create_database(args.rows)
    with tempfile.TemporaryDirectory(prefix="svc-bench-export-") as work:
        times = await measure(args, Path(work))
    section = report(times, args)
    print(section)
    write_section(args.out, "export", section)
    print(f"wrote {args.out}")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the exported table")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of each side and form")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md", help="report with the section")
    return parser.parse_args(argv)


if __name__ == "__main__":
    trio.run(main, parse_args(sys.argv[1:]))
