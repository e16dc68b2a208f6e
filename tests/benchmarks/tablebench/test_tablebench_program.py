"""Programs in the sandbox: a program-of-thought answer, a chart's drawn values and the released chart test, the
released way of running them (its exec scoping, a chart run twice on one figure) against structbench's."""

from __future__ import annotations

import json
import math
import threading
import time

import pytest

from structbench.benchmarks.tablebench import program as program_module
from structbench.benchmarks.tablebench.program import (
    NO_CODE,
    ProgramOutcome,
    chart_references,
    chart_verdict,
    run_program,
    run_programs,
)
from structbench.sandbox import Limits, SandboxResult

TABLE = {"columns": ["name", "score", "score", "note"], "data": [["a", 1, 10, None], ["b", 2, 20, "x"]]}
LIMITS = Limits(cpu_seconds=120, memory_mb=2048, max_processes=8)


def run(code: str, **kwargs: object) -> ProgramOutcome:
    return run_program(code, TABLE, limits=LIMITS, timeout=kwargs.pop("timeout", 15.0), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("references", "values", "chart_type", "verdict"),
    [
        ([[3, 1, 2]], [1.0, 2.0, 3.0], "bar", True),  # sorted before they are compared
        ([[1.004, 2]], [[1.0, 2.0]], "line", True),  # two decimals
        ([[1, 2]], [1.0, 2.0, 1.0, 2.0], "bar", False),  # drawn twice
        ([[1, 2, 1]], [0.25, 0.5, 0.25], "pie", True),  # a pie's references as fractions of their sum
        ([[math.nan, 1]], [[math.nan, 1.0]], "line", True),
        ([[math.nan, 1]], [[1.0, math.nan]], "line", False),  # a NaN stays where it is when the lists are sorted
        ([[1, 2]], ["a", 2.0], "bar", None),  # text among the values: the chart test raises
        ([[1, 2]], None, "bar", None),
        ([[0, 0]], [0.0, 0.0], "pie", None),  # a pie summing to 0
    ],
)
def test_chart_verdict(references: list, values: object, chart_type: str, verdict: bool | None) -> None:
    assert chart_verdict(references, values, chart_type) is verdict


def test_chart_references_read_the_assignment() -> None:
    assert chart_references("y_references = [[1, 2.5], [3, 4]]") == [[1, 2.5], [3, 4]]
    with pytest.raises(ValueError, match="y_references"):
        chart_references("x = [[1]]")
    with pytest.raises(ValueError, match="not Python"):
        chart_references("y_references = [[1,")


def test_a_program_reads_the_table_and_prints_its_answer() -> None:
    code = ("import pandas as pd\ndf = pd.read_csv('table.csv')\nprint(list(df.columns))\n"
            "print(f'Final Answer: {int(df[\"score\"].sum())}, {df[\"note\"].isna().sum()}')")
    outcome = run(code, kind="answer")
    assert outcome.ran and outcome.status == "ok"
    # the released parser's table.csv: one dict per row, so the repeated column keeps its last cell
    assert outcome.output == "['name', 'score', 'note']\nFinal Answer: 30, 1\n"


def ways(code: str, *executions: str, **kwargs: object) -> dict[str, ProgramOutcome]:
    """The program run each way in one sandbox (the harness forks a process per way after its imports)."""
    return run_programs(code, TABLE, executions=executions, limits=LIMITS, **kwargs)  # type: ignore[arg-type]


def test_the_released_exec_hides_the_programs_names_from_its_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    code = "import json\ndef f():\n    return json.dumps([1])\nprint('Final Answer:', f())"
    sandboxes = []
    real = program_module.run_python

    def counted(*args: object, **kwargs: object) -> object:
        sandboxes.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    program_module.font_cache("auto")  # built once per process, in a sandbox of its own
    monkeypatch.setattr(program_module, "run_python", counted)
    outcomes = ways(code, "isolated", "released", "paper", kind="answer")
    assert len(sandboxes) == 1  # three ways, one sandbox
    assert outcomes["isolated"].output == "Final Answer: [1]\n"
    released = outcomes["released"]
    assert not released.ran and released.output == "" and "NameError" in released.error
    # the August 2024 parser imported json itself: the same function finds it there
    assert outcomes["paper"].output == "Final Answer: [1]\n"
    assert run(code, kind="answer", execution="released") == released  # one way alone: the same outcome


