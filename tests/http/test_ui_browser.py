"""The UI pages in a real browser (Debian's headless Chromium, tests/support/browser.py): GraphiQL runs a query
against /graphql and shows the data, Scalar lists the operations of the OpenAPI document, and neither page makes a
single request anywhere but the service on loopback (SPEC "Endpoints" -> service-level: the UIs are served offline).

Chromium must be installed (.ci/run installs Debian's `chromium` when it is missing): without it these tests fail,
they do not skip."""

import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

import trio

from tests.support.service import running_service

REPOSITORY = Path(__file__).resolve().parents[2]


async def browse(*arguments: str) -> dict:
    """Run the browser driver; fail the test with its own words when Chromium is missing or the page never showed
    what was expected."""
    with trio.fail_after(90):
        done = await trio.run_process(
            [sys.executable, "-m", "tests.support.browser", *arguments],
            cwd=REPOSITORY,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    stderr = done.stderr.decode(errors="replace")
    if done.returncode == 2:
        raise AssertionError(f"no usable Chromium (apt-get install -y chromium): {stderr}")
    assert done.stdout, f"the browser driver printed nothing (exit {done.returncode}): {stderr}"
    report = json.loads(done.stdout)
    assert done.returncode == 0, f"the page never showed what was expected; it showed:\n{report['text']}\n{stderr}"
    return report


def assert_only_the_service_was_contacted(report: dict, service_url: str) -> None:
    """Every URL the browser asked for is the service's, on loopback (`data:` URLs, such as fonts inlined in a
    stylesheet, reach no network)."""
    origin = urlsplit(service_url)
    assert origin.hostname == "127.0.0.1"
    urls = [*report["requests"], *report["websockets"]]
    elsewhere = [url for url in urls if urlsplit(url).scheme != "data" and urlsplit(url).netloc != origin.netloc]
    assert elsewhere == []
    assert report["errors"] == []


async def test_graphiql_runs_a_query_with_nothing_but_the_service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, mode="dev") as service:
        report = await browse("graphiql", f"{service.url}/graphiql", "{ authors { name } }", '"Grace"')
    assert json.loads(report["text"].replace("\xa0", " ")) == {
        "data": {"authors": [{"name": "Ada"}, {"name": "Grace"}]}
    }
    assert_only_the_service_was_contacted(report, service.url)
    paths = {urlsplit(url).path for url in report["requests"]}
    assert {"/graphiql", "/graphql"} <= paths
    # Monaco's workers came from the service too (the GraphQL language worker gives the editor its schema).
    assert any(path.startswith("/graphiql/graphql.worker-") for path in paths)


async def test_scalar_lists_the_operations_of_the_document_with_nothing_but_the_service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, mode="dev") as service:
        report = await browse("scalar", f"{service.url}/scalar", "Create `Author` rows")
    for text in ("svc REST API", "List `Author` rows", "Create `Author` rows", "Read one `Post` row", "/rest/posts"):
        assert text in report["text"], text
    assert_only_the_service_was_contacted(report, service.url)
    assert "/openapi.json" in {urlsplit(url).path for url in report["requests"]}


async def test_graphiql_subscribes_over_graphql_ws_from_the_browser(tmp_path, database_url):
    settings = {"subscriptions": {"enabled": True, "interval": "200ms"}}
    async with running_service(tmp_path, database_url, settings, mode="dev") as service:
        report = await browse("graphiql", f"{service.url}/graphiql", "subscription { authors { name } }", '"Grace"')
    assert json.loads(report["text"].replace("\xa0", " ")) == {
        "data": {"authors": [{"name": "Ada"}, {"name": "Grace"}]}
    }
    assert_only_the_service_was_contacted(report, service.url)
    assert [urlsplit(url).path for url in report["websockets"]] == ["/graphql"]
