"""Supervised long-lived tasks (layer 9): the supervisor and the actors it runs."""

from ._advisor import StatementAdvisor
from ._dispatcher import Dispatcher
from ._poller import Poller, Result, Stats, Subscription
from ._reloader import Reloader
from ._replicas import ReplicaChecker
from ._supervisor import Fatal, backoff, supervise
from ._sweeper import BucketSweeper
from ._watcher import SchemaWatcher, export_snapshot

__all__ = [
    "BucketSweeper",
    "Dispatcher",
    "Fatal",
    "Poller",
    "Reloader",
    "ReplicaChecker",
    "Result",
    "SchemaWatcher",
    "StatementAdvisor",
    "Stats",
    "Subscription",
    "backoff",
    "export_snapshot",
    "supervise",
]
