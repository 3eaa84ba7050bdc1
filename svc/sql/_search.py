"""A search as part of the one statement (SPEC "Search fields"): each source's best `first + 1` rows by score (a
ranking's matches; or two rankings' candidates fused by reciprocal rank), their hits built as JSON, merged by score
(global search) and cut to `first`, with `hasMore` from the extra row.

    candidates: select <columns>, <score> as __score [, <distance> as __distance] from <table> t
                where <match> and <filter> order by <the ranking's order>, <key> limit first + 1
    fused:      with svc_lexical as (<key, rank> of the first ranking's best candidates), svc_vector as (...)
                select <columns>, f.__score from (<keys of either, with the fused score>) f join <table> t on <key>
    answer:     json_build_object('hits', json_agg(<hit> ...) filter (where __n <= first), 'hasMore', count(*) > first)
                over the one source's hits numbered by its ranking, or the union of every source's numbered by score

A vector or spatial ranking is read in its distance order, which its index serves; its score is a decreasing
function of that distance, so the hits come out best first either way. Index expressions and full-text sources are
the catalog's SQL over the row's unqualified column names: they are written where the row is the only one in scope.
"""

from collections.abc import Callable
from typing import LiteralString

from psycopg import sql
from psycopg.abc import AdaptContext

from svc.plan import (
    START_MARK,
    STOP_MARK,
    Fusion,
    Highlight,
    HitMember,
    HitOutput,
    Ranking,
    RankingKind,
    Read,
    ResultsMember,
    RowVersionOutput,
    Search,
    SearchSource,
    Shape,
    Table,
)

from ._filters import TS_QUERY_ONCE, Expressions, TypeName, param, qualified, where
from ._values import json_object

#: The distance operators of pgvector's operator classes, and each score from that distance.
_VECTOR_DISTANCES: dict[RankingKind, tuple[LiteralString, LiteralString]] = {
    RankingKind.COSINE: ("<=>", "1 - {}"),
    RankingKind.INNER_PRODUCT: ("<#>", "-({})"),  # pgvector's <#> is the negative inner product
    RankingKind.L2: ("<->", "1 / (1 + {})"),
}
_HTML_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#39;"))

Selection = Callable[[Read, sql.Identifier], tuple[sql.Composable, list[sql.Composable]]]
RowWriter = Callable[[Shape, sql.Identifier, Read], tuple[sql.Composable, sql.Composable]]


