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


def test_a_prompt_that_cannot_be_written_makes_a_failure() -> None:
    record = SampleRecord(benchmark="toy", variant="small", strategy="direct", model="m", id="s-2", task="t",
                          prompt="a lone surrogate \ud800", output="x", score=1.0)
    stored, line = encode_record(record)
    assert stored.error is not None and stored.error.startswith("the record could not be written")
    assert stored.prompt is None and SampleRecord.model_validate_json(line) == stored  # read back, tried again later
