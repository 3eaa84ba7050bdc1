"""Golden files: generated output compared with a committed, reviewed copy (STYLE.md, habit 14).

`SVC_UPDATE_GOLDEN=1 pytest ...` rewrites the copies instead of comparing; review the diff before committing.
"""

import difflib
import os
from pathlib import Path


def assert_golden(path: Path, text: str) -> None:
    if os.environ.get("SVC_UPDATE_GOLDEN") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if os.environ.get("SVC_UPDATE_GOLDEN") != "1":
            raise AssertionError(f"{path} did not exist; it was written: review and commit it")
        return
    expected = path.read_text(encoding="utf-8")
    if expected != text:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), str(path), "generated", n=2
            )
        )
        raise AssertionError(
            f"generated output differs from {path.name} (SVC_UPDATE_GOLDEN=1 rewrites it):\n{diff[:6000]}"
        )
