"""ClaimDB's claim files (JSON lines): one validated record per claim, every schema error one line naming the file
and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from structbench.core.errors import DataError
from structbench.data.datasets import read_data_text

ENTAILED, CONTRADICTED, NEI = "ENTAILED", "CONTRADICTED", "NOT ENOUGH INFO"
LABELS = (ENTAILED, CONTRADICTED, NEI)
"""The three verdicts, in the paper's order."""
Label = Literal["ENTAILED", "CONTRADICTED", "NOT ENOUGH INFO"]


class ClaimRecord(BaseModel):
    """One claim as the release writes it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    claim_id: int
    bird_id: int | None = None
    """The BIRD question the claim was written from."""
    db_name: str
    """The database the claim is about (``formula_1``): its file is ``<db_name>.sqlite``."""
    label: Label
    category: str | None = None
    """Why a claim has not enough info (``OUT-OF-SCHEMA``, ``COUNTERFACTUAL``, ``SUBJECTIVE``); None otherwise."""
    claim: str
    extra_info: str = ""
    """BIRD's external knowledge (how terms map to columns), given to the model with the claim."""


def read_claims(path: Path) -> list[ClaimRecord]:
    """Every claim of a JSON-lines file, in file order; a malformed line is a ``DataError`` naming it."""
    records = []
    for number, line in enumerate(read_data_text(path, what="ClaimDB claims").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(ClaimRecord.model_validate(json.loads(line)))
        except (ValueError, ValidationError) as err:
            why = err.errors()[0] if isinstance(err, ValidationError) else None
            detail = (f"{'.'.join(str(p) for p in why['loc'])}: {why['msg']}" if why else str(err).splitlines()[0])
            raise DataError(f"{path}:{number}: not a ClaimDB claim ({detail})") from None
    if not records:
        raise DataError(f"{path}: no claims")
    return records
