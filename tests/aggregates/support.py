"""Hand-written SQL beside the service's answers."""


def rows(db, query: str, *params) -> list[tuple]:
    """The rows of a query on the module's database (`db`, tests/aggregates/conftest.py)."""
    return db.execute(query, params).fetchall()
