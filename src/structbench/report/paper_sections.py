"""The report's paper tables: each paper table the runs fill (``report.paper``), its figure
(``report.paper_plots``) and the notes on how it was transcribed and run; a table the runs fill only in part is
folded, its title saying how much they fill and how to fill the rest."""

from __future__ import annotations

from collections.abc import Sequence

from structbench.report.document import Block, FigureBlock, Section, TextBlock, slug
from structbench.report.entries import EntryView, StatsOptions
from structbench.report.paper import Filled, FilledTable, fill_tables, run_notes, table_block, whole_commands
from structbench.report.paper_plots import placement_figure
from structbench.runfiles.rundir import RunFiles


def paper_sections(
    views: Sequence[EntryView], runs: Sequence[RunFiles], stats: StatsOptions, *, figures: bool = True
) -> list[Section]:
    """The paper tables the runs fill: under "Paper tables", each table where some model's row is complete; under
    "Paper tables the runs fill in part", each other one folded, its one visible line saying how much the runs
    fill and the command that fills the whole table (none of either when nothing fills)."""
    filled = fill_tables(views, runs, stats)
    whole = [_table_section(f, stats, figures=figures) for f in filled if f.complete]
    part = [_table_section(f, stats, figures=figures, folded=True) for f in filled if not f.complete]
    out = []
    if whole:
        intro = TextBlock(
            "Each table as the paper prints it, with every run's model added as a row computed the paper's way "
            "(same columns, option orders averaged, Overall and Avg. columns as means)."
        )
        out.append(Section("Paper tables", [intro], whole))
    if part:
        intro = TextBlock(
            "Tables of the papers these runs cover a few columns of (their models' rows are mostly empty): each is "
            "folded, with the command that runs its whole configuration (the paper's preset) for a model."
        )
        out.append(Section("Paper tables the runs fill in part", [intro], part))
    return out


def _fill_line(f: FilledTable) -> str:
    """``SciTab Table 4: the runs fill 2 of 12 cells; the whole table: structbench run --model M --preset NAME``."""
    cells = sum(len(f.data.columns) for _ in f.rows)
    done = sum(isinstance(c, Filled) for _, row in f.rows for c in row.cells.values())
    command = next(iter(whole_commands(f).values()))
    return f"{f.data.source}: the runs fill {done} of {cells} cells; the whole table: {command}"


def _table_section(f: FilledTable, stats: StatsOptions, *, figures: bool, folded: bool = False) -> Section:
    """One paper table: its setting, the table with the runs' rows, the notes on the runs, its figure, and the
    transcription notes (folded); ``folded``: the whole section too, titled with ``_fill_line``."""
    data = f.data
    caption: list[Block] = [TextBlock(data.caption)] if folded else []  # its title is the fill line
    blocks: list[Block] = [*caption, TextBlock(_setting(f)), table_block(f, stats)]
    blocks += [TextBlock(line) for line in run_notes(f)]
    if figures and f.rows and f.table.plot:
        name = slug(f"paper-{f.table.name}")
        svg = placement_figure(f, name)
        if svg is not None:
            blocks.append(FigureBlock(svg, f"{data.source}: the runs (colour, with intervals) among the "
                                           "published models (grey)", name))
    notes: list[Block] = [TextBlock(f"Preset: {f.table.preset.differences}")] if f.table.preset.differences else []
    notes += [TextBlock(n) for n in data.notes]
    notes_section = Section(f"{data.source}: transcription and preset notes", notes, collapsed=True)
    title = _fill_line(f) if folded else f"{data.source} — {data.caption}"
    return Section(title, blocks, [notes_section], collapsed=folded)


def _setting(f: FilledTable) -> str:
    data = f.data
    setting = "; ".join(f"{k}: {v}" for k, v in data.setting.items())
    return f"{data.paper}. Setting: {setting}. Preset: {f.table.preset.description}."
