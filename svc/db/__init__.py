"""The database: psycopg driven by Trio, a pool of our own, and the executor every request runs through.

Layer 2 (ARCHITECTURE.md). Nothing above this package touches a connection except through `Executor.run`
(and the probes and the replica health checker, through `Pool.connection`).
"""

from ._connection import Connection
from ._errors import RETRYABLE_SQLSTATES, map_database_error
from ._executor import (
    CUSTOM_PLANS,
    Executor,
    Isolation,
    PlanCacheMode,
    Session,
    StatementCounter,
    Transaction,
    sql_comment,
)
from ._pool import TOO_MANY_GROUPS_STATE, ConnectionSettings, Pool, PoolStats, open_pool
from ._positions import Positions, format_lsn, parse_lsn, track_positions
from ._remote import fdw_conninfo, remote_rows
from ._replicas import Replica, ReplicaHealth, Replicas, ReplicaState, open_replicas

__all__ = [
    "CUSTOM_PLANS",
    "RETRYABLE_SQLSTATES",
    "TOO_MANY_GROUPS_STATE",
    "Connection",
    "ConnectionSettings",
    "Executor",
    "Isolation",
    "PlanCacheMode",
    "Pool",
    "PoolStats",
    "Positions",
    "Replica",
    "ReplicaHealth",
    "ReplicaState",
    "Replicas",
    "Session",
    "StatementCounter",
    "Transaction",
    "fdw_conninfo",
    "format_lsn",
    "map_database_error",
    "open_pool",
    "open_replicas",
    "parse_lsn",
    "remote_rows",
    "sql_comment",
    "track_positions",
]
