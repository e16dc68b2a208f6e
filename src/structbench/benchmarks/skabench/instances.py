"""Read and write SKA-Bench instances as JSONL, one ``Instance`` object a line.

A line looks like::

    {"id": "q1", "knowledge_type": "table", "question": "...", "answers": ["..."],
     "header": ["Name", "Goals"],
     "positive_units": [{"cells": ["Ray Barlow", "48"], "order": 3}],
     "noisy_units": [{"cells": ["Billy Bassett", "77"], "order": 0}], "meta": {}}

Units: a triple ``{"subject", "relation", "object"}`` or ``[s, r, o]``; a row ``{"cells": [...],
"order": n}``; a paragraph ``{"text": "..."}`` or a bare string. ``kind`` (triple/row/text) may be
given explicitly; ``group`` is optional (see ``units``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from structbench.benchmarks.skabench.units import Instance
from structbench.errors import DataError


def _problem(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "line"
    return f"{where}: {first['msg']}"


def read_instances(path: Path) -> list[Instance]:
    """All instances in ``path``; a malformed line raises ``DataError`` naming the file, line and field."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise DataError(f"{path}: cannot read instances ({err})") from err
    instances: list[Instance] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as err:
            raise DataError(f"{path}:{number}: not JSON ({err})") from None
        try:
            instance = Instance.model_validate(data)
        except ValidationError as err:
            raise DataError(f"{path}:{number}: {_problem(err)}") from None
        if instance.id in seen:
            raise DataError(f"{path}:{number}: duplicate instance id {instance.id!r}")
        seen.add(instance.id)
        instances.append(instance)
    if not instances:
        raise DataError(f"{path}: no instances")
    return instances


def write_instances(instances: Iterable[Instance], path: Path) -> int:
    """Write ``instances`` as JSONL (the format ``read_instances`` reads); returns how many."""
    count = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for instance in instances:
            fh.write(instance.model_dump_json(exclude_none=True) + "\n")
            count += 1
    return count
