"""Assemble the report document: an overview, one section per benchmark variant, then per-entry details."""

from __future__ import annotations

from collections.abc import Sequence

from structbench.backends.usage import totals_text
from structbench.report.document import Block, Document, FigureBlock, Section, TableBlock, TextBlock, slug
from structbench.report.entries import EntryView
from structbench.report.markdown import cut_off_note
from structbench.report.plots import (
    HEATMAPS,
    MAX_PANELS,
    breakdown_figure,
    confusion_figure,
    heatmap_figure,
    label_figure,
    plot_for,
)
from structbench.report.querying import querying_section
from structbench.report.tables import (
    breakdown_pivot,
    confusion_table,
    confusions,
    exclusion_table,
    fmt,
    group_order,
    headline_pivot,
    label_table,
    metrics_table,
    overview_table,
    unique,
)
from structbench.runfiles.results import (
    EXCLUDED,
    TOO_LONG_MEANING,
    TURN_LIMIT_MEANING,
    TURN_LIMIT_SCORED_MEANING,
    at_turn_limit,
    turn_limit_cell,
)


def build_document(
    views: Sequence[EntryView], title: str, notes: Sequence[str] = (), *, figures: bool = True
) -> Document:
    """The whole report over ``views`` (entries of one or more runs)."""
    sections = [Section("Overview", [overview_table(views)])]
    for name in unique(v.section for v in views):
        sections.append(benchmark_section(name, [v for v in views if v.section == name], figures=figures))
    sections.extend(entry_section(v) for v in views)
    return Document(title, sections, list(notes))


def benchmark_section(name: str, views: list[EntryView], *, figures: bool) -> Section:
    """Paper-style tables and figures for one benchmark variant."""
    bench = next((v.bench for v in views if v.bench is not None), None)
    title = f"{name}" + (f" — {bench.title}" if bench is not None else "")
    section = Section(title, [headline_pivot(views), metrics_table(views)])
    excluded = exclusion_table(views)
    if excluded is not None:
        section.blocks.append(excluded)
    keys = unique(k for v in views for k in v.result.breakdowns)
    for key in keys:
        child = Section(f"{name} by {key}")
        table = breakdown_pivot(views, key)
        if table is not None:
            child.blocks.append(table)
        groups = unique(g for v in views for g in v.result.breakdowns.get(key, {}))
        spec = plot_for(key, groups)
        if figures and spec is not None:
            made = breakdown_figure(views, key, spec, slug(f"{name}-{key}"))
            if made is not None:
                svg, metric = made
                child.blocks.append(FigureBlock(svg, f"{metric} vs {spec.xlabel}", slug(f"{name}-by-{key}")))
        section.children.append(child)
    if figures:
        section.children += heatmap_sections(name, views, keys)
    querying = querying_section(name, views)
    if querying is not None:
        section.children.append(querying)
    confusion = confusion_section(name, views, figures=figures)
    if confusion is not None:
        section.children.append(confusion)
    labels = label_section(name, views, figures=figures)
    if labels is not None:
        section.children.append(labels)
    return section


def heatmap_sections(name: str, views: list[EntryView], keys: list[str]) -> list[Section]:
    """A heatmap section for each pair of ``HEATMAPS`` whose keys are both breakdown keys here."""
    out = []
    for pair, caption in HEATMAPS.items():
        if not all(k in keys for k in pair):
            continue
        stem = slug(f"{name}-{pair[0]}-x-{pair[1]}")
        svg = heatmap_figure(views, pair, caption, stem)
        if svg is not None:
            text = caption.format(metric=views[0].result.headline.name)
            out.append(Section(f"{name} by {pair[0]} × {pair[1]}", [FigureBlock(svg, text, stem)]))
    return out


def confusion_section(name: str, views: list[EntryView], *, figures: bool) -> Section | None:
    """Every entry's confusion matrices (``confusion_matrices``): one figure, then the tables (folded in HTML)."""
    tables: list[Block] = [confusion_table(v, title, cm) for v in views for title, cm in confusions(v)]
    if not tables:
        return None
    stem = slug(f"{name}-confusion")
    svg = confusion_figure(views, stem) if figures else None
    blocks: list[Block] = []
    if svg is not None:
        shown = min(len(tables), MAX_PANELS)
        caption = f"Confusion matrices (rows: gold, columns: predicted), {shown} of {len(tables)}"
        blocks.append(FigureBlock(svg, caption, stem))
    folded = Section(f"{name} confusion matrix tables", tables, collapsed=True)
    return Section(f"{name} confusion matrices", blocks, [folded])


def label_section(name: str, views: list[EntryView], *, figures: bool) -> Section | None:
    """How often each label was predicted, when parsed answers are a few labels."""
    table = label_table(views)
    if table is None:
        return None
    blocks: list[Block] = [table]
    stem = slug(f"{name}-labels")
    svg = label_figure(views, stem) if figures else None
    if svg is not None:
        blocks.insert(0, FigureBlock(svg, "Predicted labels per model and strategy, and gold", stem))
    return Section(f"{name} predicted labels", blocks)


def entry_section(v: EntryView) -> Section:
    """Every metric of one entry, overall and per breakdown group (folded in HTML)."""
    r = v.result
    overall = TableBlock(["metric", "value"], [[k, fmt(x)] for k, x in r.metrics.items()])
    section = Section(f"{v.section} / {v.strategy} / {v.label}", [overall], collapsed=True)
    section.blocks.append(
        TextBlock(f"run directory: {v.run}; n = {r.n}; errors = {r.errors}; harness errors = {r.harness_errors}"
                  + (f"; too long = {r.too_long}" if r.too_long else "")
                  + (f"; at the turn limit = {turn_limit_cell(r)}" if at_turn_limit(r) else ""))
    )
    if r.too_long:
        section.blocks.append(TextBlock(f"{r.too_long} sample(s) {TOO_LONG_MEANING}."))
    if r.turn_limit:
        section.blocks.append(TextBlock(f"{r.turn_limit} sample(s) {TURN_LIMIT_MEANING}."))
    if r.turn_limit_scored:
        section.blocks.append(TextBlock(f"{r.turn_limit_scored} of {r.n} sample(s) {TURN_LIMIT_SCORED_MEANING}."))
    if v.no_interval is not None:
        section.blocks.append(TextBlock(f"no confidence interval for {r.headline.name}: {v.no_interval}"))
    note = cut_off_note(r)
    if note is not None:
        section.blocks.append(TextBlock(note))
    if r.usage is not None:
        priced = "the run's prices" if r.usage.cost_usd is not None else None
        section.blocks.append(TextBlock(f"usage: {totals_text(r.usage, priced)}"))
    for e in r.extra.get(EXCLUDED, []):
        section.blocks.append(TextBlock(f"left out: {e.get('count')} {e.get('reason')}"))
    if r.missing:
        section.blocks.append(TextBlock(f"{len(r.missing)} sample(s) had no prediction and count as wrong."))
    for key, groups in r.breakdowns.items():
        names = unique(n for g in groups.values() for n in g.metrics)
        rows = [
            [value, str(g.n), *(fmt(g.metrics.get(n)) for n in names)]
            for value, g in sorted(groups.items(), key=lambda kv: group_order(kv[0]))
        ]
        section.children.append(Section(f"by {key}", [TableBlock([key, "n", *names], rows)]))
    return section
