"""The bulk data benchmark (issue 21): rows per second of `POST /export` against `COPY ... TO STDOUT` of the same rows
in the same form, and of `POST /import/{Type}` against `COPY ... FROM STDIN` of the same rows: the limits of what
any client can get out of PostgreSQL and into it.

Run from the repository root with the project's virtualenv (`just bench-bulk` does this):

    .venv/bin/python bench/bulk.py [--rows 1000000] [--rounds 3]

It (re)creates the database `bench_export` on the local PostgreSQL (127.0.0.1:5432, user postgres, trust auth) with
one table of `--rows` generated rows (an integer key, two texts, a numeric, a timestamp), starts `svc run` in prod
mode, and times each form `--rounds` times, alternating the two sides: NDJSON (svc's lines against COPY of
`json_build_object(...)::text`, the same bytes) and CSV (svc's records against COPY's CSV with a header, the
timestamp in its JSON form as svc's CSV cells have it). Each side
is read by one client to the end over loopback and counted. Then import: the same rows as `CreateItemInput` NDJSON
lines posted to `/import/Item` against COPY of the same rows as CSV into the same (emptied) table, each round
starting from an empty table. A round's rate is rows over its wall time; the report gives the median round. The
result replaces the bulk section of bench/RESULTS.md (`--out` to write elsewhere).
"""

from __future__ import annotations

import argparse
import json
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
BEGIN, END = markers("bulk")
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
            " create table app_public.imported (like app_public.items including all);"
        )
        conn.execute(
            "insert into app_public.items select n, 'item ' || n || ' of the export benchmark',"
            " (array['north', 'south', 'east', 'west'])[1 + n %% 4], (n %% 10000) / 100.0,"
            " timestamptz '2026-01-01 00:00+00' + n * interval '1 minute' from generate_series(1, %s) n",
            (rows,),
        )
        conn.execute("vacuum analyze app_public.items")


def import_bodies(rows: int) -> tuple[bytes, bytes]:
    """The same rows as `CreateImportedInput` NDJSON lines (svc) and as CSV records (COPY)."""
    lines, records = [], []
    for n in range(1, rows + 1):
        label, region, amount = (
            f"item {n} of the import benchmark",
            ("north", "south", "east", "west")[n % 4],
            n % 10000,
        )
        minute = f"2026-01-{1 + n // 1440 % 28:02d}T{n // 60 % 24:02d}:{n % 60:02d}:00+00:00"
        lines.append(
            json.dumps(
                {"rowId": n, "label": label, "region": region, "amount": f"{amount / 100:.2f}", "createdAt": minute}
            )
        )
        records.append(f"{n},{label},{region},{amount / 100:.2f},{minute}")
    return ("\n".join(lines) + "\n").encode(), ("\n".join(records) + "\n").encode()


def empty_imported() -> None:
    with psycopg.connect(DB_URL, autocommit=True) as conn:
        conn.execute("truncate app_public.imported")


def copy_in_round(records: bytes) -> float:
    empty_imported()
    started = time.perf_counter()
    with psycopg.connect(DB_URL) as conn:
        with conn.cursor().copy("copy app_public.imported from stdin (format csv)") as copy:
            copy.write(records)
    return time.perf_counter() - started


async def import_round(client: httpx.AsyncClient, body: bytes, rows: int) -> float:
    await trio.to_thread.run_sync(empty_imported)
    started = time.perf_counter()
    response = await client.post("/import/Imported", content=body)
    assert response.status_code == 201 and response.json() == {"created": rows}, response.text
    return time.perf_counter() - started


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
            body, records = import_bodies(args.import_rows)
            times["import"] = {"svc": [], "copy": []}
            await import_round(client, body, args.import_rows)  # warm
            for round_ in range(args.rounds):
                svc_seconds = await import_round(client, body, args.import_rows)
                copy_seconds = await trio.to_thread.run_sync(copy_in_round, records)
                times["import"]["svc"].append(svc_seconds)
                times["import"]["copy"].append(copy_seconds)
                print(f"import round {round_ + 1}: svc {svc_seconds:.2f} s, COPY {copy_seconds:.2f} s", flush=True)
    return times


def report(times: dict[str, dict[str, list[float]]], args: argparse.Namespace) -> str:
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        BEGIN,
        "## Export and import: rows per second against COPY",
        "",
        f"Generated by `bench/bulk.py --rows {args.rows} --import-rows {args.import_rows} --rounds {args.rounds}`"
        f" on {started}"
        f" ({platform.machine()}, {os.cpu_count()} cores): one `svc run --mode prod` and `COPY ... TO STDOUT` of"
        " the same rows in the same bytes (NDJSON: `json_build_object(...)::text`; CSV: COPY's CSV with a header,"
        " LF where svc writes CRLF), each read to the end by one loopback client; import: the same rows posted as"
        " NDJSON to `/import/Imported` against `COPY ... FROM STDIN` of them as CSV, into an emptied table; the median"
        " of the rounds.",
        "",
        "| what | rows | svc rows/s | COPY rows/s | svc / COPY | goal |",
        "|---|---|---|---|---|---|",
    ]
    for form, sides in times.items():
        rows, goal = (args.import_rows, 0.3) if form == "import" else (args.rows, 0.5)
        what = "import (NDJSON in, COPY of CSV)" if form == "import" else f"export {form}"
        svc_rate = rows / statistics.median(sides["svc"])
        copy_rate = rows / statistics.median(sides["copy"])
        ratio = svc_rate / copy_rate
        lines.append(
            f"| {what} | {rows:,} | {svc_rate:,.0f} | {copy_rate:,.0f} | {ratio:.2f}"
            f" | {goal} ({'met' if ratio >= goal else 'NOT met'}) |"
        )
    lines += ["", END, ""]
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> None:
    create_database(args.rows)
    with tempfile.TemporaryDirectory(prefix="svc-bench-bulk-") as work:
        times = await measure(args, Path(work))
    section = report(times, args)
    print(section)
    write_section(args.out, "bulk", section)
    print(f"wrote {args.out}")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the exported table")
    parser.add_argument("--import-rows", type=int, default=200_000, help="rows each import round writes")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of each side and form")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md", help="report with the section")
    return parser.parse_args(argv)


if __name__ == "__main__":
    trio.run(main, parse_args(sys.argv[1:]))
