"""Search requests into search plans, for both front ends (SPEC "Search fields", REST "Search methods"): a method
of an entity, its query (a text, a vector, a GeoJSON geometry), the document searched, bounds, weights and `first`,
all checked here so a bad value is BAD_USER_INPUT (a wrong vector dimension, NaN, a geometry PostGIS would refuse)
and never reaches the database.
"""

import functools
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from svc.config import SearchConfig
from svc.errors import Code, SvcError
from svc.model import Entity, Model, Operation, SearchField, SearchMethod, VectorSimilarity

from ._ir import Document, Fusion, Highlight, Param, Ranking, RankingKind
from ._naming import GRAPHQL_NAMING, Naming, rendered
from ._values import Params, bad_input, is_json_array, is_json_object, text

Path = Sequence[str | int]
#: Hybrid search ranks at least this many candidates per ranking (SPEC "Limits": hybrid search candidates).
HYBRID_CANDIDATES = 50
_SIMILARITIES = {
    VectorSimilarity.COSINE: RankingKind.COSINE,
    VectorSimilarity.INNER_PRODUCT: RankingKind.INNER_PRODUCT,
    VectorSimilarity.L2: RankingKind.L2,
}
#: How deep the positions of each GeoJSON geometry type lie in its coordinates.
_POSITION_DEPTH = {"Point": 0, "MultiPoint": 1, "LineString": 1, "MultiLineString": 2, "Polygon": 2, "MultiPolygon": 3}
_GEOJSON_MEMBERS = frozenset({"type", "coordinates", "geometries", "bbox"})
#: ts_headline's defaults (MaxWords 35, MinWords 15); the selectors are the service's (`<b>`, `</b>`).
_MAX_WORDS, _MIN_WORDS = 35, 15
#: Stand-ins for the selectors while the headline is escaped (control characters no text search keeps).
START_MARK, STOP_MARK = "\x01", "\x02"


@attrs.frozen
class HighlightOptions:
    """`highlight: true` or its options (SPEC REST "Search methods"; GraphQL: the hit's `highlight` arguments)."""

    start: Any = None
    stop: Any = None
    max_words: Any = None
    min_words: Any = None
    max_fragments: Any = None

    @classmethod
    def given(cls, members: Mapping[str, Any]) -> "HighlightOptions":
        """The options by the names both APIs give them (`startSel`, `maxWords`...); their values are checked when
        the highlight is planned."""
        return cls(**{attribute: members.get(name) for name, attribute in HIGHLIGHT_MEMBERS.items()})


#: The highlight options' names in both APIs, and their attributes.
HIGHLIGHT_MEMBERS = {
    "startSel": "start",
    "stopSel": "stop",
    "maxWords": "max_words",
    "minWords": "min_words",
    "maxFragments": "max_fragments",
}


@attrs.frozen
class SearchRequest:
    """What one search asks for, as the front ends read it; `names` are the members' names in paths (REST and
    GraphQL name them alike)."""

    method: SearchMethod
    query: Any = None
    vector: Any = None
    near: Any = None
    field: str | None = None  # a field enum's value
    bound: Any = None  # minSimilarity, minScore or maxDistance
    lexical_weight: Any = None
    vector_weight: Any = None
    rrf_k: Any = None


#: The member each bound is given as, per method.
BOUND_NAMES = {
    SearchMethod.FUZZY: "minSimilarity",
    SearchMethod.SEMANTIC: "minScore",
    SearchMethod.NEAREST: "maxDistance",
}


@attrs.frozen
class Ranked:
    """A request's rankings (two for hybrid, fused), and the documents they search."""

    rankings: tuple[Ranking, ...]
    documents: tuple[SearchField, ...]
    fusion: Fusion | None = None

    @property
    def highlighted(self) -> SearchField | None:
        """The document a hit's highlight shows: a full-text search's, when its text is known (else none)."""
        if self.fusion is not None or len(self.documents) != 1:
            return None
        (document,) = self.documents
        if document.method is not SearchMethod.FULL_TEXT or document.source is None:
            return None
        return document


