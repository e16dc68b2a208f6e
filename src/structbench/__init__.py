"""structbench: evaluate language models on reasoning over structured knowledge.

``structbench.evaluate(model, bench, ...)`` runs an evaluation and returns its results (``structbench.api``);
``structbench.evaluate_suite(path)`` runs a suite file. The ``structbench`` command is a layer over them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from structbench.core.version import __version__

if TYPE_CHECKING:
    from structbench.api import EvalResult, Result, SuiteResult, evaluate, evaluate_suite

__all__ = ["EvalResult", "Result", "SuiteResult", "__version__", "evaluate", "evaluate_suite"]


def __getattr__(name: str) -> Any:
    """The API on first use: ``import structbench`` stays light (the command's ``--help`` imports it too); a
    subpackage (``structbench.api``, ``structbench.papers``) is imported when first named, as the docs use them."""
    if name in __all__:
        from structbench import api

        return getattr(api, name)
    if not name.startswith("_"):
        import importlib

        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{name}":  # the module exists; something it imports does not
                raise
    raise AttributeError(f"module 'structbench' has no attribute {name!r}")
