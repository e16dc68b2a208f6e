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

from collections.abc import Iterable, Iterator
from pathlib import Path

from structbench.benchmarks.skabench.jsonl import iter_models, read_models
from structbench.benchmarks.skabench.units import Instance


def read_instances(path: Path) -> list[Instance]:
    """All instances in ``path``; a malformed line raises ``DataError`` naming the file, line and field."""
    return read_models(path, Instance, "instance", key=lambda i: i.id)


def iter_instance_file(path: Path) -> Iterator[Instance]:
    """``read_instances``, each instance made when it is read (each holds a whole table's units: a file of thousands
    is gigabytes); the file is opened at once, a malformed line raises when the reading reaches it."""
    return iter_models(path, Instance, "instance", key=lambda i: i.id)


def write_instances(instances: Iterable[Instance], path: Path) -> int:
    """Write ``instances`` as JSONL (the format ``read_instances`` reads), each as it is read; returns how many."""
    count = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for instance in instances:
            fh.write(instance_line(instance))
            count += 1
    return count


def instance_line(instance: Instance) -> str:
    """``instance`` as a line of the JSONL file, its newline included."""
    return instance.model_dump_json(exclude_none=True) + "\n"
