"""The package's version (its own module, so that the lowest layers can name it without importing
the package's Python API)."""

__version__ = "0.1.0"
