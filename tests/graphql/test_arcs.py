"""Exclusive arcs in GraphQL (issue 23; SPEC "Embedding controls": `target`; tests/fixtures/arcs.sql): `target` is a
union of the types the arc may point at, selected with type conditions in the one statement of the request;
creating a row connects `target` by type (`{connect: {Video: {rowId: 1}}}`), and so does an update (the arc's other
keys set to NULL); anything but exactly one of the arc's types is BAD_USER_INPUT before any SQL."""

import re

import pytest

from tests.support.model import read_schema
from tests.support.postgres import fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["arcs.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}

TARGETS = """{ comments(orderBy: PRIMARY_KEY_ASC) { body target {
  __typename ... on Post { title } ... on Photo { url } ... on Video { url seconds } } } }"""


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as running:
        yield running


async def run(service, query: str, variables: dict | None = None, *, status: int = 200) -> dict:
    response = await service.client.post("/graphql", json={"query": query, "variables": variables or {}})
    assert response.status_code == status
    return response.json()


async def statements(service) -> int:
    return (await service.client.get("/health")).json()["statements"]


def type_block(sdl: str, kind: str, name: str) -> str:
    found = re.search(rf"^{kind} {name}\b[^\n]*\{{\n(.*?)^\}}", sdl, re.M | re.S)
    assert found is not None, f"{kind} {name} not in the SDL"
    return found.group(1)


async def test_the_sdl_has_a_union_per_arc_and_its_connect_inputs(database_url, tmp_path):
    sdl = (await read_schema(database_url, tmp_path, SETTINGS)).sdl
    assert "union CommentTarget = Post | Photo | Video\n" in sdl
    assert "union ReactionTarget = Post | Video\n" in sdl
    comment = type_block(sdl, "type", "Comment")
    assert "  target: CommentTarget\n" in comment
    # The ordinary per-key relations stay beside it.
    assert all(f"  {name}: {name.title()}\n" in comment for name in ("post", "photo", "video"))
    assert "  target: CommentTargetInput\n" in type_block(sdl, "input", "CreateCommentInput")
    assert "  target: CommentTargetInput\n" in type_block(sdl, "input", "UpdateCommentInput")
    assert type_block(sdl, "input", "CommentTargetInput") == "  connect: CommentTargetConnectInput!\n"
    connect = type_block(sdl, "input", "CommentTargetConnectInput")
    assert connect == "  Post: PostKeyInput\n  Photo: PhotoKeyInput\n  Video: VideoKeyInput\n"
    # `target` is a column of Bookmark: its arc is named after its CHECK.
    assert "  bookmarkPointsOnce: BookmarkBookmarkPointsOnce\n" in type_block(sdl, "type", "Bookmark")
    # At most one (not exactly one), and an arc over a column without a foreign key: no arc.
    for name in ("Tag", "Note"):
        assert "target" not in type_block(sdl, "type", name)
    assert "TagTarget" not in sdl and "NoteTarget" not in sdl


async def test_target_is_the_row_of_its_type_selected_by_type_conditions_in_one_statement(service):
    before = await statements(service)
    answer = await run(service, TARGETS)
    assert await statements(service) - before == 1
    assert answer == {
        "data": {
            "comments": [
                {"body": "on a post", "target": {"__typename": "Post", "title": "Hello"}},
                {"body": "on a photo", "target": {"__typename": "Photo", "url": "https://x/p1.jpg"}},
                {"body": "on a video", "target": {"__typename": "Video", "url": "https://x/v1.mp4", "seconds": 30}},
            ]
        }
    }


async def test_fragments_on_the_union_and_on_members_and_the_sum_form(service):
    query = """
      fragment Named on ReactionTarget { __typename }
      fragment PostTitle on Post { title }
      { reactions(orderBy: PRIMARY_KEY_ASC) { emoji target { ...Named ...PostTitle ... on Video { seconds } } } }"""
    assert await run(service, query) == {
        "data": {
            "reactions": [
                {"emoji": "+1", "target": {"__typename": "Video", "seconds": 30}},
                {"emoji": "<3", "target": {"__typename": "Post", "title": "Again"}},
            ]
        }
    }


async def test_a_selection_on_another_member_only_gives_an_empty_object(service):
    answer = await run(service, "{ comments(orderBy: PRIMARY_KEY_ASC) { target { ... on Post { title } } } }")
    assert answer == {"data": {"comments": [{"target": {"title": "Hello"}}, {"target": {}}, {"target": {}}]}}


async def test_a_create_connects_target_by_type(service, database_url):
    mutation = """mutation($input: CreateCommentInput!) { createComment(input: $input) {
      comment { body target { __typename ... on Video { seconds } ... on Photo { url } } } } }"""
    answer = await run(service, mutation, {"input": {"body": "new", "target": {"connect": {"Video": {"rowId": 1}}}}})
    assert answer == {
        "data": {"createComment": {"comment": {"body": "new", "target": {"__typename": "Video", "seconds": 30}}}}
    }
    assert fetch(database_url, "select post_id, photo_id, video_id from app.comment where body = 'new'") == [
        (None, None, 1)
    ]
    # A global ID is a key too.
    photo = (await run(service, "{ photo(rowId: 1) { id } }"))["data"]["photo"]["id"]
    answer = await run(service, mutation, {"input": {"body": "by id", "target": {"connect": {"Photo": {"id": photo}}}}})
    assert answer["data"]["createComment"]["comment"]["target"] == {"__typename": "Photo", "url": "https://x/p1.jpg"}


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ({"connect": {"Post": {"rowId": 1}, "Video": {"rowId": 1}}}, "got Post, Video"),
        ({"connect": {}}, "got none"),
    ],
)
async def test_anything_but_one_type_is_bad_user_input_and_nothing_is_written(service, database_url, target, message):
    before = fetch(database_url, "select count(*) from app.comment")
    mutation = "mutation($input: CreateCommentInput!) { createComment(input: $input) { comment { body } } }"
    answer = await run(service, mutation, {"input": {"body": "no", "target": target}}, status=400)
    assert answer["data"] is None
    (error,) = answer["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["extensions"]["field"] == "input.target.connect"
    assert error["message"] == f"give exactly one of Post, Photo, Video to connect target; {message}"
    assert fetch(database_url, "select count(*) from app.comment") == before


async def test_a_type_outside_the_arc_is_refused_by_validation(service):
    mutation = 'mutation { createReaction(input: {emoji: "x", target: {connect: {Photo: {rowId: 1}}}}) { reaction { emoji } } }'
    answer = await run(service, mutation, status=400)
    assert answer["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert "Photo" in answer["errors"][0]["message"]


async def test_connecting_a_missing_row_is_the_relations_not_found_error(service):
    mutation = """mutation { createComment(input: {body: "x", target: {connect: {Post: {rowId: 99}}}}) {
      comment { body } } }"""
    (error,) = (await run(service, mutation))["errors"]
    assert error["extensions"]["code"] == "POST_NOT_FOUND"


async def test_an_update_points_target_elsewhere_and_lets_go_of_the_old_row(service, database_url):
    create = """mutation { createComment(input: {body: "moving", target: {connect: {Post: {rowId: 1}}}}) {
      comment { rowId } } }"""
    row = (await run(service, create))["data"]["createComment"]["comment"]["rowId"]
    update = """mutation($id: Int!, $set: UpdateCommentInput!) { updateComment(rowId: $id, set: $set) {
      comment { body target { __typename ... on Video { seconds } } } } }"""
    answer = await run(
        service, update, {"id": row, "set": {"body": "moved", "target": {"connect": {"Video": {"rowId": 1}}}}}
    )
    assert answer == {
        "data": {"updateComment": {"comment": {"body": "moved", "target": {"__typename": "Video", "seconds": 30}}}}
    }
    select = f"select post_id, photo_id, video_id from app.comment where id = {row}"
    assert fetch(database_url, select) == [(None, None, 1)]
    # Setting one of the arc's keys beside it is refused, and nothing is written.
    answer = await run(
        service, update, {"id": row, "set": {"postId": 1, "target": {"connect": {"Photo": {"rowId": 1}}}}}, status=400
    )
    (error,) = answer["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["message"] == "postId and target both set what target points at"
    assert fetch(database_url, select) == [(None, None, 1)]
