"""Test support: real PostgreSQL servers and databases, and a fault proxy in front of them."""
