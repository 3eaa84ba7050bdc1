"""Security headers per preset (SPEC "Operations"), with `headers.set` overriding single headers.

`relaxed` sends `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`; `strict` adds HSTS,
`X-Frame-Options: DENY`, a content-security policy allowing nothing and `Cross-Origin-Opener-Policy: same-origin`
(the policy and frame header are left off the UI pages, which must run scripts); `off` sends none. In
`headers.set` an empty value removes a header.
"""

from collections.abc import Mapping

from svc.config import HeadersConfig

_RELAXED = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
_STRICT = {
    **_RELAXED,
    "Strict-Transport-Security": "max-age=63072000; includeSubDomains",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "Cross-Origin-Opener-Policy": "same-origin",
}
PRESETS: Mapping[str, Mapping[str, str]] = {"off": {}, "relaxed": _RELAXED, "strict": _STRICT}
_NOT_ON_UI_PAGES = ("Content-Security-Policy", "X-Frame-Options")


class SecurityHeaders:
    """The header lists for API responses and for UI pages, computed once from the configuration."""

    def __init__(self, config: HeadersConfig) -> None:
        preset = dict(PRESETS[config.preset])
        ui = {name: value for name, value in preset.items() if name not in _NOT_ON_UI_PAGES}
        self.api = _apply(preset, config.set)
        self.ui = _apply(ui, config.set)


def _apply(headers: dict[str, str], overrides: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    lowered = {name.lower(): (name, value) for name, value in headers.items()}
    for name, value in overrides.items():
        if value == "":
            lowered.pop(name.lower(), None)
        else:
            lowered[name.lower()] = (name, value)
    return tuple(lowered.values())
