"""``structbench.evaluate`` and ``evaluate_suite`` as a notebook calls them: typed results, the same run directory and
numbers as the command's, typed errors, resuming."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import structbench
from faults import child_pythonpath
from patience import patience
from structbench.core.errors import UsageError


@pytest.mark.shared
def test_evaluate_the_oracle_on_scitab_scores_one_as_the_command_does(
    tmp_path: Path, shared_datasets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRUCTBENCH_DATA_DIR", str(shared_datasets))
    notes: list[str] = []
    run = structbench.evaluate(model="oracle", bench="scitab", limit=30, out=tmp_path / "api", progress=False,
                               notify=notes.append)
    assert isinstance(run, structbench.EvalResult)
    (result,) = run.results
    assert (result.benchmark, result.variant, result.strategy, result.model) == ("scitab", "all", "zero_shot", "oracle")
    assert (result.metric, result.headline, result.n) == ("macro_f1", 1.0, 30)
    assert result.interval == (1.0, 1.0) and result.confidence == 0.95
    assert result.entry.metrics["accuracy"] == 1.0 and result.entry.baselines["chance"] < 0.5
    assert run.result("scitab", "zero_shot") is result
    assert run.run_dir == tmp_path / "api" and not run.failures and len(run.records) == 30
    assert run.config.limit == 30 and run.manifest.config == run.config and run.manifest.config.benches == ["scitab"]
    assert run.manifest.status == "complete" and run.manifest.format_version == "1.4"
    assert run.manifest.backend == {"backend": "oracle", "model": "oracle", "base_url": None}
    on_disk = json.loads((run.run_dir / "metrics.json").read_text())
    assert on_disk == run.metrics.model_dump(mode="json")

    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    cli = subprocess.run(
        [sys.executable, "-m", "structbench", "run", "-m", "oracle", "-b", "scitab", "-n", "30", "--no-progress",
         "--out", str(tmp_path / "cli")], capture_output=True, text=True, env=env, timeout=patience(300),
    )
    assert cli.returncode == 0, cli.stderr
    by_cli = json.loads((tmp_path / "cli" / "metrics.json").read_text())
    assert by_cli == on_disk  # the same numbers, intervals included
    by_cli_manifest = json.loads((tmp_path / "cli" / "manifest.json").read_text())
    assert by_cli_manifest["config"] == run.manifest.config.model_dump(mode="json")
    assert by_cli_manifest["format_version"] == on_disk["format_version"] == "1.4"

    again = structbench.evaluate(model="oracle", bench="scitab", limit=30, out=tmp_path / "api", progress=False,
                                 notify=notes.append)  # resumes: nothing left to do, the same results
    assert again.metrics == run.metrics
    assert [s.jobs for s in again.manifest.sessions] == [30, 0]


def test_mistakes_are_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown benchmark 'nosuch'"):
        structbench.evaluate("oracle", "nosuch", out=tmp_path / "a", progress=False)
    with pytest.raises(UsageError, match=r"evaluate\(limit=0\): give a number of samples of at least 1"):
        structbench.evaluate("oracle", "structext:test", limit=0, out=tmp_path / "b", progress=False)
    with pytest.raises(UsageError, match="unknown backend 'nobackend'"):
        structbench.evaluate("nobackend", "structext:test", limit=2, out=tmp_path / "c", progress=False)
    with pytest.raises(UsageError, match="no selected benchmark has this option"):
        structbench.evaluate("oracle", "structext:test", options={"nosuch": 1}, out=tmp_path / "d", progress=False)
    assert not any((tmp_path / name).exists() for name in "abcd")  # nothing half-written


@pytest.mark.parametrize(("arguments", "message"), [
    ({"concurrency": 0}, "evaluate(concurrency=0): give an int of at least 1"),
    ({"concurrency": -3}, "evaluate(concurrency=-3): give an int of at least 1"),
    ({"epochs": 0}, "evaluate(epochs=0): give an int of at least 1"),
    ({"limit": "5"}, "evaluate(limit='5'): give a number of samples of at least 1 (or leave limit out for all)"),
    ({"sweep": {"serialization": 5}}, "evaluate(sweep={'serialization': 5}): give a mapping of option names to their "
                                      "values: a list, or one comma-separated string"),
    ({"bench": ["structext:test", 3]}, "evaluate(bench=['structext:test', 3]): give a benchmark 'BENCH[:VARIANT]' or "
                                       "a list of them, strings"),
    ({"workers": 0}, "evaluate(workers=0): give a number of worker processes"),
    ({"batch": "yes"}, "evaluate(batch='yes'): give a bool"),
    ({"max_cost": 1.0}, "evaluate(max_cost=1.0): needs the models' prices: give prices="),
    ({"prices": {"openai:m": {"input": -1, "output": 1}}}, "prices=: openai:m.input: a price cannot be negative (-1)"),
    ({"sample": 3, "limit": 2}, "limit=2 takes the first samples and sample=3 a seeded random set of them; give one"),
])
def test_every_bad_argument_is_a_usage_error_naming_it(tmp_path: Path, arguments: dict[str, object],
                                                       message: str) -> None:
    kwargs: dict[str, object] = {"bench": "structext:test", **arguments}
    with pytest.raises(UsageError) as err:
        structbench.evaluate("openai:m", base_url="http://127.0.0.1:9/v1", out=tmp_path / "r", progress=False,
                             **kwargs)  # type: ignore[arg-type]
    assert str(err.value).startswith(message) or message in str(err.value), str(err.value)
    assert not (tmp_path / "r").exists()  # refused before anything ran: no run left 'running'


def test_every_run_flag_is_a_keyword(tmp_path: Path) -> None:
    """Prices (a file or the mapping itself), a budget and batches, as ``run --prices --max-cost --batch`` take them."""
    import inspect

    from structbench.cli.run_cmd import run as run_command
    from structbench.core.errors import BudgetError
    from structbench.testing.batch_server import BatchServer, serve_batches_in_thread
    from structbench.testing.openai_server import MockOpenAIServer

    flags = set(inspect.signature(run_command).parameters) - {"ctx", "suite"}
    assert len(flags) >= 50 and {"options", "sample_ids", "device", "dtype", "resume", "prices"} <= flags
    assert flags | {"notify"} == set(inspect.signature(structbench.evaluate).parameters)  # one model, two views
    usage = {"prompt_tokens": 100, "completion_tokens": 10}
    with serve_batches_in_thread(BatchServer(MockOpenAIServer(reply="yes", usage=usage))) as url:
        common = {"base_url": url + "/v1", "progress": False, "cache": tmp_path / "cache.sqlite"}
        done = structbench.evaluate("openai:m", "structext:test", limit=3, out=tmp_path / "a", batch=True,
                                    batch_poll=0.05, prices={"openai:m": {"input": 1, "output": 2}}, **common)
        assert done.manifest.batches and done.manifest.batches[0]["state"] == "ended"
        assert done.metrics.usage is not None
        assert done.metrics.usage.cost_usd == 0.00018  # 3 calls of 120 µ$, at half price
        (tmp_path / "prices.yaml").write_text("m: {input: 1000, output: 1000}\n")
        with pytest.raises(BudgetError, match="reached max_cost=0.1 USD"):
            structbench.evaluate("openai:m", "structext:test", limit=5, out=tmp_path / "b", prices=tmp_path /
                                 "prices.yaml", max_cost=0.1, no_cache=True, concurrency=1, **common)
        with pytest.raises(BudgetError, match="reached max_tokens_total=150"):
            structbench.evaluate("openai:m", "structext:test", limit=5, out=tmp_path / "c", max_tokens_total=150,
                                 no_cache=True, concurrency=1, **common)


def test_a_directory_of_another_configuration_is_refused(tmp_path: Path) -> None:
    first = structbench.evaluate("oracle", ["structext:test"], limit=2, out=tmp_path / "run", progress=False)
    assert first.results[0].headline == 1.0 and first.results[0].n == 2
    with pytest.raises(UsageError, match="holds a run with a different configuration"):
        structbench.evaluate("oracle", ["structext:test"], limit=3, out=tmp_path / "run", progress=False)
    resumed = structbench.api.resume(tmp_path / "run", settings=structbench.api.RunSettings(progress=False))
    assert resumed.metrics == first.metrics


@pytest.mark.shared
def test_evaluate_suite_runs_every_model_and_writes_the_report(tmp_path: Path, shared_datasets: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        "models:\n  - model: oracle\n  - model: mock\n    name: echo\n"
        f"benchmarks:\n  - bench: scitab\nlimit: 5\ndata_dir: {shared_datasets}\nreport: markdown\n"
    )
    started: list[str] = []
    suite = structbench.evaluate_suite(tmp_path / "suite.yaml", out=tmp_path / "out",
                                       settings=structbench.api.RunSettings(progress=False),
                                       on_start=lambda i, n, r: started.append(f"{i}/{n} {r.name}"))
    assert started == ["1/2 oracle", "2/2 echo"]
    assert [(r.name, r.model, r.run_dir) for r in suite.runs] == [
        ("oracle", "oracle", tmp_path / "out" / "oracle"), ("echo", "mock", tmp_path / "out" / "echo")]
    headlines = {r.model: r.headline for r in suite.results}
    assert headlines["oracle"] == 1.0 and headlines["mock"] is not None and headlines["mock"] < 1.0
    assert suite.reports == [tmp_path / "out" / "report.md"] and suite.reports[0].is_file()
    assert len(suite.metrics.results) == 2


@pytest.mark.shared
def test_evaluate_sweeps_a_grid_and_returns_each_cell_and_the_robustness(
    tmp_path: Path, shared_datasets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRUCTBENCH_DATA_DIR", str(shared_datasets))
    run = structbench.evaluate("oracle", "scitab", limit=8, out=tmp_path / "sweep", progress=False,
                               sweep={"serialization": ["paper", "csv"], "perturbation": "none,transpose"})
    assert run.config.sweeps == {"serialization": ["paper", "csv"], "perturbation": ["none", "transpose"]}
    assert [r.cell for r in run.results] == [  # the first key varies slowest
        "perturbation=none;serialization=paper", "perturbation=transpose;serialization=paper",
        "perturbation=none;serialization=csv", "perturbation=transpose;serialization=csv"]
    assert all(r.headline == 1.0 and r.n == 8 for r in run.results)
    chosen = run.result("scitab", cell="perturbation=transpose;serialization=csv")
    assert chosen.entry.cell == chosen.cell == "perturbation=transpose;serialization=csv"
    with pytest.raises(UsageError, match=r"4 results match scitab/\*"):
        run.result("scitab")  # one per cell: the cell must be named
    (rob,) = run.robustness
    assert rob.reference == "perturbation=none;serialization=paper" and len(rob.cells) == 4
    assert (rob.score, rob.spread, rob.mad, rob.significant) == (1.0, 0.0, 0.0, 0)
    assert run.robustness == run.metrics.robustness
    preset = structbench.api.configure("oracle", preset="robust-scitab", sweep={"perturbation_seed": [1, 2]})
    assert preset.sweeps["perturbation_seed"] == ["1", "2"] and len(preset.sweeps["serialization"]) == 7
    with pytest.raises(UsageError, match=r"^sweep\['serialization'\]: value 'csv' is given twice"):
        structbench.api.configure("oracle", "scitab", sweep={"serialization": "csv,csv"})
    with pytest.raises(UsageError, match="preset robust-scitab sweeps serialization"):
        structbench.api.configure("oracle", preset="robust-scitab", sweep={"serialization": ["csv"]})


def test_evaluate_takes_a_benchmark_instance_and_a_backend_object(tmp_path: Path) -> None:
    """A ``Benchmark`` class or instance (its options the run's) and a ``Backend`` object, not only names."""
    from structbench.backends.oracle import OracleBackend
    from toybench import ToyBench

    class Graded(ToyBench):
        name = "toy_graded"

    class Judge(OracleBackend):
        backend = "judge"  # registered nowhere: the object answers in this process
        model = "v1"
        forkable = False

    done = structbench.evaluate(Judge(), [Graded({"size": 3})], out=tmp_path / "run", progress=False)
    assert done.config.model == "judge:v1" and done.config.benches == ["toy_graded"]
    assert done.config.options == {"toy_graded.size": "3"}
    assert done.results[0].n == 3 and done.results[0].headline == 1.0  # the oracle's answers, scored
    again = structbench.evaluate(Judge(), Graded, options={"toy_graded.size": 3}, out=tmp_path / "run", progress=False)
    assert again.metrics == done.metrics  # the class by name, the same run resumed

    class Impostor(ToyBench):
        name = "toy_graded"

    with pytest.raises(UsageError, match=r"evaluate\(bench=Impostor\): the name 'toy_graded' is another benchmark's"):
        structbench.evaluate(Judge(), Impostor, out=tmp_path / "other", progress=False)
    with pytest.raises(UsageError, match=r"evaluate\(executor='ray'\): a backend object answers in this process"):
        structbench.evaluate(Judge(), Graded, executor="ray", out=tmp_path / "ray", progress=False)


def test_evaluate_resumes_a_run_and_refuses_options_that_would_change_it(tmp_path: Path) -> None:
    """``resume=`` is ``run --resume``: options that define the run are compared with its manifest's, in Python's
    words; how it executes may change."""
    first = structbench.evaluate("oracle", "structext:test", limit=2, out=tmp_path / "run", progress=False)
    with pytest.raises(UsageError) as err:
        structbench.evaluate(resume=tmp_path / "run", limit=3, temperature=0.5, concurrency=2, progress=False)
    assert str(err.value).startswith(f"evaluate(resume={str(tmp_path / 'run')!r}) continues that run as its manifest "
                                     "defines it; limit=3, temperature=0.5 would change it"), str(err.value)
    resumed = structbench.evaluate(resume=tmp_path / "run", limit=2, concurrency=2, progress=False)
    assert resumed.metrics == first.metrics and resumed.config == first.config
    with pytest.raises(UsageError, match=r"evaluate\(resume='.*nowhere'\): no manifest.json there"):
        structbench.evaluate(resume=str(tmp_path / "nowhere"), progress=False)


def test_configure_takes_only_what_decides_the_results() -> None:
    with pytest.raises(UsageError, match="configure: concurrency does not decide a run's results"):
        structbench.api.configure("oracle", "scitab", concurrency=2)
    with pytest.raises(UsageError, match=r"configure: no argument 'limt' Did you mean: limit\?"):
        structbench.api.configure("oracle", "scitab", limt=2)
    config = structbench.api.configure("oracle", "scitab", device="cpu", model_options={"n": 1}, base_url="http://h")
    assert config.model_options == {"n": "1", "device": "cpu"} and config.base_url == "http://h"


def test_errors_deep_in_a_run_name_options_as_the_caller_wrote_them(tmp_path: Path) -> None:
    from structbench.core.words import flag_words
    from structbench.runner.budget import Budget
    from structbench.testing.cli import invoke

    common = {"limit": 2, "progress": False, "cache": tmp_path / "cache.sqlite"}
    with pytest.raises(UsageError, match=r"^sweep\['nope'\]: no selected benchmark has this option"):
        structbench.evaluate("oracle", "structext:test", out=tmp_path / "a", sweep={"nope": ["1", "2"]}, **common)
    with pytest.raises(UsageError, match=r"^options\['nope'\]: no selected benchmark has this option"):
        structbench.evaluate("oracle", "structext:test", out=tmp_path / "b", options={"nope": "1"}, **common)
    with pytest.raises(UsageError, match=r"^max_cost needs the models' prices: give prices=FILE"):
        Budget(max_cost=1.0)
    words = flag_words.set(True)
    try:
        with pytest.raises(UsageError, match=r"^--max-cost needs the models' prices: give --prices FILE"):
            Budget(max_cost=1.0)
    finally:
        flag_words.reset(words)
    cli = invoke("run", "-m", "oracle", "-b", "structext:test", "--limit", "2", "--no-progress",
                 "--out", str(tmp_path / "d"), "--sweep", "nope=1,2")
    assert cli.returncode == 2 and "error: --sweep nope: no selected benchmark has this option" in cli.stderr
    cli = invoke("run", "-m", "oracle", "-b", "structext:test", "--limit", "2", "--no-progress",
                 "--out", str(tmp_path / "e"), "-o", "nope=1")
    assert cli.returncode == 2 and "error: --option nope: no selected benchmark has this option" in cli.stderr
    # the command's words end with it: the library speaks Python again in this process
    with pytest.raises(UsageError, match=r"^sweep\['nope'\]"):
        structbench.evaluate("oracle", "structext:test", out=tmp_path / "f", sweep={"nope": ["1"]}, **common)


def test_subpackages_are_reachable_after_import_structbench_alone() -> None:
    """The docs write ``structbench.api.log(...)`` after ``import structbench``; a fresh interpreter, nothing else
    imported."""
    code = ("import structbench, sys; assert 'structbench.api' not in sys.modules; "
            "print(structbench.api.log_settings.__name__, structbench.papers.__name__); "
            "print(hasattr(structbench, 'nosuch'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["log_settings", "structbench.papers", "False"]


def test_a_connections_base_url_is_recorded_so_the_run_resumes_against_it(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``configure`` then ``run(connection=Connection(base_url=...))`` is the run ``evaluate(base_url=...)`` makes: the
    same directory, and ``resume(run_dir)`` finds the server without being told again."""
    import toybench  # noqa: F401  (registers ``toy``)
    from structbench import api
    from structbench.runner.arguments import RunArguments
    from structbench.runner.run import default_run_dir
    from structbench.testing.openai_server import MockOpenAIServer, serve_in_thread

    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    with serve_in_thread(MockOpenAIServer(reply="yes")) as url:
        config = api.configure("openai:m", "toy", limit=3)
        first = api.run(config, connection=api.Connection(base_url=url), settings=api.RunSettings(progress=False))
        assert first.config.base_url == url
        planned = api.plan_run(RunArguments(model="openai:m", bench="toy", limit=3, base_url=url))
        assert first.run_dir == default_run_dir(planned.config)
        again = api.resume(first.run_dir, settings=api.RunSettings(progress=False))
    assert again.result().n == first.result().n == 3


def test_the_lower_level_calls_check_their_arguments_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``api.run``, ``api.resume`` and ``evaluate_suite`` given a plain value where an object is asked for, an empty
    directory, or a backend that is another model than the configuration's: a ``UsageError`` naming the argument
    (they failed deep inside with an AttributeError, wrote into the current folder, or recorded one model's answers
    as another's), and nothing written."""
    from structbench import api
    from structbench.backends.mock import MockBackend

    monkeypatch.chdir(tmp_path)
    config = api.configure("oracle", "structext:test", limit=2)
    cases = [
        (lambda: api.run("oracle"), "run(config='oracle'): give a RunConfig"),  # type: ignore[arg-type]
        (lambda: api.run(config, settings={"progress": False}), "run(settings={'progress': False}): give a "),
        (lambda: api.run(config, connection={}), "run(connection={}): give a structbench.api.Connection"),
        (lambda: api.run(config, backend="oracle"), "run(backend='oracle'): give a structbench.backends.base.Backend"),
        (lambda: api.run(config, out=3), "run(out=3): give a directory"),  # type: ignore[arg-type]
        (lambda: api.run(config, tracking="mlflow"), "run(tracking='mlflow'): give a Tracking"),  # type: ignore[arg-type]
        (lambda: api.run(config, backend=MockBackend(reply="x", model="other")),
         "run(backend=...): the backend object is mock:other, but the configuration's model is oracle"),
        (lambda: api.resume(3), "resume(3): give the run directory"),  # type: ignore[arg-type]
        (lambda: api.evaluate_suite(""), "evaluate_suite(''): give the suite file's path"),
        (lambda: api.evaluate_suite("s.yaml", out=""), "evaluate_suite(out=''): give a directory"),
        (lambda: structbench.evaluate("oracle", "structext:test", limit=2, out=""), "evaluate(out=''): give a "
                                                                                     "directory (a non-empty str"),
        (lambda: structbench.evaluate("oracle", "structext:test", limit=2, resume=" "), "evaluate(resume=' '): give "),
    ]
    for call, message in cases:
        with pytest.raises(UsageError) as err:
            call()
        assert str(err.value).startswith(message), str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_a_benchmarks_warnings_are_the_runs_notes(tmp_path: Path, shared_datasets: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """What a benchmark logs as it loads (RelationalFactQA's queries without a gold table) reaches ``notify`` and
    ``EvalResult.notes`` like the run's other notes, once, instead of only stderr."""
    got: list[str] = []
    run = structbench.evaluate("oracle", "rfqa", limit=4, data_dir=str(shared_datasets), offline=True, progress=False,
                               out=tmp_path / "r", notify=got.append)
    said = [n for n in got if "queries read have no gold table and are excluded" in n]
    assert len(said) == 1 and said[0].startswith("rfqa: ") and said == [n for n in run.notes if n in said]
    assert "no gold table" not in capsys.readouterr().err  # notify took it: not printed besides
