"""The root nursery: the pool, the first snapshot, the actors and the HTTP edge, owned together (layer 11).

ARCHITECTURE.md ("Runtime"): the HTTP edge (`svc.edge`: the fast HTTP/1.1 edge, or hypercorn, per `server.http`)
runs inside our nursery with a shutdown event; actors run under the supervisor. Signals belong here: SIGTERM (and
SIGINT) stop accepting, answer the requests already read within `server.shutdown_timeout`, cancel the actors and
close the pool, and `serve` returns normally (exit 0); SIGHUP asks the reloader for a new snapshot (SPEC
"Operations").

Telemetry (SPEC "Telemetry") is made here from `telemetry.*` and the environment: the metrics (served on the API
port or on `telemetry.metrics.listen`, pushed over OTLP), traces and logs; it reads the pool's, the dispatcher's and
the poller's counts when collected, and exports what is left (bounded) when the service stops.

Read replicas (SPEC "Operations"): a pool per URL of `DATABASE_REPLICA_URLS`, the executor choosing among them for
reads, the replica health checker keeping them in or out of the rotation. A statement failing on a changed schema
asks the reloader for a new snapshot when `reload.enabled`.

Startup does not wait for the database: when it cannot be reached, the service listens anyway (`/live` 200, `/ready`
503) and the reloader builds the first snapshot as soon as it can. A database that is reachable but does not fit
the configuration (a startup check fails) stops the service with an error instead.
"""

import logging
import signal
import time
from collections.abc import Sequence
from functools import partial

import trio

from svc.actors import (
    BucketSweeper,
    Dispatcher,
    Fatal,
    Poller,
    Reloader,
    ReplicaChecker,
    SchemaWatcher,
    StatementAdvisor,
    export_snapshot,
    supervise,
)
from svc.advise import foreign_table_advice, requests_authenticated
from svc.auth import Authenticator
from svc.config import Config, ConfigError, LoadedConfig, load_config
from svc.db import ConnectionSettings, Executor, PoolStats, Replicas, open_pool, open_replicas
from svc.edge import EdgeSettings, serve_http
from svc.events import prepare_capture
from svc.graphql import Registry
from svc.http import (
    App,
    DebugHeaders,
    DebugStatements,
    GraphqlRoutes,
    GraphqlSocket,
    ImportRoutes,
    Live,
    MetricsRoutes,
    OpenapiRoutes,
    Probes,
    RestRoutes,
    Route,
    UiRoutes,
)
from svc.pipeline import Pipeline
from svc.snapshot import Snapshot, SnapshotHolder, active_integrations, build_snapshot
from svc.telemetry.export import FLUSH_TIMEOUT, Settings, Telemetry
from svc.version import VERSION

log = logging.getLogger("svc.server")


class StartupError(Exception):
    """The service cannot start (a startup check failed); the message says why."""


