"""Names of the API: English singular/plural, camelCase and PascalCase, enum values, and GraphQL-safe spelling.

SPEC "Naming": the type name is the English singular of the table name (order_items gives OrderItem, people gives
Person, episodes_of_care gives EpisodeOfCare); many-row fields use the English plural of the type (createPeople); a
noun that is its own plural takes its table name for many rows when that differs, else the suffix List.

The head noun of a snake_case name is the word before its first preposition (episodes_of_care: episodes), else its
last word (order_items: items); only that word is inflected. `inflection` (the Rails inflector's rules) does the
English; its misses on words that are already singular (bonus, canvas) and on plurals of -us words are corrected
here.
"""

import re
import unicodedata
from collections.abc import Callable
from functools import cache

import inflection

_PREPOSITIONS = frozenset({"of", "for", "in", "on", "by", "with", "to", "from", "at", "per", "as", "into", "over"})
#: Singular words the inflector would cut (bonus -> bonu, canvas -> canva); their plurals end in -es.
_ALREADY_SINGULAR = re.compile(r"(?:[^u]us|ss|is|[^e]as)$")
#: Letters that NFKD does not reduce to ASCII.
_TRANSLITERATION = str.maketrans(
    {"ı": "i", "ß": "ss", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "œ": "oe"}
)
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_GRAPHQL_NAME = re.compile(r"^[_A-Za-z][_0-9A-Za-z]*$")


def ascii_words(name: str) -> list[str]:
    """The words of a database name: ASCII letters and digits, split at separators and camelCase boundaries."""
    text = unicodedata.normalize("NFKD", name.translate(_TRANSLITERATION)).encode("ascii", "ignore").decode()
    return [part for word in _WORD.findall(text) for part in _CAMEL_BOUNDARY.split(word) if part]


def pascal(name: str) -> str:
    """`order_items` -> `OrderItems`; a leading digit gets an underscore (`2fa_codes` -> `_2faCodes`)."""
    words = ascii_words(name)
    text = "".join(word[:1].upper() + word[1:] for word in words)
    return _safe(text)


def camel(name: str) -> str:
    """`created_at` -> `createdAt`; `URL` -> `url`; `film_id` -> `filmId`."""
    words = ascii_words(name)
    if not words:
        return "_"
    first = words[0] if not words[0].isupper() or len(words[0]) == 1 else words[0].lower()
    text = first[:1].lower() + first[1:] + "".join(word[:1].upper() + word[1:] for word in words[1:])
    return _safe(text)


def upper_snake(name: str) -> str:
    """`createdAt` or `created_at` -> `CREATED_AT` (enum values, error codes)."""
    return _safe("_".join(word.upper() for word in ascii_words(name)))


def _safe(text: str) -> str:
    if not text:
        return "_"
    return f"_{text}" if text[0].isdigit() else text


def is_graphql_name(name: str) -> bool:
    return bool(_GRAPHQL_NAME.match(name)) and not name.startswith("__")


@cache
def singular(word: str) -> str:
    """The English singular of one lower-case word (a word already singular comes back as it is)."""
    if _ALREADY_SINGULAR.search(word):
        return word
    return inflection.singularize(word) or word


@cache
def plural(word: str) -> str:
    """The English plural of one lower-case singular word (`campus` -> `campuses`, `canvas` -> `canvases`)."""
    if re.search(r"(?:[^o]us|[^e]as)$", word):
        return f"{word}es"
    return inflection.pluralize(word) or word


def _head(words: list[str]) -> int:
    """The index of the head noun: the word before the first preposition, else the last word with a letter."""
    for index, word in enumerate(words):
        if index > 0 and word.lower() in _PREPOSITIONS:
            return index - 1
    lettered = [index for index, word in enumerate(words) if not word.isdigit()]
    return lettered[-1] if lettered else len(words) - 1


def _inflect_head(name: str, inflect_word: Callable[[str], str]) -> str:
    words = ascii_words(name)
    if not words:
        return name
    index = _head(words)
    head = words[index]
    inflected = inflect_word(head.lower())
    if head[:1].isupper():
        inflected = inflected[:1].upper() + inflected[1:]
    return "_".join([*words[:index], inflected, *words[index + 1 :]])


def type_name(table: str) -> str:
    """The GraphQL type name of a table: PascalCase of its singular (`order_items` -> `OrderItem`)."""
    return pascal(_inflect_head(table, singular))


def plural_type_name(table: str) -> str:
    """PascalCase name for many rows of a table's type (`people` -> `People`, `film` -> `Films`).

    A table named in the plural keeps its own plural (`indices`, not `indexes`). A noun that is its own plural takes
    the table's own name when that differs, else `List` is appended (`sheep` -> `SheepList`).
    """
    one = _inflect_head(table, singular)
    if pascal(one) != pascal(table):
        return pascal(table)
    many = _inflect_head(one, plural)
    if pascal(many) != pascal(one):
        return pascal(many)
    return pascal(one) + "List"


def lower_first(name: str) -> str:
    """`OrderItems` -> `orderItems` (root field names from type names)."""
    return name[:1].lower() + name[1:] if not name.startswith("_") else name


def enum_value(label: str) -> str:
    """A GraphQL enum value for a database label: `PG-13` -> `PG_13`, `in progress` -> `IN_PROGRESS`."""
    return upper_snake(label)
