"""Every benchmark and strategy as an Inspect task, on Inspect's mock model: the metrics in Inspect's log equal
``structbench score`` on the outputs the log holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extras import require_extra

require_extra("inspect_ai", "inspect")

from click.testing import CliRunner as ClickRunner  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai._cli.main import inspect as inspect_command  # noqa: E402
from inspect_ai.log import EvalLog, read_eval_log  # noqa: E402
from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, ModelUsage, get_model  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from structbench.backends.base import Message, Request  # noqa: E402
from structbench.backends.current import current_sample  # noqa: E402
from structbench.benchmarks import BENCHMARKS  # noqa: E402
from structbench.cli.app import app  # noqa: E402
from structbench.core.errors import UsageError  # noqa: E402
from structbench.inspect_tasks import benchmark_task  # noqa: E402

LIMIT = 4
"""Samples per (benchmark, strategy): enough for right and wrong answers in each."""


def half_oracle() -> Model:
    """Inspect's mock model answering like structbench's oracle for every other sample (in the order they are
    first asked about) and with a reply no parser accepts for the rest, so metrics are neither all 0 nor all 1.
    Usage is set, so the mock counts no tokens (which would download tiktoken's encoding)."""
    seen: dict[str, int] = {}

    def reply(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        sample = current_sample.get()
        request = Request(messages=tuple(Message(m.role, m.text) for m in messages))  # type: ignore[arg-type]
        right = seen.setdefault(sample.id, len(seen)) % 2 == 0
        text = sample.oracle(request) if right else "I cannot tell."
        output = ModelOutput.from_content(model="mockllm", content=text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return get_model("mockllm/model", custom_outputs=reply)


def _metrics(log: EvalLog) -> dict[str, float]:
    assert log.status == "success", log.error
    assert log.results is not None
    (score,) = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


def _predictions(log: EvalLog, path: Path) -> None:
    """The log's outputs as a predictions file ``structbench score`` reads (fingerprints from the metadata)."""
    assert log.samples is not None
    lines = []
    for s in log.samples:
        assert s.scores is not None
        (score,) = s.scores.values()
        assert score.metadata is not None
        output = score.metadata["outputs"] or score.metadata["output"]
        lines.append({"id": s.id, "fingerprint": s.metadata["fingerprint"], "output": output})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _structbench_score(bench: str, variant: str, strategy: str, data: Path, predictions: Path,
                       out: Path) -> dict[str, float]:
    result = CliRunner().invoke(app, [
        "score", f"{bench}:{variant}", "--strategy", strategy, "--limit", str(LIMIT), "--data-dir", str(data),
        "--predictions", str(predictions), "--out", str(out),
    ])
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(out.read_text())["results"]
    assert entry["n"] == LIMIT
    return dict(entry["metrics"])


CASES = [(name, strategy) for name in BENCHMARKS.names() for strategy in BENCHMARKS.get(name)().strategies()]


@pytest.mark.shared
@pytest.mark.parametrize("bench", sorted({b for b, _ in CASES}))
def test_every_strategy_matches_structbench_score(bench: str, every_dataset: Path, tmp_path: Path) -> None:
    strategies = [s for b, s in CASES if b == bench]
    tasks = [benchmark_task(bench, strategy=s, data_dir=every_dataset, limit=LIMIT) for s in strategies]
    logs = inspect_eval(tasks, model=half_oracle(), log_dir=str(tmp_path / "logs"), display="none",
                        max_tasks=len(tasks))
    per_sample: list[Any] = []
    for strategy, log in zip(strategies, logs, strict=True):
        metrics = _metrics(log)
        headline = BENCHMARKS.get(bench).headline
        assert next(iter(metrics)) == headline or headline not in metrics, metrics
        assert log.samples is not None and len(log.samples) == LIMIT
        variant = log.eval.metadata["variant"]  # type: ignore[index]
        _predictions(log, tmp_path / f"{strategy}.jsonl")
        scored = _structbench_score(bench, variant, strategy, every_dataset, tmp_path / f"{strategy}.jsonl",
                                    tmp_path / f"{strategy}.json")
        assert metrics == pytest.approx(scored, abs=1e-12), (strategy, metrics, scored)
        per_sample.extend(s.scores[bench].value for s in log.samples)  # type: ignore[index]
    assert 0 < sum(per_sample) < len(per_sample), "the mock answers half of the samples right"


@pytest.mark.shared
def test_registered_by_name_through_the_entry_point(shared_datasets: Path, tmp_path: Path) -> None:
    """``structbench/<bench>`` resolves through Inspect's entry point; ``-T`` arguments other than the task's own
    are the benchmark's options."""
    (log,) = inspect_eval("structbench/structfact", model=half_oracle(), log_dir=str(tmp_path), display="none",
                          task_args={"strategy": "self_consistency", "k": 3, "data_dir": str(shared_datasets),
                                     "limit": LIMIT})
    metrics = _metrics(log)
    assert log.eval.task_registry_name == "structbench/structfact"
    assert log.eval.metadata is not None and log.eval.metadata["options"] == {"k": 3}
    assert set(metrics) >= {"weighted_f1", "accuracy", "macro_f1"}
    assert log.samples is not None
    first = log.samples[0]
    assert first.scores is not None and len(first.scores["structfact"].metadata["outputs"]) == 3  # type: ignore


@pytest.mark.shared
def test_inspect_cli_with_the_oracle_provider(shared_datasets: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``inspect eval structbench/scitab --model structbench/oracle`` from the command line: the oracle scores 1.

    Inspect's own command (the ``inspect`` console script's click group), in this process: a fresh interpreter
    added 13 CPU s of imports (Inspect's, Anthropic's SDK, structbench's) to a second of evaluation."""
    monkeypatch.setenv("STRUCTBENCH_DATA_DIR", str(shared_datasets))
    monkeypatch.chdir(tmp_path)
    result = ClickRunner().invoke(inspect_command, [
        "eval", "structbench/scitab", "-T", "strategy=cot", "--model", "structbench/oracle", "--limit", "5",
        "--log-dir", str(tmp_path), "--display", "plain"], auto_envvar_prefix="INSPECT")
    assert result.exit_code == 0, (result.output, result.exception)
    (path,) = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.model == "structbench/oracle"
    assert _metrics(log)["macro_f1"] == 1.0 and len(log.samples or []) == 5


@pytest.mark.shared
def test_a_bad_option_names_the_benchmark(shared_datasets: Path) -> None:
    with pytest.raises(UsageError, match=r"scitab: bad --option: bogus"):
        benchmark_task("scitab", data_dir=shared_datasets, limit=1, options={"bogus": 1})
    with pytest.raises(UsageError, match=r"scitab has no strategy 'nope'"):
        benchmark_task("scitab", strategy="nope", data_dir=shared_datasets, limit=1)


def test_missing_data_names_the_task_argument(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"-T data_dir / STRUCTBENCH_DATA_DIR .*: no such directory"):
        benchmark_task("scitab", data_dir=str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(Exception, match=r"from -T data_dir / STRUCTBENCH_DATA_DIR\)") as info:
        benchmark_task("scitab", data_dir=str(tmp_path / "empty"))
    assert "--data-dir" not in str(info.value)


@pytest.mark.parametrize(("arguments", "says"), [
    ({"limit": "abc"}, "structbench/scitab(limit='abc'): give a number of samples of at least 1"),
    ({"limit": 0}, "structbench/scitab(limit=0): give a number of samples of at least 1"),
    ({"seed": "abc"}, "structbench/scitab(seed='abc'): give an int"),
    ({"max_tokens": -5}, "structbench/scitab(max_tokens=-5): give a number of tokens"),
])
def test_a_bad_task_argument_is_a_usage_error_naming_it(shared_datasets: Path, arguments: dict[str, Any],
                                                        says: str) -> None:
    """``-T limit=abc`` failed deep in the sample reader with a TypeError; ``-T max_tokens=-5`` ran."""
    with pytest.raises(UsageError) as err:
        benchmark_task("scitab", data_dir=shared_datasets, **arguments)
    assert str(err.value).startswith(says)
