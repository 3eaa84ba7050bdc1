"""Golden files: generated output compared with a committed, reviewed copy (STYLE.md, habit 14).

`SVC_UPDATE_GOLDEN=1 pytest ...` rewrites the copies instead of comparing; review the diff before committing.
"""

import difflib
import json
import os
import re
from pathlib import Path
from typing import Any

from graphql import GraphQLSchema, OperationDefinitionNode, parse
from graphql.execution.values import get_variable_values

from svc.pipeline import Statements
from svc.plan import MutationPlan, PayloadKind

#: Line breaks for reading only (a statement itself is one line): a read's joins, subqueries and clauses; a write's
#: CTEs, and its answer.
_READ_BREAKS = re.compile(r" (?=left join lateral |from \(|where |order by |group by \(\)|limit )")
_WRITE_BREAKS = re.compile(r"(?:, (?=\"w\d+\" as \()| (?=select json_build_object\('w))")


def assert_golden(path: Path, text: str) -> None:
    if os.environ.get("SVC_UPDATE_GOLDEN") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if os.environ.get("SVC_UPDATE_GOLDEN") != "1":
            raise AssertionError(f"{path} did not exist; it was written: review and commit it")
        return
    expected = path.read_text(encoding="utf-8")
    if expected != text:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), str(path), "generated", n=2
            )
        )
        raise AssertionError(
            f"generated output differs from {path.name} (SVC_UPDATE_GOLDEN=1 rewrites it):\n{diff[:6000]}"
        )


def graphql_case(path: Path, schema: GraphQLSchema) -> tuple[OperationDefinitionNode, Any]:
    """A golden case's operation (the file's one operation) and its variables (JSON on the first line, after
    `# variables:`), coerced by the schema."""
    text = path.read_text()
    variables = json.loads(text.splitlines()[0].removeprefix("# variables:"))
    operation = parse(text).definitions[0]
    assert isinstance(operation, OperationDefinitionNode)
    coerced = get_variable_values(schema, operation.variable_definitions or (), variables)
    assert not isinstance(coerced, list), coerced
    return operation, coerced


def mutation_statements(plan: MutationPlan, statements: Statements) -> str:
    """The statements a mutation plan runs, as golden files keep them: each step's write statements as the write
    compiler gives them (their CTEs on lines of their own), then its payload read."""
    texts = []
    for step in plan.steps:
        if step.write is not None:
            wants_id = any(member.kind is PayloadKind.DELETED_ID for member in step.members)
            compiled = statements.write(
                step.write, rows=step.slots.rows is not None, global_ids=step.type_name if wants_id else None
            )
            for number, statement in enumerate(compiled.statements, 1):
                text = _WRITE_BREAKS.sub(",\n  ", statement.text).replace(
                    ",\n  select json_build_object", "\nselect json_build_object"
                )
                texts.append(f"-- {step.key}: write statement {number}\n{text}\n")
        if step.call is not None:
            texts.append(f"-- {step.key}: call\n{statements.read(step.call).statement}\n")
        if step.payload is not None:
            texts.append(f"-- {step.key}: payload read\n{statements.read(step.payload).statement}\n")
    return "\n".join(texts)


def read_statement(statement: str) -> str:
    """A read's statement as golden files keep it."""
    return _READ_BREAKS.sub("\n  ", statement) + "\n"