class SearchPlanner:
    """Plans search requests; values go into `params`, errors name paths as `naming` renders them."""

    def __init__(self, params: Params, config: SearchConfig, naming: Naming = GRAPHQL_NAMING) -> None:
        self.params = params
        self.config = config
        self._naming = naming

    def _at(self, path: Path) -> tuple[str, ...]:
        return rendered(self._naming, path)

    def first(self, value: Any, path: Path) -> tuple[Param, int]:
        """`first`: `search.default_limit` when not given, at most `search.max_limit`."""
        if value is None:
            value = self.config.default_limit
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad_input(f"first must be an integer; got {value!r}", self._at(path))
        if value < 0:
            raise bad_input(f"first must not be negative; got {value}", self._at(path))
        if value > self.config.max_limit:
            raise SvcError(
                Code.PAGE_SIZE_EXCEEDED,
                f"first is {value}, more than a search answers ({self.config.max_limit})",
                extensions={"limit": self.config.max_limit, "actual": value, **_field(self._at(path))},
            )
        return self.params.add(value, "integer"), value

    def rank(self, entity: Entity, request: SearchRequest, first: int, path: Path) -> Ranked:
        """The rankings of a request on an entity (the method is one the entity has)."""
        method = request.method
        if method is SearchMethod.HYBRID:
            lexical, vector = entity.search.lexical, entity.search.vector
            assert lexical is not None and vector is not None and entity.primary_key is not None
            rankings = (
                self._text_ranking(lexical, request.query, None, path=[*path, "query"]),
                self._vector_ranking(vector, request.vector, None, path=[*path, "vector"]),
            )
            fusion = Fusion(
                weights=(
                    self._number(request.lexical_weight, 1.0, [*path, "lexicalWeight"], minimum=0.0),
                    self._number(request.vector_weight, 1.0, [*path, "vectorWeight"], minimum=0.0),
                ),
                k=self._number(request.rrf_k, 60.0, [*path, "rrfK"], minimum=0.0),
                candidates=self.params.add(max(HYBRID_CANDIDATES, first + 1), "integer"),
                key=entity.primary_key[0],
            )
            return Ranked(rankings, (lexical, vector), fusion)
        document = self.document(entity, method, request.field, [*path, "field"])
        bound_path = [*path, BOUND_NAMES.get(method, "")]
        if method is SearchMethod.SEMANTIC:
            given, where = request.vector, [*path, "vector"]
            ranking = self._vector_ranking(document, given, request.bound, path=where, bound_path=bound_path)
        elif method is SearchMethod.NEAREST:
            given, where = request.near, [*path, "near"]
            ranking = self._spatial_ranking(document, given, request.bound, path=where, bound_path=bound_path)
        else:
            given, where = request.query, [*path, "query"]
            ranking = self._text_ranking(document, given, request.bound, path=where, bound_path=bound_path)
        return Ranked((ranking,), (document,))

    def rank_text(self, entity: Entity, query: Any, first: int, path: Path) -> Ranked:
        """A text query against an entity's lexical document (full text, else fuzzy): global search's part."""
        document = entity.search.lexical
        assert document is not None
        return self.rank(entity, SearchRequest(document.method, query=query, field=document.name), first, path)

    def document(self, entity: Entity, method: SearchMethod, name: str | None, path: Path) -> SearchField:
        """The document a request names (an enum value), else the method's first."""
        documents = entity.search.of(method)
        if name is None:
            return documents[0]
        found = next((d for d in documents if d.name == name), None)
        if found is None:
            names = ", ".join(d.name for d in documents)
            raise bad_input(
                f"{name!r} is not a {method.value} search field of {entity.type_name} ({names})", self._at(path)
            )
        return found

    def highlight(self, document: SearchField, query: Param, options: HighlightOptions, path: Path) -> Highlight:
        """A full-text hit's headline with `options` (checked as ts_headline would, before it can refuse them)."""
        assert document.source is not None
        max_words = self._count(options.max_words, [*path, "maxWords"], minimum=2)
        min_words = self._count(options.min_words, [*path, "minWords"], minimum=1)
        fragments = self._count(options.max_fragments, [*path, "maxFragments"], minimum=0)
        most = max_words if max_words is not None else _MAX_WORDS
        least = min_words if min_words is not None else min(_MIN_WORDS, most - 1)
        if least >= most:
            raise bad_input(f"minWords ({least}) must be less than maxWords ({most})", self._at([*path, "minWords"]))
        settings = [f"MaxWords={most}", f"MinWords={least}", f"StartSel={START_MARK}", f"StopSel={STOP_MARK}"]
        if fragments is not None:
            settings.append(f"MaxFragments={fragments}")
        start = options.start if options.start is not None else "<b>"
        stop = options.stop if options.stop is not None else "</b>"
        return Highlight(
            source=document.source,
            config=document.config,
            query=query,
            start=self.params.add(text(start, self._at([*path, "startSel"])), "text"),
            stop=self.params.add(text(stop, self._at([*path, "stopSel"])), "text"),
            options=self.params.add(", ".join(settings), "text"),
        )

    # --- rankings ----------------------------------------------------------------------------------------------

    def _text_ranking(
        self, document: SearchField, query: Any, bound: Any, *, path: Path, bound_path: Path = ()
    ) -> Ranking:
        value = self.params.bind(query, functools.partial(text, path=self._at(path)), "text")
        where = Document(document.column, document.expression)
        if document.method is SearchMethod.FUZZY:
            minimum = self._number(bound, None, bound_path, minimum=0.0) if bound is not None else None
            return Ranking(RankingKind.TRIGRAM, where, value, bound=minimum)
        return Ranking(RankingKind.FULL_TEXT, where, value, config=document.config)

    def _vector_ranking(
        self, document: SearchField, vector: Any, bound: Any, *, path: Path, bound_path: Path = ()
    ) -> Ranking:
        if not is_json_array(vector) or not vector:
            raise bad_input("vector must be a non-empty list of numbers", self._at(path))
        numbers: list[float] = []
        for position, item in enumerate(vector):
            if isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item):
                raise bad_input(f"vector items must be finite numbers; got {item!r}", self._at([*path, position]))
            numbers.append(float(item))
        if document.dimensions is not None and len(numbers) != document.dimensions:
            raise bad_input(
                f"vector has {len(numbers)} dimensions; {document.name} has {document.dimensions}", self._at(path)
            )
        assert document.similarity is not None and document.sql_type is not None
        minimum = self._number(bound, None, bound_path) if bound is not None else None
        return Ranking(
            _SIMILARITIES[document.similarity],
            Document(document.column, document.expression),
            self.params.add("[" + ",".join(repr(n) for n in numbers) + "]", "text"),
            bound=minimum,
            sql_type=document.sql_type,
        )

    def _spatial_ranking(
        self, document: SearchField, near: Any, bound: Any, *, path: Path, bound_path: Path
    ) -> Ranking:
        check_geojson(near, document.geography, self._at(path))
        maximum = self._number(bound, None, bound_path, minimum=0.0) if bound is not None else None
        return Ranking(
            RankingKind.GEOGRAPHY if document.geography else RankingKind.GEOMETRY,
            Document(document.column, document.expression),
            self.params.add(json.dumps(near), "text"),
            bound=maximum,
            srid=document.srid,
        )

    # --- values ------------------------------------------------------------------------------------------------

    def _number(self, value: Any, default: float | None, path: Path, *, minimum: float | None = None) -> Param:
        if value is None:
            value = default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise bad_input(f"expected a finite number; got {value!r}", self._at(path))
        if minimum is not None and value < minimum:
            raise bad_input(f"must be at least {minimum:g}; got {value}", self._at(path))
        return self.params.add(float(value), "float8")

    def _count(self, value: Any, path: Path, *, minimum: int) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise bad_input(f"expected an integer of at least {minimum}; got {value!r}", self._at(path))
        return value


