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
    """The API on first use: ``import structbench`` stays light (the command's ``--help`` imports it too)."""
    if name in __all__:
        from structbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'structbench' has no attribute {name!r}")
