"""The report's "Paper tables" section: each paper table the runs fill (``report.paper``), its figure
(``report.paper_plots``) and the notes on how it was transcribed and run."""

from __future__ import annotations

from collections.abc import Sequence

from structbench.report.document import Block, FigureBlock, Section, TextBlock, slug
from structbench.report.entries import EntryView, StatsOptions
from structbench.report.paper import FilledTable, fill_tables, run_notes, table_block
from structbench.report.paper_plots import placement_figure
from structbench.report.rundir import RunDir


def paper_sections(
    views: Sequence[EntryView], runs: Sequence[RunDir], stats: StatsOptions, *, figures: bool = True
) -> list[Section]:
    """One section per paper table the runs fill, under a "Paper tables" heading (none when nothing fills)."""
    filled = fill_tables(views, runs, stats)
    if not filled:
        return []
    children = []
    for f in filled:
        data = f.data
        blocks: list[Block] = [TextBlock(_setting(f)), table_block(f, stats)]
        blocks += [TextBlock(line) for line in run_notes(f)]
        if figures and f.rows and f.table.plot:
            name = slug(f"paper-{f.table.name}")
            svg = placement_figure(f, name)
            if svg is not None:
                blocks.append(FigureBlock(svg, f"{data.source}: the runs (colour, with intervals) among the "
                                               "published models (grey)", name))
        notes: list[Block] = [TextBlock(f"Preset: {f.table.preset.differences}")] if f.table.preset.differences else []
        notes += [TextBlock(n) for n in data.notes]
        folded = Section(f"{data.source}: transcription and preset notes", notes, collapsed=True)
        children.append(Section(f"{data.source} — {data.caption}", blocks, [folded]))
    intro = TextBlock(
        "Each table as the paper prints it, with every run's model added as a row computed the paper's way "
        "(same columns, option orders averaged, Overall and Avg. columns as means)."
    )
    return [Section("Paper tables", [intro], children)]


def _setting(f: FilledTable) -> str:
    data = f.data
    setting = "; ".join(f"{k}: {v}" for k, v in data.setting.items())
    return f"{data.paper}. Setting: {setting}. Preset: {f.table.preset.description}."
