"""Search bodies (SPEC REST "Search methods", `GET|POST /rest/search`): `POST /rest/{resource}/search/{method}`
with the method's members, `first`, and the rows' `filter` and members as a list's search body gives them; and a
global search's `query` and `first` from the query string or a body. Unknown members are 400; a method the resource
does not have is 404 naming those it has. Values are checked by the shared search planner.
"""

from typing import Any

from svc.errors import Code, SvcError
from svc.model import Entity, SearchMethod
from svc.plan import BOUND_NAMES, HIGHLIGHT_MEMBERS, HighlightOptions, SearchRequest

from ._api_request import Listing, SearchBody
from ._parse_inputs import bad
from ._parse_listing import Listings
from ._parse_query import Parameters

#: Each method's own members (SPEC "Search methods"), and those it needs.
METHOD_MEMBERS = {
    SearchMethod.FUZZY: ("query", "field", "minSimilarity"),
    SearchMethod.FULL_TEXT: ("query", "field", "highlight"),
    SearchMethod.SEMANTIC: ("vector", "field", "minScore"),
    SearchMethod.HYBRID: ("query", "vector", "lexicalWeight", "vectorWeight", "rrfK"),
    SearchMethod.NEAREST: ("near", "field", "maxDistance"),
}
REQUIRED_MEMBERS = {
    SearchMethod.FUZZY: ("query",),
    SearchMethod.FULL_TEXT: ("query",),
    SearchMethod.SEMANTIC: ("vector",),
    SearchMethod.HYBRID: ("query", "vector"),
    SearchMethod.NEAREST: ("near",),
}
#: The rows' members, as a list's search body takes them.
LISTING_MEMBERS = ("filter", "fields", "include", "embed", "inner", "anti")
_GLOBAL_MEMBERS = ("query", "first")


def search_method(entity: Entity, word: str, base: str) -> SearchMethod:
    """The method a path names, among those the resource has (404 listing them)."""
    supported = [method.value for method in entity.search.methods]
    found = next((m for m in entity.search.methods if m.value == word), None)
    if found is None:
        listed = ", ".join(supported) if supported else "none (no search index)"
        raise SvcError(
            Code.NOT_FOUND,
            f"{word!r} is not a search method of {base}; it supports {listed}",
            extensions={"supported": supported},
        )
    return found


def parse_search(listings: Listings, entity: Entity, method: SearchMethod, body: Any) -> tuple[SearchBody, Listing]:
    """A search method's body: its request, and the rows' filter and members."""
    if not isinstance(body, dict):
        raise bad("the search body must be a JSON object", "body")
    own = METHOD_MEMBERS[method]
    allowed = (*own, "first", *LISTING_MEMBERS)
    for name in body:
        if name not in allowed:
            raise bad(f"unknown {method.value} search member {name!r} (one of {', '.join(allowed)})", name)
    for name in REQUIRED_MEMBERS[method]:
        if body.get(name) is None:
            raise bad(f"a {method.value} search needs {name}", name)
    field = body.get("field")
    if field is not None and not isinstance(field, str):
        raise bad(f"field must be a string; got {field!r}", "field")
    request = SearchRequest(
        method,
        query=body.get("query"),
        vector=body.get("vector"),
        near=body.get("near"),
        field=field.upper() if field is not None else None,
        bound=body.get(BOUND_NAMES.get(method, "")),
        lexical_weight=body.get("lexicalWeight"),
        vector_weight=body.get("vectorWeight"),
        rrf_k=body.get("rrfK"),
    )
    listing = listings.from_body(entity, {name: body[name] for name in LISTING_MEMBERS if name in body})
    return SearchBody(request, body.get("first"), _highlight(body.get("highlight"))), listing


def parse_global_search(
    method: str, parameters: Parameters | None, body: Any, sources: tuple[tuple[Entity, str], ...]
) -> SearchBody:
    """A global search's `query` and `first`: URL parameters (GET) or a JSON body (POST), over `sources`."""
    if parameters is not None:
        query, first = parameters.take_value("query"), parameters.take_value("first")
        parameters.finish()
        if first is not None:
            if not first.isdigit():
                raise bad(f"first must be a whole number; got {first!r}", "first")
            first = int(first)
        values: dict[str, Any] = {"query": query, "first": first}
    else:
        if not isinstance(body, dict):
            raise bad("the search body must be a JSON object", "body")
        for name in body:
            if name not in _GLOBAL_MEMBERS:
                raise bad(f"unknown search member {name!r} (one of {', '.join(_GLOBAL_MEMBERS)})", name)
        values = dict(body)
    if values.get("query") is None:
        raise bad(f"a search needs query ({method} /rest/search)", "query")
    return SearchBody(
        SearchRequest(SearchMethod.FULL_TEXT, query=values["query"]), values.get("first"), sources=sources
    )


def _highlight(value: Any) -> HighlightOptions | None:
    """`highlight`: true (the defaults), false or absent (none), or an object of options."""
    if value is None or value is False:
        return None
    if value is True:
        return HighlightOptions()
    if not isinstance(value, dict):
        raise bad("highlight is true or an object of startSel, stopSel, maxWords, minWords, maxFragments", "highlight")
    for name in value:
        if name not in HIGHLIGHT_MEMBERS:
            raise bad(f"unknown highlight member {name!r} (one of {', '.join(HIGHLIGHT_MEMBERS)})", "highlight")
    return HighlightOptions.given(value)
