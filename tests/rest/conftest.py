import pytest

# The shared assertions of REST answers report their differences like the tests' own.
pytest.register_assert_rewrite("tests.support.rest")
