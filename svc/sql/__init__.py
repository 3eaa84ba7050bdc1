"""The compiler (layer 5): a plan becomes one SQL statement and its parameter names. Pure: it never touches the
database and cannot fail on user input (the planner has refused bad input already)."""

from ._read import LATERAL_LIMIT, CompiledRead, compile_read
from ._writes import compile_write

__all__ = ["LATERAL_LIMIT", "CompiledRead", "compile_read", "compile_write"]
