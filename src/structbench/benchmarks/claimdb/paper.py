"""ClaimDB's results table (30 tool-calling agents on the public test set), its preset and how a run fills it."""

from __future__ import annotations

from pathlib import Path

from structbench.papers.spec import Measure, PaperTable, Preset, RunRow

PUBLISHED = Path(__file__).parent / "published"
COLUMNS = (*(f"{m}_{k}" for m in ("precision", "recall", "f1") for k in ("entailed", "contradicted", "nei")),
           "macro_f1", "accuracy")

RESULTS = PaperTable(
    benchmark="claimdb",
    path=PUBLISHED / "results.json",
    preset=Preset(
        name="claimdb-results",
        description="ClaimDB's results table: the public test claims, an agent with its database's execute-sql tool, "
        "at most 20 turns, the paper's prompt, verdicts read and runs that fail counted as the released code does",
        benches=("claimdb:test",),
        strategies=("tools",),
        options={"verdicts": "strict", "turn_limit": "wrong"},
        differences="The paper ran the OpenAI Agents SDK and MCP Toolbox, whose tool returns every row as JSON; here "
        "the same tool returns at most 50 rows (and 4,000 characters) as JSON, each query sandboxed with a time "
        "limit. Decoding is each server's default in the paper, greedy here.",
        scoring="The released code scores verdict == label, a run without a verdict (no JSON object, the turn limit, "
        "an error) as the empty verdict: the preset reads only a JSON verdict written as the labels are, and counts "
        "a loop at the turn limit as wrong; structbench's default also reads verdicts in prose and counts such "
        "loops apart.",
    ),
    rows=(RunRow({key: Measure("tools", key, variant="test") for key in COLUMNS}),),
    plot=("accuracy", "macro_f1"),
    variants=("test",),
    requires={"turn_limit": "wrong"},
)

TABLES = (RESULTS,)
