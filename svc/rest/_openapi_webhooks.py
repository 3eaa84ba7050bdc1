"""The document's `webhooks`: one per change event a table emits (SPEC "Events" -> "Change events and schedules": "A
table with `entities.<table>.events` ... gets one OpenAPI webhook per change named `<table>.<operation>`"; "Other
fixed shapes": the payload `{id, createdAt, table, op, old, new}`, `old` null for an insert, `new` null for a delete,
`old`/`new` of the table's row schema).

Each webhook's `post` is the request the service makes to the table's target: a closed envelope whose `old`/`new`
refer to the row schema REST answers with (`<Type>`, shared, never copied), the Standard Webhooks signature headers,
and what the receiver's answers mean. Webhooks follow the model's tables, then insert, update, delete; their
operationIds are their names in camelCase (`booksInsert`, `authAuditLogDelete`), numbered as any other when taken,
and they carry the tag of the table's resource. The bearer scheme is ours to check, not the receiver's: webhooks
are signed instead, so they require no security scheme.

With `rbac.enabled` a role's document is built from its pruned model: a table the role cannot see has no webhook
there (nor a row schema), and a table it sees refers to its row as the role sees it. The row schema lists no
required members and admits others, so payloads with columns the role may not read still match, and the hidden
columns are not named to the role.
"""

from svc.model import Entity, EntityEvents, camel

from ._openapi_operations import Operations, body
from ._openapi_resources import resource_tag
from ._openapi_values import NULL, Schema, described
from ._resources import RestIndex

_DONE = {"insert": "inserted", "update": "updated", "delete": "deleted"}
#: The payload's `old` and `new` per operation: the row's schema, or null where there is no such row.
_SIDES = {"insert": (False, True), "update": (True, True), "delete": (True, False)}
#: The receiver's answers as the dispatcher takes them.
_RESPONSES: dict[str, Schema] = {
    "2XX": {"description": "Delivered."},
    "410": {"description": "Gone: delivery to this target stops."},
    "default": {
        "description": "Retried with backoff, then dead-lettered (also when no answer comes within the target's"
        " timeout)."
    },
}


class Webhooks:
    """The webhooks of one document, written after its paths (REST operations keep their operationIds)."""

    def __init__(self, operations: Operations, index: RestIndex) -> None:
        self.operations = operations
        self.schemas = operations.schemas
        self.shared = operations.shared
        self.tags = {resource.entity.ref: resource_tag(resource) for resource in index.resources}

    def all(self) -> dict[str, Schema]:
        """`<name>.<operation>` to its Path Item, for every table with events; empty when none has any."""
        found: dict[str, Schema] = {}
        for entity in self.operations.model.entities:
            if entity.events is not None:
                for operation in entity.events.operations:
                    found[f"{entity.events.name}.{operation}"] = {"post": self._post(entity, entity.events, operation)}
        return found

    def _post(self, entity: Entity, events: EntityEvents, operation: str) -> Schema:
        summary = f"A row of `{events.name}` was {_DONE[operation]}"
        tag = self.tags.get(entity.ref) or _unserved_tag(entity)
        post = self.operations.heading(camel(f"{events.name}.{operation}"), summary, tag)
        post["description"] = _description(events, operation)
        post["parameters"] = self.shared.parameters(["WebhookId", "WebhookTimestamp", "WebhookSignature"])
        post["requestBody"] = body({"application/json": self._payload(entity, events, operation)})
        post["responses"] = dict(_RESPONSES)
        post["security"] = []
        return post

    def _payload(self, entity: Entity, events: EntityEvents, operation: str) -> Schema:
        """SPEC "Other fixed shapes": `{id, createdAt, table, op, old, new}`, nothing else."""
        row = self.schemas.row(entity)
        before, after = _SIDES[operation]
        old = described(row, "The row before the change.") if before else _none("An insert has no row before.")
        new = described(row, "The row after the change.") if after else _none("A delete has no row after.")
        return {
            "type": "object",
            "description": f"A change to a row of `{events.name}`.",
            "properties": {
                "id": {
                    "type": "string",
                    "format": "uuid",
                    "description": "The event's id (`webhook-id`): the same in every attempt to deliver it.",
                },
                "createdAt": {
                    "type": "string",
                    "format": "date-time",
                    "description": "When the change was captured (RFC 3339).",
                },
                "table": {"type": "string", "const": events.name},
                "op": {"type": "string", "const": operation},
                "old": old,
                "new": new,
            },
            "required": ["id", "createdAt", "table", "op", "old", "new"],
            "additionalProperties": False,
        }


def _unserved_tag(entity: Entity) -> tuple[str, str]:
    """A table REST does not serve (its name is a reserved word) still has events. Its tag is its dotted name, not
    the bare name: `node` is already the tag of `GET /rest/node/{id}`, and resources' tags are paths."""
    name = f"{entity.schema}.{entity.table}"
    return name, f"The changes of the table `{name}`, which REST does not serve: its name is a reserved word."


def _none(why: str) -> Schema:
    return {**NULL, "description": why}


def _description(events: EntityEvents, operation: str) -> str:
    text = (
        f"Sent to the table's webhook target once the transaction that {_DONE[operation]} the row commits, at least"
        " once: a retry carries the same `webhook-id`, so a receiver drops repeats by it. Rows are shaped as REST"
        " answers them."
    )
    return f"{events.description}\n\n{text}" if events.description else text