def search_key(entity: Entity) -> tuple[str, ...]:
    """The columns that break ties between hits of equal score: the primary key, else every orderable column."""
    return entity.primary_key or tuple(f.column for f in entity.fields if f.orderable)


def global_sources(model: Model) -> tuple[Entity, ...]:
    """The entities global search reads: those listed whose text a query searches (full text, else fuzzy)."""
    return tuple(e for e in model.entities if Operation.LIST in e.operations and e.search.lexical is not None)


def _field(at: tuple[str, ...]) -> dict[str, str]:
    return {"field": at[0]} if at else {}


def check_geojson(value: Any, geography: bool, at: tuple[str, ...]) -> None:
    """A GeoJSON geometry (RFC 7946) PostGIS reads without complaint: a known type, positions of two or three finite
    numbers at the right depth, lines of two positions or more, closed rings of four or more; on a geography,
    longitudes and latitudes in range."""
    if not is_json_object(value) or not isinstance(value.get("type"), str):
        raise bad_input("expected a GeoJSON geometry object with a type", at)
    unknown = sorted(set(value) - _GEOJSON_MEMBERS)
    if unknown:
        raise bad_input(f"a GeoJSON geometry has no member {unknown[0]!r}", at)
    kind = value["type"]
    if kind == "GeometryCollection":
        members = value.get("geometries")
        if not is_json_array(members):
            raise bad_input("a GeometryCollection needs a list of geometries", at)
        for member in members:
            check_geojson(member, geography, at)
        return
    if kind not in _POSITION_DEPTH:
        raise bad_input(f"{kind!r} is not a GeoJSON geometry type", at)
    _coordinates(value.get("coordinates"), kind, _POSITION_DEPTH[kind], geography, at)


def _coordinates(value: Any, kind: str, depth: int, geography: bool, at: tuple[str, ...]) -> None:
    if depth == 0:
        if not is_json_array(value) or len(value) not in (2, 3):
            raise bad_input(f"a {kind}'s positions are lists of two or three numbers", at)
        if not all(not isinstance(n, bool) and isinstance(n, (int, float)) and math.isfinite(n) for n in value):
            raise bad_input(f"a {kind}'s coordinates must be finite numbers", at)
        if geography and not (-180 <= value[0] <= 180 and -90 <= value[1] <= 90):
            raise bad_input("a geography's longitude lies in [-180, 180] and its latitude in [-90, 90]", at)
        return
    if not is_json_array(value):
        raise bad_input(f"a {kind}'s coordinates must be nested lists", at)
    leaf = depth == 1
    if leaf and kind in ("LineString", "MultiLineString") and len(value) < 2:
        raise bad_input("a line needs two positions or more", at)
    if leaf and kind in ("Polygon", "MultiPolygon"):
        if len(value) < 4:
            raise bad_input("a polygon's rings need four positions or more", at)
        if value[0] != value[-1]:
            raise bad_input("a polygon's rings must be closed (end where they start)", at)
    for item in value:
        _coordinates(item, kind, depth - 1, geography, at)
