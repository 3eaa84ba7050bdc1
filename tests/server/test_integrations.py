"""The extension integrations the service does not build (SPEC "Extension integrations": timescaledb, pgvectorscale,
vectorchord, pgroonga; none can be installed where it is built): never active, and while one's switch is `auto`
an installed extension of that kind is a startup warning rather than a switch silently doing nothing. The catalogs
here are built by hand: the extensions themselves cannot be installed on the test servers."""

import pytest

from svc.catalog import Catalog, Extension
from svc.snapshot import UNBUILT_INTEGRATIONS, unbuilt_integrations
from tests.support.service import configure


def catalog_with(*extensions: str) -> Catalog:
    return Catalog(180000, ("public",), (), extensions=tuple(Extension(name, "public", "1.0") for name in extensions))


@pytest.mark.parametrize("switch", sorted(UNBUILT_INTEGRATIONS))
def test_an_installed_extension_whose_integration_is_not_built_is_a_warning_until_switched_off(tmp_path, switch):
    extension, _ = UNBUILT_INTEGRATIONS[switch]
    auto = configure(tmp_path / "auto").config
    (warning,) = unbuilt_integrations(catalog_with(extension, "plpgsql"), auto)
    assert warning.startswith(f"extensions.integrations.{switch}: {extension} is installed, but this service has no")
    off = configure(tmp_path / "off", {"extensions": {"integrations": {switch: "off"}}}).config
    assert unbuilt_integrations(catalog_with(extension), off) == []
    assert unbuilt_integrations(catalog_with("plpgsql"), auto) == []
