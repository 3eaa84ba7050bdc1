"""Logs (and, as they land, spans and metrics) shared by every layer.

Layer 0: nothing here imports the rest of the service.
"""

from ._logging import configure_logging, request_id_var

__all__ = ["configure_logging", "request_id_var"]
