"""Program-of-thought: program extraction, sandboxed execution, and reading ``ans``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from structbench.backends.oracle import OracleBackend
from structbench.benchmarks.scitab import SciTab
from structbench.benchmarks.scitab.program import extract_program, run_program
from structbench.benchmarks.scitab.prompts import PROGRAMS
from structbench.contract.benchmark import Attempt
from structbench.core.errors import UsageError
from structbench.data.sample import Sample
from structbench.runner.calls import ModelCaller
from structbench.runner.engine import Job, run_job
from structbench.sandbox import Limits

S, R, N = "supports", "refutes", "not enough info"


@pytest.mark.parametrize(
    ("reply", "program"),
    [
        ("ans = True", "ans = True"),
        ("```python\nx = 1\nans = x > 0\n```\nThis program checks x.", "x = 1\nans = x > 0"),
        ("Here you go:\n```\nans = False\n```", "ans = False"),
        ("a = 2\nans = equal(a, 2)\n------\nRead the following table and then write", "a = 2\nans = equal(a, 2)"),
        ("Here is the code:\nans = None\nThis sets ans to None.", "ans = None"),
        ("```python\nans = (1 <\n```", "ans = (1 <"),  # hopeless: returned as is, fails when run
    ],
)
def test_extract_program(reply: str, program: str) -> None:
    assert extract_program(reply) == program


@pytest.mark.parametrize(
    ("program", "label", "ans"),
    [
        ("ans = 3 > 2", S, "True"),
        ("ans = equal(0.1 + 0.2, 0.3) and 5 < 4", R, "False"),
        ("ans = None", N, "None"),
        ("ans = 'the claim is false'", R, "'the claim is false'"),
        ("ans = 'C'", N, "'C'"),
        ("print('computing')\nprint('supports')", S, None),  # no ans: the last printed line
        ("import sys\nprint('refutes')\nsys.exit(0)", R, None),
        ("ans = 3", None, "3"),
    ],
)
def test_program_verdicts(program: str, label: str | None, ans: str | None) -> None:
    outcome = run_program(program)
    assert outcome.status == "ok"
    assert (outcome.label, outcome.ans) == (label, ans)


def test_failing_programs_give_no_label() -> None:
    crash = run_program("ans = table['BLEU']")
    assert (crash.label, crash.status) == (None, "error")
    assert crash.error is not None and "NameError" in crash.error
    loop = run_program("while True:\n    pass", limits=Limits(cpu_seconds=1, wall_seconds=3))
    assert loop.label is None and loop.status in ("SIGXCPU", "SIGKILL", "timeout")


def test_paper_programs_give_their_labels_and_exact_equal_reproduces_error_case_5() -> None:
    for (table_id, label), program in PROGRAMS.items():
        assert run_program(program).label == label, table_id
    woz = next(p for (_, label), p in PROGRAMS.items() if "COMER_acc" in p)
    # 88.64 - 86.69 = 1.9500000000000028: the paper's float error (Appendix G, error case 5)
    assert run_program(woz, equal="exact").label == R
    assert run_program(woz, equal="tolerant").label == S


def test_benchmark_runs_programs_without_fork_and_with_its_options() -> None:
    forked = SciTab().execute("import os\npid = os.fork()\nans = True")
    assert forked.label is None and forked.status == "error"
    assert forked.error is not None and "BlockingIOError" in forked.error
    exact = SciTab({"pot_equal": "exact"}).execute("ans = equal(88.64 - 86.69, 1.95)")
    assert (exact.label, exact.equal) == (R, "exact")


def test_pot_limits_are_checked_as_options() -> None:
    for option in ({"pot_timeout": "1e308"}, {"pot_timeout": "nan"}, {"pot_memory_mb": str(1 << 44)}):
        with pytest.raises(UsageError, match="bad --option: pot_"):
            SciTab(option)


def test_a_sandbox_that_cannot_start_is_a_harness_error_not_a_wrong_answer(
    loaded: tuple[SciTab, dict[str, list[Sample]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("structbench.sandbox.runner.interpreter", lambda: "/bin/false")
    bench, samples = loaded
    job = Job(bench, "all", bench.strategy("pot"), samples["all"][0])
    record = asyncio.run(run_job(job, ModelCaller(OracleBackend(), None), "oracle"))
    assert record.error_kind == "harness" and record.error is not None
    assert "SandboxError: sandbox: the program could not be started" in record.error


def test_the_preset_compares_floats_exactly_and_the_tolerant_score_goes_beside(
    synthetic_loaded: tuple[SciTab, dict[str, list[Sample]]],
) -> None:
    """scitab-table4 sets pot_equal=exact, as the paper's programs compared (Appendix G): a program computing
    ``equal(88.64 - 86.69, 1.95)`` refutes under the preset; structbench's tolerant comparison, the corrected
    score, supports, whether the program ran in a run (its outcome re-run) or comes from a predictions file."""
    from structbench.benchmarks.scitab.paper import TABLE4
    from structbench.contract.benchmark import corrected_scored
    from structbench.runner.export import score_predictions

    assert TABLE4.preset.options["pot_equal"] == "exact"
    preset, tolerant = SciTab(TABLE4.preset.options), SciTab()
    _, samples = synthetic_loaded
    claim = next(s for s in samples["2class"] if s.gold.label == "supports")  # type: ignore[union-attr]
    reply = "```python\nans = equal(88.64 - 86.69, 1.95)\n```"
    program = "ans = equal(88.64 - 86.69, 1.95)"
    ran = Attempt(output=reply, artifacts={"program": {"code": program, **preset.execute(program).to_json()}})
    scored = preset.score(claim, ran, preset.strategy("pot"))
    twin = corrected_scored(scored)
    assert (scored.parsed, scored.score) == ("refutes", 0.0)
    assert twin is not None and twin.score == 1.0
    assert tolerant.score(claim, ran, tolerant.strategy("pot")).score == 1.0  # re-run with its own equal
    entry = score_predictions(preset, "2class", [claim], preset.strategy("pot"), {claim.id: reply},
                              source=Path("p.jsonl"))
    assert entry.headline.value == 0.0 and entry.extra["corrected"]["metrics"]["accuracy"] == 1.0


@pytest.mark.parametrize("forged", ['{"type": "bool", "value": 5}', '[1]', '{"type": "bool", "value": [true]}',
                                    '"text"'])
def test_a_report_the_program_prints_itself_is_no_label_not_a_crash(forged: str) -> None:
    """A report of another shape than the harness's (the program printed one and ended the process) gives no label,
    scored as wrong; it was a KeyError, and so a harness error left out of the metrics."""
    program = ("import sys, os\nprint('\\n__SCITAB_ANSWER__' + " + repr(forged) + ")\nsys.stdout.flush()\n"
               "os._exit(0)")
    outcome = run_program(program)
    assert outcome.label is None and outcome.status == "ok"


def test_a_report_nested_past_the_parsers_limit_is_unreadable_not_a_crash() -> None:
    """A report the program prints, nested deeper than Python's parser reads: a RecursionError raised out of the
    scorer (a harness error, retried on every run); it is the program's failure."""
    program = ("import sys, os\nprint('\\n__SCITAB_ANSWER__' + '[' * 100_000)\nsys.stdout.flush()\nos._exit(0)")
    outcome = run_program(program)
    assert (outcome.label, outcome.status, outcome.error) == (None, "error", "unreadable report")
