"""A real browser for the UI tests: Debian's Chromium driven by Playwright, run as a subprocess of the test.

Playwright's API runs on asyncio, so it stays out of the tests' Trio run (which serves the pages meanwhile): the test
runs `python -m tests.support.browser ...` and reads one JSON object from its stdout. Chromium is Debian's
(`apt-get install chromium`; .ci/run installs it), never a browser Playwright downloads. It starts headless with a
fresh profile and no background traffic of its own, and host names other than loopback do not resolve, so a page that
depends on a CDN fails visibly; every request the pages make is recorded all the same.

    python -m tests.support.browser graphiql URL QUERY EXPECTED   # type QUERY, Run, wait for EXPECTED in the result
    python -m tests.support.browser scalar URL EXPECTED           # wait for EXPECTED in the rendered reference

Output: `{"requests": [...], "websockets": [...], "errors": [...], "text": "..."}`: every URL requested (each once,
`data:` URLs included), WebSocket URLs, uncaught page errors, and `text`, the result pane
(GraphiQL) or the page's text (Scalar) once EXPECTED showed up, or when the wait gave up. Exit 0 when EXPECTED showed
up, 1 when it did not, 2 when Chromium is missing or cannot start (the message says why).
"""

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

#: The flags of TOOLS.md 7c: headless, no sandbox (CI runs as root), no traffic of Chromium's own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]
#: Debian's binary; /usr/bin/chromium is a shell wrapper around it.
DEBIAN_CHROMIUM = Path("/usr/lib/chromium/chromium")
TIMEOUT_MS = 30_000


class BrowserUnavailable(Exception):
    """Chromium is not installed or does not start here."""


def chromium_path() -> str:
    if DEBIAN_CHROMIUM.is_file():
        return str(DEBIAN_CHROMIUM)
    found = shutil.which("chromium")
    if found is None:
        raise BrowserUnavailable(
            "Debian's chromium is not installed: apt-get install -y chromium (.ci/run installs it when missing)"
        )
    return found


def main(argv: list[str]) -> int:
    from playwright.sync_api import Error, sync_playwright

    scenario, url, *rest = argv
    report: dict[str, Any] = {"requests": [], "websockets": [], "errors": [], "text": ""}
    with tempfile.TemporaryDirectory(prefix="svc-chromium-") as profile, sync_playwright() as playwright:
        try:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS
            )
        except (Error, BrowserUnavailable) as exc:
            print(f"Chromium cannot run here: {exc}", file=sys.stderr)
            return 2
        # On the context, so requests of workers and of every page count too; and what Chromium itself sends for
        # the page (the favicon, which Playwright does not report), from the DevTools protocol.
        context.on("request", lambda request: report["requests"].append(request.url))
        page = context.pages[0] if context.pages else context.new_page()
        devtools = context.new_cdp_session(page)
        devtools.on("Network.requestWillBeSent", lambda event: report["requests"].append(event["request"]["url"]))
        devtools.send("Network.enable")
        page.on("websocket", lambda socket: report["websockets"].append(socket.url))
        page.on("pageerror", lambda error: report["errors"].append(str(error)))
        try:
            found = (run_graphiql if scenario == "graphiql" else run_scalar)(page, url, *rest, report=report)
        finally:
            context.close()
    report["requests"] = sorted({_shown(url) for url in report["requests"]})
    print(json.dumps(report))
    return 0 if found else 1


def _shown(url: str) -> str:
    """A data: URL by its media type only (`data:font/woff2;base64,...`): its payload is no address."""
    return url.split(",", 1)[0] + ",..." if url.startswith("data:") else url


def run_graphiql(page: Any, url: str, query: str, expected: str, *, report: dict[str, Any]) -> bool:
    from playwright.sync_api import TimeoutError

    page.goto(url, wait_until="load")
    editor = page.locator(".graphiql-query-editor .monaco-editor").first
    editor.wait_for(timeout=TIMEOUT_MS)
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(query)  # as pasted: no key events, so no auto-closed brackets
    # GraphiQL parses the editor's text after a short debounce, and its fetcher picks the transport from that parse
    # (a subscription goes over the WebSocket): running at once could send the new text with the old parse.
    page.wait_for_timeout(1000)
    page.get_by_role("button", name="Execute query (Ctrl-Enter)").click()
    result = page.locator(".graphiql-response")
    try:
        result.get_by_text(expected, exact=False).first.wait_for(timeout=TIMEOUT_MS)
        found = True
    except TimeoutError:
        found = False
    report["text"] = result.inner_text()
    return found


def run_scalar(page: Any, url: str, expected: str, *, report: dict[str, Any]) -> bool:
    from playwright.sync_api import TimeoutError

    page.goto(url, wait_until="load")
    try:
        # Operations are grouped by tag (a resource each); groups start closed: open them all.
        closed = page.get_by_role("button", name=re.compile(r"Open Group - "))
        closed.first.wait_for(timeout=TIMEOUT_MS)
        for _ in range(50):  # an opened group's button becomes "Close Group": open the first closed one again
            if not closed.count():
                break
            closed.first.click()
        page.get_by_text(expected, exact=False).first.wait_for(timeout=TIMEOUT_MS)
        found = True
    except TimeoutError:
        found = False
    report["text"] = page.locator("body").inner_text()
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
