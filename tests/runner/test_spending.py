"""``spent.jsonl``: every call a run paid for, a line each, read back as written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from structbench.backends.usage import CallUsage, Usage
from structbench.core.errors import DataError
from structbench.runfiles.runformat import SPENT
from structbench.runner.spending import BEFORE_LOG, SpendLog, read_spent


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


def test_the_log_is_read_summed_per_session_and_price_skipping_what_is_not_its_line(tmp_path: Path) -> None:
    """Lines of a run seeded from its records (session -1), of two sessions and two models, a torn last line and
    lines of the wrong shape; each group is the sum ``Usage`` gives."""
    seeded = SpendLog(tmp_path, BEFORE_LOG)
    seeded.write([(("m", False, False), Usage(calls=2, prompt_tokens=10, completion_tokens=4))])
    seeded.close()
    calls = [(0, CallUsage(model="m", prompt_tokens=3, completion_tokens=1)),
             (0, CallUsage(model="m", prompt_tokens=None, completion_tokens=2)),
             (1, CallUsage(model="m", prompt_tokens=5, completion_tokens=5, batch=True)),
             (1, CallUsage(model="n", prompt_tokens=1, completion_tokens=1, reasoning_tokens=7))]
    for session, call in calls:
        log = SpendLog(tmp_path, session)
        log.add(call)
        log.close()
    with (tmp_path / SPENT).open("a") as out:
        out.write('{"session": 0, "model": "m", "batch": false, "calls": "1"}\n[1, 2]\n{"session": true}\n{"sess')
    got = {(session, key): usage for session, key, usage in read_spent(tmp_path)}
    want = {(-1, ("m", False, False)): Usage(calls=2, prompt_tokens=10, completion_tokens=4)}
    for session, call in calls:
        key = (session, (call.model, call.batch, False))
        want[key] = want.get(key, Usage()) + call
    assert got == want


def test_a_fifo_in_place_of_the_log_is_named_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / SPENT)
    with pytest.raises(DataError, match="a FIFO, not a regular file; not read"):
        read_spent(tmp_path)
