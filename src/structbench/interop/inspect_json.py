"""A converted sample's members of an Inspect ``.eval`` log written as JSON directly: the condensed sample and its
summary, the same JSON ``inspect_log.serialized`` gets from Inspect's own models (``EvalSample`` built, redacted,
``condense_sample``, ``summary``), at a fraction of the CPU (those models' validation and Inspect's walks over the
whole sample were most of a conversion's time).

What Inspect's condensing does to a converted sample, done here on plain values: the model event's input messages go
to the sample's message pool (``events_data``, equal messages once, ``input_refs`` the ranges), and in the event each
text over 100 characters becomes an ``attachment://<mm3 hash>`` of ``attachments``; the sample's input, messages and
output keep their texts. The summary thins as Inspect's does (``thin_input``, ``thin_target``, ``thin_metadata``,
``thin_text``). Ids and stamps are drawn anew as Inspect's models draw them. A record this does not cover, or whose
JSON holds a secret the run's environment knows, is built through Inspect's models instead (``None``): data URIs
(Inspect stores them as attachments), nesting near Inspect's depth limit. ``tests/interop`` compares both ways member
by member.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from inspect_ai._util.dateutil import datetime_now_utc, datetime_to_iso_format_safe
from inspect_ai._util.hash import mm3_hash
from inspect_ai._util.json import to_json_safe, to_json_str_safe
from inspect_ai._util.working import sample_working_time
from inspect_ai.log._condense import ATTACHMENT_PROTOCOL, MAX_SAMPLE_DUMP_DEPTH
from inspect_ai.log._recorders.eval import SAMPLES_DIR
from inspect_ai.log._util import MAX_TEXT_LENGTH, THIN_TEXT_SCAN, THIN_TEXT_WIDTH, thin_text, truncate_text
from shortuuid import uuid

from structbench.backends.usage import CallUsage, Usage, summed
from structbench.core.redact import redact
from structbench.runfiles.inspect_schema import ATTEMPT, RECORD, model_usage_fields
from structbench.runfiles.records import SampleRecord

Json = dict[str, Any]
Member = tuple[str, bytes, bytes]

PLACED = frozenset({"benchmark", "variant", "strategy", "model", "id", "task", "prompt", "reasoning", "meta",
                    "confidence", "artifacts", "calls"})
"""Record fields with a place of their own in every converted sample (the rest go to ``metadata[RECORD]``)."""
SCORED_PLACED = frozenset({"parsed", "gold", "score", "values", "output", "outputs"})
"""Fields placed in the score (a scored record's only)."""

_DATA_URI = re.compile(r"data:[^,]*;base64,")
"""A text Inspect's condensing stores as an attachment wherever it is (``is_data_uri``): left to Inspect."""
_DEEP = MAX_SAMPLE_DUMP_DEPTH - 16
"""Nesting of a record's free values (meta, artifacts, answers) past which Inspect's depth check decides."""


class _Unsupported(Exception):
    """A record the direct JSON does not cover: Inspect's models build it."""


def _text(text: str) -> str:
    if text.startswith("data:") and _DATA_URI.match(text):
        raise _Unsupported
    return text


def _message(role: str, content: str | list[Json], model: str | None = None) -> Json:
    message: Json = {"id": uuid(), "content": content, "role": role}
    if model is not None:
        message["model"] = model
    return message


def _reply(text: str, reasoning: str | None, model: str) -> Json:
    if reasoning is None:
        return _message("assistant", _text(text), model)
    return _message("assistant", [{"type": "reasoning", "reasoning": _text(reasoning), "redacted": False},
                                  {"type": "text", "text": _text(text)}], model)


def _output(record: SampleRecord, model: str) -> Json:
    """``inspect_log.model_output``: every reply the record keeps as a choice, the thought with its reply."""
    texts = record.outputs or ([record.output] if record.output or record.error is None else [])
    thought_at = texts.index(record.output) if record.output in texts else None
    stop = "max_tokens" if record.out_of_tokens else "stop"
    choices = [{"message": _reply(text, record.reasoning if i == thought_at else None, model), "stop_reason": stop}
               for i, text in enumerate(texts)]
    return {"model": model, "choices": choices, "completion": texts[0] if texts else ""}


def _input(prompt: str | list[dict[str, str]] | None) -> str | list[Json]:
    """``inspect_log.chat_input``: the prompt's text, or its chat messages."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return _text(prompt)
    roles = {"system": "system", "assistant": "assistant"}
    messages = []
    for m in prompt:
        content = m.get("content", "")
        if not isinstance(content, str):
            raise _Unsupported
        messages.append(_message(roles.get(m.get("role", "user"), "user"), _text(content)))
    return messages


def error_fields(record: SampleRecord) -> Json | None:
    """A failed record's Inspect ``EvalError`` fields (the last line of a harness traceback as its message), or None."""
    if record.error is None:
        return None
    lines = record.error.strip().splitlines() or [""]
    message = lines[-1] if record.error_kind == "harness" else record.error
    traceback = record.error if record.error_kind == "harness" else ""
    return {"message": f"{record.error_kind} error: {message}", "traceback": traceback, "traceback_ansi": traceback}


def usage_fields(usage: Usage) -> Json | None:
    """``Usage`` as Inspect's ``ModelUsage`` fields (``inspect_schema.model_usage_fields``; None: unknown)."""
    return model_usage_fields(usage.prompt_tokens, usage.completion_tokens, reasoning_tokens=usage.reasoning_tokens,
                              cached_tokens=usage.cached_tokens)


def sample_usage(record: SampleRecord, model: str) -> Json:
    """The sample's ``model_usage``: the tokens of the calls made for it in this run, per model as Inspect names it
    (``structbench/BACKEND:NAME``; ``model`` for a record that kept only its sum). Calls answered from the response
    cache are left out, as Inspect leaves its own cache hits out of ``model_usage``; a model whose tokens are
    unknown is left out whole."""
    if record.call_usage:
        calls: dict[str, list[CallUsage]] = {}
        for call in record.call_usage:
            if not call.reused:
                calls.setdefault(f"structbench/{call.model}", []).append(call)
        by_model = {name: summed(group) for name, group in calls.items()}
    else:
        by_model = {model: record.usage} if record.usage is not None else {}
    fields = {name: usage_fields(usage) for name, usage in by_model.items()}
    return {name: f for name, f in fields.items() if f is not None}


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list | tuple):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _pooled(message: Json, attach: Callable[[str], str]) -> Json:
    """A message as Inspect's condensing walks an event's: each text over 100 characters an attachment."""
    content = message["content"]
    if isinstance(content, str):
        return {**message, "content": attach(content)}
    parts = [{**part, "text": attach(part["text"])} if part["type"] == "text"
             else {**part, "reasoning": attach(part["reasoning"])} for part in content]
    return {**message, "content": parts}