def test_a_chart_drawn_on_the_current_figure_is_drawn_twice_the_released_way() -> None:
    code = "import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [1, 2])\nplt.show()"
    outcomes = ways(code, "released", "isolated", kind="chart", chart_type="bar")
    isolated, released = outcomes["isolated"], outcomes["released"]
    assert isolated.values == [1.0, 2.0] and released.values == [1.0, 2.0, 1.0, 2.0]
    assert chart_verdict([[1, 2]], isolated.values, "bar") is True
    assert chart_verdict([[1, 2]], released.values, "bar") is False


def test_each_program_reads_the_font_list_a_sandbox_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The list names the fonts a sandbox sees; a program's pyplot reads it (here marked) instead of scanning the
    fonts again, in one way or two, but an answer run only the isolated way, which imports no pyplot, gets none."""
    ((path, text),) = program_module.font_cache("auto").items()
    built = json.loads(text)
    assert path.startswith(".cache/matplotlib/fontlist-v") and any(f["name"] == "DejaVu Sans" for f in built["ttflist"])
    marked = {path: json.dumps({**built, "defaultFamily": {**built["defaultFamily"], "ttf": "Marked Sans"}})}
    monkeypatch.setattr(program_module, "font_cache", lambda namespaces: marked)
    code = ("import matplotlib.font_manager as fm\n"
            "print(fm.fontManager.defaultFamily['ttf'], len(fm.fontManager.ttflist))")
    read = f"Marked Sans {len(built['ttflist'])}\n"
    assert {w: o.output for w, o in ways(code, "released", "isolated", kind="answer").items()} == {
        "released": read, "isolated": read}
    assert run(code, kind="answer", execution="paper").output == read
    assert run(code, kind="answer").output == f"DejaVu Sans {len(built['ttflist'])}\n"  # scanned as before


def test_a_runs_workers_wait_for_one_font_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four workers asking for the list at once start one sandbox between them, not one each."""
    built = []

    def build(*args: object, **kwargs: object) -> SandboxResult:
        built.append(1)
        time.sleep(0.2)  # the others ask meanwhile
        report = {"cwd": "/sandbox", "path": ".cache/matplotlib/fontlist-v1.json", "text": "{}"}
        return SandboxResult(stdout="\n" + program_module.MARKER + json.dumps(report), stderr="", returncode=0,
                             timed_out=False, seconds=0.2, isolation=None)

    monkeypatch.setattr(program_module, "run_python", build)
    program_module._font_cache.cache_clear()
    try:
        got: list[dict[str, str]] = []
        workers = [threading.Thread(target=lambda: got.append(program_module.font_cache("auto"))) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        program_module._font_cache.cache_clear()  # the next test builds the real one
    assert len(built) == 1 and got == [{".cache/matplotlib/fontlist-v1.json": "{}"}] * 4


def test_pyplot_is_imported_first_only_for_a_program_that_may_draw() -> None:
    """A program that names no pyplot runs without it (the released way's ``plt`` imports it when first used); one
    that names it finds it imported, as the released parser's module imported it."""
    names = "import sys\nmpl = 'matp' + 'lotlib'\npyp = mpl + '.pyp' + 'lot'\n"  # named without naming it
    code = names + "print(mpl in sys.modules, pyp in sys.modules)"
    assert {w: o.output for w, o in ways(code, "released", "isolated", kind="answer").items()} == {
        "released": "False False\n", "isolated": "False False\n"}
    assert run(code, kind="answer").output == "False False\n"
    built = names + "figure = globals()['p' + 'lt'].figure()\nprint(type(figure).__name__, pyp in sys.modules)"
    assert run(built, kind="answer", execution="released").output == "Figure True\n"
    named = names + "print(plt.__name__, type(plt).__name__, pyp in sys.modules)"
    assert run(named, kind="answer", execution="paper").output == "matplotlib.pyplot module True\n"


def test_limits_and_failures() -> None:
    assert run("", kind="answer") == NO_CODE
    late = run("while True:\n    pass", kind="answer", timeout=1.0)
    assert late.status == "timeout" and not late.ran
    failed = run("print('Final Answer: 1')\nraise ValueError('no')", kind="answer")
    assert failed.status == "error" and failed.output == "" and "ValueError: no" in failed.error
    forged = run("print('\\n__TABLEBENCH_REPORT__{\"ran\": true, \"values\": [9]}')\nprint('Final Answer: 2')",
                 kind="answer")
    assert forged.values is None and forged.output.endswith("Final Answer: 2\n")  # its print is its own output



def test_each_way_starts_where_a_sandbox_of_its_own_would() -> None:
    """What one way changes (pandas' options, the table, new files, its directory) the next does not see; a way
    whose process ends without a report is reported as a sandbox that ended so."""
    code = ("import os, pandas as pd\nprint(sorted(f for f in os.listdir('.') if not f.startswith('.')))\n"
            "print(pd.get_option('display.max_rows'), len(pd.read_csv('table.csv')))\n"
            "pd.set_option('display.max_rows', 3)\nopen('table.csv', 'w').write('x\\n')\nopen('new.txt', 'w').close()\n"
            "os.mkdir('made')\nos.chdir('made')")
    fresh = "['job.json', 'main.py', 'program.py', 'table.csv']\n60 2\n"
    assert {way: o.output for way, o in ways(code, "released", "isolated", kind="answer").items()} == {
        "released": fresh, "isolated": fresh}
    ended = ways("import os\nos._exit(3)", "released", "isolated", kind="answer")
    assert all(o.status == "exit 3" and not o.ran for o in ended.values())


def test_a_deterministic_program_runs_once_per_way_and_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle's programs (``deterministic``) run once per table, way and limits: asked again, or by four workers
    at once, the first run's outcome comes back without a sandbox; a way not run yet runs alone; a failure is not kept;
    any other program runs each time it is asked (a fresh interpreter draws its own hash seed, clock and random
    numbers). The sandbox is a stand-in here: the oracle runs of ``test_tablebench_published`` run the real one."""
    monkeypatch.setattr(program_module, "_MEMO", program_module.OutcomeMemo(size=8))
    started: list[list[str]] = []

    def sandbox(code: str, table: dict, *, modes: list[str], **kwargs: object) -> dict[str, ProgramOutcome]:
        started.append(modes)
        time.sleep(0.1)  # the other workers ask meanwhile
        failed = code == "fail"
        status = "error" if failed else "ok"
        return {mode: ProgramOutcome(status=status, ran=not failed, output=f"{mode} {len(started)}") for mode in modes}

    monkeypatch.setattr(program_module, "_run_programs", sandbox)

    def ask(*modes: str, code: str = "print(1)", table: dict = TABLE, deterministic: bool = True,
            timeout: float = 15.0) -> dict[str, str]:
        got = run_programs(code, table, kind="answer", executions=modes, limits=LIMITS,  # type: ignore[arg-type]
                           deterministic=deterministic, timeout=timeout)
        return {mode: outcome.output for mode, outcome in got.items()}

    got: list[dict[str, str]] = []
    workers = [threading.Thread(target=lambda: got.append(ask("paper", "isolated"))) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert started == [["paper", "isolated"]] and got == [{"paper": "paper 1", "isolated": "isolated 1"}] * 4
    assert ask("isolated", "released") == {"isolated": "isolated 1", "released": "released 2"}  # the way not run yet
    assert ask("isolated", table={"columns": ["x"], "data": [[1]]}) == {"isolated": "isolated 3"}
    assert ask("isolated", timeout=5.0) == {"isolated": "isolated 4"}
    assert ask("isolated", code="print(2)") == {"isolated": "isolated 5"}
    assert ask("isolated", deterministic=False) == {"isolated": "isolated 6"}
    assert ask("isolated", deterministic=False) == {"isolated": "isolated 7"}
    assert ask("isolated") == {"isolated": "isolated 1"}
    assert ask("isolated", code="fail") == {"isolated": "isolated 8"}
    assert ask("isolated", code="fail") == {"isolated": "isolated 9"}  # a failure may be the machine's: run again


@pytest.mark.parametrize("forged", ['{"harness_error": "forged by the model"}', '{"modes": {"isolated": 5}}',
                                    '{"modes": 5}', '[1]', '[' * 100_000])  # (the last: past json's recursion)
def test_a_report_the_program_prints_itself_is_its_failure_not_a_harness_error(forged: str) -> None:
    """A program that prints the harness's report and ends the process before the real one: a harness error would
    leave its sample out of the metrics (a model could drop the samples it gets wrong); it is a failed program."""
    code = ("import sys, os\nsys.__stdout__.write('\\n__TABLEBENCH_REPORT__' + " + repr(forged) + " + '\\n')\n"
            "sys.__stdout__.flush()\nos._exit(0)")
    for execution in ("isolated", "released"):
        outcome = run(code, kind="answer", execution=execution)
        assert outcome.status == "error" and not outcome.ran and outcome.output == ""
        assert outcome.error in ("the program printed the harness's report itself", "unreadable report")
