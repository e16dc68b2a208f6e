"""SciGen's typographic cell markers (``[BOLD]``, ``[ITALIC]``, ``[EMPTY]``) and how SciTab's tables show them.

The markers belong to the release, so the cleaning lives in the data layer
(``structbench.releases.scitab.markup``); this module names it for the benchmark (``--option markup``).
"""

from __future__ import annotations

from structbench.releases.scitab.markup import EMPTY, Markup, clean

__all__ = ["EMPTY", "Markup", "clean"]
