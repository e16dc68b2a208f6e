"""Markdown: the summary printed after a run, and the Markdown twin of the full report. What comes from a run
(names, categories, reasons) is written through ``core.mdtext``: text, never Markdown or HTML."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from structbench.backends.usage import totals_cell, totals_text
from structbench.core.mdtext import md_block, md_inline
from structbench.report.document import Document, Section, TableBlock, TextBlock
from structbench.runfiles.cells import cell_text
from structbench.runfiles.results import (
    CORRECTED,
    EXCLUDED,
    TOO_LONG_MEANING,
    TURN_LIMIT_MEANING,
    TURN_LIMIT_SCORED_MEANING,
    MetricsFile,
    ResultEntry,
    Robustness,
    at_turn_limit,
    missing_left_out,
    turn_limit_cell,
)
from structbench.stats.confusion import ConfusionMatrix


def _fmt(value: float | None) -> str:
    """Four decimals; ``–`` for no value (nothing scored)."""
    return "–" if value is None else f"{value:.4f}"


def _interval(r: ResultEntry) -> str:
    h = r.headline
    if h.ci_low is None or h.ci_high is None:
        return "–"
    return f"[{_fmt(h.ci_low)}, {_fmt(h.ci_high)}]"


def _baselines(r: ResultEntry) -> str:
    return ", ".join(f"{name} {_fmt(value)}" for name, value in r.baselines.items()) or "–"


CUT_OFF = "cut off in thought"
TURN_LIMIT = "at turn limit"
"""The column of samples whose tool loop reached its turn limit without an answer (``ResultEntry.turn_limit``)."""
"""The column of samples left without an answer because the replies ran out of tokens inside their thoughts; shown
only when a result has such samples (or such replies)."""


def any_cut_off(results: list[ResultEntry]) -> bool:
    """Whether any result had replies that ended inside their thought (the tables then show the count)."""
    return any(r.reasoning_cut_off or r.replies_cut_off for r in results)


def _epochs(r: ResultEntry) -> int:
    return r.epochs.count if r.epochs else 1


TOKENS = "tokens, cost"
"""The compact usage column: the calls' prompt and completion tokens, their cost at the run's prices, and the tokens
answered from the response cache; shown where results have usage."""


def any_usage(results: list[ResultEntry]) -> bool:
    """Whether any result kept its calls' usage (the tables then show ``TOKENS``)."""
    return any(r.usage is not None for r in results)


@dataclass(frozen=True)
class Grid:
    """A table as text cells: its columns, its rows, and the columns that name and score an entry (``key``: what a
    narrow terminal must show whole, ``report.terminal``); the others are the details."""

    columns: list[str]
    rows: list[list[str]]
    key: tuple[str, ...]
    names: list[str]
    """Each row's entry as notes name it: ``benchmark:variant[cell]/strategy``."""


def pipe_table(grid: Grid) -> str:
    """A ``Grid`` as a Markdown pipe table (its cells are text: names from the run among them)."""
    lines = ["| " + " | ".join(map(md_inline, grid.columns)) + " |", "|" + "---|" * len(grid.columns)]
    lines += ["| " + " | ".join(map(md_inline, row)) + " |" for row in grid.rows]
    return "\n".join(lines)


