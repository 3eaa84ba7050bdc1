"""Supervised long-lived tasks (layer 9): the supervisor and the actors it runs."""

from ._reloader import Reloader
from ._supervisor import Fatal, backoff, supervise
from ._sweeper import BucketSweeper
from ._watcher import SchemaWatcher, export_snapshot

__all__ = ["BucketSweeper", "Fatal", "Reloader", "SchemaWatcher", "backoff", "export_snapshot", "supervise"]
