"""Configuration sections that adjust the generated APIs (SPEC "Configuration"): `entities`, `functions`, `types`,
comment hints, and unknown names named in errors. Configuration wins over hints."""

import pytest

from svc.model import Cardinality, EntityRef, ModelError, Operation
from tests.support.model import read_model

DATABASE_FIXTURES = ["model_blog.sql"]

SETTINGS = {
    "entities": {
        "posts": {
            "type_name": "Article",
            "description": "Something written.",
            "omit_operations": ["delete"],
            "list_field": "allArticles",
            "single_field": "articleById",
            "connection_field": "articlePages",
            "columns": {"title": {"field_name": "headline", "description": "Big letters."}, "score": {"omit": True}},
            "foreign_keys": {
                "posts_author_id_fkey": {"field_name": "writer", "reverse_field_name": "writings"},
                "posts_editor_id_fkey": {"omit_reverse": True},
            },
        },
        "published_posts": {
            "primary_key": ["id"],
            "foreign_keys": {"published_author": {"columns": ["author_id"], "references": {"table": "people"}}},
        },
        "people": {"version_column": "row_version", "columns": {"display_name": {"field_name": "shownName"}}},
        "tags": {"deprecated": True},
        "audit_entries": {"omit": True},
    },
    "functions": {
        "search_posts": {"field_name": "findArticles"},
        "current_person": {"omit": True},
        "posts_excerpt": {"deprecated": "Use headline."},
        "add": {"mount": {"on": "posts", "field_name": "idPlus", "arguments": {"a": "id"}}},
    },
    "types": {
        "post_status": {"type_name": "Status", "values": {"in review": "REVIEWING"}},
        "posts.kind": {"type_name": "ArticleKind", "values": {"link": "URL"}},
    },
}


@pytest.fixture
async def model(database_url, tmp_path):
    _, model = await read_model(database_url, tmp_path, SETTINGS)
    return model


def entity(model, table):
    return model.entity(EntityRef("app_public", table))


async def test_entity_settings(model):
    posts = entity(model, "posts")
    assert (posts.type_name, posts.plural_name, posts.description) == ("Article", "Articles", "Something written.")
    assert (posts.roots.list, posts.roots.single, posts.roots.connection) == (
        "allArticles",
        "articleById",
        "articlePages",
    )
    assert posts.roots.create == "createArticle"
    assert Operation.DELETE not in posts.operations
    assert posts.field("headline").description == "Big letters."
    assert posts.field_of_column("score") is None
    assert entity(model, "tags").deprecation.reason == "No longer supported"
    assert "audit_entries" not in {e.table for e in model.entities}


async def test_column_setting_wins_over_the_hint(model):
    assert entity(model, "people").field("shownName").column == "display_name"


async def test_foreign_key_settings(model):
    posts = {r.name: r for r in entity(model, "posts").relations}
    people = {r.name: r for r in entity(model, "people").relations}
    assert posts["writer"].foreign_key == "posts_author_id_fkey"
    assert people["writings"].pairs == (("id", "author_id"),)
    assert "postsByEditorId" not in people and "writingsByEditorId" not in people
    codes = [c.code for c in entity(model, "posts").error_codes]
    assert "WRITER_NOT_FOUND" in codes and "REFERENCED_BY_WRITINGS" in [
        c.code for c in entity(model, "people").error_codes
    ]


async def test_a_view_with_a_declared_key_and_a_virtual_foreign_key(model):
    view = entity(model, "published_posts")
    assert view.primary_key == ("id",) and view.node
    assert [lookup.name for lookup in view.lookups] == ["publishedPost"]
    assert Operation.UPDATE in view.operations  # auto-updatable, and now keyed
    author = next(r for r in view.relations if r.name == "author")
    assert (author.kind, author.target, author.pairs) == (
        Cardinality.TO_ONE,
        EntityRef("app_public", "people"),
        (("author_id", "id"),),
    )
    assert "publishedPosts" in {r.name for r in entity(model, "people").relations}


async def test_version_column(model):
    assert entity(model, "people").version_column == "row_version"


async def test_function_settings(model):
    roots = {f.name for f in model.functions}
    assert "findArticles" in roots and "currentPerson" not in roots
    excerpt = next(c for c in entity(model, "posts").computed if c.name == "excerpt")
    assert excerpt.deprecation.reason == "Use headline."
    mounted = next(c for c in entity(model, "posts").computed if c.name == "idPlus")
    assert mounted.from_columns == {"a": "id"}
    assert [a.name for a in mounted.arguments] == ["b"]
    assert "plus" in roots  # a mounted function stays a root field


async def test_type_settings(model):
    enums = {e.name: e.values for e in model.enums}
    assert enums["Status"] == (("draft", "DRAFT"), ("published", "PUBLISHED"), ("in review", "REVIEWING"))
    assert enums["ArticleKind"] == (("article", "ARTICLE"), ("note", "NOTE"), ("link", "URL"))


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        ({"entities": {"nope": {}}}, "entities.nope: no table, view or foreign table 'nope' in app_public"),
        ({"entities": {"posts": {"columns": {"nope": {}}}}}, "entities.posts.columns.nope: no column 'nope' in app_public.posts"),
        (
            {"entities": {"posts": {"foreign_keys": {"nope": {}}}}},
            "entities.posts.foreign_keys.nope: no foreign key 'nope' on posts",
        ),
        (
            {"entities": {"posts": {"foreign_keys": {"v": {"columns": ["nope"], "references": {"table": "people"}}}}}},
            "entities.posts.foreign_keys.v.columns: no column 'nope' in posts",
        ),
        ({"entities": {"posts": {"version_column": "nope"}}}, "entities.posts.version_column: no column 'nope' in posts"),
        ({"entities": {"posts": {"primary_key": ["nope"]}}}, "entities.posts.primary_key: no column 'nope' in app_public.posts"),
        ({"functions": {"nope": {}}}, "functions.nope: no function 'nope' in app_public"),
        ({"types": {"nope": {}}}, "types.nope: no type 'nope' in app_public"),
        ({"types": {"posts.title": {}}}, "types.posts.title: no column 'posts.title' closed by a CHECK list of values"),
        ({"types": {"post_status": {"values": {"gone": "GONE"}}}}, "types.post_status.values.gone: post_status has no label 'gone'"),
    ],
)  # fmt: skip
async def test_unknown_names_are_errors(database_url, tmp_path, settings, problem):
    with pytest.raises(ModelError) as info:
        await read_model(database_url, tmp_path, settings)
    assert info.value.problems == [problem]
