"""``runner.store``: a record's line, its prompt kept as written (only registered secrets lose), read back whole."""

from __future__ import annotations

import json

import pytest

from structbench.core.redact import register_secret
from structbench.runfiles.records import SampleRecord
from structbench.runner.store import encode_record

SECRET = "s3cr3t-token-0123456789"
TRICKY = "".join(map(chr, range(0x20))) + "\"\\/ é ß 中文 \u2028\u2029\ufeff \U0001f600 \x7f " + SECRET


@pytest.mark.parametrize("prompt", [TRICKY, [{"role": "system", "content": TRICKY}, {"role": "user", "content": "q"}]])
def test_a_prompt_is_written_as_json_keeps_it_and_reads_back(prompt: str | list[dict[str, str]]) -> None:
    register_secret(SECRET)
    record = SampleRecord(benchmark="toy", variant="small", strategy="direct", model="m", id="s-1", task="t",
                          prompt=prompt, output=SECRET, score=1.0)
    stored, line = encode_record(record)
    text = line.decode()
    assert line.endswith(b"\n") and text.count("\n") == 1
    shown = json.dumps(prompt, ensure_ascii=False, separators=(",", ":")).replace(SECRET, "[REDACTED]")
    assert shown in text  # the prompt's JSON as ``json.dumps`` writes it, non-ASCII kept, the secret gone
    assert SECRET not in text
    assert stored == SampleRecord.model_validate_json(line) and stored.output == "[REDACTED]"


def test_what_a_line_cannot_hold_is_mended_not_failed() -> None:
    """Python's ``json`` decodes a model's ``"\\ud800"`` into a lone surrogate, which no line can hold, and a model's
    JSON may nest deeper than pydantic writes: the record is written with U+FFFD in each surrogate's place (keys too)
    and a note in place of what nests past ``MAX_NESTING``, not failed, as the same reply would fail on every run; a
    surrogate pair, one character, is kept."""
    parsed = json.loads('[{"n\\udfff": "\\ud800x"}, ' + "[" * 50 + '"\\ud83d\\ude00 \\ud800"' + "]" * 50 + ", "
                        + "[" * 500 + "]" * 500 + "]")
    record = SampleRecord(benchmark="toy", variant="small", strategy="direct", model="m", id="s-2", task="t",
                          prompt="a lone surrogate \ud800", output="\udfff", parsed=parsed, score=1.0)
    stored, line = encode_record(record)
    assert stored.error is None and stored.score == 1.0
    assert stored.prompt == "a lone surrogate \ufffd" and stored.output == "\ufffd"
    assert stored.parsed[0] == {"n\ufffd": "\ufffdx"}
    deep = stored.parsed[1]
    for _ in range(49):
        deep = deep[0]
    assert deep == ["\U0001f600 \ufffd"]
    assert "nested more than 100 levels deep: not kept" in json.dumps(stored.parsed[2])
    assert SampleRecord.model_validate_json(line) == stored


def test_a_record_that_cannot_be_written_makes_a_failure() -> None:
    """A reference cycle cannot be written at all: the sample fails (tried again on the next run) with its
    identity and its prompt, mended."""
    cycle: list[object] = []
    cycle.append(cycle)
    record = SampleRecord(benchmark="toy", variant="small", strategy="direct", model="m", id="s-3", task="t",
                          prompt="a lone surrogate \ud800", output="x", parsed=cycle, score=1.0)
    stored, line = encode_record(record)
    assert stored.error is not None and stored.error.startswith("the record could not be written")
    assert stored.prompt == "a lone surrogate \ufffd"
    assert SampleRecord.model_validate_json(line) == stored  # read back, tried again later


@pytest.mark.parametrize("depth", [240, 300])
def test_a_value_pydantic_writes_but_cannot_read_back_is_mended_too(depth: int) -> None:
    """At 240 levels pydantic writes the line and fails to read it back (a validation error), at 300 it cannot write
    it: either way the record is written with the note, not failed."""
    parsed = json.loads("[" * depth + "]" * depth)
    record = SampleRecord(benchmark="toy", variant="small", strategy="direct", model="m", id="s-4", task="t",
                          prompt="p", output="x", parsed=parsed, score=0.5)
    stored, line = encode_record(record)
    assert stored.error is None and stored.score == 0.5 and "levels deep: not kept" in line.decode()
    assert SampleRecord.model_validate_json(line) == stored