def _refs(indices: list[int]) -> list[list[int]]:
    """Contiguous pool positions as ``[start, end)`` ranges (``inspect_ai.event._pool._compress_refs``)."""
    refs: list[list[int]] = []
    for i in indices:
        if refs and refs[-1][1] == i:
            refs[-1][1] += 1
        else:
            refs.append([i, i + 1])
    return refs


def _thin(text: str) -> str:
    """``inspect_ai.log._util.thin_text``: whitespace collapsed, and past ``THIN_TEXT_WIDTH`` shortened by
    ``textwrap`` (only then: below it ``textwrap.shorten`` returns the collapsed text as it is)."""
    collapsed = " ".join(text[:THIN_TEXT_SCAN].split())
    return collapsed if len(collapsed) <= THIN_TEXT_WIDTH else thin_text(text)


def _thin_metadata(metadata: Json) -> Json:
    """``inspect_ai.log._util.thin_metadata``: texts thinned, other values over 1 kB of JSON (as Inspect measures
    it, indented) replaced by a note."""
    thinned: Json = {}
    for key, value in metadata.items():
        if isinstance(value, str):
            thinned[key] = _thin(value)
        elif value is None or isinstance(value, int | float) or len(to_json_str_safe(value)) <= 1024:
            thinned[key] = value
        else:
            thinned[key] = "Key removed from summary (> 1k)"
    return thinned


def _summary(sample: Json, message_count: int) -> Json:
    """``EvalSample.summary()`` of the condensed sample, thinned as ``EvalSampleSummary`` thins it."""
    input_ = sample["input"]
    if isinstance(input_, str):
        thin_input: str | list[Json] = truncate_text(input_)
    else:
        thin_input = [{**m, "content": truncate_text(m["content"])} if len(m["content"]) > MAX_TEXT_LENGTH else m
                      for m in input_]
    target = sample["target"]
    summary: Json = {
        "id": sample["id"], "epoch": sample["epoch"], "input": thin_input,
        "target": [truncate_text(t) for t in target] if isinstance(target, list) else truncate_text(target),
        "metadata": _thin_metadata(sample["metadata"]),
    }
    if sample.get("scores") is not None:
        summary["scores"] = {key: {"value": score["value"], "answer": _thin(score["answer"]),
                                   "explanation": _thin(score["explanation"]),
                                   "metadata": _thin_metadata(score["metadata"]), "history": []}
                             for key, score in sample["scores"].items()}
    summary["model_usage"], summary["role_usage"] = sample["model_usage"], {}
    for key in ("total_time", "working_time"):
        if sample.get(key) is not None:
            summary[key] = sample[key]
    if sample.get("error") is not None:
        summary["error"] = sample["error"]["message"]
    summary["completed"] = True
    summary["message_count"] = message_count
    return summary