async def serve(
    loaded: LoadedConfig,
    *,
    routes: Sequence[Route] = (),
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until SIGTERM or SIGINT; report the bound addresses (`http://host:port`) once listening.

    `routes` are added to the service's own (tests use this to stand in for slow API requests).
    """
    config = loaded.config
    conninfo = loaded.secrets.require_database_url()
    started = time.monotonic()
    for warning in loaded.warnings:
        log.warning("%s", warning)
    telemetry = Telemetry(telemetry_settings(config), version=VERSION)
    telemetry.start()
    try:
        await _serve(
            loaded, conninfo=conninfo, started=started, telemetry=telemetry, routes=routes, task_status=task_status
        )
    finally:
        with trio.move_on_after(FLUSH_TIMEOUT + 1.0), trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(telemetry.shutdown, abandon_on_cancel=True)
    log.info("stopped")


def telemetry_settings(config: Config) -> Settings:
    telemetry = config.telemetry
    otlp = telemetry.otlp
    return Settings(
        service_name=telemetry.service_name,
        metrics=telemetry.metrics.enabled,
        endpoint=otlp.endpoint,
        headers=dict(otlp.headers),
        traces=otlp.traces,
        push_metrics=otlp.metrics,
        logs=otlp.logs,
        interval=otlp.interval.seconds,
        sample_ratio=telemetry.traces.sample_ratio,
    )


async def _serve(
    loaded: LoadedConfig,
    *,
    conninfo: str,
    started: float,
    telemetry: Telemetry,
    routes: Sequence[Route],
    task_status: trio.TaskStatus[list[str]],
) -> None:
    config = loaded.config
    database = config.database
    settings = connection_settings(config)
    replica_size = database.replicas.pool_size or database.pool_size
    async with (
        open_pool(conninfo, settings, size=database.pool_size) as pool,
        open_replicas(loaded.secrets.replica_urls, settings, size=replica_size) as replicas,
    ):
        executor = Executor(pool, replicas=replicas, sql_comments=database.sql_comments, explain=config.debug.explain)
        holder = SnapshotHolder()

        watching = config.mode == "dev" and config.watch.enabled
        shutdown = trio.Event()
        dispatcher = _dispatcher(loaded, conninfo, executor, shutdown)
        reloader = Reloader(
            conninfo=conninfo,
            config=config,
            holder=holder,
            build=partial(_build, executor, Registry()),
            connect_timeout=config.database.connect_timeout.seconds,
            on_swap=[
                *([export_snapshot] if watching and config.watch.export else []),
                *([dispatcher.capture_ready] if dispatcher else []),
                *([_ForeignTableAdvice()] if requests_authenticated(config, loaded.secrets.jwt_secret) else []),
                _IntegrationsLog(),
            ],
        )
        if config.reload.enabled:
            executor.on_schema_changed = reloader.schema_changed
        await _first_snapshot(reloader)
        pipeline = Pipeline(executor)
        poller = _poller(config, pipeline, holder, shutdown)
        live = Live(config, pipeline, poller) if poller is not None else None
        probes = Probes(
            pool=pool,
            holder=holder,
            version=VERSION,
            started=started,
            counter=executor.counter,
            subscriptions=poller.stats if poller is not None else None,
            replicas=replicas,
        )
        service_routes = [
            *probes.routes(),
            *GraphqlRoutes(config, pipeline, live).routes(),
            *RestRoutes(config, pipeline).routes(),
            *ImportRoutes(pipeline).routes(),
            *OpenapiRoutes(config).routes(),
            *UiRoutes(config).routes(),
        ]
        authenticator = Authenticator(config.auth, loaded.secrets.jwt_secret)
        metrics = config.telemetry.metrics
        metrics_routes = MetricsRoutes(metrics.path, telemetry).routes() if metrics.enabled else []
        if telemetry.metrics is not None:
            telemetry.metrics.observe_pools(lambda: [pool.stats(), *_replica_stats(replicas)])
            if dispatcher is not None:
                telemetry.metrics.observe_deliveries(dispatcher.deliveries)
        if poller is not None:
            telemetry.observe_rounds(poller.stats)
        own_listener = metrics.enabled and metrics.listen is not None
        debug = config.debug  # allowed only in the dev: block
        debug_headers = DebugHeaders(sql=debug.sql, explain=debug.explain) if debug.sql or debug.explain else None
        app = App(
            config,
            holder,
            [
                *service_routes,
                *([] if own_listener else metrics_routes),
                *(debug_headers.routes() if debug_headers else []),
                *DebugStatements(conninfo).routes(),
                *routes,
            ],
            authenticator=authenticator,
            telemetry=telemetry,
            debug=debug_headers,
        )
        if live is not None and config.graphql.enabled:
            app.add_socket("/graphql", GraphqlSocket(config, live, holder, authenticator, app.limit).serve)
        async with trio.open_nursery() as nursery:
            await nursery.start(_handle_signals, shutdown, reloader, nursery.cancel_scope)
            watcher = (
                SchemaWatcher(
                    conninfo=conninfo,
                    reloader=reloader,
                    loaded=loaded,
                    read_config=partial(load_config, path=loaded.path, mode=config.mode),
                    connect_timeout=config.database.connect_timeout.seconds,
                )
                if watching
                else None
            )
            actors = [
                ("reloader", reloader.run),
                *([("schema watcher", watcher.run)] if watcher else []),
                *(
                    [("replica health checker", ReplicaChecker(replicas, pool, database.replicas).run)]
                    if replicas
                    else []
                ),
                *([("rate limiter", BucketSweeper(app.rate_limiter.sweep).run)] if app.rate_limiter else []),
                *([("event dispatcher", dispatcher.run)] if dispatcher else []),
                *([("subscription poller", poller.run)] if poller else []),
                *(
                    [("statement advisor", StatementAdvisor(conninfo, enabled=partial(_statistics_on, holder)).run)]
                    if config.mode == "dev"
                    else []
                ),
            ]
            for name, actor in actors:
                await nursery.start(supervise, name, actor)
            drained = [dispatcher.stopped] if dispatcher else []
            if own_listener:
                assert metrics.listen is not None
                metrics_app = App(config, holder, metrics_routes, authenticator=authenticator)
                await nursery.start(serve_http, metrics_app, edge_settings(config, metrics.listen), shutdown)
            serving = partial(_serve_http, app, edge_settings(config), shutdown, drained, nursery.cancel_scope)
            binds = await nursery.start(serving)
            log.info("svc %s serving %s in %s mode on %s", VERSION, ", ".join(config.database.schemas),
                     config.mode, ", ".join(binds))  # fmt: skip
            task_status.started(binds)


def _replica_stats(replicas: Replicas | None) -> list[PoolStats]:
    return [replica.pool.stats() for replica in replicas.all] if replicas is not None else []


def connection_settings(config: Config) -> ConnectionSettings:
    timeout = config.limits.statement_timeout
    return ConnectionSettings(
        statement_timeout_ms=timeout.milliseconds if timeout is not None else None,
        schemas=config.database.schemas,
        statement_cache=config.database.statement_cache,
        connect_timeout=config.database.connect_timeout.seconds,
    )


async def _build(executor: Executor, registry: Registry, config: Config) -> Snapshot:
    """A snapshot, with the event capture it asks for installed (or checked, under `events.install: manual`);
    every snapshot of the process shares the one `registry` of automatic persisted queries."""
    return await prepare_capture(executor, await build_snapshot(executor, config, registry))


def _dispatcher(loaded: LoadedConfig, conninfo: str, executor: Executor, shutdown: trio.Event) -> Dispatcher | None:
    """The event dispatcher, when webhook targets are configured."""
    if not loaded.config.events.targets:
        return None
    return Dispatcher(
        conninfo=conninfo,
        executor=executor,
        config=loaded.config,
        secrets=loaded.secrets.webhook_secrets,
        stopping=shutdown,
    )


def _statistics_on(holder: SnapshotHolder) -> bool:
    """Whether the current configuration leaves the pg_stat_statements integration on (the dev advisor's switch)."""
    snapshot = holder.current
    return snapshot is None or snapshot.api(None).config.extensions.integrations.pg_stat_statements != "off"


def _poller(config: Config, pipeline: Pipeline, holder: SnapshotHolder, shutdown: trio.Event) -> Poller | None:
    """The subscription poller, when subscriptions are on."""
    subscriptions = config.subscriptions
    if not subscriptions.enabled:
        return None
    return Poller(
        pipeline=pipeline,
        holder=holder,
        interval=subscriptions.interval.seconds,
        max_active=subscriptions.max_active,
        max_per_client=subscriptions.max_per_client,
        # Groups read at once: half the pool, so requests keep connections while a round runs.
        concurrency=max(1, config.database.pool_size // 2),
        stopping=shutdown,
    )


class _ForeignTableAdvice:
    """SPEC "Authorization": foreign tables served while requests are authenticated are reported at startup, and
    after a reload that serves a new one (row-level security does not apply to them)."""

    def __init__(self) -> None:
        self._told: set[str] = set()

    async def __call__(self, snapshot: Snapshot) -> None:
        for advice in foreign_table_advice(snapshot.catalog, snapshot.whole.model):
            if advice.subject not in self._told:
                self._told.add(advice.subject)
                log.warning("advice: %s (%s): %s", advice.subject, advice.kind, advice.text)


class _IntegrationsLog:
    """SPEC "Extension integrations": the active integrations are logged at startup, and again after a reload
    that changes them."""

    def __init__(self) -> None:
        self._told: tuple[str, ...] | None = None

    async def __call__(self, snapshot: Snapshot) -> None:
        active = active_integrations(snapshot.catalog, snapshot.whole.model, snapshot.config)
        if active != self._told:
            self._told = active
            log.info("extension integrations active: %s", ", ".join(active) or "none")


async def _first_snapshot(reloader: Reloader) -> None:
    """Build the first snapshot; when the database is unreachable the reloader keeps trying in the background."""
    try:
        await reloader.reload("startup")
    except Fatal as exc:
        raise StartupError(str(exc)) from exc


def edge_settings(config: Config, bind: str | None = None) -> EdgeSettings:
    """The HTTP edge's settings for the API port, or for another listener at `bind` (host:port)."""
    server = config.server
    host, port = server.host, server.port
    if bind is not None:
        host, _, number = bind.rpartition(":")
        port = int(number)
    return EdgeSettings(
        http=server.http,
        host=host,
        port=port,
        keep_alive_timeout=server.keep_alive_timeout.seconds,
        header_timeout=server.header_timeout.seconds,
        shutdown_timeout=server.shutdown_timeout.seconds,
    )


async def _serve_http(
    app: App,
    settings: EdgeSettings,
    shutdown: trio.Event,
    drained: Sequence[trio.Event],
    root: trio.CancelScope,
    *,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the API until `shutdown` is set and its in-flight requests are answered; wait for the actors that
    finish work on shutdown (`drained`: the event dispatcher's deliveries in flight), then stop everything else."""
    await serve_http(app, settings, shutdown, task_status=task_status)
    with trio.move_on_after(settings.shutdown_timeout):
        for event in drained:
            await event.wait()
    root.cancel()


async def _handle_signals(
    shutdown: trio.Event,
    reloader: Reloader,
    root: trio.CancelScope,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """SIGHUP reloads; the first SIGTERM/SIGINT shuts down gracefully, a second one stops at once."""
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        task_status.started()
        async for signum in signals:
            name = signal.Signals(signum).name
            if signum == signal.SIGHUP:
                reloader.request("SIGHUP")
            elif not shutdown.is_set():
                log.info("%s: no new connections; finishing in-flight requests, then stopping", name)
                shutdown.set()
            else:
                log.warning("%s again: stopping without waiting for in-flight requests", name)
                root.cancel()


def run(loaded: LoadedConfig, *, routes: Sequence[Route] = ()) -> int:
    """Serve in a new Trio run; the process exit code: 0 after a graceful stop, 1 when the service cannot run."""
    failure: BaseException | None = None
    try:
        trio.run(partial(serve, loaded, routes=routes))
    except* (StartupError, Fatal, ConfigError) as group:
        failure = group.exceptions[0]
    if failure is not None:
        log.error("cannot serve: %s", failure)
        return 1
    return 0
