"""The delimited sections of bench/RESULTS.md: bench/run.py writes the file's main report, while bench/events.py,
bench/subscriptions.py and bench/bulk.py each own one section between `<!-- name -->` and `<!-- /name -->`, which
they replace when they measure again and which run.py keeps when it rewrites the rest. The `telemetry` section is
written by hand from runs of `run.py --svc-telemetry off|metrics|otlp` (one run cannot start svc three ways). The
`search` section is run.py's own report of the search ops (S1-S3, svc against raw SQL only), so that a search run
does not replace the main report and a main run does not drop the search numbers."""

from __future__ import annotations

from pathlib import Path

#: The sections other scripts own, in the order run.py keeps them.
NAMES = ("events", "subscriptions", "telemetry", "search", "drill", "bulk")


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name} -->", f"<!-- /{name} -->"


def write_section(path: Path, name: str, section: str) -> None:
    """Replace the section `name` of `path` with `section` (which starts and ends with its markers), or append it,
    leaving the rest as it is."""
    begin, end = markers(name)
    text = path.read_text() if path.exists() else ""
    if begin in text and end in text:
        before, rest = text.split(begin, 1)
        text = before + section.rstrip("\n") + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def kept_sections(text: str) -> str:
    """The owned sections found in `text`, each whole with its markers, blank-line separated (empty if none)."""
    found = []
    for name in NAMES:
        begin, end = markers(name)
        if begin in text and end in text.split(begin, 1)[1]:
            found.append(begin + text.split(begin, 1)[1].split(end, 1)[0] + end + "\n")
    return "\n".join(found)
