"""Generated sets in the release's JSON format: written atomically, read back with every label re-derived.

A file is a JSON list of records with the demo's fields (CHALLENGE, LABEL, QUESTION, EVIDENCE), the full
release's SOURCE and NEW_EVIDENCE, and four of the generator's own: ID, DIFFICULTY, TEMPLATE and QUERY
(the claim, ``claims.py``). ``structfact:full --option full_path=FILE`` reads such a file as any release
file; ``structfact:generated --option questions_file=FILE`` also re-derives every label from its evidence
and query (``verify.py``) and refuses a file where one disagrees.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from structbench.benchmarks.structfact.generated.claims import from_json
from structbench.benchmarks.structfact.generated.verify import Ambiguous, verify
from structbench.benchmarks.structfact.loader import normalize_label, read_records
from structbench.core.atomic import write_text_atomic
from structbench.core.errors import DataError


def write_release(records: Sequence[dict[str, Any]], path: Path) -> None:
    """Write ``records`` as one JSON list; the file appears whole or not at all (``OSError`` otherwise)."""
    write_text_atomic(path.expanduser(), json.dumps(list(records), ensure_ascii=False, indent=1) + "\n")


def checked_records(path: Path) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, id, record) of a generated set, each label re-derived from its EVIDENCE and QUERY."""
    for where, index, record in read_records(path.expanduser()):
        if not isinstance(record, dict):
            raise DataError(f"{where}: a record must be a JSON object, got {type(record).__name__}")
        for name in ("LABEL", "EVIDENCE", "QUERY"):
            if name not in record:
                raise DataError(f"{where}: missing field {name} (a generated set needs its QUERY to be checked)")
        try:
            query = from_json(record["QUERY"])
        except ValidationError as err:
            first = err.errors()[0]
            place = ".".join(str(p) for p in first["loc"])
            raise DataError(f"{where}: field QUERY.{place}: {first['msg']}") from None
        evidence = record["EVIDENCE"]
        if isinstance(evidence, str):
            evidence = [evidence]
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            raise DataError(f"{where}: field EVIDENCE must be a list of strings")
        label = normalize_label(str(record["LABEL"]), where)
        try:
            derived = verify(evidence, query.model_dump(mode="json"))
        except Ambiguous as err:
            raise DataError(f"{where}: the evidence is ambiguous: {err}") from None
        if derived != label:
            raise DataError(f"{where}: LABEL is {label} but the evidence and QUERY give {derived}")
        yield where, str(record.get("ID", index)), record
