"""How the OpenAPI document's operations are written: tags, unique operationIds and the responses every operation
has (SPEC "Errors" -> REST: 400, 401, 403 and 503 may answer any request; 429 too with rate limits on).

operationIds are derived from the model's names (`listFilms`, `getFilm`, `createFilm`, ...; module
`_openapi_resources.py` and `_openapi_functions.py`); a name given twice gets a number (`getStaffPicture2`), so they
are unique whatever the database holds.
"""

from svc.config import Config
from svc.model import Model

from ._openapi_schemas import Schemas
from ._openapi_shared import Shared, media_types
from ._openapi_values import Schema


class Operations:
    """Writes the operations of one document and remembers the tags and operationIds they use."""

    def __init__(self, model: Model, config: Config, schemas: Schemas, shared: Shared) -> None:
        self.model = model
        self.config = config
        self.schemas = schemas
        self.shared = shared
        self.tags: dict[str, str] = {}
        self._operation_ids: set[str] = set()

    def operation(
        self,
        name: str,
        summary: str,
        tag: tuple[str, str],
        responses: dict[str, Schema],
        errors: tuple[str, ...] = (),
        *,
        description: str | None = None,
        parameters: list[Schema] | None = None,
        body: Schema | None = None,
        deprecated: bool = False,
    ) -> Schema:
        """One operation: tagged, with a unique operationId and the error responses every operation has."""
        operation = self.heading(name, summary, tag)
        if description:
            operation["description"] = description
        if parameters:
            operation["parameters"] = parameters
        if body is not None:
            operation["requestBody"] = body
        operation["responses"] = self.shared.finish(responses, errors)
        if deprecated:
            operation["deprecated"] = True
        return operation

    def heading(self, name: str, summary: str, tag: tuple[str, str]) -> Schema:
        """The start of an operation: its tag (listed in the document's `tags`), summary and unique operationId."""
        self.tags.setdefault(*tag)
        return {"tags": [tag[0]], "summary": summary, "operationId": self._unique(name)}

    def taken(self, name: str) -> bool:
        return name in self._operation_ids

    def _unique(self, name: str) -> str:
        candidate, number = name, 1
        while candidate in self._operation_ids:
            number += 1
            candidate = f"{name}{number}"
        self._operation_ids.add(candidate)
        return candidate


def present(methods: dict[str, Schema | None]) -> dict[str, Schema]:
    return {method: operation for method, operation in methods.items() if operation is not None}


def body(content: dict[str, Schema | None], *, required: bool = True) -> Schema:
    return {"required": required, "content": media_types(content)}


def path_parameter(name: str, description: str, schema: Schema) -> Schema:
    return {"name": name, "in": "path", "required": True, "description": description, "schema": schema}
