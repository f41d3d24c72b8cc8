"""msfcnn: fit convolutional networks into microcontroller RAM with multi-stage fusion.

The Python API (docs/python.md): load, plan, fit, compile, verify and run, their result types and
UserError, from msfcnn.api. They load on first use, so that `msfcnn --help` stays quick.
"""

import sys
import types

from .version import __version__

API = ("load", "plan", "fit", "compile", "verify", "run", "UserError", "Graph", "Plan", "Fit", "Board", "Compiled",
       "CompiledTogether", "FitTogether", "Verification", "Run")
# The API's plan and fit share their names with the modules plan.py and fit.py: as attributes of
# the package the names are the functions (the modules are imported as `from msfcnn.plan import`).
SHADOWED = ("plan", "fit")

__all__ = ["__version__", *API]


def __getattr__(name: str):
    if name in API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'msfcnn' has no attribute {name!r}")


class _Package(types.ModuleType):
    def __setattr__(self, name, value):
        if name in SHADOWED and isinstance(value, types.ModuleType):
            return  # importing the submodule does not hide the function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
