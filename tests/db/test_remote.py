"""How the service reaches a postgres_fdw server to read its catalog (svc/db/_remote.py): as postgres_fdw would,
from the server's libpq options and the user mapping's, on the service's own database server when the server names
no host. The connection itself is exercised by tests/rest/test_foreign_tables.py."""

from psycopg.conninfo import conninfo_to_dict

from svc.db import fdw_conninfo

OWN = "host=db.internal port=6543 dbname=shop user=svc password=own-secret"


def params(conninfo: str) -> dict:
    found = conninfo_to_dict(conninfo)
    assert found.pop("application_name") == "svc (remote catalog)"
    return found


def test_a_server_without_a_host_is_on_the_services_own_database_server():
    assert params(fdw_conninfo({"dbname": "warehouse"}, {}, "svc", OWN)) == {
        "host": "db.internal", "port": "6543", "dbname": "warehouse", "user": "svc",
    }  # fmt: skip
    # its own port wins; the service's password is never lent to it
    assert params(fdw_conninfo({"dbname": "w", "port": "5433"}, {}, "svc", OWN))["port"] == "5433"


def test_the_servers_libpq_options_and_the_user_mappings_make_the_connection():
    server = {"host": "10.0.0.9", "dbname": "w", "fetch_size": "500", "updatable": "false", "sslmode": "require"}
    mapping = {"user": "reader", "password": "s3cret", "password_required": "true"}
    assert params(fdw_conninfo(server, mapping, "svc", OWN)) == {
        "host": "10.0.0.9", "dbname": "w", "sslmode": "require", "user": "reader", "password": "s3cret",
    }  # fmt: skip
