"""Whether a constraint's name is one PostgreSQL generated, by building the names PostgreSQL would have.

SPEC "Errors" (constraint violations): a CHECK or exclusion violation is reported under the constraint's name when
its author chose it, else under a code derived from its columns. PostgreSQL names an unnamed constraint with
`makeObjectName(table, addition, label)` (src/backend/commands/indexcmds.c): the parts joined by `_`, the longer of
the first two cut, byte by byte on character boundaries, until the whole fits in NAMEDATALEN - 1 (63) bytes. When
that name is taken it tries the label with 1, 2, ... appended (`check1`), cutting again for the longer label.
"""

import re

#: PostgreSQL's identifier buffer: names are at most NAMEDATALEN - 1 bytes.
NAMEDATALEN = 64
_NUMBERED = re.compile(r".*?([1-9][0-9]*)")


def make_object_name(name1: str, name2: str | None, label: str) -> str:
    """PostgreSQL's makeObjectName: `name1_name2_label` (or `name1_label`) cut to fit 63 bytes."""
    first, second = name1.encode(), name2.encode() if name2 is not None else None
    overhead = len(label.encode()) + 1 + (1 if second is not None else 0)
    available = NAMEDATALEN - 1 - overhead
    first_length, second_length = len(first), len(second) if second is not None else 0
    while first_length + second_length > available:
        if first_length > second_length:
            first_length -= 1
        else:
            second_length -= 1
    parts = [_clip(first, first_length)]
    if second is not None:
        parts.append(_clip(second, second_length))
    return "_".join([*parts, label])


def index_name_addition(column_names: tuple[str, ...]) -> str:
    """PostgreSQL's ChooseIndexNameAddition: index column names joined by `_`, stopping once 64 bytes are reached."""
    joined = b""
    for name in column_names:
        if joined:
            joined += b"_"
        joined += name.encode()[: NAMEDATALEN - 1]
        if len(joined) >= NAMEDATALEN:
            break
    return joined.decode(errors="ignore")


def is_generated_check_name(name: str, table: str, columns: tuple[str, ...]) -> bool:
    """Whether a CHECK's name is PostgreSQL's: `<table>_<column>_check` when it reads one column, else
    `<table>_check`, each perhaps numbered. `<table>_<col>_<col>..._check` counts as generated too (a name in the
    generated style tells a reader nothing more than the columns do)."""
    additions: list[str | None] = [None]
    if columns:
        additions.append("_".join(columns))
    return _is_generated(name, table, additions, "check")


def is_generated_exclusion_name(name: str, table: str, index_columns: tuple[str, ...]) -> bool:
    """Whether an exclusion constraint's name is PostgreSQL's: `<table>_<index columns>_excl`, perhaps numbered."""
    return _is_generated(name, table, [index_name_addition(index_columns)], "excl")


def _is_generated(name: str, table: str, additions: list[str | None], label: str) -> bool:
    labels = [label]
    numbered = _NUMBERED.fullmatch(name)
    if numbered:
        labels.append(f"{label}{numbered.group(1)}")
    return any(name == make_object_name(table, addition, each) for addition in additions for each in labels)


def _clip(text: bytes, length: int) -> str:
    """The first `length` bytes, less a character cut in half (pg_mbcliplen)."""
    return text[:length].decode(errors="ignore")
