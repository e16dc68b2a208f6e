"""``spent.jsonl``: every call a run paid for, a line each, read back as written."""

from __future__ import annotations

import json
from pathlib import Path

from structbench.backends.usage import CallUsage, Usage
from structbench.runfiles.runformat import SPENT
from structbench.runner.spending import SpendLog, read_spent


def test_a_calls_line_is_the_line_of_its_usage(tmp_path: Path) -> None:
    """``add`` writes each call's line without building its ``Usage`` (every call of a run passes there): the same
    line as ``write`` of ``Usage() + call``, read back the same."""
    calls = [CallUsage(model="m", prompt_tokens=3, completion_tokens=None, reasoning_tokens=2, batch=True),
             CallUsage(model="m", prompt_tokens=5, completion_tokens=7, cached_tokens=1)]
    for name, how in (("a", "add"), ("b", "write")):
        log = SpendLog(tmp_path / name, 0)
        (tmp_path / name).mkdir()
        for call in calls:
            if how == "add":
                log.add(call)
            else:
                log.write([((call.model, call.batch, False), Usage() + call)])
        log.close()
    assert [json.loads(x) for x in (tmp_path / "a" / SPENT).read_text().splitlines()] == \
        [json.loads(x) for x in (tmp_path / "b" / SPENT).read_text().splitlines()]
    assert read_spent(tmp_path / "a") == read_spent(tmp_path / "b")
