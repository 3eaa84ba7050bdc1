"""The service's version: the installed distribution's (`/health`, startup logs, the OpenAPI document's
`info.version`). Its own module, so the export commands learn it without importing the server's dependencies."""

from importlib import metadata

try:
    VERSION = metadata.version("svc")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout that was never installed
    VERSION = "0+unknown"
