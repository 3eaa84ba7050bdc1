"""The search methods a table's indexes give (SPEC "Search fields", "Extension integrations": full text via
indexes, vector indexes): trigram indexes give fuzzy search, tsvector indexes full text, pgvector's hnsw and ivfflat
indexes semantic search (the operator class decides the similarity), PostGIS gist indexes on geometry or geography
nearest search; a lexical and a vector method with a single-column key give hybrid search. An index that reads a
column the API does not expose gives nothing.
"""

import re
from collections.abc import Mapping

from svc.catalog import Catalog, Column, Index, IndexColumn, Relation

from ._entities import EntitySearch, Field, SearchField, SearchMethod, VectorSimilarity
from ._naming import upper_snake

_TRIGRAM_CLASSES = frozenset({"gin_trgm_ops", "gist_trgm_ops"})
_VECTOR_METHODS = frozenset({"hnsw", "ivfflat"})
#: pgvector's operator classes of dense and half-precision vectors.
_SIMILARITIES = {
    "vector_cosine_ops": VectorSimilarity.COSINE,
    "halfvec_cosine_ops": VectorSimilarity.COSINE,
    "vector_ip_ops": VectorSimilarity.INNER_PRODUCT,
    "halfvec_ip_ops": VectorSimilarity.INNER_PRODUCT,
    "vector_l2_ops": VectorSimilarity.L2,
    "halfvec_l2_ops": VectorSimilarity.L2,
}
_SPATIAL_TYPES = frozenset({"geometry", "geography"})
#: `to_tsvector('english'::regconfig, <text>)`, as pg_get_indexdef and pg_get_expr write it.
_TO_TSVECTOR = re.compile(r"^to_tsvector\('((?:[^']|'')+)'::regconfig,\s*(.+)\)$", re.DOTALL)
_TYPMOD = re.compile(r"\((\d+)\)$")
_SRID = re.compile(r",\s*(\d+)\)$")


def entity_search(
    relation: Relation, catalog: Catalog, fields: tuple[Field, ...], key: tuple[str, ...] | None
) -> EntitySearch:
    """The search documents of a table's indexes (in index-name order), and whether it offers hybrid search."""
    exposed = {field.column: field for field in fields}
    found: dict[tuple[SearchMethod, str], SearchField] = {}
    for index in relation.indexes:
        if index.predicate is not None or not all(c in exposed for c in index.referenced_columns):
            continue  # a partial index does not cover every row; a hidden column is never searchable
        for item in index.columns:
            document = _document(index, item, relation, catalog, exposed)
            if document is not None:
                found.setdefault((document.method, document.name), document)
    return EntitySearch.found(tuple(found.values()), key)


def _document(
    index: Index, item: IndexColumn, relation: Relation, catalog: Catalog, exposed: Mapping[str, Field]
) -> SearchField | None:
    column = relation.column(item.column) if item.column else None
    columns = (item.column,) if item.column else index.referenced_columns
    if not columns:
        return None
    name = "_".join(upper_snake(exposed[c].name) for c in columns)
    where = {"column": item.column, "expression": None if item.column else item.expression, "columns": columns}
    if item.opclass in _TRIGRAM_CLASSES:
        return SearchField(SearchMethod.FUZZY, name, **where)
    if item.opclass == "tsvector_ops" or (column is not None and _type_name(catalog, column) == "tsvector"):
        if index.method not in ("gin", "gist"):
            return None
        config, source, source_columns = _full_text_source(item, column, relation, exposed, index)
        return SearchField(
            SearchMethod.FULL_TEXT, name, config=config, source=source, source_columns=source_columns, **where
        )
    if index.method in _VECTOR_METHODS and item.opclass in _SIMILARITIES and column is not None:
        sizes = _TYPMOD.search(column.type)
        return SearchField(
            SearchMethod.SEMANTIC,
            name,
            similarity=_SIMILARITIES[item.opclass],
            dimensions=int(sizes.group(1)) if sizes else None,
            sql_type=catalog.type(column.type_oid).sql_name,
            **where,
        )
    if index.method == "gist" and column is not None and _type_name(catalog, column) in _SPATIAL_TYPES:
        srid = _SRID.search(column.type)
        geography = _type_name(catalog, column) == "geography"
        return SearchField(
            SearchMethod.NEAREST, name, geography=geography, srid=int(srid.group(1)) if srid else None, **where
        )
    return None


def _type_name(catalog: Catalog, column: Column) -> str:
    found = catalog.types.get(column.type_oid)
    return found.name if found is not None else ""


def _full_text_source(
    item: IndexColumn, column: Column | None, relation: Relation, exposed: Mapping[str, Field], index: Index
) -> tuple[str | None, str | None, tuple[str, ...]]:
    """A full-text document's configuration, the SQL of its source text and the columns that text reads: from
    `to_tsvector(config, text)` (the index expression, or a generated column's), or from the
    `tsvector_update_trigger` keeping the column. A text reading a column the API hides gives no highlights."""
    if column is None:
        config, source = _parsed(item.expression or "")
        return config, source, index.referenced_columns
    if column.generated:
        config, source = _parsed(column.default or "")
        # A generated column's expression reads columns of its own row: those the API shows, or none is known.
        reads = tuple(c for c in exposed if source is not None and re.search(rf"\b{re.escape(c)}\b", source))
        hidden = any(
            re.search(rf"\b{re.escape(c.name)}\b", source or "") for c in relation.columns if c.name not in exposed
        )
        return config, None if hidden else source, reads
    trigger = next((t for t in relation.text_search_triggers if t.column == column.name), None)
    if trigger is None:
        return None, None, ()
    if not all(source in exposed for source in trigger.sources):
        return trigger.config, None, ()  # the text is hidden: no highlights
    parts = [f"coalesce({_quoted(source)}::text, '')" for source in trigger.sources]
    return trigger.config, " || ' ' || ".join(parts) if parts else None, trigger.sources


def _parsed(expression: str) -> tuple[str | None, str | None]:
    matched = _TO_TSVECTOR.match(expression.strip())
    if matched is None:
        return None, None
    return matched.group(1).replace("''", "'"), matched.group(2)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
