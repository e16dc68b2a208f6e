"""Program-of-thought: the reply becomes ``answer(df)``, runs in the sandbox on the table, and its value is scored."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.benchmarks.databench import DataBench
from structbench.benchmarks.databench.program import MARKER, extract_program
from structbench.contract.benchmark import Attempt
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample


@pytest.mark.parametrize(("reply", "how", "source"), [
    (" df.shape[0]\nThis counts the rows.", "expression", "def answer(df):\n    return df.shape[0]\n"),
    ("```python\ndf['trees'].max()\n```", "expression", "def answer(df):\n    return df['trees'].max()\n"),
    ("return df['trees'].max()", "expression", "def answer(df):\n    return df['trees'].max()\n"),
    ("Here:\n```py\ndef answer(df):\n    x = df['trees']\n    return x.max()\n```",
     "function", "def answer(df):\n    x = df['trees']\n    return x.max()"),
])
def test_a_reply_becomes_answer_df(reply: str, how: str, source: str) -> None:
    program = extract_program(reply)
    assert (program.how, program.source) == (how, source)


def test_the_official_reading_takes_the_first_line_as_it_is() -> None:
    program = extract_program("```python\ndf.shape[0]\n```", "official")
    assert program.source == "def answer(df):\n    return ```python\n"  # the baseline's postprocess: a syntax error


def _samples(data: DataContext, variant: str) -> dict[str, Sample]:
    return {s.question: s for s in DataBench().load(variant, data, seed=0, limit=None)}


REPLIES = {
    "How many orchards are there?": "df.shape[0]",
    "What is the average yield (tonnes)?": "df['yield (tonnes)'].mean()",
    "Which region is the most common among the orchards?": "df['region'].value_counts().idxmax()",
    "What are the 3 highest values of yield (tonnes)?": "df['yield (tonnes)'].nlargest(3)",
    "Is it true that the orchard with the highest yield (tonnes) is organic?":
        "df.loc[df['yield (tonnes)'].idxmax(), 'organic']",
}


@pytest.mark.parametrize("variant", ["databench", "lite"])
def test_programs_computing_the_answer_score_one_over_each_variants_table(variant: str, data: DataContext) -> None:
    bench = DataBench()
    samples = _samples(data, variant)
    pot = bench.strategy("pot")
    for question, reply in REPLIES.items():
        sample = samples[question]
        scored = bench.score(sample, Attempt(output=reply), pot)
        assert scored.score == 1.0, (question, scored.parsed, sample.gold)
        assert scored.values == {"program_ok": 1.0}


def test_values_render_as_lists_by_default_and_as_str_officially(data: DataContext) -> None:
    sample = _samples(data, "databench")["What are the 3 highest values of yield (tonnes)?"]
    reply = "[v for v in df['yield (tonnes)'].nlargest(3).to_numpy()]"  # a list of NumPy scalars
    ours = DataBench().execute(sample, reply)
    official = DataBench({"pot_render": "str"}).execute(sample, reply)
    assert ours.answer == sample.gold.text  # type: ignore[union-attr]
    assert official.answer is not None and official.answer.startswith("[np.float64(")
    ran = Attempt(output=reply, artifacts={"program": official.to_json()})  # as a run stores it: not run again
    assert DataBench({"pot_render": "str"}).score(sample, ran, DataBench().strategy("pot")).score == 0


def test_a_failing_program_is_wrong_and_counted(data: DataContext) -> None:
    bench = DataBench()
    sample = _samples(data, "lite")["How many orchards are there?"]
    pot = bench.strategy("pot")
    failed = bench.score(sample, Attempt(output="df['no such column'].count()"), pot)
    assert failed.score == 0.0 and failed.parsed is None and failed.values == {"program_ok": 0.0}
    right = bench.score(sample, Attempt(output="len(df)"), pot)
    assert bench.aggregate([failed, right]) == {"accuracy": 0.5, "program_error_rate": 0.5}


def test_the_program_cannot_reach_outside_its_sandbox(data: DataContext, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("42")
    sample = _samples(data, "lite")["How many orchards are there?"]
    outcome = DataBench().execute(sample, f"int(open({str(secret)!r}).read())")
    assert outcome.status == "error" and outcome.answer is None
    assert "FileNotFoundError" in (outcome.error or "") or "PermissionError" in (outcome.error or "")


@pytest.mark.parametrize("depth", [2, 100_000])
def test_a_report_the_program_prints_itself_is_its_failure_not_a_crash(depth: int, data: DataContext) -> None:
    """The program prints the harness's marker and a report of its own, then ends before the harness's: the harness
    reports a text, so a nested answer is forged, and one nested past Python's parser raised RecursionError out of
    the scorer (a harness error, tried again on every run). Both are the program's failure."""
    sample = _samples(data, "lite")["How many orchards are there?"]
    forged = '{"answer": ' + "[" * depth + "]" * depth + "}"
    reply = ("def answer(df):\n    import os, sys\n"
             f"    sys.stdout.write('\\n{MARKER}' + {forged!r} + '\\n')\n    sys.stdout.flush()\n    os._exit(0)\n")
    outcome = DataBench().execute(sample, reply)
    if depth == 2:  # a shallow one reads as its text: the program's own (wrong) answer
        assert outcome.status == "ok" and outcome.answer == "[[]]"
    else:
        assert (outcome.status, outcome.answer, outcome.error) == ("error", None, "unreadable report")
    scored = DataBench().score(sample, Attempt(output=reply), DataBench().strategy("pot"))
    assert scored.score == 0.0