def headline_grid(metrics: MetricsFile) -> Grid:
    """One row per (benchmark, variant, strategy, model): the headline with its interval and what the interval
    resampled (the benchmark's clusters: 208 tables), its denominator (samples scored, model and harness errors;
    prompts too long for the model and samples whose replies ran out of tokens inside the model's thought, when
    there are any), and the baselines to read it against."""
    confidence = next((r.headline.confidence for r in metrics.results if r.headline.confidence), 0.95)
    too_long = any(r.too_long for r in metrics.results)
    turns = any(at_turn_limit(r) for r in metrics.results)
    cut = any_cut_off(metrics.results)
    usage = any_usage(metrics.results)
    cells = any(r.cell for r in metrics.results)
    axes = {(s.benchmark, s.variant, s.strategy, s.model): list(s.axes) for s in metrics.robustness}
    interval = f"{confidence:.0%} CI"
    columns = ["benchmark", "variant", "strategy", *(["cell"] if cells else []), "model", "metric", "value", interval,
               "resampled", "n", "errors", "harness errors", *(["too long"] if too_long else []),
               *([TURN_LIMIT] if turns else []), *([CUT_OFF] if cut else []), "baselines", *([TOKENS] if usage else [])]
    rows, names = [], []
    for r in metrics.results:
        cell = [cell_text(r.cell, axes.get((r.benchmark, r.variant, r.strategy, r.model), ()))] if cells else []
        names.append(f"{r.benchmark}:{r.variant}{f' [{cell[0]}]' if r.cell else ''}/{r.strategy}")
        rows.append([
            r.benchmark, r.variant, r.strategy, *cell, r.model, r.headline.name, _fmt(r.headline.value),
            _interval(r), r.headline.resampled(_epochs(r)), str(r.n), str(r.errors), str(r.harness_errors),
            *([str(r.too_long)] if too_long else []), *([turn_limit_cell(r)] if turns else []),
            *([str(r.reasoning_cut_off)] if cut else []), _baselines(r),
            *([totals_cell(r.usage)] if usage else []),
        ])
    key = ("benchmark", "variant", "strategy", *(["cell"] if cells else []), "metric", "value", interval, "n")
    return Grid(columns, rows, key, names)


def headline_table(metrics: MetricsFile) -> str:
    """``headline_grid`` as a pipe table, and the robustness table of a run with sweeps under it."""
    out = pipe_table(headline_grid(metrics))
    if metrics.robustness:
        out += "\n\n" + pipe_table(robustness_grid(metrics.robustness))
    return out


def robustness_grid(summaries: list[Robustness]) -> Grid:
    """One row per swept (benchmark, variant, strategy, model): the reference cell, the worst cell's headline (the
    robustness score), best, spread and mean absolute deviation, and how many cells differ from the reference."""
    columns = ["benchmark", "strategy", "model", "metric", "cells", "reference", "robustness (worst cell)",
               "best cell", "spread", "MAD", "differ from reference"]
    rows = []
    for s in summaries:
        ref = next((c for c in s.cells if c.reference), None)
        shared = f"; on {s.shared} shared samples" if s.fewer_shared else ""
        worst = f"{_fmt(s.score)} ({s.shown(s.worst)}{shared})" if s.score is not None else "–"
        best = f"{_fmt(s.best_value)} ({s.shown(s.best)})" if s.best_value is not None else "–"
        tested = sum(c.p_adjusted is not None for c in s.cells)
        correction = {"holm": "Holm", "bh": "BH"}.get(s.correction, s.correction)
        rows.append([
            f"{s.benchmark}:{s.variant}", s.strategy, s.model, s.metric, str(len(s.cells)),
            f"{s.shown(s.reference)} {_fmt(ref.value if ref else None)}", worst, best, _fmt(s.spread), _fmt(s.mad),
            f"{s.significant} of {tested} ({correction}, α = {s.alpha:g})",
        ])
    names = [f"{s.benchmark}:{s.variant}/{s.strategy}" for s in summaries]
    return Grid(columns, rows, ("benchmark", "strategy", "metric", "robustness (worst cell)"), names)


UNCLOSED_MEANING = (
    "ended (finish_reason stop) inside a thought the model never closed: no token budget ran out, so a larger "
    "--reasoning-budget will not help; the model's closing tag is likely not the one split on (--think-tags), or the "
    "chat template opened a thought the model did not think in (--thought-opened, a template's thinking switch)")
"""What replies the model ended itself inside an unclosed thought mean (``replies_unclosed``)."""


UNCLOSED_UNKNOWN = (
    "end inside a thought never closed, and a predictions file keeps no finish reasons to say why: the model's closing "
    "tag may not be the one split on (--think-tags), the chat template may have opened a thought the model did not "
    "think in (--thought-opened, a template's thinking switch), or the replies ran out of tokens where they were "
    "generated")
"""What outputs of a predictions file (``score``) that end inside an unclosed thought may mean: without finish
reasons, a thought the model never closed cannot be told from one cut off by its budget."""


