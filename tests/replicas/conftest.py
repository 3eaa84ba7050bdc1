"""The replica tests' standby: one real streaming standby of the tests' primary per module, made after the module's
database exists (a base backup copies the databases there are), stopped and removed after the module."""

from collections.abc import Iterator

import pytest

from tests.support.standby import Standby
from tests.support.standby import standby as make_standby


@pytest.fixture(scope="module")
def standby(database_url: str) -> Iterator[Standby]:
    with make_standby(database_url) as server:
        yield server
