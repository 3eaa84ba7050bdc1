"""CHECK constraint texts, as pg_get_constraintdef writes them, read into the forms the API documents.

Two readings of a single-column CHECK (SPEC "Configuration sections": a text column closed by a CHECK list;
"`@constraint` directive": simple single-column forms):

- `allowed_values`: `col IN ('a', 'b')`, which PostgreSQL stores and writes as `(col = ANY (ARRAY['a'::text, ...]))`;
- `bounds`: comparisons of the column, of `length(col)`/`char_length(col)`, or of `cardinality(col)`/
  `array_length(col, 1)` with a number, `col ~ 'pattern'`, and AND-combinations of these (BETWEEN is stored as one).

And one of a CHECK over several columns (SPEC "Embedding controls": an exclusive arc's `target`):

- `exactly_one`: `num_nonnulls(a, b) = 1`, `num_nulls(a, b, c) = 2`, or `(a IS NOT NULL)::integer + ... = 1`.

The text is parsed, not matched with patterns: pg_get_constraintdef parenthesises every operator expression, so a
small grammar covers it (sums are read, other arithmetic is not). Anything outside the forms above (OR, IS NULL,
arithmetic, functions of other kinds, a bound given twice) reads as nothing: the facts never guess. String constants
are written as standard_conforming_strings was when the text was made: off, backslashes are doubled (PostgreSQL
never writes E'' there), and `backslashes_doubled` says so.
"""

import re
from typing import Any

import attrs

