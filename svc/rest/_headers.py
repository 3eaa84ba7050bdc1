"""Request headers of REST (SPEC "REST API" -> counts, ranges, media types, writes): `Accept` for lists, `Prefer`,
`Range: items=A-B`, `If-Match`/`If-None-Match` against the row version (`ETag: "<version>"`), and the `Link` header
of a list page.
"""

from collections.abc import Mapping, Sequence
from urllib.parse import quote, urlencode

import attrs

from svc.errors import Code, SvcError
from svc.plan import RowsFormat

JSON = "application/json"
NDJSON = "application/x-ndjson"
CSV = "text/csv"
_LIST_TYPES = {JSON: RowsFormat.JSON, NDJSON: RowsFormat.NDJSON, CSV: RowsFormat.CSV}
CONTENT_TYPES = {RowsFormat.JSON: JSON, RowsFormat.NDJSON: NDJSON, RowsFormat.CSV: "text/csv; charset=utf-8"}
#: Members a `Prefer` header may hold that the service applies.
_PREFERENCES = frozenset({"return", "count", "previous", "handling", "missing", "resolution", "tx", "timezone"})


def list_format(accept: str | None) -> RowsFormat:
    """The rows format `Accept` asks for: JSON (also for `*/*`, `application/*` and no header), NDJSON or CSV, by
    quality; SvcError NOT_ACCEPTABLE (406) when none fits."""
    if not accept or not accept.strip():
        return RowsFormat.JSON
    best: tuple[float, int, RowsFormat] | None = None
    for position, item in enumerate(accept.split(",")):
        media, _, parameters = item.strip().partition(";")
        media = media.strip().lower()
        quality = 1.0
        for parameter in parameters.split(";"):
            name, _, value = parameter.strip().partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if quality <= 0:
            continue
        format_ = _LIST_TYPES.get(media)
        if format_ is None and media in ("*/*", "application/*"):
            format_ = RowsFormat.JSON
        if format_ is None and media == "text/*":
            format_ = RowsFormat.CSV
        if format_ is not None and (best is None or (quality, -position) > (best[0], best[1])):
            best = (quality, -position, format_)
    if best is None:
        raise SvcError(
            Code.NOT_ACCEPTABLE,
            f"lists are served as {JSON}, {NDJSON} or {CSV}; Accept asks for {accept}",
        )
    return best[2]


def accepts_json(accept: str | None) -> bool:
    """A single row or a write's answer is JSON: does `Accept` allow it?"""
    if not accept or not accept.strip():
        return True
    for item in accept.split(","):
        media = item.split(";")[0].strip().lower()
        if media in (JSON, "*/*", "application/*", "application/problem+json") or media.endswith("+json"):
            return True
    return False


@attrs.frozen
class Prefer:
    """`Prefer` (RFC 7240): what a client asks for; unknown preferences are ignored, as the RFC says."""

    return_: str | None = None  # minimal | representation
    count: str | None = None  # exact | planned | estimated
    previous: bool = False

    @classmethod
    def parse(cls, header: str | None) -> "Prefer":
        values: dict[str, str] = {}
        for item in (header or "").split(","):
            token = item.split(";")[0].strip()
            if not token:
                continue
            name, _, value = token.partition("=")
            name = name.strip().lower()
            if name in _PREFERENCES:
                values[name] = value.strip().strip('"').lower()
        count = values.get("count")
        return cls(
            return_=values.get("return") if values.get("return") in ("minimal", "representation") else None,
            count=count if count in ("exact", "planned", "estimated") else None,
            previous="previous" in values and values["previous"] in ("", "true"),
        )


@attrs.frozen
class Range:
    """`Range: items=A-B` (or `items=A-`): rows A to B counting from 0."""

    first: int
    last: int | None

    @classmethod
    def parse(cls, header: str | None) -> "Range | None":
        """The range asked for; None for no header, another unit, a suffix range or several ranges (ignored, as
        SPEC "Ranges" says). A range ending before it starts is `inverted`: the list answers 416 for it, with the
        count when one was asked."""
        if not header:
            return None
        unit, _, spec = header.strip().partition("=")
        if unit.strip().lower() != "items" or "," in spec:
            return None
        start, dash, end = spec.strip().partition("-")
        if not dash or not start.strip().isdigit() or (end.strip() and not end.strip().isdigit()):
            return None
        first = int(start)
        last = int(end) if end.strip() else None
        return cls(first, last)

    @property
    def inverted(self) -> bool:
        return self.last is not None and self.last < self.first

    @property
    def size(self) -> int | None:
        """Rows the range covers (None: to the end)."""
        return None if self.last is None else max(0, self.last - self.first + 1)


def etag(version: str) -> str:
    return f'"{version}"'


def matching_versions(header: str | None) -> list[str] | None:
    """The versions an `If-Match`/`If-None-Match` header names (`["*"]` for any); None without the header."""
    if header is None:
        return None
    versions = []
    for raw in header.split(","):
        item = raw.strip().removeprefix("W/")
        if item == "*":
            versions.append("*")
        elif len(item) >= 2 and item[0] == item[-1] == '"':
            versions.append(item[1:-1])
        elif item:
            raise SvcError(Code.BAD_USER_INPUT, f'malformed entity tag {item!r}: quote it ("123")')
    return versions


def page_link(base: str, pairs: Sequence[tuple[str, str]], members: Mapping[str, str], rel: str) -> str:
    """One `Link` entry: the same request with its page parameters replaced (SPEC "Counts": keeping the other
    parameters)."""
    kept = [(n, v) for n, v in pairs if n not in ("first", "last", "after", "before", "offset")]
    query = urlencode([*kept, *members.items()], quote_via=lambda text, *_: quote(text, safe=",:"))
    return f'<{base}?{query}>; rel="{rel}"'


def preference_applied(values: Sequence[str]) -> list[tuple[str, str]]:
    return [("Preference-Applied", ", ".join(values))] if values else []
