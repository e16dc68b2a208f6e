"""The self-contained HTML report: inline CSS, inline SVG figures, and a per-sample browser in plain JS.

Nothing is fetched when the file is opened: no CDN, no fonts, no images outside the file. The sample
records travel as JSON inside ``<script type="application/json">`` (every record's row; the prompts and replies of
the first ``DEFAULT_TEXTS`` of each entry, so a run of any size makes a file of bounded texts), with ``<``, ``>``
and ``&`` written as ``\\u003c``, ``\\u003e`` and ``\\u0026`` so no text in a prompt can close the script
element.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from structbench.backends.usage import usage_text
from structbench.core.version import __version__
from structbench.report.document import Document, FigureBlock, Section, TableBlock
from structbench.report.entries import EntryView
from structbench.runfiles.records import SampleRecord

DEFAULT_MAX_TEXT = 20_000
"""Characters of each prompt, output and thought kept in the sample browser."""
DEFAULT_TEXTS = 1_000
"""Samples of each entry whose prompt, replies, thought, tool calls and tokens the HTML carries; the others carry
their row (id, task, score, answer, gold, values, meta, error), so the file stays a few hundred bytes a sample
however large the run, and every filter, count and search over answers still covers every sample."""


def clip(text: str | None, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, keeping its head and its tail (where the question
    of a long-context prompt usually is)."""
    if text is None:
        return ""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    return f"{text[:head]}\n… [{len(text) - limit} characters cut] …\n{text[len(text) - tail:]}"


def prompt_text(prompt: str | list[dict[str, str]] | None) -> str:
    """A prompt as readable text: completion text as is, chat messages under role headers."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(f"── {m.get('role', '?')} ──\n{m.get('content', '')}" for m in prompt)


def browser_payload(views: Sequence[EntryView], max_text: int = DEFAULT_MAX_TEXT,
                    texts: int = DEFAULT_TEXTS) -> dict[str, Any]:
    """Records for the sample browser: every record's row, read from the columns, and the texts of the first
    ``texts`` of each entry, read in full from the run directory in turn; identical prompts (shared across
    strategies) are stored once."""
    prompts: list[str] = []
    index: dict[str, int] = {}
    records = []
    left_out = 0
    for v in views:
        full = v.records.full(range(min(texts, len(v.records))))
        for position, s in enumerate(v.records):
            row: dict[str, Any] = {
                "benchmark": s.benchmark,
                "variant": s.variant,
                "strategy": v.strategy,  # with the sweep cell, so the browser tells cells apart
                "model": v.label,
                "id": s.id,
                "task": s.task,
                "reasoning_cut_off": s.reasoning_cut_off,
                "parsed": s.parsed,
                "gold": s.gold,
                "score": s.score,
                "values": s.values,
                "meta": s.meta,
                "error": s.error,
                "error_kind": s.error_kind,
            }
            if position < texts:
                r = next(full)
                text = clip(prompt_text(r.prompt), max_text)
                if text not in index:
                    index[text] = len(prompts)
                    prompts.append(text)
                row |= {
                    "prompt": index[text],
                    "output": clip(r.output, max_text),
                    "reasoning": clip(r.reasoning, max_text) if r.reasoning is not None else None,
                    "reasoning_tokens": r.reasoning_tokens,
                    "outputs": [clip(o, max_text) for o in r.outputs] if r.outputs else None,
                    "tokens": _tokens(r),
                    "tools": _tools(r, max_text),
                }
            else:
                left_out += 1
            records.append(row)
    note = (f"The prompts and replies of {left_out} of the {len(records)} samples are not in this file (it carries "
            f"those of the first {texts} samples of each entry; `structbench report --sample-texts N` carries more): "
            "`structbench view` on the run directory shows every sample's, and each is the line of the run's "
            "samples.jsonl with its id.") if left_out else None
    return {"prompts": prompts, "records": records, "left_out": note}


def _tools(record: SampleRecord, max_text: int) -> str | None:
    """A tool loop's trace as the sample browser shows it: each call's turn, tool, arguments and result (or
    error); None for a record of another strategy."""
    loop = record.artifacts.get("tools")
    if not isinstance(loop, dict):
        return None
    head = (f"{loop.get('turns', 0)} model calls, {loop.get('calls', 0)} tool calls ({loop.get('errors', 0)} failed), "
            f"{loop.get('protocol', '?')} protocol" + ("; stopped at the turn limit" if loop.get("turn_limit") else ""))
    lines = [head]
    for call in loop.get("trace") or []:
        outcome = f"error: {call.get('error')}" if call.get("error") else call.get("result", "")
        lines += ["", f"── turn {call.get('turn')}: {call.get('tool')} ({call.get('seconds', 0):.3f} s) ──",
                  str(call.get("arguments", "")), "→", str(outcome)]
    if loop.get("calls", 0) > len(loop.get("trace") or []):
        lines += ["", f"(the first {len(loop.get('trace') or [])} of {loop.get('calls')} calls are kept)"]
    return clip("\n".join(lines), max_text)


def _tokens(record: SampleRecord) -> str | None:
    """The record's usage as the sample browser shows it (None for records written before usage was kept)."""
    if record.usage is None:
        return None
    text = f"made: {usage_text(record.usage)}"
    if record.reused_usage is not None and record.reused_usage.calls:
        text += f"\nfrom the response cache (not paid again): {usage_text(record.reused_usage)}"
    return text


def _finite(obj: Any) -> Any:
    """``obj`` with NaN and infinities replaced by None (JSON.parse rejects them)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def script_json(data: Any) -> str:
    """JSON safe to place inside a ``<script>`` element."""
    try:
        text = json.dumps(data, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(data), ensure_ascii=False, default=str, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _anchors(sections: Sequence[Section]) -> dict[int, str]:
    """A unique HTML id per section."""
    taken: set[str] = {"details", "samples"}
    out: dict[int, str] = {}

    def walk(s: Section) -> None:
        base = s.anchor
        name, k = base, 2
        while name in taken:
            name, k = f"{base}-{k}", k + 1
        taken.add(name)
        out[id(s)] = name
        for c in s.children:
            walk(c)

    for s in sections:
        walk(s)
    return out


def _kind(block: object) -> str:
    if isinstance(block, TableBlock):
        return "table"
    return "figure" if isinstance(block, FigureBlock) else "text"


def render_html(
    doc: Document, views: Sequence[EntryView], *, samples: bool = True, max_text: int = DEFAULT_MAX_TEXT,
    texts: int = DEFAULT_TEXTS,
) -> str:
    """The whole report as one HTML string."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("structbench.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    anchors = _anchors(doc.sections)
    env.globals.update(anchor=lambda s: anchors[id(s)], kind=_kind)
    browser = script_json(browser_payload(views, max_text, texts)) if samples else None
    return env.get_template("report.html.j2").render(
        doc=doc,
        version=__version__,
        main_sections=[s for s in doc.sections if not s.collapsed],
        detail_sections=[s for s in doc.sections if s.collapsed],
        browser=browser,
    )