def condensed(record: SampleRecord, model: str, epoch: int) -> Json:
    """The record as ``condense_sample(inspect_log.eval_sample(record, model, epoch))`` dumps it (``None`` fields
    left out, as Inspect's writer leaves them); ``_Unsupported`` where it does not cover the record."""
    scored = record.counted
    placed = PLACED | (SCORED_PLACED if scored else frozenset())
    if record.prompt is None:
        placed -= {"prompt"}
    if max(_depth(record.meta), _depth(record.artifacts), _depth(record.parsed), _depth(record.gold),
           _depth(record.values)) > _DEEP:
        raise _Unsupported
    rest = record.model_dump(mode="json", exclude=set(placed))
    output = _output(record, model)
    input_ = _input(record.prompt)
    asked = [_message("user", input_)] if isinstance(input_, str) else list(input_)
    messages = list(asked)
    if record.output or record.reasoning is not None:
        messages.append(_reply(record.output, record.reasoning, model))
    gold = record.gold
    target: str | list[str]
    if isinstance(gold, str):
        target = gold
    elif isinstance(gold, list) and all(isinstance(g, str) for g in gold):
        target = list(gold)
    else:
        target = "" if gold is None else json.dumps(gold, ensure_ascii=False, default=str)
    sample: Json = {"id": record.id, "epoch": epoch, "input": input_, "target": target, "messages": messages,
                    "output": output}
    if scored:
        if record.score is None:
            raise _Unsupported
        sample["scores"] = {record.benchmark: {
            "value": record.score,
            "answer": json.dumps(record.parsed, ensure_ascii=False, default=str),
            "explanation": f"gold: {json.dumps(record.gold, ensure_ascii=False, default=str)}",
            "metadata": {"scored": record.scored().model_dump(mode="json"), "output": record.output,
                         "outputs": record.outputs},
            "history": [],
        }}
    flat = {k: v for k, v in record.meta.items() if k not in ("task", "meta", RECORD)
            and (v is None or isinstance(v, str | int | float | bool))}
    sample["metadata"] = {"task": record.task, **flat, "meta": record.meta, RECORD: rest}
    sample["store"] = {ATTEMPT: {"output": record.output, "outputs": record.outputs or [],
                                 "confidence": record.confidence, "artifacts": record.artifacts,
                                 "calls": record.calls}}
    attachments: dict[str, str] = {}

    def attach(text: str) -> str:
        if len(text) <= 100:
            return text
        digest = mm3_hash(text)
        attachments[digest] = text
        return f"{ATTACHMENT_PROTOCOL}{digest}"

    events: list[Json] = []
    pool: list[Json] = []
    if record.calls == 1 and record.prompt is not None:  # the one exchange is known whole
        walked = [_pooled(m, attach) for m in asked]
        index: dict[str, int] = {}
        at = []
        for message in walked:
            key = json.dumps({k: v for k, v in message.items() if k != "id"})
            if key not in index:
                index[key] = len(pool)
                pool.append(message)
            at.append(index[key])
        event_output = {**output, "choices": [{**c, "message": _pooled(c["message"], attach)}
                                              for c in output["choices"]]}
        events.append({"uuid": uuid(), "timestamp": datetime_to_iso_format_safe(datetime_now_utc()),
                       "working_start": sample_working_time(), "event": "model", "model": model, "input": [],
                       "input_refs": _refs(at), "tools": [], "tool_choice": "none", "config": {},
                       "output": event_output})
    sample["events"] = events
    sample["model_usage"], sample["role_usage"] = sample_usage(record, model), {}
    if record.seconds is not None:
        sample["total_time"] = sample["working_time"] = record.seconds
    error = error_fields(record)
    if error is not None:
        sample["error"] = error
    sample["attachments"] = attachments
    sample["events_data"] = {"messages": pool, "calls": []}
    return sample


def sample_member(record: SampleRecord, model: str, epoch: int) -> Member | None:
    """The record's member of the log (name, condensed sample JSON, summary JSON) written directly, or ``None``
    where Inspect's models must build it (see the module's docstring)."""
    try:
        sample = condensed(record, model, epoch)
    except _Unsupported:
        return None
    body = to_json_safe(sample, indent=None)
    if redact(body.decode()) != body.decode():  # a secret to take out before condensing: Inspect's path does
        return None
    summary = to_json_safe(_summary(sample, len(sample["messages"])), indent=None)
    return f"{SAMPLES_DIR}/{record.id}_epoch_{epoch}.json", body, summary