class CatalogText(sql.Composable):
    """SQL text the catalog wrote (an index expression, a generated column's expression), written as it is: the
    database's own rendering of an object it holds, never a client's text. `%` is doubled, as psycopg reads the
    statement's placeholders."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._text = text

    def as_bytes(self, context: AdaptContext | None = None) -> bytes:
        connection = context.connection if context is not None else None
        encoding = connection.info.encoding if connection is not None else "utf-8"
        return f"({self._text.replace('%', '%%')})".encode(encoding)


class SearchWriter:
    """Writes searches with the read compiler's pieces: aliases, filters, a read's selection and a row's JSON."""

    def __init__(
        self,
        alias: Callable[[], str],
        expressions: Expressions,
        selection: Selection,
        row: RowWriter,
        *,
        whole_row: Callable[[Shape], bool],
        needed_columns: Callable[[Read], list[str]],
    ) -> None:
        self._alias = alias
        self._expressions = expressions
        self._selection = selection
        self._row = row
        self._whole_row = whole_row
        self._needed_columns = needed_columns

    def search(self, search: Search) -> sql.Composable:
        """The results object of a search: its hits numbered best first (a single source's by its own ranking, the
        sources' of a global search merged by score), the first `first` of them, and whether there are more."""
        first = param(search.first)
        if len(search.sources) == 1:
            hits = self._hits(search.sources[0], first, position=None)
        else:
            merged = sql.Identifier(self._alias())
            each = sql.SQL(" union all ").join(
                sql.SQL("({})").format(self._hits(source, first, position=position))
                for position, source in enumerate(search.sources, start=1)
            )
            hits = sql.SQL(
                "select {m}.h, row_number() over (order by {m}.s desc, {m}.src, {m}.rank) as __n from ({each}) {m}"
            ).format(m=merged, each=each)
        numbered = sql.Identifier(self._alias())
        members: list[tuple[str, sql.Composable]] = []
        for output in search.outputs:
            if output.constant is not None:
                members.append((output.key, sql.SQL("{}::text").format(sql.Literal(output.constant))))
            elif output.member is ResultsMember.HITS:
                members.append(
                    (
                        output.key,
                        sql.SQL(
                            "coalesce(json_agg({n}.h order by {n}.__n) filter (where {n}.__n <= {first}), '[]'::json)"
                        ).format(n=numbered, first=first),
                    )
                )
            else:
                members.append((output.key, sql.SQL("count(*) > {}").format(first)))
        return sql.SQL("select {members} from ({hits}) {n}").format(members=json_object(members), hits=hits, n=numbered)

    def _hits(self, source: SearchSource, first: sql.Composable, *, position: int | None) -> sql.Composable:
        """One source's hits (JSON `h`) numbered best first by its ranking: as `__n` when it is the search's only
        source (`position` None); else as `rank`, with their scores `s` and the source's `position` `src`, for the
        merge."""
        row = sql.Identifier(self._alias())
        candidates = self._fused(source, first) if source.fusion is not None else self._ranked(source, first)
        joins, node = self._row(source.read.shape, row, source.read)
        hit = json_object([(output.key, self._hit_member(output, row, node, source)) for output in source.hits])
        key = sql.SQL(", ").join(sql.SQL("{}.{}").format(row, sql.Identifier(c)) for c in source.key)
        rank = sql.SQL("row_number() over (order by {row}.__score desc, {key})").format(row=row, key=key)
        if position is None:
            columns = sql.SQL("{hit} as h, {rank} as __n").format(hit=hit, rank=rank)
        else:
            columns = sql.SQL("{hit} as h, {row}.__score::float8 as s, {position} as src, {rank} as rank").format(
                hit=hit, row=row, position=sql.Literal(position), rank=rank
            )
        return sql.SQL("select {columns} from ({candidates}) {row}{joins}").format(
            columns=columns, candidates=candidates, row=row, joins=joins
        )

    def _hit_member(
        self, output: HitOutput, row: sql.Identifier, node: sql.Composable, source: SearchSource
    ) -> sql.Composable:
        if output.constant is not None:
            return sql.SQL("{}::text").format(sql.Literal(output.constant))
        member = output.member
        if member is HitMember.SCORE:
            return sql.SQL("{}.__score::float8").format(row)
        if member is HitMember.NODE:
            return node
        if member is HitMember.DISTANCE:
            return sql.SQL("{}.__distance").format(row)
        if member is HitMember.TYPE:
            return sql.SQL("{}::text").format(sql.Literal(source.type))
        assert member is HitMember.HIGHLIGHT
        return _headline(output.highlight) if output.highlight is not None else sql.SQL("null")

    # --- candidates --------------------------------------------------------------------------------------------

    def _columns(self, source: SearchSource, table: sql.Identifier) -> sql.Composable:
        """The columns a candidate carries to its hit: those the node reads and links by, and the key (every column
        where a highlight's text, the catalog's SQL over the row's column names, may name any); the whole row where
        functions of the row need it, and its system version."""
        read = source.read
        columns: list[sql.Composable]
        if any(output.highlight is not None for output in source.hits):
            columns = [sql.SQL("{}.*").format(table)]
        else:
            names = dict.fromkeys([*self._needed_columns(read), *source.key])
            columns = [sql.SQL("{}.{}").format(table, sql.Identifier(name)) for name in names]
        if self._whole_row(read.shape):
            columns.append(sql.SQL("{} as __row").format(table))
        if any(isinstance(output, RowVersionOutput) and output.system for output in read.shape.outputs):
            columns.append(sql.SQL("{}.xmin as __xmin").format(table))
        return sql.SQL(", ").join(columns)

    def _matches(self, source: SearchSource, ranking: Ranking, table: sql.Identifier) -> sql.Composable:
        """`<table> <alias> where ...`: the rows a ranking matches among those the read's filter selects."""
        from_, conditions = self._selection(source.read, table)
        match = self._match(ranking, table)
        return sql.SQL("{}{}").format(from_, where([*([match] if match is not None else []), *conditions]))

    def _ranked(self, source: SearchSource, first: sql.Composable) -> sql.Composable:
        """One ranking's best `first + 1` matches among the rows the read's filter selects."""
        (ranking,) = source.rankings
        table = sql.Identifier(self._alias())
        from_ = self._matches(source, ranking, table)
        extra = sql.SQL("")
        if ranking.kind in (RankingKind.GEOMETRY, RankingKind.GEOGRAPHY):
            extra = sql.SQL(", {} as __distance").format(self._distance(ranking, table))
        return sql.SQL(
            "select {columns}, {score} as __score{extra} from {from_} order by {order} limit {first} + 1"
        ).format(
            columns=self._columns(source, table),
            score=self._score(ranking, table),
            extra=extra,
            from_=from_,
            order=self._order(ranking, table, source.key),
            first=first,
        )

    def _fused(self, source: SearchSource, first: sql.Composable) -> sql.Composable:
        """Each ranking's best candidates ranked 1, 2, ..., the rows of either scored by their fused ranks."""
        fusion = source.fusion
        assert fusion is not None
        parts: list[sql.Composable] = []
        names = [sql.Identifier(self._alias()) for _ in source.rankings]
        for name, ranking in zip(names, source.rankings, strict=True):
            table = sql.Identifier(self._alias())
            order = self._order(ranking, table, source.key)
            parts.append(
                sql.SQL(
                    "{name} as (select {table}.{key} as __key, row_number() over (order by {order}) as __rank"
                    " from {from_} order by {order} limit {candidates})"
                ).format(
                    name=name,
                    table=table,
                    key=sql.Identifier(fusion.key),
                    order=order,
                    from_=self._matches(source, ranking, table),
                    candidates=param(fusion.candidates),
                )
            )
        fused, table = sql.Identifier(self._alias()), sql.Identifier(self._alias())
        return sql.SQL(
            "with {ctes} select {columns}, {fused}.__score from ({scores}) {fused}"
            " join {source} {table} on {table}.{key} = {fused}.__key"
            " order by {fused}.__score desc, {table}.{key} limit {first} + 1"
        ).format(
            ctes=sql.SQL(", ").join(parts),
            columns=self._columns(source, table),
            fused=fused,
            scores=_fused_scores(fusion, names),
            source=qualified(_table_of(source.read)),
            table=table,
            key=sql.Identifier(fusion.key),
            first=first,
        )

    # --- rankings ----------------------------------------------------------------------------------------------

    def _document(self, ranking: Ranking, table: sql.Identifier) -> sql.Composable:
        document = ranking.document
        if document.column is not None:
            return sql.SQL("{}.{}").format(table, sql.Identifier(document.column))
        assert document.expression is not None
        return CatalogText(document.expression)

    def _score(self, ranking: Ranking, table: sql.Identifier) -> sql.Composable:
        document, query = self._document(ranking, table), param(ranking.query)
        kind = ranking.kind
        if kind is RankingKind.TRIGRAM:
            return sql.SQL("word_similarity({}, {})").format(query, document)
        if kind is RankingKind.FULL_TEXT:
            return sql.SQL("ts_rank({}, {})").format(document, _ts_query(ranking.config, query))
        if kind in _VECTOR_DISTANCES:
            return sql.SQL(_VECTOR_DISTANCES[kind][1]).format(self._distance(ranking, table))
        return sql.SQL("1 / (1 + {})").format(self._distance(ranking, table))

    def _distance(self, ranking: Ranking, table: sql.Identifier) -> sql.Composable:
        document = self._document(ranking, table)
        if ranking.kind in _VECTOR_DISTANCES:
            operator = sql.SQL(_VECTOR_DISTANCES[ranking.kind][0])
            return sql.SQL("({} {} {})").format(document, operator, _vector(ranking))
        return sql.SQL("ST_Distance({}, {})").format(document, _geometry(ranking))

    def _match(self, ranking: Ranking, table: sql.Identifier) -> sql.Composable | None:
        """The condition a row must meet to be a hit (None: every row is, best first)."""
        document, query, bound = self._document(ranking, table), param(ranking.query), ranking.bound
        kind = ranking.kind
        if kind is RankingKind.TRIGRAM:
            if bound is None:  # the database's word-similarity threshold, and its index
                return sql.SQL("{} <%% {}").format(query, document)
            return sql.SQL("word_similarity({}, {}) >= {}").format(query, document, param(bound))
        if kind is RankingKind.FULL_TEXT:
            return sql.SQL("{} @@ {}").format(document, _ts_query(ranking.config, query))
        if bound is None:
            return None
        if kind in _VECTOR_DISTANCES:
            return sql.SQL("{} >= {}").format(self._score(ranking, table), param(bound))
        return sql.SQL("ST_DWithin({}, {}, {})").format(document, _geometry(ranking), param(bound))

    def _order(self, ranking: Ranking, table: sql.Identifier, key: tuple[str, ...]) -> sql.Composable:
        """Best first, ties by key: by distance where an index serves that order, else by score."""
        if ranking.kind in _VECTOR_DISTANCES:
            best = self._distance(ranking, table)
        elif ranking.kind in (RankingKind.GEOMETRY, RankingKind.GEOGRAPHY):
            best = sql.SQL("{} <-> {}").format(self._document(ranking, table), _geometry(ranking))
        else:
            best = sql.SQL("{} desc").format(self._score(ranking, table))
        keys = [sql.SQL("{}.{}").format(table, sql.Identifier(c)) for c in key]
        return sql.SQL(", ").join([best, *keys])


