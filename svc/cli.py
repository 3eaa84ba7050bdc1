"""The `svc` command (SPEC "Command line"): serve, the embedded demo, the export commands and advice.

`svc` and `svc run` serve on `server.host:server.port`; `svc demo` serves the demo schema from an embedded
PostgreSQL in dev mode; `svc schema export [--check]` writes (or checks) every export file; `svc export-graphql
--out <path>`, `svc export-subgraph --out <path>` (federation on), `svc export-openapi --out <path>` (YAML for a
`.yaml`/`.yml` path) and `svc export-config-schema --out <path>` write one artifact; `svc events sql` prints the
event capture DDL; `svc advise` prints schema advice (svc.advise), `svc advise --statements [--top n]` the most
expensive operations and the indexes they lack (svc.statement_advice). `--config` and `--mode` are accepted before or
after the command. Exit codes: 0 after a graceful stop, a written file or printed advice, 1 when the service cannot
run, 2 for a usage or configuration error (every problem is printed, each naming its key).
"""

import argparse
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from svc.config import MODES, ConfigError, LoadedConfig, load_config
from svc.telemetry import configure_logging

if TYPE_CHECKING:
    from svc.catalog import Catalog
    from svc.db import Executor, Transaction
    from svc.graphql import GraphqlSchema
    from svc.model import Model

T = TypeVar("T")

EXIT_FAILURE = 1
EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.command(args))
    except ConfigError as exc:
        for problem in exc.problems:
            print(f"svc: {problem}", file=sys.stderr)
        return EXIT_USAGE


def _run(args: argparse.Namespace) -> int:
    loaded = _load(args)
    loaded.secrets.require_database_url()
    from svc import server  # after the configuration is known to be usable: its imports take a while

    return server.run(loaded)


def _demo(args: argparse.Namespace) -> int:
    from svc import demo, server

    configure_logging()  # until the configuration is read, which needs the embedded database's address
    with demo.embedded_database(Path(args.data)) as url:
        loaded = _load(args, mode="dev", environ={**os.environ, "DATABASE_URL": url})
        return server.run(loaded)


def _export_config_schema(args: argparse.Namespace) -> int:
    from svc.export import config_schema_text

    out = Path(args.out or load_config(path=args.config, mode=args.mode).config.export.config_schema)
    out.write_text(config_schema_text(), encoding="utf-8")
    print(f"wrote {out}")
    return 0


def _schema_export(args: argparse.Namespace) -> int:
    from svc.export import check_exports, export_files, openapi_document, write_exports

    loaded = _load(args)
    model, graphql = _read_schema(loaded)
    files = export_files(loaded.config, graphql, openapi_document(loaded.config, model))
    if args.check:
        problems = check_exports(files)
        for problem in problems:
            print(f"svc: {problem}", file=sys.stderr)
        return EXIT_FAILURE if problems else 0
    written = write_exports(files)
    for file in files:
        print(f"{'wrote' if file.path in written else 'unchanged'} {file.path}")
    return 0


