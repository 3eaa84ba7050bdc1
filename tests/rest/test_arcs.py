"""Exclusive arcs in REST (issue 23; SPEC "Embedding controls": `target`, "row an exclusive arc points at, with
`__typename`"; tests/fixtures/arcs.sql): `include=target` embeds the pointed-at row whole with `__typename`, in the
one statement of the request; it takes no embedding controls and nothing is included under it; a create body
connects `target` by type as GraphQL's input does; OpenAPI documents the embed as a `oneOf` of the targets' rows with
a `__typename` discriminator and stays valid."""

import pytest
from openapi_spec_validator import validate

from tests.support.postgres import fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["arcs.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as running:
        yield running


async def statements(service) -> int:
    return (await service.client.get("/health")).json()["statements"]


async def test_include_target_embeds_the_row_with_its_typename_in_one_statement(service):
    before = await statements(service)
    response = await service.client.get("/rest/comment?include=target&fields=id,body&order=id")
    assert response.status_code == 200
    assert await statements(service) - before == 1
    rows = response.json()
    for row in rows:
        assert row["target"].pop("rowVersion")
    assert rows == [
        {"id": 1, "body": "on a post", "target": {"__typename": "Post", "id": 1, "title": "Hello"}},
        {"id": 2, "body": "on a photo", "target": {"__typename": "Photo", "id": 1, "url": "https://x/p1.jpg"}},
        {
            "id": 3,
            "body": "on a video",
            "target": {"__typename": "Video", "id": 1, "url": "https://x/v1.mp4", "seconds": 30},
        },
    ]


async def test_one_row_and_the_sum_form_embed_target_too(service):
    response = await service.client.get("/rest/reaction/1?include=target&fields=emoji")
    assert response.status_code == 200
    body = response.json()
    assert body["emoji"] == "+1"
    assert {key: body["target"][key] for key in ("__typename", "id", "seconds")} == {
        "__typename": "Video",
        "id": 1,
        "seconds": 30,
    }


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("include=target&fields[target]=url", "fields[target]"),
        ("include=target&order[target]=id", "order[target]"),
        ("include=target&first[target]=1", "first[target]"),
        ("include=target.post", "include"),
        ("inner=target&include=target", "inner"),
        ("include=target&fields=id", None),  # the control-free form works
    ],
)
async def test_target_takes_no_embedding_controls(service, query, field):
    response = await service.client.get(f"/rest/comment?{query}")
    if field is None:
        assert response.status_code == 200
        return
    assert response.status_code == 400
    problem = response.json()
    assert (problem["code"], problem["field"]) == ("BAD_USER_INPUT", field)


async def test_a_table_without_an_exactly_one_check_has_no_target(service):
    for resource in ("tag", "note"):
        response = await service.client.get(f"/rest/{resource}?include=target")
        assert response.status_code == 400
        assert "no relation 'target'" in response.json()["detail"]


async def test_a_create_body_connects_target_by_type(service, database_url):
    response = await service.client.post(
        "/rest/comment", json={"body": "rest", "target": {"connect": {"Photo": {"id": 1}}}}
    )
    assert response.status_code == 201
    assert (response.json()["photoId"], response.json()["postId"], response.json()["videoId"]) == (1, None, None)
    assert fetch(database_url, "select photo_id from app.comment where body = 'rest'") == [(1,)]


async def test_a_patch_points_target_elsewhere(service, database_url):
    created = await service.client.post(
        "/rest/comment", json={"body": "patched", "target": {"connect": {"Post": {"id": 1}}}}
    )
    assert created.status_code == 201, created.text
    row = created.json()["id"]
    response = await service.client.patch(f"/rest/comment/{row}", json={"target": {"connect": {"Video": {"id": 1}}}})
    assert response.status_code == 200, response.text
    assert (response.json()["postId"], response.json()["photoId"], response.json()["videoId"]) == (None, None, 1)
    response = await service.client.patch(
        f"/rest/comment/{row}", json={"videoId": 1, "target": {"connect": {"Photo": {"id": 1}}}}
    )
    assert response.status_code == 400 and response.json()["code"] == "BAD_USER_INPUT", response.text
    assert fetch(database_url, f"select post_id, photo_id, video_id from app.comment where id = {row}") == [
        (None, None, 1)
    ]


@pytest.mark.parametrize(
    "target",
    [
        {"connect": {"Photo": {"id": 1}, "Post": {"id": 1}}},
        {"connect": {}},
        {"connect": {"Reaction": {"id": 1}}},  # not a type of the arc
        {"create": {"title": "x"}},
    ],
)
async def test_anything_but_one_type_to_connect_is_400(service, database_url, target):
    before = fetch(database_url, "select count(*) from app.comment")
    response = await service.client.post("/rest/comment", json={"body": "bad", "target": target})
    assert response.status_code == 400
    assert response.json()["code"] == "BAD_USER_INPUT"
    assert response.json()["field"].startswith("input.target")
    assert fetch(database_url, "select count(*) from app.comment") == before


async def test_openapi_documents_the_embed_and_the_connect_and_stays_valid(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS, mode="dev") as service:
        document = (await service.client.get("/openapi.json")).json()
    validate(document)
    schemas = document["components"]["schemas"]
    target = schemas["Comment"]["properties"]["target"]
    assert target["anyOf"] == [{"$ref": "#/components/schemas/CommentTarget"}, {"type": "null"}]
    members = {name: f"#/components/schemas/CommentTarget{name}" for name in ("Post", "Photo", "Video")}
    assert schemas["CommentTarget"]["oneOf"] == [{"$ref": ref} for ref in members.values()]
    assert schemas["CommentTarget"]["discriminator"] == {"propertyName": "__typename", "mapping": members}
    assert schemas["CommentTargetVideo"]["allOf"] == [
        {"$ref": "#/components/schemas/Video"},
        {"type": "object", "properties": {"__typename": {"const": "Video"}}, "required": ["__typename"]},
    ]
    assert schemas["CommentCreate"]["properties"]["target"] == {"$ref": "#/components/schemas/CommentTargetInput"}
    assert schemas["CommentUpdate"]["properties"]["target"] == {"$ref": "#/components/schemas/CommentTargetInput"}
    connect = schemas["CommentTargetInput"]["properties"]["connect"]
    assert connect["properties"] == {name: {"$ref": f"#/components/schemas/{name}Key"} for name in members}
    assert (connect["minProperties"], connect["maxProperties"]) == (1, 1)
    assert "target" not in schemas["Tag"]["properties"]
