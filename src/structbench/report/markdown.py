"""A Markdown summary of a run: headline table, all metrics, and breakdowns."""

from __future__ import annotations

from structbench.results import MetricsFile, ResultEntry


def _fmt(value: float) -> str:
    return f"{value:.4f}"


def headline_table(metrics: MetricsFile) -> str:
    """One row per (benchmark, variant, strategy, model) with the headline metric."""
    rows = [
        "| benchmark | variant | strategy | model | metric | value | n | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in metrics.results:
        rows.append(
            f"| {r.benchmark} | {r.variant} | {r.strategy} | {r.model} | {r.headline.name} | "
            f"{_fmt(r.headline.value)} | {r.n} | {r.errors} |"
        )
    return "\n".join(rows)


def entry_section(r: ResultEntry) -> str:
    """All metrics of one entry and one table per breakdown."""
    out = [f"## {r.benchmark}:{r.variant} / {r.strategy} / {r.model}", ""]
    out.append("| metric | value |")
    out.append("|---|---|")
    out.extend(f"| {k} | {_fmt(v)} |" for k, v in r.metrics.items())
    if r.missing:
        out += ["", f"{len(r.missing)} sample(s) had no prediction and count as wrong."]
    for key, groups in r.breakdowns.items():
        names = list(next(iter(groups.values())).metrics) if groups else []
        out += ["", f"### by {key}", "", f"| {key} | n | " + " | ".join(names) + " |"]
        out.append("|---|---|" + "---|" * len(names))
        for value, g in groups.items():
            out.append(f"| {value} | {g.n} | " + " | ".join(_fmt(g.metrics.get(n, 0.0)) for n in names) + " |")
    return "\n".join(out)


def render(metrics: MetricsFile, title: str = "structbench report") -> str:
    """The whole Markdown report."""
    parts = [f"# {title}", "", headline_table(metrics), ""]
    parts.extend(entry_section(r) + "\n" for r in metrics.results)
    return "\n".join(parts)
