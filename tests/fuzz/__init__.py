"""Fuzz harness for the msfcnn command line (issue 16): `python -m tests.fuzz --cases N`.

See harness.py; a short deterministic slice runs in the test suite (test_fuzz_slice.py)."""
