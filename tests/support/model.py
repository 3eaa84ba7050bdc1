"""The model (and GraphQL schema) of a test database, read through the real introspection query."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from svc.catalog import Catalog
from svc.config import Config
from svc.db import Executor, open_pool
from svc.graphql import GraphqlSchema, build_graphql_schema
from svc.model import Model, build_model
from svc.server import connection_settings
from svc.snapshot import read_database_catalog
from tests.support import catalog as catalogs
from tests.support.service import configure


async def read_model(
    database_url: str,
    directory: Path,
    settings: dict[str, Any] | None = None,
    *,
    mode: str = "prod",
    environ: Mapping[str, str] | None = None,
) -> tuple[Config, Model]:
    """The configuration (`settings`, with `environ` as the environment) and the model of the database."""
    config = configure(directory, settings, mode=mode, database_url=database_url, environ=environ).config
    async with open_pool(database_url, connection_settings(config), size=1) as pool:
        catalog = await read_database_catalog(Executor(pool), config)
    return config, build_model(catalog, config)


async def read_schema(database_url: str, directory: Path, settings: dict[str, Any] | None = None) -> GraphqlSchema:
    _, model = await read_model(database_url, directory, settings)
    return build_graphql_schema(model)


def read_catalog_and_model(
    database_url: str,
    directory: Path,
    settings: dict[str, Any] | None = None,
    *,
    roles: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> tuple[Catalog, Model]:
    """The catalog, with the privileges of `roles`, and the model built from it (no Trio run needed)."""
    config = configure(directory, settings, database_url=database_url, environ=environ).config
    catalog = catalogs.read_database_catalog(database_url, config.database.schemas, roles)
    return catalog, build_model(catalog, config)
