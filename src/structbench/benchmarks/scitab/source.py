"""Where SciTab comes from and how ``sci_tab.json`` is read: one validated record per claim.

The release is described in the data layer (``structbench.releases.scitab``), since other benchmarks'
generators build questions from its tables; this module names what the benchmark uses of it.
"""

from __future__ import annotations

from structbench.releases.scitab import (
    COMMIT,
    DATA_FILE,
    LABELS,
    NEI,
    REFUTES,
    SOURCE,
    SUPPORTS,
    ClaimRecord,
    Label,
    read_claims,
)

__all__ = [
    "COMMIT",
    "DATA_FILE",
    "LABELS",
    "NEI",
    "REFUTES",
    "SOURCE",
    "SUPPORTS",
    "ClaimRecord",
    "Label",
    "read_claims",
]
