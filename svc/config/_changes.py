"""What a changed svc.yaml may change without a restart (SPEC "Configuration", dev mode with watching on).

Taking effect: `entities`, `functions`, `types`, `rbac`, `extensions`, `search`, `limits` (except
`request_body_bytes`, `rate_limit` and `statement_timeout`), `errors`, `debug.statements`, `export`, and the schemas
of `database.schemas` beyond the first. Every other setting needs a restart; a change to one is reported by its
full key so the caller can warn about it.
"""

from collections.abc import Mapping
from typing import Any

import attrs

from ._model import Config
from ._types import make_converter

_CONVERTER = make_converter()
_HOT_SECTIONS = ("entities", "functions", "types", "rbac", "extensions", "search", "errors", "export")
_RESTART_ONLY_LIMITS = ("request_body_bytes", "rate_limit", "statement_timeout")


def apply_changes(running: Config, changed: Config) -> tuple[Config, list[str]]:
    """The configuration to run with now, and the keys of the restart-only settings `changed` sets differently."""
    sections: dict[str, Any] = {name: getattr(changed, name) for name in _HOT_SECTIONS}
    restart_limits = {name: getattr(running.limits, name) for name in _RESTART_ONLY_LIMITS}
    sections["limits"] = attrs.evolve(changed.limits, **restart_limits)
    sections["debug"] = attrs.evolve(running.debug, statements=changed.debug.statements)
    first = running.database.schemas[:1]
    schemas = first + tuple(s for s in changed.database.schemas if s not in first)
    sections["database"] = attrs.evolve(running.database, schemas=schemas)
    applied = attrs.evolve(running, **sections)
    ours, theirs = _leaves(_CONVERTER.unstructure(applied)), _leaves(_CONVERTER.unstructure(changed))
    return applied, sorted(key for key in ours.keys() | theirs.keys() if ours.get(key) != theirs.get(key))


def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        leaves: dict[str, Any] = {}
        for key, item in value.items():
            leaves.update(_leaves(item, f"{path}.{key}" if path else str(key)))
        return leaves
    return {path: value}
