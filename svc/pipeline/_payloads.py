"""What a mutation field answers: its payload read's JSON texts, and the payload object written around them (SPEC
"Mutations": the payload is read by key after the write, so nested relations reflect it)."""

import json
from collections.abc import Mapping

import attrs

from svc.errors import SvcError
from svc.plan import MutationStep, PayloadKind


class MutationFailed(Exception):
    """A mutation failed and was rolled back: `key` names the root field that failed, `error` says why (typed, and
    masked as `errors.detail` says)."""

    def __init__(self, key: str, error: SvcError) -> None:
        super().__init__(str(error))
        self.key = key
        self.error = error


@attrs.frozen
class Payload:
    """One root field's answer: its payload read's JSON texts by root key (a function call's under the step's key),
    and what the write answered: how many rows it wrote, their keys (a JSON array of key objects, in order) and the
    global ID of the first (a deleted row's)."""

    step: MutationStep
    texts: Mapping[str, bytes | None]
    affected: int = 0
    keys: bytes | None = None
    deleted_id: bytes | None = None

    def json(self) -> bytes:
        """The payload object of a GraphQL mutation field, written around the texts (never decoded)."""
        step = self.step
        if step.call is not None:
            return self.texts.get(step.key) or b"null"
        parts: list[bytes] = []
        for member in step.members:
            if member.kind is PayloadKind.READ:
                value = self.texts.get(member.key)
            elif member.kind is PayloadKind.AFFECTED_COUNT:
                value = str(self.affected).encode()
            elif member.kind is PayloadKind.DELETED_ID:
                value = self.deleted_id
            else:
                value = json.dumps(member.constant).encode()
            parts.append(json.dumps(member.key).encode() + b":" + (value if value is not None else b"null"))
        return b"{" + b",".join(parts) + b"}"
