"""Request headers of REST, parsed (SPEC "REST API" -> counts, ranges, media types, writes): `Accept` of a list,
`Prefer`, `Range: items=A-B`, and `If-Match`/`If-None-Match` against the row version (`ETag: "<version>"`).
"""

from svc.errors import Code, SvcError
from svc.plan import RowsFormat

from ._api_request import Preconditions, Preferences, Range

JSON = "application/json"
NDJSON = "application/x-ndjson"
CSV = "text/csv"
_LIST_TYPES = {JSON: RowsFormat.JSON, NDJSON: RowsFormat.NDJSON, CSV: RowsFormat.CSV}
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


def preferences(header: str | None) -> Preferences:
    """`Prefer`: what a client asks for that the service applies (`return`, `count`, `previous`)."""
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
    return Preferences(
        return_=values.get("return") if values.get("return") in ("minimal", "representation") else None,
        count=count if count in ("exact", "planned", "estimated") else None,
        previous="previous" in values and values["previous"] in ("", "true"),
    )


def item_range(header: str | None) -> Range | None:
    """The range asked for; None for no header, another unit, a suffix range or several ranges (ignored, as SPEC
    "Ranges" says). A range ending before it starts is kept: the list answers 416 for it, with the count when one
    was asked."""
    if not header:
        return None
    unit, _, spec = header.strip().partition("=")
    if unit.strip().lower() != "items" or "," in spec:
        return None
    start, dash, end = spec.strip().partition("-")
    if not dash or not start.strip().isdigit() or (end.strip() and not end.strip().isdigit()):
        return None
    return Range(int(start), int(end) if end.strip() else None)


def preconditions(if_match: str | None, if_none_match: str | None) -> Preconditions:
    """`If-Match: "v"` expects version v of the row, `*` only its existence; `If-None-Match` names the versions a
    read answers 304 for. A malformed entity tag, or an `If-Match` naming several versions, is 400."""
    matching = _versions(if_match)
    expected = None
    if matching is not None and "*" not in matching:
        if len(matching) != 1:
            raise SvcError(Code.BAD_USER_INPUT, "If-Match names one version (or *)")
        expected = matching[0]
    none_match = _versions(if_none_match)
    return Preconditions(expected, matching is not None, tuple(none_match) if none_match is not None else None)


def _versions(header: str | None) -> list[str] | None:
    """The versions an `If-Match`/`If-None-Match` header names (`["*"]` for any); None without the header."""
    if header is None:
        return None
    versions: list[str] = []
    for raw in header.split(","):
        item = raw.strip().removeprefix("W/")
        if item == "*":
            versions.append("*")
        elif len(item) >= 2 and item[0] == item[-1] == '"':
            versions.append(item[1:-1])
        elif item:
            raise SvcError(Code.BAD_USER_INPUT, f'malformed entity tag {item!r}: quote it ("123")')
    return versions
