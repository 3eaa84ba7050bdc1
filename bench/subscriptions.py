"""The subscriptions benchmark: N live queries of one shape served by one `svc run`; how long the poller's rounds
take, how many statements they send, and what the service spends on them.

Run from the repository root with the project's virtualenv (`just bench-subscriptions` does this):

    .venv/bin/python bench/subscriptions.py [--quick] [--counts 1000,10000] [--window 20] [--updates 10]

It (re)creates bench_pagila as bench/run.py does (`--skip-load` reuses it) and starts ONE `svc run --mode prod` on
loopback, configured as bench/run.py configures it (default pool of 10) plus subscriptions at the default 1 s
interval. Then, for each count N:

1. N subscriptions of one shape, `rental(rentalId: $id)`, each on its own rental: pagila has 1000 films but 16044
   rentals, so no two subscribers share values (and a row of the poller's statement). `--per-socket` of them share
   one graphql-transport-ws WebSocket. The script waits until every one has its first result.
2. A window of `--window` seconds: each second `--updates` random subscribed rentals are updated through SQL, so
   that some subscribers get a new result, while /health is polled every 0.1 s.
3. The sockets close; the next count starts once /health shows no live subscription.

Reported per N, over the window: round duration p50/p99/max, computed from each round's `roundMs.last` as /health
shows it (its own p50/p99 span the latest 1000 rounds, which would mix in the previous count's rounds);
statements per round (the delta of /health `statements` over the delta of `rounds`, between the first and the
last round of the window, read as each ended) and the last round's `lastRoundStatements`; results sent (the delta
of /health `results`) and received; the delay from an update to its subscriber's result; the service's CPU
(utime + stime, % of one core) and peak RSS, and PostgreSQL's CPU, from bench/run.py's /proc sampler. The goal
(the subscriptions issue): 10000 subscribers with rounds under 250 ms at the default 1 s interval on a 2-core
machine, judged on the window's p99 round.

The result replaces the subscriptions section of bench/RESULTS.md (a `--quick` smoke run writes
.bench-cache/RESULTS-quick.md; `--out` to write elsewhere). `--profile` also runs py-spy on the service during the
largest count's window and prints where its time went.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import run  # bench/run.py: the database, the /proc sampler and the service's settings are the main benchmark's
import trio
import yaml
from sections import markers, write_section
from trio_websocket import ConnectionClosed, open_websocket_url

BEGIN, END = markers("subscriptions")
BASE = f"http://127.0.0.1:{run.SVC_PORT}"
QUERY = "subscription Live($id: Int!) { rental(rentalId: $id) { rentalId rentalDate returnDate lastUpdate } }"
# return_date changes the result; pagila's last_updated trigger moves last_update too.
UPDATE = "update public.rental set return_date = now() where rental_id = any(%s)"
GOAL_COUNT, GOAL_MS = 10000, 250.0


def config(max_subscriptions: int) -> dict:
    """bench/run.py's svc.yaml (prod defaults otherwise) with subscriptions on. Every subscriber connects from
    127.0.0.1, which the service counts as one client, so max_per_client must hold the largest count too."""
    return {
        "database": {"schemas": ["public"]},
        "server": {"host": "127.0.0.1", "port": run.SVC_PORT},
        "export": {"pin": "off"},
        "watch": {"enabled": False},
        "telemetry": {"logs": {"level": "warning"}},
        "subscriptions": {"enabled": True, "max_active": max_subscriptions, "max_per_client": max_subscriptions},
    }


def start_svc(work: Path, max_subscriptions: int) -> run.Server:
    """`svc run` as bench/run.py starts it (its log in `work`), once it answers a query."""
    (work / "svc.yaml").write_text(yaml.safe_dump(config(max_subscriptions)))
    log_path = work / "svc.log"
    svc = Path(sys.executable).with_name("svc")
    with log_path.open("wb") as out:
        process = subprocess.Popen(
            [str(svc), "run", "--mode", "prod", "--config", "svc.yaml"],
            cwd=work,
            env={**os.environ, "DATABASE_URL": run.DB_URL},
            stdout=out,
            stderr=out,
        )
    server = run.Server("svc", f"{BASE}/graphql", process, log_path)
    run.wait_until_answers(server, b'{"query": "{ __typename }"}')
    return server


def health() -> dict:
    with urllib.request.urlopen(f"{BASE}/health", timeout=10) as response:
        return json.loads(response.read())


async def health_async() -> dict:
    return await trio.to_thread.run_sync(health)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return math.nan


# ---------------------------------------------------------------------------------------------------------------
# The subscribers


@dataclass
class Subscribers:
    """What the sockets received; subscription ids are the rental ids."""

    first: set[int] = field(default_factory=set)
    ended: set[int] = field(default_factory=set)  # refused, completed, or on a socket that closed
    received: int = 0  # `next` messages
    errors: Counter[str] = field(default_factory=Counter)
    #: Rentals updated whose subscriber has not had a result since: rental id -> time.monotonic() of the update.
    changed: dict[int, float] = field(default_factory=dict)
    delays: list[float] = field(default_factory=list)

    def receive(self, message: dict) -> None:
        kind, rental = message.get("type"), int(message.get("id", 0))
        if kind == "next":
            self.received += 1
            if message["payload"].get("errors"):
                self.errors[f"next with errors: {json.dumps(message['payload']['errors'])[:300]}"] += 1
            if rental not in self.first:
                self.first.add(rental)
            elif rental in self.changed:
                self.delays.append(time.monotonic() - self.changed.pop(rental))
        else:  # `error` (refused) or `complete` (ended by the service): neither should happen here
            self.ended.add(rental)
            self.errors[f"{kind}: {json.dumps(message.get('payload'))[:300]}"] += 1


async def socket(rentals: list[int], subscribers: Subscribers) -> None:
    """One WebSocket carrying one subscription per rental, read until cancelled."""
    try:
        async with open_websocket_url(
            f"ws://127.0.0.1:{run.SVC_PORT}/graphql", subprotocols=["graphql-transport-ws"]
        ) as ws:
            await ws.send_message(json.dumps({"type": "connection_init"}))
            ack = json.loads(await ws.get_message())
            if ack.get("type") != "connection_ack":
                subscribers.errors[f"instead of connection_ack: {ack}"] += 1
                return
            for rental in rentals:
                payload = {"query": QUERY, "variables": {"id": rental}}
                await ws.send_message(json.dumps({"id": str(rental), "type": "subscribe", "payload": payload}))
            while True:
                message = json.loads(await ws.get_message())
                if message.get("type") == "ping":
                    await ws.send_message(json.dumps({"type": "pong"}))
                else:
                    subscribers.receive(message)
    except ConnectionClosed as exc:
        subscribers.errors[f"socket closed: {exc.reason}"] += 1
        subscribers.ended.update(rentals)
    except OSError as exc:
        subscribers.errors[f"socket failed: {exc!r}"] += 1
        subscribers.ended.update(rentals)


# ---------------------------------------------------------------------------------------------------------------
# One count


async def poll_rounds(seen: dict[int, tuple[float, int]], stop: trio.Event) -> None:
    """Each round ended in the window: its number -> (its duration as /health's `roundMs.last` shows it, /health
    `statements` then). Polled faster than rounds end (one per interval at most), so none is missed unless /health
    itself stalls. Read just after a round ended, `statements` counts that round's statement and none of the next
    (a round sends its statement as it starts), so deltas between two seen rounds are exact."""
    while not stop.is_set():
        body = await health_async()
        stats = body["subscriptions"]
        if stats["roundMs"]["last"] is not None:
            seen.setdefault(stats["rounds"], (stats["roundMs"]["last"], body["statements"]))
        await trio.sleep(0.1)


async def update_stream(args: argparse.Namespace, rentals: list[int], subscribers: Subscribers) -> int:
    """`args.updates` random subscribed rentals updated each second of the window, one statement each at a random
    moment of the second (updates in step with the rounds would make every delay the same); the rows updated."""
    rng = random.Random(len(rentals))  # the same rentals and moments on every run of this count
    updated = 0
    with psycopg.connect(run.DB_URL, autocommit=True) as conn:
        start = trio.current_time()
        for second in range(round(args.window)):
            chosen = rng.sample(rentals, min(args.updates, len(rentals)))
            for moment, rental in sorted((second + rng.random(), rental) for rental in chosen):
                await trio.sleep_until(start + moment)
                subscribers.changed[rental] = time.monotonic()  # before: its result cannot reach a subscriber earlier
                await trio.to_thread.run_sync(conn.execute, UPDATE, [[rental]])
                updated += 1
        await trio.sleep_until(start + round(args.window))
    return updated


async def measure(count: int, args: argparse.Namespace, pid: int, postmaster: int) -> dict:
    """Open `count` subscriptions, measure a window (again when someone else's load disturbed it), close them."""
    with psycopg.connect(run.DB_URL) as conn:
        rentals = [r for (r,) in conn.execute("select rental_id from rental order by rental_id limit %s", [count])]
    subscribers = Subscribers()
    result: dict[str, Any] = {"count": count, "sockets": math.ceil(count / args.per_socket)}
    # The machine is shared (someone's test suite): start on a quiet one if it comes soon; `other` shows the rest.
    await trio.to_thread.run_sync(run.wait_for_quiet, args.quiet_wait)
    result["rss_before"] = rss_mb(pid)
    async with trio.open_nursery() as nursery:
        started = time.monotonic()
        for i in range(0, count, args.per_socket):
            nursery.start_soon(socket, rentals[i : i + args.per_socket], subscribers)
        with trio.move_on_after(args.subscribe_timeout):
            while len(subscribers.first | subscribers.ended) < count:
                await trio.sleep(0.05)
        result["subscribe_seconds"] = time.monotonic() - started
        result["subscribed"] = len(subscribers.first)
        result["health_subscribed"] = await health_async()  # for the report, if some have none
        run.log(f"{count}: {len(subscribers.first)} first results in {result['subscribe_seconds']:.1f} s")
        await trio.sleep(2.5)  # let the rounds that ran while subscriptions opened finish
        windows = []
        for attempt in range(args.retry_noisy + 1):
            windows.append(await window(args, rentals, subscribers, pid, postmaster, profile=attempt == 0))
            if windows[-1]["other_cpu"] <= 100 * run.NOISY:
                break
            run.log(f"{count}: window disturbed ({windows[-1]['other_cpu']:.0f}% of a core of other load)")
        result.update(min(windows, key=lambda w: w["other_cpu"]), discarded=len(windows) - 1)
        result["errors"] = dict(subscribers.errors)
        nursery.cancel_scope.cancel()
    # Closed sockets end their subscriptions; the next count starts from none.
    with trio.move_on_after(30):
        while (await health_async())["subscriptions"]["active"]:
            await trio.sleep(0.2)
    result["left_active"] = (await health_async())["subscriptions"]["active"]
    return result


async def window(
    args: argparse.Namespace, rentals: list[int], subscribers: Subscribers, pid: int, postmaster: int, *, profile: bool
) -> dict:
    """`args.window` seconds of updates, and what the rounds, /health and /proc showed meanwhile."""
    seen: dict[int, tuple[float, int]] = {}
    stop = trio.Event()
    subscribers.changed.clear()
    subscribers.delays.clear()
    before, received_before = await health_async(), subscribers.received
    spy = await start_profile(args, len(rentals), pid) if profile else None
    with run.Sampler(pid, postmaster) as sampler:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(poll_rounds, seen, stop)
            updated = await update_stream(args, rentals, subscribers)
            stop.set()
    after = await health_async()
    received = subscribers.received - received_before
    await trio.sleep(2.5)  # results of the last second's updates: their delay counts, they are not missed
    if spy is not None:
        await finish_profile(spy, args)
    # The rounds that ended in the window (the first poll may show one that ended before it).
    numbers = sorted(n for n in seen if n > before["subscriptions"]["rounds"])
    durations = [seen[n][0] for n in numbers]
    first, last = (numbers[0], numbers[-1]) if numbers else (0, 0)
    server, pg = sampler.cores("server"), sampler.cores("pg")
    mine = (sampler.runner_seconds + sampler.client_seconds) / sampler.wall  # this script (and py-spy)
    return {
        "updated": updated,
        "received": received,
        "rounds": len(durations),
        "rounds_missed": last - first + 1 - len(durations) if numbers else 0,
        "p50": statistics.median(durations) if durations else math.nan,
        "p99": run._percentile(sorted(durations), 99),
        "max": max(durations, default=math.nan),
        "statements_per_round": (seen[last][1] - seen[first][1]) / (last - first) if last > first else math.nan,
        "last_round_statements": after["subscriptions"]["lastRoundStatements"],
        "results": after["subscriptions"]["results"] - before["subscriptions"]["results"],
        "delay_p50": statistics.median(subscribers.delays) if subscribers.delays else math.nan,
        "delay_max": max(subscribers.delays, default=math.nan),
        "missed": len(subscribers.changed),
        "cpu": server * 100,
        "pg_cpu": pg * 100,
        "other_cpu": max(0.0, sampler.machine_cores - server - pg - mine) * 100,
        "rss_peak": sampler.peak_rss_kb / 1024,
        "health_after": after,
    }


# ---------------------------------------------------------------------------------------------------------------
# py-spy (--profile): where the service's time goes during the largest count's window


async def start_profile(args: argparse.Namespace, count: int, pid: int) -> trio.Process | None:
    """py-spy recording the service for the window, when asked for and this is the largest count."""
    if not args.profile or count != max(args.counts):
        return None
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    cmd = [py_spy, "record", "--pid", str(pid), "--duration", str(round(args.window)), "--rate", "100"]
    # Raw (collapsed) stacks, to rank below; --nonblocking: the service is not paused to be sampled.
    cmd += ["--format", "raw", "--nonblocking", "--output", str(args.profile)]
    return await trio.lowlevel.open_process(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def finish_profile(process: trio.Process, args: argparse.Namespace, top: int = 20) -> None:
    """Print the frames the samples were in: the innermost frame, and the innermost svc frame (which charges the
    libraries' time, attrs hashing or psycopg, to the line of svc that called them)."""
    await process.wait()
    if not args.profile.exists():
        run.log(f"py-spy wrote nothing (exit {process.returncode})")
        return
    own: Counter[str] = Counter()
    in_svc: Counter[str] = Counter()
    total = 0
    for line in args.profile.read_text().splitlines():
        stack, _, samples = line.rpartition(" ")
        frames, n = stack.split(";"), int(samples)
        total += n
        own[frames[-1]] += n
        in_svc[next((f for f in reversed(frames) if "(svc/" in f), frames[-1])] += n
    for title, counts in (("innermost frame", own), ("innermost svc frame", in_svc)):
        print(f"\npy-spy, {total} samples (100 a second while not idle), by {title}:")
        for frame, n in counts.most_common(top):
            print(f"  {100 * n / total:5.1f}%  {frame}")
    print(f"\ncollapsed stacks: {args.profile}")


# ---------------------------------------------------------------------------------------------------------------
# Report


def software() -> str:
    commit = run.run(["git", "-C", str(run.ROOT), "rev-parse", "--short", "HEAD"]).stdout.strip()
    dirty = run.run(
        ["git", "-C", str(run.ROOT), "status", "--porcelain", "--", "svc", "bench", ":!bench/RESULTS.md"]
    ).stdout.strip()
    with psycopg.connect(run.DB_URL) as conn:
        row = conn.execute("select version()").fetchone()
    pg = row[0].split(" on ")[0] if row else "PostgreSQL"
    state = " (with uncommitted changes)" if dirty else ""
    return f"svc at commit {commit}{state}, Python {platform.python_version()}, {pg}"


def report(results: list[dict], args: argparse.Namespace, started: dt.datetime, problems: list[str]) -> str:
    fmt = run._fmt
    lines = [
        BEGIN,
        "## Subscriptions: the poller's rounds",
        "",
        f"Generated by `bench/subscriptions.py{' ' + ' '.join(args.argv) if args.argv else ''}` on "
        f"{started:%Y-%m-%d %H:%M} UTC{' (QUICK smoke run)' if args.quick else ''} ({platform.machine()}, "
        f"{os.cpu_count()} cores; the service, PostgreSQL and this client share them; {software()}). One "
        "`svc run --mode prod` (pool of 10, subscriptions every 1 s, max_active and max_per_client at the largest "
        f"count). N subscriptions of `{QUERY}`, each on its own rental, {args.per_socket} per graphql-transport-ws "
        f"socket; once all have their first result, a {args.window:g} s window in which {args.updates} random "
        "subscribed rentals are updated through SQL each second. Rounds: each round of the window as /health's "
        "`roundMs.last` shows it. Statements/round: /health `statements` over `rounds`, their deltas between the "
        "first and the last round of the window (read as each ended); in brackets the last round's "
        "`lastRoundStatements`. "
        "Results: /health `results` delta (sent) and `next` messages received. Delay: update to its subscriber's "
        "result. CPU: the service's utime + stime over the window, % of one core, answering /health 10 times a "
        "second included (PG: the PostgreSQL processes of "
        "bench_pagila; other: the rest of the machine's busy time, someone else's load: a window with more than "
        f"{100 * run.NOISY:.0f}% of a core of it is measured again, at most {args.retry_noisy}×, and the least "
        "disturbed kept); RSS: the service's, before "
        "subscribing and at its peak in the window.",
        "",
        "| subscribers | sockets | subscribed in | rounds | round p50 | round p99 | round max "
        "| statements/round | results sent / received | update → result p50 / max | missed | svc CPU | PG CPU "
        "| other CPU | RSS before → peak | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        errors = sum(r["errors"].values())
        lines.append(
            f"| {r['count']} | {r['sockets']} | {r['subscribe_seconds']:.1f} s | {r['rounds']} | {fmt(r['p50'])} ms "
            f"| {fmt(r['p99'])} ms | {fmt(r['max'])} ms | {fmt(r['statements_per_round'], 2)} "
            f"({r['last_round_statements']}) | {r['results']} / {r['received']} | {fmt(r['delay_p50'] * 1000, 0)} / "
            f"{fmt(r['delay_max'] * 1000, 0)} ms | {r['missed']} | {r['cpu']:.0f}% | {r['pg_cpu']:.0f}% "
            f"| {r['other_cpu']:.0f}% "
            f"| {r['rss_before']:.0f} → {r['rss_peak']:.0f} MB | {errors} |"
        )
    lines += ["", goal(results)]
    for r in results:
        for message, n in r["errors"].items():
            lines.append(f"- {r['count']} subscribers: {n} × {message}")
        if r["subscribed"] < r["count"]:
            lines.append(
                f"- {r['count']} subscribers: {r['subscribed']} had a first result; /health then: "
                f"`{json.dumps(r['health_subscribed'])}`"
            )
        if r["left_active"]:
            lines.append(
                f"- {r['count']} subscribers: {r['left_active']} still active 30 s after the sockets closed; /health "
                f"after the window: `{json.dumps(r['health_after'])}`"
            )
        if r["discarded"]:
            lines.append(f"- {r['count']} subscribers: {r['discarded']} disturbed window(s) measured again")
        if r["other_cpu"] > 100 * run.NOISY:
            lines.append(
                f"- {r['count']} subscribers: disturbed, someone else's load took {r['other_cpu']:.0f}% of a core "
                "during the window (the machine is shared)"
            )
        if r["rounds_missed"]:
            lines.append(f"- {r['count']} subscribers: {r['rounds_missed']} rounds of the window not seen by /health")
    lines += [f"- svc log: `{line}`" for line in problems[:10]]
    lines.append(END)
    return "\n".join(lines) + "\n"


def goal(results: list[dict]) -> str:
    measured = [r for r in results if r["count"] >= GOAL_COUNT and r["subscribed"] == r["count"]]
    if not measured:
        return f"Goal ({GOAL_COUNT} subscribers, rounds under {GOAL_MS:g} ms at 1 s): not measured in this run."
    r = measured[-1]
    met = r["p99"] < GOAL_MS and not r["errors"]
    return (
        f"Goal ({GOAL_COUNT} subscribers, rounds under {GOAL_MS:g} ms at 1 s, judged on the window's p99): "
        f"{'met' if met else 'NOT met'} with {r['count']} subscribers (p50 {r['p50']:.0f} ms, "
        f"p99 {r['p99']:.0f} ms{', with errors' if r['errors'] else ''})."
    )


# ---------------------------------------------------------------------------------------------------------------
# Main


async def main(args: argparse.Namespace) -> None:
    started = dt.datetime.now(dt.UTC)
    if not run.port_is_free(run.SVC_PORT):
        raise run.BenchError(f"port {run.SVC_PORT} is in use; stop whatever listens there")
    if not args.skip_load:
        run.load_database()
    postmaster = run.postmaster_pid()
    results = []
    with tempfile.TemporaryDirectory(prefix="svc-bench-subscriptions-") as work:
        server = await trio.to_thread.run_sync(start_svc, Path(work), max(args.counts))
        try:
            run.log(f"svc (pid {server.process.pid}) serves subscriptions on :{run.SVC_PORT}")
            for count in args.counts:
                result = await measure(count, args, server.process.pid, postmaster)
                summary = {k: v for k, v in result.items() if not k.startswith("health")}
                run.log(f"{count}: {summary}")
                results.append(result)
        finally:
            server.stop()
        log_lines = server.log_path.read_text().splitlines()
        problems = [line for line in log_lines if any(w in line for w in ("WARNING", "ERROR", "CRITICAL", "Trace"))]
    section = report(results, args, started, problems)
    print(section)
    write_section(args.out, "subscriptions", section)
    run.log(f"wrote {args.out}")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 100 and 1000 subscribers, 5 s window")
    parser.add_argument("--counts", help="subscriber counts measured (default 1000,10000; quick 100,1000)")
    parser.add_argument("--window", type=float, help="seconds measured per count (default 20, quick 5)")
    parser.add_argument("--updates", type=int, default=10, help="rentals updated each second of the window")
    parser.add_argument("--per-socket", type=int, default=100, help="subscriptions per WebSocket")
    parser.add_argument("--subscribe-timeout", type=float, default=90, help="longest wait for the first results")
    parser.add_argument("--skip-load", action="store_true", help="reuse bench_pagila as it is (no reload)")
    parser.add_argument("--quiet-wait", type=float, help="longest wait for an idle machine per count (default 10 s)")
    parser.add_argument("--retry-noisy", type=int, help="windows measured again when disturbed (default 1, quick 0)")
    parser.add_argument("--profile", type=Path, help="py-spy's collapsed stacks of the largest count's window here")
    parser.add_argument("--out", type=Path, help="report (default bench/RESULTS.md; quick: .bench-cache/)")
    args = parser.parse_args(argv)
    args.argv = argv
    args.counts = [int(n) for n in (args.counts or ("100,1000" if args.quick else "1000,10000")).split(",")]
    args.window = args.window or (5.0 if args.quick else 20.0)
    args.quiet_wait = args.quiet_wait if args.quiet_wait is not None else (2.0 if args.quick else 10.0)
    args.retry_noisy = args.retry_noisy if args.retry_noisy is not None else (0 if args.quick else 1)
    args.out = args.out or (run.CACHE / "RESULTS-quick.md" if args.quick else run.BENCH / "RESULTS.md")
    return args


if __name__ == "__main__":
    try:
        trio.run(main, parse_args(sys.argv[1:]))
    except run.BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        sys.exit(1)
