"""The model of a small blog schema (tests/fixtures/model_blog.sql), read through the real catalog: type and field
names, keys and lookups, relations of every kind, functions, enums, operations and error codes (SPEC "Naming",
"Root fields per table", "Fields present on generated types", "Errors")."""

import pytest

from svc.model import Cardinality, EntityRef, Operation, ReturnKind
from tests.support.model import read_model

DATABASE_FIXTURES = ["model_blog.sql"]


@pytest.fixture(scope="module")
def model_holder():
    return {}


@pytest.fixture
async def model(database_url, tmp_path, model_holder):
    if "model" not in model_holder:
        _, model_holder["model"] = await read_model(database_url, tmp_path)
    return model_holder["model"]


def entity(model, table):
    return model.entity(EntityRef("app_public", table))


def relations(model, table):
    return {r.name: r for r in entity(model, table).relations}


async def test_type_and_plural_names(model):
    names = {e.table: (e.type_name, e.plural_name) for e in model.entities}
    assert names == {
        "audit_entries": ("AuditEntry", "AuditEntries"),
        "comments": ("Comment", "Comments"),
        "follows": ("Follow", "Follows"),
        "people": ("Person", "People"),
        "post_tags": ("PostTag", "PostTags"),
        "posts": ("Post", "Posts"),
        "profiles": ("Profile", "Profiles"),
        "published_posts": ("PublishedPost", "PublishedPosts"),
        "tags": ("Tag", "Tags"),
    }


async def test_root_names(model):
    roots = entity(model, "people").roots
    assert (roots.single, roots.list, roots.connection) == ("person", "people", "peopleConnection")
    assert (roots.create, roots.create_many) == ("createPerson", "createPeople")
    assert (roots.update, roots.update_by_node_id, roots.update_many) == (
        "updatePerson",
        "updatePersonByNodeId",
        "updatePeople",
    )
    assert (roots.delete, roots.delete_by_node_id, roots.delete_many) == (
        "deletePerson",
        "deletePersonByNodeId",
        "deletePeople",
    )


async def test_fields_are_camel_case_with_hints_and_built_in_names_kept_free(model):
    people = entity(model, "people")
    assert [f.name for f in people.fields] == [
        "rowId",  # `id` is the global ID of a type with a single-column key
        "username",
        "email",
        "nickname",  # @name hint
        "rowVersionColumn",  # `rowVersion` is the row's version
        "createdAt",
    ]
    nickname = people.field("nickname")
    assert nickname.description == "Shown next to posts."
    assert people.description == "Someone who writes."
    assert people.deprecation.reason == "Use accounts instead."
    assert people.field("username").max_length == 40
    assert not people.field("rowId").insertable and not people.field("rowId").updatable
    assert people.field("createdAt").optional_on_create
    assert not people.field("email").optional_on_create


async def test_keys_lookups_and_node(model):
    people = entity(model, "people")
    assert people.primary_key == ("id",) and people.node
    assert [(lookup.name, lookup.columns) for lookup in people.lookups] == [
        ("person", ("id",)),
        ("personByUsername", ("username",)),  # the lower(email) index is an expression: no lookup
    ]
    post_tags = entity(model, "post_tags")
    assert post_tags.primary_key == ("post_id", "tag_id") and not post_tags.node
    assert [(lookup.name, lookup.columns) for lookup in post_tags.lookups] == [("postTag", ("post_id", "tag_id"))]


async def test_to_one_relations_are_named_from_their_columns(model):
    posts = relations(model, "posts")
    author, editor = posts["author"], posts["editor"]
    assert (author.kind, author.target, author.pairs, author.holds_key) == (
        Cardinality.TO_ONE,
        EntityRef("app_public", "people"),
        (("author_id", "id"),),
        True,
    )
    assert not author.nullable and editor.nullable


async def test_reverse_relations_are_plural_and_disambiguated_by_columns(model):
    people = relations(model, "people")
    assert people["postsByAuthorId"].kind is Cardinality.TO_MANY
    assert people["postsByAuthorId"].pairs == (("id", "author_id"),)
    assert people["postsByEditorId"].pairs == (("id", "editor_id"),)
    assert "posts" not in people
    assert relations(model, "posts")["comments"].kind is Cardinality.TO_MANY


async def test_a_unique_foreign_key_gives_a_to_one_reverse(model):
    profile = relations(model, "people")["profile"]
    assert (profile.kind, profile.holds_key, profile.pairs) == (Cardinality.TO_ONE, False, (("id", "person_id"),))
    assert relations(model, "profiles")["person"].holds_key


