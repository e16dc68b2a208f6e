"""Entry points: read run directories and write the HTML report with its Markdown twin."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from structbench.core.atomic import json_text, write_texts_atomic
from structbench.core.errors import UsageError
from structbench.core.redact import redact
from structbench.report.build import build_document
from structbench.report.document import Document
from structbench.report.entries import EntryView, StatsOptions, collect
from structbench.report.html import DEFAULT_MAX_TEXT, DEFAULT_TEXTS, render_html
from structbench.report.leaderboard import leaderboard_section
from structbench.report.markdown import render_document
from structbench.report.paper_sections import paper_sections
from structbench.report.robustness import robustness_section
from structbench.report.runs import BenchmarkCache, isolation_note, load_runs

HTML_SUFFIXES = (".html", ".htm")


@dataclass(frozen=True)
class ReportOptions:
    """What goes into a report."""

    title: str | None = None
    stats: StatsOptions = field(default_factory=StatsOptions)
    samples: bool = True
    """Include the per-sample browser (HTML only)."""
    figures: bool = True
    max_text: int = DEFAULT_MAX_TEXT
    texts: int = DEFAULT_TEXTS
    """Samples of each entry whose prompt and replies the HTML's browser carries (the rest: their rows)."""


def prepare(run_dirs: Sequence[Path], options: ReportOptions) -> tuple[Document, list[EntryView]]:
    """Read the runs, compute headline statistics and lay out the document."""
    if not run_dirs:
        raise UsageError("give at least one run directory")
    runs = [run for p in run_dirs for run in load_runs(p)]
    benches = BenchmarkCache()
    views = collect(runs, options.stats, benches)
    notes = [
        f"{v.section}/{v.strategy}/{v.label}: no confidence interval for {v.result.headline.name}: {v.no_interval}."
        for v in views
        if v.no_interval is not None and v.result.n > 0
    ]
    notes += [
        f"{v.section}/{v.strategy}/{v.label}: no sample was scored (n = 0), so there is no metric; "
        f"{v.result.errors} model and {v.result.harness_errors} harness errors."
        for v in views
        if v.result.n == 0
    ]
    notes += [
        f"{v.section}/{v.strategy}/{v.label}: {v.result.harness_errors} sample(s) failed with a harness error "
        "(a bug in a strategy, parser or scorer) and are left out of every metric."
        for v in views
        if v.result.harness_errors
    ]
    notes += [
        f"{v.section}/{v.strategy}/{v.label}: {len(v.scored_records)} scored sample records for "
        + (f"{v.result.epochs.outcomes} answers ({v.result.n} samples x {v.result.epochs.count} epochs)."
           if v.result.epochs else f"n = {v.result.n}.")
        for v in views
        if len(v.scored_records) != (v.result.epochs.outcomes if v.result.epochs else v.result.n)
    ]
    notes += [note for note in map(isolation_note, runs) if note is not None]
    title = options.title or "structbench report: " + ", ".join(str(p) for p in run_dirs)
    doc = build_document(views, title, notes, figures=options.figures)
    board = leaderboard_section(views, options.stats)
    robust = robustness_section(views, runs, options.stats, figures=options.figures)
    papers = paper_sections(views, runs, options.stats, figures=options.figures)
    # the runs' own results first (the overview, how the models rank, each benchmark's tables and figures), then
    # their robustness and the papers' tables, then each entry's details
    details = next((i for i, s in enumerate(doc.sections) if s.collapsed), len(doc.sections))
    doc.sections[details:details] = [*([robust] if robust else []), *papers]
    doc.sections[1:1] = [board] if board else []
    return doc, views


def results_json(views: Sequence[EntryView]) -> dict[str, Any]:
    """Every entry with its metrics (headline statistics included) and the interval's parameters, or why it has
    no interval."""
    return {
        "results": [
            {
                **v.result.model_dump(),
                "run": str(v.run),
                "label": v.label,
                "interval": v.interval.as_dict() if v.interval else None,
                "no_interval": v.no_interval,
            }
            for v in views
        ]
    }


def write_report(
    run_dirs: Sequence[Path], out: Path, options: ReportOptions | None = None, *, json_out: Path | None = None
) -> list[Path]:
    """Write ``out`` (``.html``: the HTML report plus its Markdown twin ``.md``; ``.md``: Markdown only).

    The Markdown's figures go to ``<stem>_figures/`` beside it; the HTML embeds its own. ``json_out``
    also gets ``results_json``. Returns the files written."""
    options = options or ReportOptions()
    suffix = out.suffix.lower()
    if suffix not in (*HTML_SUFFIXES, ".md"):
        raise UsageError(f"--out {out}: expected a .html or .md file")
    doc, views = prepare(run_dirs, options)
    md_path = out.with_suffix(".md")
    figure_dir = out.parent / f"{out.stem}_figures"
    drafts = figure_dir.parent / f".{figure_dir.name}.part"  # the figures, moved into place with the texts
    try:
        markdown = render_document(doc, drafts if options.figures else None, figure_dir.name)
        texts = [(md_path, redact(markdown))]  # run directories written before redaction existed too
        if suffix in HTML_SUFFIXES:
            html = render_html(doc, views, samples=options.samples, max_text=options.max_text, texts=options.texts)
            texts.insert(0, (out, redact(html)))
        if json_out is not None:
            texts.append((json_out, json_text(results_json(views))))
        write_texts_atomic(texts)  # all or none
        if drafts.exists():
            shutil.rmtree(figure_dir, ignore_errors=True)
            os.replace(drafts, figure_dir)
    finally:
        shutil.rmtree(drafts, ignore_errors=True)
    return [path for path, _ in texts]


def html_report(run_dirs: Sequence[Path], options: ReportOptions | None = None) -> str:
    """The HTML report as a string (secrets redacted), written nowhere: what ``structbench view`` serves."""
    options = options or ReportOptions()
    doc, views = prepare(run_dirs, options)
    return redact(render_html(doc, views, samples=options.samples, max_text=options.max_text,
                                 texts=options.texts))


def markdown_report(run_dirs: Sequence[Path], options: ReportOptions | None = None) -> str:
    """The Markdown report without figures (for stdout)."""
    options = options or ReportOptions()
    doc, _ = prepare(run_dirs, ReportOptions(options.title, options.stats, options.samples, False, options.max_text,
                                             options.texts))
    return redact(render_document(doc))