def searched_once(search: Search) -> bool:
    """Whether the search is nothing but nearest vectors: each source one vector ranking, without `minScore`, a
    condition or a filter. Its plan is the vector index's ordered scan whatever the vector and `first`, so it is
    planned once (`force_generic_plan`): PostgreSQL's own choice plans it again for every request, a generic plan's
    unknown limit making it look dearer than the custom plans (planning was a third of the database's time on S3).
    With a filter a custom plan may rightly prefer an exact scan of the few rows it selects (an index's filtered
    candidates can fall short of `first`), so those stay PostgreSQL's choice."""
    return all(
        source.fusion is None
        and source.read.filter is None
        and all(ranking.kind in _VECTOR_DISTANCES and ranking.bound is None for ranking in source.rankings)
        for source in search.sources
    )


def _ts_query(config: str | None, query: sql.Composable) -> sql.Composable:
    """The client's web-search text as a tsquery, made once per statement (`TS_QUERY_ONCE`)."""
    if config is None:
        return sql.SQL(TS_QUERY_ONCE).format(query)
    return sql.SQL(TS_QUERY_ONCE).format(sql.SQL("{}::regconfig, {}").format(sql.Literal(config), query))


def _vector(ranking: Ranking) -> sql.Composable:
    assert ranking.sql_type is not None
    return _once(sql.SQL("({})::{}").format(param(ranking.query), TypeName(ranking.sql_type)))


