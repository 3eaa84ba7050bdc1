"""Exclusive arcs in the model (issue 23; tests/fixtures/arcs.sql): a CHECK that exactly one of several columns is
set, each the sole column of a single-column foreign key, gives the `target` field over those keys' to-one relations
(which stay); a table whose CHECK is not exactly-one, or whose arc has a column without a foreign key, gets none; a
taken `target` gives the arc the CHECK's name."""

from svc.graphql import build_graphql_schema
from svc.model import Arc, EntityRef, prune_model
from tests.support.model import read_catalog_and_model, read_model

DATABASE_FIXTURES = ["arcs.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}


async def test_arcs_are_found_with_their_relations_in_the_checks_order(database_url, tmp_path):
    _, model = await read_model(database_url, tmp_path, SETTINGS)
    arcs = {e.table: e.arcs for e in model.entities if e.arcs}
    assert arcs == {
        "comment": (
            Arc("target", "CommentTarget", "CommentTargetInput", ("post", "photo", "video"), "comment_one_target"),
        ),
        "reaction": (Arc("target", "ReactionTarget", "ReactionTargetInput", ("post", "video"), "reaction_check"),),
        # `target` is a column here: the arc takes the CHECK's name.
        "bookmark": (
            Arc(
                "bookmarkPointsOnce",
                "BookmarkBookmarkPointsOnce",
                "BookmarkBookmarkPointsOnceInput",
                ("photo", "video"),
                "bookmark_points_once",
            ),
        ),
    }
    comment = model.entity(EntityRef("app", "comment"))
    assert {r.name for r in comment.relations} == {"post", "photo", "video"}  # the per-key relations stay
    assert [model.entity(r.target).type_name for r in comment.arc_relations(comment.arcs[0])] == [
        "Post",
        "Photo",
        "Video",
    ]


def test_rbac_keeps_the_arcs_types_the_role_may_read(database_url, tmp_path):
    roles = ["svc_arcs_viewer", "svc_arcs_commenter"]
    catalog, model = read_catalog_and_model(database_url, tmp_path, SETTINGS, roles=roles)
    viewer = prune_model(model, catalog, "svc_arcs_viewer")
    comment = viewer.entity(EntityRef("app", "comment"))
    (arc,) = comment.arcs
    assert [r.name for r in comment.arc_relations(arc)] == ["post", "photo"]
    assert "union CommentTarget = Post | Photo\n" in build_graphql_schema(viewer).sdl
    # None of its types readable: no arc (and no union without members).
    commenter = prune_model(model, catalog, "svc_arcs_commenter")
    assert commenter.entity(EntityRef("app", "comment")).arcs == ()
    assert "CommentTarget" not in build_graphql_schema(commenter).sdl
