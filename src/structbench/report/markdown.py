"""Markdown: the summary printed after a run, and the Markdown twin of the full report."""

from __future__ import annotations

from pathlib import Path

from structbench.confusion import ConfusionMatrix
from structbench.report.document import Document, Section, TableBlock, TextBlock
from structbench.results import EXCLUDED, MetricsFile, ResultEntry


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


def _epochs(r: ResultEntry) -> int:
    return r.epochs.count if r.epochs else 1


def headline_table(metrics: MetricsFile) -> str:
    """One row per (benchmark, variant, strategy, model): the headline with its interval and what the interval
    resampled (the benchmark's clusters: 208 tables), its denominator (samples scored, model and harness errors),
    and the baselines to read it against."""
    confidence = next((r.headline.confidence for r in metrics.results if r.headline.confidence), 0.95)
    rows = [
        f"| benchmark | variant | strategy | model | metric | value | {confidence:.0%} CI | resampled | n | errors "
        "| harness errors | baselines |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in metrics.results:
        rows.append(
            f"| {r.benchmark} | {r.variant} | {r.strategy} | {r.model} | {r.headline.name} | "
            f"{_fmt(r.headline.value)} | {_interval(r)} | {r.headline.resampled(_epochs(r))} | {r.n} | {r.errors} | "
            f"{r.harness_errors} | {_baselines(r)} |"
        )
    return "\n".join(rows)


def confusion_markdown(name: str, cm: ConfusionMatrix) -> list[str]:
    """A confusion matrix as a pipe table: gold rows, predicted columns."""
    out = [f"*Confusion matrix ({cm.title or name}), {cm.total} samples*", ""]
    out.append("| | " + " | ".join(f"pred: {p}" for p in cm.predicted) + " |")
    out.append("|---|" + "---|" * len(cm.predicted))
    out.extend(f"| gold: {g} | " + " | ".join(map(str, row)) + " |" for g, row in zip(cm.gold, cm.counts, strict=True))
    return out


def entry_section(r: ResultEntry) -> str:
    """All metrics of one entry and one table per breakdown."""
    out = [f"## {r.benchmark}:{r.variant} / {r.strategy} / {r.model}", ""]
    out.append("| metric | value |")
    out.append("|---|---|")
    out.extend(f"| {k} | {_fmt(v)} |" for k, v in r.metrics.items())
    if r.headline.unit is not None:
        out += ["", f"Interval: {r.headline.resampled(_epochs(r))} resampled ({_interval(r)})."]
    if r.epochs is not None:
        out += ["", _epoch_line(r)]
    if r.n == 0:
        out += ["", "No sample was scored, so there is no metric."]
    if r.missing:
        out += ["", f"{len(r.missing)} sample(s) had no prediction and count as wrong."]
    if r.harness_errors:
        out += ["", f"{r.harness_errors} sample(s) failed with a harness error (a bug in a strategy, parser or "
                "scorer): not scored, and left out of every metric."]
    for e in r.extra.get(EXCLUDED, []):
        out += ["", f"Left out: {e.get('count')} {e.get('reason')}."]
    for name, cm in r.confusion_matrices.items():
        out += ["", *confusion_markdown(name, cm)]
    for key, groups in r.breakdowns.items():
        names = list(dict.fromkeys(name for g in groups.values() for name in g.metrics))
        out += ["", f"### by {key}", "", f"| {key} | n | " + " | ".join(names) + " |"]
        out.append("|---|---|" + "---|" * len(names))
        for value, g in groups.items():
            cells = (_fmt(g.metrics[n]) if n in g.metrics else "–" for n in names)  # – : does not apply
            out.append(f"| {value} | {g.n} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _epoch_line(r: ResultEntry) -> str:
    """How the epochs went: each one's headline, and how often a sample's answers agreed."""
    assert r.epochs is not None
    values = ", ".join(_fmt(v) for v in r.epochs.values)
    agree = "–" if r.epochs.agreement is None else f"{r.epochs.agreement:.1%}"
    return (f"{r.epochs.count} epochs: {r.headline.name} per epoch {values} (the headline is their mean); "
            f"samples answered alike in every epoch: {agree}.")


def render(metrics: MetricsFile, title: str = "structbench report") -> str:
    """The whole Markdown report."""
    parts = [f"# {title}", "", headline_table(metrics), ""]
    parts.extend(entry_section(r) + "\n" for r in metrics.results)
    return "\n".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table_markdown(t: TableBlock) -> str:
    """A ``TableBlock`` as a pipe table (bold cells in ``**``), with its caption above and note below."""
    out = [f"*{t.caption}*", ""] if t.caption else []
    out.append("| " + " | ".join(_cell(c) or " " for c in t.columns) + " |")
    out.append("|" + "---|" * len(t.columns))
    for i, row in enumerate(t.rows):
        cells = [f"**{_cell(c)}**" if (i, j) in t.bold else _cell(c) for j, c in enumerate(row)]
        out.append("| " + " | ".join(cells) + " |")
    if t.note:
        out += ["", t.note]
    return "\n".join(out)


def render_document(doc: Document, figure_dir: Path | None = None, figure_link: str = "") -> str:
    """The report as Markdown. Figures are written as SVG files into ``figure_dir`` and linked as
    ``figure_link/<name>.svg``; without ``figure_dir`` they are left out."""
    parts = [f"# {doc.title}", ""]
    parts += [f"> {note}" for note in doc.notes]
    if doc.notes:
        parts.append("")

    def emit(section: Section, level: int) -> None:
        parts.extend([f"{'#' * level} {section.title}", ""])
        for block in section.blocks:
            if isinstance(block, TableBlock):
                parts.extend([table_markdown(block), ""])
            elif isinstance(block, TextBlock):
                parts.extend([block.text, ""])
            elif figure_dir is not None:
                figure_dir.mkdir(parents=True, exist_ok=True)
                (figure_dir / f"{block.name}.svg").write_text(block.svg)
                parts.extend([f"![{block.caption}]({figure_link}/{block.name}.svg)", ""])
        for child in section.children:
            emit(child, min(level + 1, 6))

    for section in doc.sections:
        emit(section, 2)
    return "\n".join(parts).rstrip() + "\n"