def cut_off_note(r: ResultEntry, *, finish_reasons: bool = True) -> str | None:
    """What a result's replies that ended inside the model's thought mean, or None when there were none: out of
    tokens (raise ``--reasoning-budget``), or stopped by the model without closing the thought (``replies_unclosed``:
    the tags or the template). ``finish_reasons`` False (``score``: outputs written elsewhere, without them): the
    two cannot be told apart, and no run's budget can be raised."""
    if not r.reasoning_cut_off and not r.replies_cut_off:
        return None
    unclosed = min(r.replies_unclosed, r.replies_cut_off)
    scored = "They are scored as replies without an answer, never parsed from the thought"
    if not finish_reasons:
        replies = f" ({r.replies_cut_off} replies in all)" if r.replies_cut_off != r.reasoning_cut_off else ""
        return (f"{r.reasoning_cut_off} of {r.n} sample(s) got no answer: their outputs{replies} {UNCLOSED_UNKNOWN}. "
                f"{scored}.")
    if not unclosed:
        replies = f" ({r.replies_cut_off} replies in all)" if r.replies_cut_off != r.reasoning_cut_off else ""
        return (f"{r.reasoning_cut_off} of {r.n} sample(s) got no answer: the model's replies ran out of tokens inside "
                f"its thought{replies}. {scored}; give the model room to think with --reasoning-budget N.")
    ran_out = r.replies_cut_off - unclosed
    why = f"{unclosed} of the model's replies {UNCLOSED_MEANING}"
    if ran_out:
        why += (f"; {ran_out} more ran out of tokens inside the thought (give the model room to think with "
                "--reasoning-budget N)")
    return f"{r.reasoning_cut_off} of {r.n} sample(s) got no answer: {why}. {scored}."


def confusion_markdown(name: str, cm: ConfusionMatrix) -> list[str]:
    """A confusion matrix as a pipe table: gold rows, predicted columns."""
    out = [f"*Confusion matrix ({md_inline(cm.title or name)}), {cm.total} samples*", ""]
    out.append("| | " + " | ".join(f"pred: {md_inline(p)}" for p in cm.predicted) + " |")
    out.append("|---|" + "---|" * len(cm.predicted))
    out.extend(f"| gold: {md_inline(g)} | " + " | ".join(map(str, row)) + " |"
               for g, row in zip(cm.gold, cm.counts, strict=True))
    return out


