"""StructFact records (JSON list, JSON object of id -> record, or JSONL) -> samples.

Fields of the demo: CHALLENGE (the task), LABEL (YES / NO / NOT SURE ENOUGH), QUESTION and EVIDENCE (a
list of Markdown strings). The full release adds SOURCE (where the evidence comes from: a breakdown key),
NEW_EVIDENCE (the evidence without its unstructured context, for ``drop_unstructured``) and TABLE, CLAIM,
ANSWER, SHUFFLED_ROWS, DENSITY, len_evidence, which are kept in ``sample.extra["release"]`` unused. Generated
sets (``generated/``) add DIFFICULTY (the fine-grained category: a breakdown key), ID, TEMPLATE and QUERY.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from structbench.benchmarks.structfact.evidence import parse_evidence, structure_of
from structbench.core.errors import DataError
from structbench.data.datasets import read_data_text
from structbench.data.sample import LabelGold, Sample

LABELS = ("YES", "NO", "NOT SURE ENOUGH")
"""Gold labels: Fact., Non-fact. and NEI in the paper's words."""

_LABEL_ALIASES = {"NEI": "NOT SURE ENOUGH", "NOT ENOUGH INFO": "NOT SURE ENOUGH"}
RELEASE_FIELDS = ("TABLE", "CLAIM", "ANSWER", "SHUFFLED_ROWS", "DENSITY", "len_evidence")


def read_records(path: Path) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, id, record) triples; ``where`` names the file and record or line for error messages."""
    text = read_data_text(path)
    if path.suffix == ".jsonl":
        index = 0
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{path}:{lineno}: not JSON: {err.msg}") from err
            yield f"{path}:{lineno}", str(index), record
            index += 1
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(f"{path}:{err.lineno}: not JSON: {err.msg}") from err
    if isinstance(data, list):
        for i, record in enumerate(data):
            yield f"{path}: record {i}", str(i), record
    elif isinstance(data, dict):
        for key, record in data.items():
            yield f"{path}: record {key!r}", str(key), record
    else:
        raise DataError(f"{path}: expected a JSON list or object of records, got {type(data).__name__}")


def _string(record: dict[str, Any], name: str, where: str) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{where}: field {name} must be a non-empty string, got {value!r:.60}")
    return value.strip()


def _evidence_list(value: Any, name: str, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise DataError(f"{where}: field {name} must be a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise DataError(f"{where}: field {name} must be a list of strings; item {i} is {type(item).__name__}")
    return list(value)


def normalize_label(value: str, where: str) -> str:
    """``Yes`` / ``no`` / ``Not sure enough`` / ``NEI`` -> one of ``LABELS``."""
    label = " ".join(value.upper().replace(".", " ").split())
    label = _LABEL_ALIASES.get(label, label)
    if label not in LABELS:
        raise DataError(f"{where}: field LABEL must be one of {', '.join(LABELS)}, got {value!r}")
    return label


def record_to_sample(record: Any, sample_id: str, variant: str, where: str, seed: int) -> Sample:
    """One validated record -> a ``Sample`` with typed evidence and the raw strings kept in ``extra``."""
    if not isinstance(record, dict):
        raise DataError(f"{where}: a record must be a JSON object, got {type(record).__name__}")
    for name in ("CHALLENGE", "LABEL", "QUESTION", "EVIDENCE"):
        if name not in record:
            raise DataError(f"{where}: missing field {name}")
    raw = _evidence_list(record["EVIDENCE"], "EVIDENCE", where)
    new_raw = record.get("NEW_EVIDENCE")
    pieces = [piece for text in raw for piece in parse_evidence(text)]
    meta: dict[str, Any] = {"structure": structure_of(pieces)}
    for field, key in (("SOURCE", "source"), ("DIFFICULTY", "difficulty")):
        if record.get(field) is not None:
            meta[key] = str(record[field])
    return Sample(
        id=sample_id,
        benchmark="structfact",
        variant=variant,
        task=_string(record, "CHALLENGE", where),
        question=_string(record, "QUESTION", where),
        evidence=pieces,
        gold=LabelGold(label=normalize_label(_string(record, "LABEL", where), where)),
        meta=meta,
        extra={
            "evidence_raw": raw,
            "new_evidence_raw": None if new_raw is None else _evidence_list(new_raw, "NEW_EVIDENCE", where),
            "seed": seed,
            "release": {k: record[k] for k in RELEASE_FIELDS if record.get(k) is not None},
        },
    )


def load_file(path: Path, variant: str, *, seed: int, limit: int | None) -> list[Sample]:
    """All samples of one file (the first ``limit``), with unique ids."""
    samples: list[Sample] = []
    for where, sample_id, record in read_records(path):
        if limit is not None and len(samples) >= limit:
            break
        samples.append(record_to_sample(record, sample_id, variant, where, seed))
    if not samples:
        raise DataError(f"{path}: no records")
    return samples
