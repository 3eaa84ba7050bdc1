"""postgres_fdw foreign tables over a second database on the test server (tests/fixtures/fdw_local.sql and
fdw_remote.sql): the servers name the remote database, which only the test knows, so they are made here."""

import socket

from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from tests.support.postgres import execute


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _server(database_url: str, name: str, options: dict[str, str], *, mapped: bool = True) -> None:
    listed = sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(k), sql.Literal(v)) for k, v in options.items())
    execute(
        database_url,
        sql.SQL("create server {} foreign data wrapper postgres_fdw options ({})")
        .format(sql.Identifier(name), listed)
        .as_string(None),
    )
    if mapped:
        execute(database_url, f"create user mapping for current_user server {name}")


def make_foreign_tables(database_url: str, remote_url: str, *, broken: bool = True) -> None:
    """In the shop's database (tests/fixtures/fdw_local.sql), the foreign tables over the warehouse's
    (fdw_remote.sql): `app.stock` (a renamed column) and `app.ledger` (no remote key) on a server reaching it, and
    when `broken`, a table on a server nothing listens on and one on a server without a user mapping."""
    remote = conninfo_to_dict(remote_url)
    _server(database_url, "warehouse", {k: str(remote[k]) for k in ("host", "port", "dbname") if k in remote})
    execute(
        database_url,
        """
        create foreign table app.stock (
          sku text not null,
          location text options (column_name 'bin') not null,
          quantity integer not null
        ) server warehouse options (schema_name 'warehouse', table_name 'stock_levels');
        create foreign table app.ledger (note text not null)
          server warehouse options (schema_name 'warehouse', table_name 'ledger');
        """,
    )
    if not broken:
        return
    _server(database_url, "closed", {"host": "127.0.0.1", "port": str(_closed_port()), "dbname": "nowhere"})
    execute(database_url, "create foreign table app.elsewhere (id integer not null) server closed")
    _server(database_url, "unmapped", {"dbname": "nowhere"}, mapped=False)
    execute(database_url, "create foreign table app.unmapped (id integer not null) server unmapped")
