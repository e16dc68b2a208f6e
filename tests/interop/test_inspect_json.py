"""``convert --to inspect`` writes a sample's members as JSON directly (``interop.inspect_json``): the same JSON, member
by member, that Inspect's own models give (``EvalSample`` built, redacted, condensed, summarized), and Inspect reads
a log of them back alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extras import require_extra

require_extra("inspect_ai", "inspect")

from inspect_ai.log import read_eval_log  # noqa: E402

from structbench.backends.usage import CallUsage, Usage  # noqa: E402
from structbench.core.redact import register_secret  # noqa: E402
from structbench.interop import inspect_log  # noqa: E402
from structbench.interop.inspect_json import sample_member  # noqa: E402
from structbench.interop.rundir import read_run  # noqa: E402
from structbench.runfiles.records import SampleRecord  # noqa: E402

LONG = "Data:\n| a | b |\n| 1 | 2 |\n" * 8 + "Q: is 3 there?\nA:   "
SECRET = "sk-i39o-direct-json-0123456789abcdef"


def _records() -> list[SampleRecord]:
    """Every kind of record a run keeps: each prompt and reply shape, texts under and over the 100 characters past
    which Inspect makes an event's text an attachment and the 5,120 past which its summary cuts an input, errors of
    each kind, free values of every JSON type."""
    base: dict[str, Any] = {"benchmark": "toy", "variant": "small", "strategy": "vote", "model": "m", "task": "t",
                            "meta": {"rows": 3, "kind": "x\n  spaced  out", "nested": {"a": [1, None, 2.5]},
                                     "none": None, "flag": True, "long": "w " * 700},
                            "gold": "yes"}
    made = CallUsage(model="m", prompt_tokens=100, completion_tokens=42, reasoning_tokens=40, cached_tokens=60)
    calls = [made, made.model_copy(update={"reused": True}),  # a reused call: not in Inspect's model_usage
             CallUsage(model="openai:judge", prompt_tokens=30, completion_tokens=2)]
    chat = [{"role": "system", "content": "be brief"}, {"role": "user", "content": LONG},
            {"role": "assistant", "content": "ok"}, {"role": "user", "content": LONG}, {"role": "tool", "content": "é"}]
    return [
        SampleRecord(**base, id="thought", prompt=chat[:2], output="yes", outputs=["no", "yes", "yes"],
                     parsed="yes", score=1.0, values={"f1": 1.0}, confidence=0.75,
                     artifacts={"votes": {"yes": 2, "no": 1}}, reasoning="3 is in row 2", reasoning_tokens=5, calls=3,
                     cached_calls=1, seconds=1.5, call_usage=calls, usage=Usage.total([calls[0], calls[2]]),
                     reused_usage=Usage.total([calls[1]])),
        SampleRecord(**base, id="one-call-chat", prompt=chat, output="y" * 150, parsed={"answer": ["y", 1]},
                     score=1, calls=1, seconds=0.5, reasoning="because " * 30,
                     call_usage=[CallUsage(model="m")], usage=Usage(calls=1, unknown=1)),  # a server without usage
        SampleRecord(**base, id="text-prompt", prompt=LONG + " ünïcode ✓", output="no", parsed="no", score=0.0,
                     calls=1, seconds=0.25, usage=Usage(calls=1, prompt_tokens=7, completion_tokens=1)),
        SampleRecord(**{**base, "gold": ["a", "b"]}, id="list-gold", prompt="short", output="a", parsed="a",
                     score=0.5, calls=1),
        SampleRecord(**{**base, "gold": {"x": [1, 2]}}, id="dict-gold", prompt="short", output="z" * 6000,
                     parsed=None, score=0.0, calls=1, seconds=0.1),
        SampleRecord(**base, id="huge-chat", prompt=[{"role": "user", "content": "word " * 1100}], output="n",
                     parsed="n", score=0.0, calls=1),
        SampleRecord(**base, id="huge-text", prompt="word\t" * 1100, output="n", parsed="n", score=0.0, calls=1),
        SampleRecord(**base, id="cut-off", prompt="p", output="", reasoning="and then", reasoning_cut_off=True,
                     replies_cut_off=1, calls=1),
        SampleRecord(**base, id="model-error", prompt="p", output="", error="HTTP 500 after 6 retries",
                     error_kind="model", calls=1),
        SampleRecord(**base, id="harness", prompt="p", output="garbage", parsed=None, score=0.0,
                     error="Traceback (most recent call last):\n  ...\nValueError: bad", error_kind="harness"),
        SampleRecord(**base, id="too-long", prompt=None, output="", error="prompt too long", error_kind="context"),
        SampleRecord(**base, id="data-uri", prompt=[{"role": "user", "content": "data:image/png;base64,iVBOR"}],
                     output="a picture", parsed="x", score=0.0, calls=1),
        SampleRecord(**base, id="secret", prompt=f"the key is {SECRET}", output="ok", parsed="ok", score=1.0,
                     calls=1),
        SampleRecord(**base, id="credential-words", prompt="Authorization: none required", output="ok",
                     parsed="ok", score=1.0, calls=1),
    ]


def _without_random_ids(value: Any) -> Any:
    """A member's JSON without what Inspect's models draw anew each time they are built (ids, event stamps)."""
    if isinstance(value, dict):
        return {k: _without_random_ids(v) for k, v in value.items()
                if k not in ("id", "uuid", "timestamp", "working_start")}
    if isinstance(value, list):
        return [_without_random_ids(v) for v in value]
    return value


def _id_places(value: Any, seen: dict[str, int] | None = None, out: list[int] | None = None) -> list[int]:
    """Which drawn ids are the same object: each id, in order of appearance, as the position of its first one."""
    seen = {} if seen is None else seen
    out = [] if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("id", "uuid") and isinstance(v, str):
                out.append(seen.setdefault(v, len(seen)))
            else:
                _id_places(v, seen, out)
    elif isinstance(value, list):
        for v in value:
            _id_places(v, seen, out)
    return out


def _via_inspect(record: SampleRecord) -> inspect_log.Member:
    (member,) = inspect_log.serialized([inspect_log._redacted(inspect_log.eval_sample(record, "structbench/m", 1))])
    return member


def test_each_member_is_the_json_inspects_models_give() -> None:
    """Member by member, key order included, the direct JSON is Inspect's (ids aside, which are drawn anew, but the
    same ids in the same places); records it does not cover (a data URI, a secret to redact) come back ``None``."""
    register_secret(SECRET)
    for record in _records():
        direct = sample_member(record, "structbench/m", 1)
        name, sample, summary = _via_inspect(record)
        if record.id in ("data-uri", "secret", "credential-words"):
            assert direct is None, record.id
            continue
        assert direct is not None and direct[0] == name, record.id
        for mine, theirs in ((direct[1], sample), (direct[2], summary)):
            assert json.dumps(_without_random_ids(json.loads(mine))) == json.dumps(
                _without_random_ids(json.loads(theirs))), record.id
            assert _id_places(json.loads(mine)) == _id_places(json.loads(theirs)), record.id
        if record.id == "thought":  # Inspect's own usage fields: the calls made, per model, cached input apart
            assert json.loads(direct[1])["model_usage"] == json.loads(direct[2])["model_usage"] == {
                "structbench/m": {"input_tokens": 40, "output_tokens": 42, "total_tokens": 142,
                                  "input_tokens_cache_read": 60, "reasoning_tokens": 40},
                "structbench/openai:judge": {"input_tokens": 30, "output_tokens": 2, "total_tokens": 32}}
        if record.id in ("one-call-chat", "too-long"):  # unknown usage: absent, never 0
            assert json.loads(direct[1])["model_usage"] == {}
        if record.id == "text-prompt":  # a record that kept only its sum: the run's model
            assert json.loads(direct[1])["model_usage"] == {
                "structbench/m": {"input_tokens": 7, "output_tokens": 1, "total_tokens": 8}}
        if record.id == "one-call-chat":
            condensed = json.loads(direct[1])
            assert condensed["events"][0]["input_refs"] == [[0, 3], [1, 2], [3, 4]]  # the repeated message once
            assert len(condensed["attachments"]) == 3  # the long prompt, the thought, the reply
    members = list(inspect_log.members_of(_records(), "structbench/m"))
    assert [m[0] for m in members] == [_via_inspect(r)[0] for r in _records()]
    assert SECRET not in "".join(m[1].decode() + m[2].decode() for m in members)


@pytest.mark.shared
def test_inspect_reads_a_log_of_direct_members_as_one_of_its_models(oracle_run: Path, tmp_path: Path) -> None:
    """``read_eval_log`` reads the converted log (direct JSON) and one written from Inspect's models alike."""
    run = read_run(oracle_run)
    for entry in run.entries[:3]:
        header = inspect_log.eval_header(run, entry)
        direct, via_models = tmp_path / "direct.eval", tmp_path / "models.eval"
        inspect_log.write_eval(header, inspect_log.sample_members(run, entry), direct)
        inspect_log.write_eval(header, inspect_log.serialized(inspect_log.eval_samples(run, entry)), via_models)
        a, b = read_eval_log(str(direct)), read_eval_log(str(via_models))
        assert a.samples and len(a.samples) == len(entry.records)
        assert _without_random_ids(a.model_dump(mode="json", exclude={"location"})) == _without_random_ids(
            b.model_dump(mode="json", exclude={"location"}))