def _geometry(ranking: Ranking) -> sql.Composable:
    shape = sql.SQL("ST_GeomFromGeoJSON({})").format(param(ranking.query))
    if ranking.kind is RankingKind.GEOGRAPHY:
        return _once(sql.SQL("({})::geography").format(shape))
    if ranking.srid is not None:
        return _once(sql.SQL("ST_SetSRID({}, {})").format(shape, sql.Literal(ranking.srid)))
    return _once(shape)


def _once(operand: sql.Composable) -> sql.Composable:
    """A ranking's operand read from the client's text once per statement, as the tsquery is (`TS_QUERY_ONCE`): a
    plan made once (a nearest-vector search's, PostgreSQL's generic plan of a search) would otherwise read the
    vector or the shape again for every row it scores. A custom plan folds either way."""
    return sql.SQL("(select {})").format(operand)


def _fused_scores(fusion: Fusion, names: list[sql.Identifier]) -> sql.Composable:
    """The key of every candidate of either ranking, and `weight / (k + rank)` summed over the rankings it is in."""
    lexical, vector = names
    terms = [
        sql.SQL("coalesce({w} / ({k} + {n}.__rank), 0)").format(w=param(weight), k=param(fusion.k), n=name)
        for weight, name in zip(fusion.weights, names, strict=True)
    ]
    return sql.SQL(
        "select coalesce({l}.__key, {v}.__key) as __key, {score} as __score"
        " from {l} full join {v} on {l}.__key = {v}.__key"
    ).format(l=lexical, v=vector, score=sql.SQL(" + ").join(terms))


def _headline(highlight: Highlight) -> sql.Composable:
    """The document's text with the query's words marked, HTML-escaped, then the client's selectors put in for the
    marks ts_headline placed (so a selector is never escaped and the text always is)."""
    query = _ts_query(highlight.config, param(highlight.query))
    config = sql.SQL("{}::regconfig, ").format(sql.Literal(highlight.config)) if highlight.config else sql.SQL("")
    text: sql.Composable = sql.SQL("ts_headline({}{}, {}, {})").format(
        config, CatalogText(highlight.source), query, param(highlight.options)
    )
    for character, entity in _HTML_ESCAPES:
        text = sql.SQL("replace({}, {}, {})").format(text, sql.Literal(character), sql.Literal(entity))
    return sql.SQL("replace(replace({}, {}, {}), {}, {})").format(
        text, sql.Literal(START_MARK), param(highlight.start), sql.Literal(STOP_MARK), param(highlight.stop)
    )


def _table_of(read: Read) -> Table:
    assert isinstance(read.source, Table)
    return read.source