from ._facts import Bounds

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<string>'(?:[^']|'')*')
    | (?P<number>[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)
    | (?P<quoted>"(?:[^"]|"")*")
    | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
    | (?P<symbol>::|<=|>=|<>|!=|!~\*|!~|~\*|[-+*/%<>=~(),.\[\]|!^&#@])
    )""",
    re.VERBOSE,
)
_COMPARISONS = {"=", "<>", "<", "<=", ">", ">=", "~"}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}
_TYPE_NAME_WORDS = {"varying", "precision", "with", "without", "time", "zone"}
_NUMERIC_TYPES = {"smallint", "integer", "bigint", "numeric", "real", "double precision"}
_LENGTH_FUNCTIONS = {"length", "char_length", "character_length"}
_LENGTHS = ("min_length", "max_length")


class Unreadable(Exception):
    """The text is outside the grammar this module reads."""


# --- the expression tree -----------------------------------------------------------------------------------------


@attrs.frozen
class Column:
    name: str


@attrs.frozen
class String:
    value: str


@attrs.frozen
class Number:
    value: float


@attrs.frozen
class Call:
    name: str
    arguments: tuple[Any, ...]


@attrs.frozen
class Array:
    items: tuple[Any, ...]


@attrs.frozen
class Cast:
    operand: Any
    type_name: str


@attrs.frozen
class AnyOf:
    """`ANY (array)`, the right-hand side of `col = ANY (...)`."""

    operand: Any


@attrs.frozen
class Comparison:
    operator: str
    left: Any
    right: Any


@attrs.frozen
class And:
    terms: tuple[Any, ...]


@attrs.frozen
class Or:
    terms: tuple[Any, ...]


@attrs.frozen
class IsNull:
    operand: Any
    negated: bool = False  # `IS NOT NULL`


@attrs.frozen
class Sum:
    """`a + b + ...` (pg_get_constraintdef writes a longer sum as nested pairs; they are flattened)."""

    terms: tuple[Any, ...]


#: A domain's CHECK names the value it checks `VALUE`.
DOMAIN_VALUE = Column("VALUE")
#: pg_jsonschema's schema-match functions: `(schema json, instance json|jsonb) -> boolean`.
_SCHEMA_MATCHES = {"json_matches_schema", "jsonb_matches_schema"}


# --- reading a check ---------------------------------------------------------------------------------------------


def allowed_values(definition: str, column: str, *, backslashes_doubled: bool = False) -> tuple[str, ...] | None:
    """The values of `column IN (...)` (in the order written) when that is the whole CHECK, else None."""
    node = _parse_or_none(definition, backslashes_doubled)
    if not isinstance(node, Comparison) or node.operator != "=" or _column(node.left) != column:
        return None
    if not isinstance(node.right, AnyOf):
        return None
    array = _uncast(node.right.operand)
    if not isinstance(array, Array):
        return None
    values = [_string(item) for item in array.items]
    return tuple(value for value in values if value is not None) if None not in values else None


def bounds(definition: str, column: str, *, backslashes_doubled: bool = False) -> Bounds | None:
    """The simple bounds the CHECK sets on `column`, when every part of it is one; else None."""
    node = _parse_or_none(definition, backslashes_doubled)
    if node is None:
        return None
    found: dict[str, Any] = {}
    for term in node.terms if isinstance(node, And) else (node,):
        bound = _bound(term, column) if isinstance(term, Comparison) else None
        if bound is None or found.keys() & bound.keys():
            return None
        found.update(bound)
    return Bounds(**found) if found else None


def json_schema(definition: str, column: str, *, backslashes_doubled: bool = False) -> str | None:
    """The JSON Schema (its literal text) a CHECK holds `column` to with pg_jsonschema's schema-match function, in
    the forms SPEC "Extension integrations" reads: the call alone, `column IS NULL OR call`, `call AND others`; the
    domain's value is `VALUE`. None otherwise, or when the schema is not a literal."""
    node = _parse_or_none(definition, backslashes_doubled)
    if isinstance(node, Or) and len(node.terms) == 2:
        null, call = node.terms if isinstance(node.terms[0], IsNull) else node.terms[::-1]
        node = call if isinstance(null, IsNull) and not null.negated and _column(null.operand) == column else None
    calls = node.terms if isinstance(node, And) else (node,)
    for call in calls:
        if (
            isinstance(call, Call)
            and call.name.rsplit(".", 1)[-1] in _SCHEMA_MATCHES
            and len(call.arguments) == 2
            and _column(call.arguments[1]) == column
        ):
            return _string(call.arguments[0])
    return None


def exactly_one(definition: str, *, backslashes_doubled: bool = False) -> tuple[str, ...] | None:
    """The columns of which the CHECK says exactly one is not null (an exclusive arc), in the order written:
    `num_nonnulls(a, b, c) = 1`, `num_nulls(a, b, c) = 2` (the count of columns less one), or
    `(a IS NOT NULL)::integer + (b IS NOT NULL)::integer + ... = 1`, either side of the `=`; alone or as one term
    of an AND (the first such term). None otherwise (fewer than two columns, a column named twice)."""
    node = _parse_or_none(definition, backslashes_doubled)
    for term in node.terms if isinstance(node, And) else (node,):
        if isinstance(term, Comparison) and term.operator == "=":
            for counted, count in ((term.left, term.right), (term.right, term.left)):
                columns = _counted_columns(counted, _number(count))
                if columns is not None and len(columns) >= 2 and len(set(columns)) == len(columns):
                    return columns
    return None


def _counted_columns(node: Any, count: float | None) -> tuple[str, ...] | None:
    """The columns of a count of non-null columns that equals one (`count`), else None."""
    if count is None:
        return None
    if isinstance(node, Call) and node.name in ("num_nonnulls", "num_nulls"):
        names = [_column(argument) for argument in node.arguments]
        columns = tuple(name for name in names if name is not None)
        wanted = 1 if node.name == "num_nonnulls" else len(names) - 1
        return columns if count == wanted and len(columns) == len(names) else None
    if isinstance(node, Sum) and count == 1:
        found: list[str] = []
        for term in node.terms:
            test = _uncast(term) if isinstance(term, Cast) and term.type_name in ("integer", "int4") else None
            column = _column(test.operand) if isinstance(test, IsNull) and test.negated else None
            if column is None:
                return None
            found.append(column)
        return tuple(found)
    return None


def _bound(comparison: Comparison, column: str) -> dict[str, Any] | None:
    operator, subject, value = comparison.operator, comparison.left, comparison.right
    if _number(subject) is not None and _number(value) is None and operator in _FLIPPED:
        operator, subject, value = _FLIPPED[operator], value, subject
    if operator == "~":
        pattern = _string(value)
        return {"pattern": pattern} if pattern is not None and _column(subject) == column else None
    number = _number(value)
    if number is None or operator not in _FLIPPED:
        return None
    if _column(subject) == column:
        return _numeric_bound(operator, number)
    if isinstance(subject, Call) and _counted_column(subject) == column and number.is_integer():
        counts_items = subject.name in ("cardinality", "array_length")
        return _count_bound(operator, int(number), ("min_items", "max_items") if counts_items else _LENGTHS)
    return None


def _numeric_bound(operator: str, number: float) -> dict[str, Any]:
    return {
        ">": {"exclusive_minimum": number},
        ">=": {"minimum": number},
        "<": {"exclusive_maximum": number},
        "<=": {"maximum": number},
        "=": {"minimum": number, "maximum": number},
    }[operator]


def _count_bound(operator: str, number: int, names: tuple[str, str]) -> dict[str, Any]:
    """Bounds on a count (of characters or items) are whole numbers: `< 81` is at most 80."""
    low, high = names
    return {
        ">": {low: number + 1},
        ">=": {low: number},
        "<": {high: number - 1},
        "<=": {high: number},
        "=": {low: number, high: number},
    }[operator]


def _counted_column(call: Call) -> str | None:
    """The column of `length(col)`, `char_length(col)`, `cardinality(col)` or `array_length(col, 1)`."""
    if call.name in _LENGTH_FUNCTIONS or call.name == "cardinality":
        return _column(call.arguments[0]) if len(call.arguments) == 1 else None
    if call.name == "array_length" and len(call.arguments) == 2 and _number(call.arguments[1]) == 1:
        return _column(call.arguments[0])
    return None


def _uncast(node: Any) -> Any:
    while isinstance(node, Cast):
        node = node.operand
    return node


def _column(node: Any) -> str | None:
    node = _uncast(node)
    return node.name if isinstance(node, Column) else None


def _string(node: Any) -> str | None:
    node = _uncast(node)
    return node.value if isinstance(node, String) else None


def _number(node: Any) -> float | None:
    """A numeric constant: `5`, `(0)::numeric`, or a quoted one cast to a number type (`'-5'::integer`)."""
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Cast):
        operand = _uncast(node)
        if isinstance(operand, Number):
            return operand.value
        if isinstance(operand, String) and node.type_name.split("(")[0] in _NUMERIC_TYPES:
            try:
                return float(operand.value)
            except ValueError:
                return None
    return None