def _export_graphql(args: argparse.Namespace) -> int:
    loaded = _load(args)
    _, graphql = _read_schema(loaded)
    Path(args.out).write_text(graphql.sdl, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


def _export_subgraph(args: argparse.Namespace) -> int:
    loaded = _load(args)
    if not loaded.config.graphql.federation.enabled:
        print("svc: graphql.federation.enabled is off: there is no subgraph to export", file=sys.stderr)
        return EXIT_FAILURE
    _, graphql = _read_schema(loaded)
    assert graphql.subgraph_sdl is not None
    Path(args.out).write_text(graphql.subgraph_sdl, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


def _export_openapi(args: argparse.Namespace) -> int:
    from svc.export import openapi_document, openapi_text

    loaded = _load(args)
    model, _ = _read_schema(loaded)
    Path(args.out).write_text(openapi_text(args.out, openapi_document(loaded.config, model)), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


def _events_sql(args: argparse.Namespace) -> int:
    """Print the whole capture DDL of the configured database and events, for a DBA to review and apply."""
    from svc.events import capture_ddl

    loaded = _load(args)
    if not loaded.config.events.targets:
        print("svc: no events.targets are configured: there is no event capture to install", file=sys.stderr)
        return EXIT_FAILURE
    model, _ = _read_schema(loaded)
    sys.stdout.write(capture_ddl(model, loaded.config).script())
    return 0


def _advise(args: argparse.Namespace) -> int:
    """Print the schema advice about the configured database (svc.advise); with `--statements`, the most expensive
    operations and the indexes they lack (svc.statement_advice)."""
    from svc.advise import mutation_function_oids, render, requests_authenticated, schema_advice

    loaded = _load(args)
    if args.statements:
        return _advise_statements(loaded, args.top)
    authenticated = requests_authenticated(loaded.config, loaded.secrets.jwt_secret)

    async def bodies(executor: "Executor", catalog: "Catalog", model: "Model") -> dict[int, str]:
        async def read(tx: "Transaction") -> dict[int, str]:
            oids = mutation_function_oids(catalog, model)
            cursor = await tx.execute("select oid::int, prosrc from pg_proc where oid = any(%s)", [oids])
            return {oid: source for oid, source in await cursor.fetchall()}

        return await executor.run(read, readonly=True)

    catalog, model, _, found = _read_catalog(loaded, bodies)
    sys.stdout.write(render(schema_advice(catalog, model, authenticated=authenticated, bodies=found)))
    return 0


def _advise_statements(loaded: LoadedConfig, top: int) -> int:
    from svc.statement_advice import StatisticsUnavailable, statement_report_at

    if loaded.config.extensions.integrations.pg_stat_statements == "off":
        sys.stderr.write("svc advise --statements: extensions.integrations.pg_stat_statements is off\n")
        return 1
    try:
        report = statement_report_at(loaded.secrets.require_database_url(), top)
    except StatisticsUnavailable as exc:
        sys.stderr.write(f"svc advise --statements: {exc}\n")
        return 1
    sys.stdout.write(report.render())
    return 0


def _read_schema(loaded: LoadedConfig) -> "tuple[Model, GraphqlSchema]":
    """The model and GraphQL schema of the configured database, without the startup checks' pin comparison."""

    async def nothing(*_: object) -> None:
        return None

    _, model, graphql, _ = _read_catalog(loaded, nothing)
    return model, graphql


def _read_catalog(
    loaded: LoadedConfig, more: "Callable[[Executor, Catalog, Model], Awaitable[T]]"
) -> "tuple[Catalog, Model, GraphqlSchema, T]":
    """The catalog of the configured database, its model and GraphQL schema (without the startup checks' pin
    comparison), and what `more` reads then on the same connection."""
    import trio

    from svc.db import Executor, open_pool
    from svc.server import connection_settings
    from svc.snapshot import SnapshotError, derive, read_database_catalog

    config, url = loaded.config, loaded.secrets.require_database_url()

    async def read() -> "tuple[Catalog, Model, GraphqlSchema, T]":
        async with open_pool(url, connection_settings(config), size=1) as pool:
            executor = Executor(pool)
            catalog = await read_database_catalog(executor, config)
            model, graphql = derive(catalog, config)
            return catalog, model, graphql, await more(executor, catalog, model)

    try:
        return trio.run(read)
    except SnapshotError as exc:
        raise ConfigError(exc.problems) from exc


def _load(args: argparse.Namespace, *, mode: str | None = None, environ: dict[str, str] | None = None) -> LoadedConfig:
    loaded = load_config(path=args.config, mode=mode or args.mode, environ=environ)
    logs = loaded.config.telemetry.logs
    configure_logging(logs.level, logs.format)
    return loaded


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="svc", description=__doc__.partition("\n")[0] if __doc__ else None)
    _add_common_options(parser, after_command=False)
    parser.set_defaults(command=_run)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    run = commands.add_parser("run", help="serve (the default)")
    run.set_defaults(command=_run)

    demo = commands.add_parser("demo", help="serve the demo schema on an embedded PostgreSQL, in dev mode")
    demo.add_argument("--data", default=".svc", metavar="DIR", help="where the embedded server keeps its data")
    demo.set_defaults(command=_demo)

    export = commands.add_parser("export-config-schema", help="write the JSON Schema of svc.yaml")
    export.add_argument("--out", metavar="PATH", help="output file; default export.config_schema (svc.schema.json)")
    export.set_defaults(command=_export_config_schema)

    schema = commands.add_parser("schema", help="the exported schema files")
    schema_commands = schema.add_subparsers(title="commands", metavar="COMMAND", required=True)
    schema_export = schema_commands.add_parser("export", help="write every export file (export.*)")
    schema_export.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when a file is missing or differs"
    )
    schema_export.set_defaults(command=_schema_export)

    graphql = commands.add_parser("export-graphql", help="write the GraphQL SDL")
    graphql.add_argument("--out", metavar="PATH", required=True, help="output file")
    graphql.set_defaults(command=_export_graphql)

    subgraph = commands.add_parser("export-subgraph", help="write the federation subgraph SDL")
    subgraph.add_argument("--out", metavar="PATH", required=True, help="output file")
    subgraph.set_defaults(command=_export_subgraph)

    openapi = commands.add_parser("export-openapi", help="write the OpenAPI document (YAML for a .yaml/.yml path)")
    openapi.add_argument("--out", metavar="PATH", required=True, help="output file")
    openapi.set_defaults(command=_export_openapi)

    events = commands.add_parser("events", help="change events and schedules")
    events_commands = events.add_subparsers(title="commands", metavar="COMMAND", required=True)
    events_sql = events_commands.add_parser("sql", help="print the event capture DDL (for events.install: manual)")
    events_sql.set_defaults(command=_events_sql)

    advise = commands.add_parser("advise", help="print schema advice about the database and exit")
    advise.add_argument(
        "--statements", action="store_true", help="the most expensive operations and missing indexes instead"
    )
    advise.add_argument("--top", type=_positive, default=20, metavar="N", help="operations reported (default 20)")
    advise.set_defaults(command=_advise)

    for command in (run, demo, export, schema_export, graphql, subgraph, openapi, events_sql, advise):
        _add_common_options(command, after_command=True)
    return parser


def _add_common_options(parser: argparse.ArgumentParser, *, after_command: bool) -> None:
    # After the command the defaults are suppressed, so they do not overwrite options given before it.
    default = argparse.SUPPRESS if after_command else None
    parser.add_argument(
        "--config", default=default, metavar="PATH", help="configuration file (must exist); default ./svc.yaml"
    )
    parser.add_argument("--mode", default=default, choices=MODES, help="dev or prod; default SVC_MODE, else prod")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


if __name__ == "__main__":
    sys.exit(main())
