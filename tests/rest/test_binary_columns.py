"""Binary columns (SPEC "REST API" -> route table, media types): a multipart/form-data file part fills a bytea
column; `GET /rest/{resource}/{key}/{column}` answers the bytes with a media type sniffed from the first bytes
(PNG, JPEG, PDF..., else application/octet-stream) and `X-Content-Type-Options: nosniff`; `PUT` of the column
replaces the bytes from a body of any media type (`If-Match` applies); file names and types are not stored."""

import pytest

from tests.support.postgres import fetch
from tests.support.rest import assert_json, assert_problem, etag, problem, rest_service, version

DATABASE_FIXTURES = ["writes.sql", "rest_writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF"
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


def content_of(database_url: str, key: int) -> bytes | None:
    ((value,),) = fetch(database_url, "select content from app.documents where id = %s", [key])
    return value


def not_found(detail: str, instance: str) -> dict:
    return problem(404, "NOT_FOUND", detail, instance, title="Not Found")


async def assert_bytes(rest, path: str, data: bytes, media_type: str, row_version: str) -> None:
    response = await rest.get(path)
    assert response.status_code == 200, response.text
    assert response.content == data
    assert response.headers["content-type"] == media_type
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["etag"] == etag(row_version)


async def test_a_file_part_fills_a_binary_column(rest, database_url):
    form = {"title": (None, "Photo"), "content": ("photo.png", JPEG, "image/png")}
    response = await rest.post("/rest/documents", files=form)
    key = response.json()["id"]
    row_version = version(database_url, "documents", key)
    assert_json(
        response,
        201,
        {"id": key, "title": "Photo", "content": "\\x" + JPEG.hex(), "settings": {}, "rowVersion": row_version},
    )
    assert content_of(database_url, key) == JPEG
    # The bytes decide the media type, not the part's name or type.
    await assert_bytes(rest, f"/rest/documents/{key}/content", JPEG, "image/jpeg", row_version)


async def test_media_types_are_sniffed_from_the_first_bytes(rest, database_url):
    cases = [
        (PNG, "image/png"),
        (JPEG, "image/jpeg"),
        (PDF, "application/pdf"),
        (b"GIF89a\x01\x00", "image/gif"),
        (b"plain text, no signature", "application/octet-stream"),
        (b"\x00", "application/octet-stream"),
    ]
    for data, media_type in cases:
        response = await rest.post("/rest/documents", files={"title": (None, media_type), "content": ("f", data)})
        key = response.json()["id"]
        await assert_bytes(
            rest, f"/rest/documents/{key}/content", data, media_type, version(database_url, "documents", key)
        )


async def test_the_fixture_row_and_head(rest, database_url):
    await assert_bytes(rest, "/rest/documents/1/content", PNG, "image/png", version(database_url, "documents", 1))
    response = await rest.head("/rest/documents/1/content")
    assert (response.status_code, response.content, response.headers["content-type"]) == (200, b"", "image/png")


async def test_put_replaces_the_bytes_from_any_media_type(rest, database_url):
    created = (await rest.post("/rest/documents", json={"title": "Put"})).json()
    path = f"/rest/documents/{created['id']}/content"
    for headers in ({"Content-Type": "application/x-anything"}, {}):
        response = await rest.put(path, content=PDF, headers=headers)
        row_version = version(database_url, "documents", created["id"])
        assert_json(response, 200, {**created, "content": "\\x" + PDF.hex(), "rowVersion": row_version})
        assert response.headers["etag"] == etag(row_version)
    assert content_of(database_url, created["id"]) == PDF
    await assert_bytes(rest, path, PDF, "application/pdf", row_version)


async def test_put_with_if_match(rest, database_url):
    created = (await rest.post("/rest/documents", json={"title": "Versioned"})).json()
    path = f"/rest/documents/{created['id']}/content"
    response = await rest.put(path, content=PNG, headers={"If-Match": etag(created["rowVersion"])})
    assert response.status_code == 200, response.text
    assert_problem(
        await rest.put(path, content=JPEG, headers={"If-Match": etag(created["rowVersion"])}),
        problem(
            412,
            "STALE_VERSION",
            "the row has changed since that version was read",
            path,
            title="Precondition Failed",
            codeType="DocumentErrorCode",
            fields=["If-Match"],
        ),
    )
    assert content_of(database_url, created["id"]) == PNG


async def test_an_empty_body_stores_no_bytes(rest, database_url):
    created = (await rest.post("/rest/documents", json={"title": "Empty"})).json()
    path = f"/rest/documents/{created['id']}/content"
    assert (await rest.put(path, content=b"")).status_code == 200
    assert content_of(database_url, created["id"]) == b""
    response = await rest.get(path)
    assert (response.status_code, response.content) == (200, b"")
    assert response.headers["content-type"] == "application/octet-stream"


async def test_a_form_patch_replaces_the_bytes(rest, database_url):
    created = (await rest.post("/rest/documents", json={"title": "Form patch"})).json()
    response = await rest.patch(f"/rest/documents/{created['id']}", files={"content": ("scan.pdf", PDF)})
    assert response.json()["content"] == "\\x" + PDF.hex()
    assert content_of(database_url, created["id"]) == PDF


async def test_missing_rows_null_values_and_other_columns_are_404(rest):
    null = (await rest.post("/rest/documents", json={"title": "No bytes"})).json()
    cases = [
        ("/rest/documents/999/content", "no Document has the key 999"),
        (f"/rest/documents/{null['id']}/content", "content of this Document is null"),
        ("/rest/documents/1/title", "'title' is not a binary column of documents"),
        ("/rest/documents/1/bogus", "'bogus' is not a binary column of documents"),
    ]
    for path, detail in cases:
        assert_problem(await rest.get(path), not_found(detail, path))
    assert_problem(
        await rest.put("/rest/documents/999/content", content=PNG),
        not_found("no Document has the key 999", "/rest/documents/999/content"),
    )


async def test_nosniff_is_sent_whatever_the_security_headers_preset(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, {**SETTINGS, "headers": {"preset": "off"}}) as rest:
        response = await rest.get("/rest/documents/1/content")
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "x-content-type-options" not in (await rest.get("/rest/documents/1")).headers