# --- the parser --------------------------------------------------------------------------------------------------


def _parse_or_none(definition: str, backslashes_doubled: bool) -> Any:
    try:
        return parse_check(definition, backslashes_doubled=backslashes_doubled)
    except Unreadable:
        return None


def parse_check(definition: str, *, backslashes_doubled: bool = False) -> Any:
    """The expression of `CHECK (...)` (pg_get_constraintdef's text) as a tree; raises Unreadable."""
    parser = _Parser(_tokens(definition), backslashes_doubled)
    parser.expect("CHECK")
    parser.expect("(")
    node = parser.expression()
    parser.expect(")")
    while parser.peek() in ("NOT", "NO"):  # NOT VALID, NO INHERIT
        parser.advance()
        parser.advance()
    if parser.peek() is not None:
        raise Unreadable(definition)
    return node


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.lastgroup is None:
            raise Unreadable(text)
        tokens.append((match.lastgroup, match.group(match.lastgroup)))
        position = match.end()
    return tokens


class _Parser:
    """Recursive descent over the fully parenthesised expressions pg_get_constraintdef writes."""

    def __init__(self, tokens: list[tuple[str, str]], backslashes_doubled: bool) -> None:
        self._tokens = tokens
        self._position = 0
        self._backslashes_doubled = backslashes_doubled

    def peek(self) -> str | None:
        return self._tokens[self._position][1] if self._position < len(self._tokens) else None

    def advance(self) -> tuple[str, str]:
        if self._position >= len(self._tokens):
            raise Unreadable("unexpected end")
        token = self._tokens[self._position]
        self._position += 1
        return token

    def expect(self, text: str) -> None:
        if self.advance()[1] != text:
            raise Unreadable(f"expected {text}")

    def expression(self) -> Any:
        """Operands joined by operators: all ANDs, all ORs, or exactly one comparison."""
        operands, operators = [self.operand()], []
        while self.peek() in _COMPARISONS or self.peek() in ("AND", "OR"):
            operators.append(self.advance()[1])
            operands.append(self.operand())
        if not operators:
            return operands[0]
        if all(operator == "AND" for operator in operators):
            return And(tuple(operands))
        if all(operator == "OR" for operator in operators):
            return Or(tuple(operands))
        if len(operators) == 1:
            return Comparison(operators[0], operands[0], operands[1])
        raise Unreadable("mixed operators")

    def operand(self) -> Any:
        """A term, or a sum of terms (`+` binds tighter than comparisons)."""
        node = self.term()
        while self.peek() == "+":
            self.advance()
            right = self.term()
            left_terms = node.terms if isinstance(node, Sum) else (node,)
            node = Sum((*left_terms, right))
        return node

    def term(self) -> Any:
        node = self.primary()
        while self.peek() == "::":
            self.advance()
            node = Cast(node, self.type_name())
        if self.peek() == "IS":
            self.advance()
            negated = self.peek() == "NOT"
            if negated:
                self.advance()
            self.expect("NULL")
            node = IsNull(node, negated)
        return node

    def primary(self) -> Any:
        kind, text = self.advance()
        if text == "(":
            node = self.expression()
            self.expect(")")
            return node
        if kind == "string":
            value = text[1:-1].replace("''", "'")
            return String(value.replace("\\\\", "\\") if self._backslashes_doubled else value)
        if kind == "number":
            return Number(float(text))
        if text == "ARRAY":
            self.expect("[")
            return Array(self.items("]"))
        if text == "VALUE":
            return DOMAIN_VALUE
        if text == "ANY":
            self.expect("(")
            node = AnyOf(self.expression())
            self.expect(")")
            return node
        # Unquoted identifiers are written in lower case, keywords in upper case.
        if kind == "quoted" or (kind == "word" and text == text.lower()):
            name = self.qualified_name(_identifier(kind, text))
            if self.peek() == "(":
                self.advance()
                return Call(name.removeprefix("pg_catalog."), self.items(")"))
            return Column(name)
        raise Unreadable(text)

    def items(self, closing: str) -> tuple[Any, ...]:
        items: list[Any] = []
        while self.peek() != closing:
            if items:
                self.expect(",")
            items.append(self.expression())
        self.advance()
        return tuple(items)

    def qualified_name(self, first: str) -> str:
        parts = [first]
        while self.peek() == ".":
            self.advance()
            parts.append(_identifier(*self.advance()))
        return ".".join(parts)

    def type_name(self) -> str:
        """`integer`, `character varying(20)`, `text[]`, `timestamp with time zone`, `app_public.email`."""
        words = [self.qualified_name(_identifier(*self.advance()))]
        while self.peek() in _TYPE_NAME_WORDS:
            words.append(self.advance()[1])
        name = " ".join(words)
        if self.peek() == "(":
            self.advance()
            name += "(" + ",".join(str(item) for item in self.items(")")) + ")"
        while self.peek() == "[":
            self.advance()
            self.expect("]")
            name += "[]"
        return name


def _identifier(kind: str, text: str) -> str:
    if kind == "quoted":
        return text[1:-1].replace('""', '"')
    if kind == "word":
        return text
    raise Unreadable(text)
