"""Supervised long-lived tasks (layer 9): the supervisor and the actors it runs."""

from ._reloader import Reloader
from ._supervisor import Fatal, backoff, supervise

__all__ = ["Fatal", "Reloader", "backoff", "supervise"]
