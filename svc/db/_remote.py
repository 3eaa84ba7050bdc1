"""One query on a postgres_fdw server, connecting as postgres_fdw would (SPEC "Extension integrations": the keys of
foreign tables are read from the remote catalog).

The server's options and the user mapping's that libpq knows make the connection string (postgres_fdw's own, such
as `updatable` or `fetch_size`, are not libpq's and are left out). A server that names no host is taken to be on
the service's own database server (as postgres_fdw, run there, would reach it over its local socket), at its port
unless the server names one; without a `user` option the user is the mapping's role, as postgres_fdw does.
"""

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, LiteralString

from psycopg import pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ._connection import Connection


@cache
def _libpq_keywords() -> frozenset[str]:
    return frozenset(option.keyword.decode() for option in pq.Conninfo.get_defaults())


def fdw_conninfo(server_options: Mapping[str, str], user_options: Mapping[str, str], user: str, local: str) -> str:
    """The connection string postgres_fdw would use for a server and user mapping; `local`: the service's own."""
    keywords = _libpq_keywords()
    params: dict[str, Any] = {k: v for k, v in server_options.items() if k in keywords}
    params.update({k: v for k, v in user_options.items() if k in keywords})
    params.setdefault("user", user)
    if "host" not in params and "hostaddr" not in params:
        own = conninfo_to_dict(local)
        for keyword in ("host", "hostaddr", "port"):
            if keyword in own:
                params.setdefault(keyword, own[keyword])
    params["application_name"] = "svc (remote catalog)"
    return make_conninfo("", **params)


async def remote_rows(
    conninfo: str, query: LiteralString, params: Mapping[str, Any], *, timeout: float
) -> Sequence[tuple[Any, ...]]:
    """The rows of one read-only query on another server, connecting within `timeout` seconds."""
    async with await Connection.connect(conninfo, autocommit=True, timeout=timeout) as conn:
        await conn.execute("set default_transaction_read_only = on")
        cursor = await conn.execute(query, params)
        return await cursor.fetchall()
