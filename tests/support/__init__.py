"""Helpers shared by the tests (oracles, brute force, C build harnesses, random cases).

Importable as `support.*`: the root tests/conftest.py puts tests/ on sys.path."""
