"""The compiler (layer 5): a read plan becomes one SQL statement, a write plan as few statements as the order of its
effects allows, each with its parameter names. Pure: it never touches the database and cannot fail on user input
(the planner has refused bad input already)."""

from ._import import ImportStatements
from ._read import LATERAL_LIMIT, CompiledRead, compile_batch, compile_carried, compile_read, compile_rows
from ._values import row_object
from ._write import CompiledWrite, compile_write
from ._write_base import Check, CheckKind
from ._write_program import WriteStatement
from ._write_values import WriteTree, resolve

__all__ = [
    "LATERAL_LIMIT",
    "Check",
    "CheckKind",
    "CompiledRead",
    "CompiledWrite",
    "ImportStatements",
    "WriteStatement",
    "WriteTree",
    "compile_batch",
    "compile_carried",
    "compile_read",
    "compile_rows",
    "compile_write",
    "resolve",
    "row_object",
]