async def test_many_to_many_through_a_junction(model):
    tags = relations(model, "posts")["tags"]
    assert tags.kind is Cardinality.MANY_TO_MANY
    assert tags.junction == EntityRef("app_public", "post_tags")
    assert (tags.pairs, tags.junction_pairs) == ((("id", "post_id"),), (("tag_id", "id"),))
    assert relations(model, "tags")["posts"].junction_pairs == (("post_id", "id"),)
    assert relations(model, "posts")["postTags"].kind is Cardinality.TO_MANY  # the junction rows stay reachable


async def test_self_referencing_many_to_many_is_named_by_the_far_key(model):
    people = relations(model, "people")
    assert people["peopleByFollowedId"].junction_pairs == (("followed_id", "id"),)
    assert people["peopleByFollowedId"].pairs == (("id", "follower_id"),)
    assert people["peopleByFollowerId"].pairs == (("id", "followed_id"),)
    assert {"followsByFollowerId", "followsByFollowedId"} <= set(people)


async def test_self_reference_gives_parent_children_and_a_hierarchy(model):
    comments = entity(model, "comments")
    by_name = {r.name: r for r in comments.relations}
    assert by_name["parent"].holds_key
    assert by_name["commentsByParentId"].kind is Cardinality.TO_MANY
    (hierarchy,) = comments.hierarchies
    assert (hierarchy.ancestors, hierarchy.descendants, hierarchy.pairs) == (
        "ancestors",
        "descendants",
        (("parent_id", "id"),),
    )


async def test_enums_and_check_lists(model):
    assert {e.name: e.values for e in model.enums} == {
        "PostStatus": (("draft", "DRAFT"), ("published", "PUBLISHED"), ("in review", "IN_REVIEW")),
        "PostKind": (("article", "ARTICLE"), ("note", "NOTE"), ("link", "LINK")),
    }
    posts = entity(model, "posts")
    assert posts.field("status").type.name == "PostStatus"
    assert posts.field("kind").type.name == "PostKind"
    assert posts.field("score").type.name == "Decimal"


async def test_computed_fields_drop_the_table_prefix(model):
    excerpt = entity(model, "posts").computed[0]
    assert (excerpt.name, excerpt.function, excerpt.returns.kind) == ("excerpt", "posts_excerpt", ReturnKind.SCALAR)
    assert [(a.name, a.required) for a in excerpt.arguments] == [("length", False)]
    (post_count,) = entity(model, "people").computed
    assert (post_count.name, post_count.returns.type.name) == ("postCount", "BigInt")


async def test_root_functions(model):
    functions = {f.name: f for f in model.functions}
    assert set(functions) == {"searchPosts", "currentPerson", "plus", "publish", "postStats"}
    assert functions["searchPosts"].returns.kind is ReturnKind.ROWS and not functions["searchPosts"].mutation
    assert functions["currentPerson"].returns.kind is ReturnKind.ROW
    assert functions["plus"].strict and functions["plus"].returns.type.name == "Int"
    assert functions["publish"].mutation
    record = functions["postStats"].returns.record
    assert (record.name, [f.name for f in record.fields]) == ("PostStatsRecord", ["posts", "comments"])
    assert any("overloaded" in warning for warning in model.warnings)


async def test_operations(model):
    assert entity(model, "posts").operations == frozenset(Operation)
    assert entity(model, "audit_entries").operations == {Operation.LIST, Operation.CONNECTION, Operation.CREATE}
    assert entity(model, "published_posts").operations == {Operation.LIST, Operation.CONNECTION}


async def test_error_codes(model):
    codes = [(c.code, c.kind.value, c.constraint) for c in entity(model, "posts").error_codes]
    assert codes == [
        ("ID_TAKEN", "unique", "posts_pkey"),
        ("AUTHOR_NOT_FOUND", "foreign_key", "posts_author_id_fkey"),
        ("EDITOR_NOT_FOUND", "foreign_key", "posts_editor_id_fkey"),
        ("REFERENCED_BY_COMMENTS", "referenced_by", "comments_post_id_fkey"),
        ("REFERENCED_BY_POST_TAGS", "referenced_by", "post_tags_post_id_fkey"),
        ("KIND_INVALID", "check", "posts_kind_check"),
        ("TITLE_INVALID", "check", "posts_title_check"),
        ("TITLE_NOT_SHOUTING", "check", "title_not_shouting"),
        ("AUTHOR_ID_REQUIRED", "not_null", None),
        ("TITLE_REQUIRED", "not_null", None),
        ("STATUS_REQUIRED", "not_null", None),
        ("KIND_REQUIRED", "not_null", None),
        ("STALE_VERSION", "stale_version", None),
        ("SCORE_OUT_OF_RANGE", "out_of_range", None),
    ]
    people = [c.code for c in entity(model, "people").error_codes]
    assert set(people[:3]) == {"ID_TAKEN", "USERNAME_TAKEN", "EMAIL_TAKEN"}  # the expression index lower(email) too
    assert "REFERENCED_BY_POSTS_BY_AUTHOR_ID" in people and "USERNAME_TOO_LONG" in people