def entry_section(r: ResultEntry, *, finish_reasons: bool = True) -> str:
    """All metrics of one entry and one table per breakdown (``finish_reasons``: as ``cut_off_note`` takes it)."""
    cell = f" [{cell_text(r.cell)}]" if r.cell else ""
    out = [f"## {md_inline(f'{r.benchmark}:{r.variant} / {r.strategy}{cell} / {r.model}')}", ""]
    out.append("| metric | value |")
    out.append("|---|---|")
    out.extend(f"| {md_inline(k)} | {_fmt(v)} |" for k, v in r.metrics.items())
    if r.headline.unit is not None:
        out += ["", f"Interval: {r.headline.resampled(_epochs(r))} resampled ({_interval(r)})."]
    if r.epochs is not None:
        out += ["", _epoch_line(r)]
    if r.n == 0:
        out += ["", "No sample was scored, so there is no metric."]
    if r.missing:
        out += ["", f"{len(r.missing)} sample(s) had no prediction and are left out: n and the metrics count only "
                "the predictions given (score --missing skip)." if missing_left_out(r) else
                f"{len(r.missing)} sample(s) had no prediction and count as wrong: scored as empty replies, in n."]
    if r.harness_errors:
        out += ["", f"{r.harness_errors} sample(s) failed with a harness error (a bug in a strategy, parser or "
                "scorer): not scored, and left out of every metric."]
    if r.too_long:
        out += ["", f"{r.too_long} sample(s) {TOO_LONG_MEANING}."]
    if r.turn_limit:
        out += ["", f"{r.turn_limit} sample(s) {TURN_LIMIT_MEANING}."]
    if r.turn_limit_scored:
        out += ["", f"{r.turn_limit_scored} of {r.n} sample(s) {TURN_LIMIT_SCORED_MEANING}."]
    note = cut_off_note(r, finish_reasons=finish_reasons)
    if note is not None:
        out += ["", note]
    if r.usage is not None:
        priced = "the run's prices" if r.usage.cost_usd is not None else None
        out += ["", f"Usage: {totals_text(r.usage, priced)}."]
    for e in r.extra.get(EXCLUDED, []):
        out += ["", f"Left out: {md_inline(str(e.get('count')))} {md_inline(str(e.get('reason')))}."]
    corrected = r.extra.get(CORRECTED)
    if corrected:
        options = md_inline(", ".join(f"{k}={v}" for k, v in corrected["options"].items()))
        out += ["", f"Scored as the paper's released code scored (its bug-compatible options); structbench's corrected "
                f"scoring of the same outputs ({options}):", "", "| metric | corrected value |", "|---|---|"]
        out.extend(f"| {md_inline(k)} | {_fmt(v)} |" for k, v in corrected["metrics"].items())
    for name, cm in r.confusion_matrices.items():
        out += ["", *confusion_markdown(name, cm)]
    for key, groups in r.breakdowns.items():
        names = list(dict.fromkeys(name for g in groups.values() for name in g.metrics))
        head = " | ".join(map(md_inline, names))
        out += ["", f"### by {md_inline(key)}", "", f"| {md_inline(key)} | n | {head} |"]
        out.append("|---|---|" + "---|" * len(names))
        for value, g in groups.items():
            cells = (_fmt(g.metrics[n]) if n in g.metrics else "–" for n in names)  # – : does not apply
            out.append(f"| {md_inline(value)} | {g.n} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _epoch_line(r: ResultEntry) -> str:
    """How the epochs went: each one's headline, and how often a sample's answers agreed."""
    assert r.epochs is not None
    values = ", ".join(_fmt(v) for v in r.epochs.values)
    agree = "–" if r.epochs.agreement is None else f"{r.epochs.agreement:.1%}"
    return (f"{r.epochs.count} epochs: {r.headline.name} per epoch {values} (the headline is their mean); "
            f"samples answered alike in every epoch: {agree}.")


def render(metrics: MetricsFile, title: str = "structbench report", *, finish_reasons: bool = True) -> str:
    """The whole Markdown report (``finish_reasons`` False: of ``score``'s predictions, ``cut_off_note``)."""
    parts = [f"# {md_inline(title)}", "", headline_table(metrics), ""]
    parts.extend(entry_section(r, finish_reasons=finish_reasons) + "\n" for r in metrics.results)
    return "\n".join(parts)


def table_markdown(t: TableBlock) -> str:
    """A ``TableBlock`` as a pipe table (bold cells in ``**``), with its caption above and note below; every text in
    it is text (``md_inline``, ``md_block``)."""
    out = [f"*{md_block(t.caption)}*", ""] if t.caption else []
    out.append("| " + " | ".join(md_inline(c) or " " for c in t.columns) + " |")
    out.append("|" + "---|" * len(t.columns))
    for i, row in enumerate(t.rows):
        cells = [f"**{md_inline(c)}**" if (i, j) in t.bold else md_inline(c) for j, c in enumerate(row)]
        out.append("| " + " | ".join(cells) + " |")
    if t.note:
        out += ["", md_block(t.note)]
    return "\n".join(out)


def render_document(doc: Document, figure_dir: Path | None = None, figure_link: str = "") -> str:
    """The report as Markdown. Figures are written as SVG files into ``figure_dir`` and linked as
    ``figure_link/<name>.svg``; without ``figure_dir`` they are left out. The document is plain text (as the HTML
    report escapes it): each of its texts is written as text, around the headings and tables made here."""
    parts = [f"# {md_inline(doc.title)}", ""]
    parts += [f"> {md_block(note)}" for note in doc.notes]
    if doc.notes:
        parts.append("")

    def emit(section: Section, level: int) -> None:
        parts.extend([f"{'#' * level} {md_inline(section.title)}", ""])
        for block in section.blocks:
            if isinstance(block, TableBlock):
                parts.extend([table_markdown(block), ""])
            elif isinstance(block, TextBlock):
                parts.extend([md_block(block.text), ""])
            elif figure_dir is not None:
                figure_dir.mkdir(parents=True, exist_ok=True)
                (figure_dir / f"{block.name}.svg").write_text(block.svg)
                alt = md_inline(block.caption.replace("[", "(").replace("]", ")"))  # no bracket ends it
                parts.extend([f"![{alt}]({figure_link}/{block.name}.svg)", ""])
        for child in section.children:
            emit(child, min(level + 1, 6))

    for section in doc.sections:
        emit(section, 2)
    return "\n".join(parts).rstrip() + "\n"
