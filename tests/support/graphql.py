"""GraphQL requests to the service under test, over real HTTP (hypercorn on loopback)."""

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx

from tests.support.service import running_service


@attrs.frozen
class Gql:
    client: httpx.AsyncClient

    async def post(self, query: str, variables: Mapping[str, Any] | None = None, **members: Any) -> httpx.Response:
        body = {"query": query, **({"variables": variables} if variables is not None else {}), **members}
        return await self.client.post("/graphql", json=body)

    async def data(self, query: str, variables: Mapping[str, Any] | None = None, **members: Any) -> Any:
        """The `data` of a request that must succeed without errors."""
        response = await self.post(query, variables, **members)
        body = response.json()
        assert response.status_code == 200 and "errors" not in body, body
        return body["data"]

    async def errors(self, query: str, variables: Mapping[str, Any] | None = None, **members: Any) -> tuple[int, dict]:
        """(status, body) of a request that must fail."""
        response = await self.post(query, variables, **members)
        body = response.json()
        assert "errors" in body, body
        return response.status_code, body


@asynccontextmanager
async def graphql_service(
    directory: Path,
    database_url: str,
    settings: Mapping[str, Any] | None = None,
    *,
    mode: str = "prod",
    environ: Mapping[str, str] | None = None,
) -> AsyncIterator[Gql]:
    async with running_service(directory, database_url, settings, mode=mode, environ=environ) as service:
        yield Gql(service.client)
