"""``run``'s flags as users of other harnesses type them: ``--output-dir`` (``--out``), ``-o`` given a path,
``--temperature``/``--top-p``/``--system-prompt`` reaching every request, ``--sample-id``, the seeded ``--sample``
(each command in this process, ``structbench.testing.cli.invoke``), and what the backend refuses, refused before any
data is read."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from structbench.api import configure
from structbench.backends.base import Request
from structbench.backends.mock import MockBackend
from structbench.data.datasets import DataContext
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from structbench.testing.cli import Invocation, invoke


def sb(cwd: Path, *args: str) -> Invocation:
    return invoke("run", *args, "--no-progress", env=dict(os.environ, STRUCTBENCH_CACHE=str(cwd / "cache")), cwd=cwd)


def ids(run_dir: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (run_dir / "samples.jsonl").read_text().splitlines()]


def test_o_with_a_path_says_it_is_option_and_names_output_dir(tmp_path: Path) -> None:
    proc = sb(tmp_path, "-m", "oracle", "-b", "structext:test", "-o", "runs/x")
    assert proc.returncode == 2 and not (tmp_path / "runs").exists()
    assert proc.stderr.strip() == ("error: -o/--option 'runs/x': expected KEY=VALUE (or BENCH.KEY=VALUE); -o is "
                                   "--option here, not the output: to write to runs/x, give --output-dir runs/x")


def test_output_dir_and_out_name_the_same_directory(tmp_path: Path) -> None:
    first = sb(tmp_path, "-m", "oracle", "-b", "structext:test", "-n", "2", "--output-dir", "r")
    assert first.returncode == 0 and "run directory: r" in first.stdout, first.stderr
    again = sb(tmp_path, "-m", "oracle", "-b", "structext:test", "-n", "2", "--out", "r")  # resumes: the same run
    assert again.returncode == 0, again.stderr
    sessions = json.loads((tmp_path / "r" / "manifest.json").read_text())["sessions"]
    assert [s["jobs"] for s in sessions] == [2, 0]


def test_sample_draws_a_seeded_subset_and_sample_id_names_samples(tmp_path: Path) -> None:
    everything = sb(tmp_path, "-m", "oracle", "-b", "structext:test", "--out", "all")
    assert everything.returncode == 0, everything.stderr
    order = ids(tmp_path / "all")
    drawn = {}
    for seed in ("1", "2"):
        proc = sb(tmp_path, "-m", "oracle", "-b", "structext:test", "--sample", "5", "--seed", seed, "--out", seed)
        assert proc.returncode == 0, proc.stderr
        drawn[seed] = ids(tmp_path / seed)
        assert len(drawn[seed]) == 5 and set(drawn[seed]) <= set(order)
        config = json.loads((tmp_path / seed / "manifest.json").read_text())["config"]
        assert config["sample"] == 5 and config["seed"] == int(seed)
    assert drawn["1"] != drawn["2"]  # the seed picks the samples
    again = sb(tmp_path, "-m", "oracle", "-b", "structext:test", "--sample", "5", "--seed", "1", "--out", "1b")
    assert again.returncode == 0 and ids(tmp_path / "1b") == drawn["1"]  # the same seed, the same samples
    assert drawn["1"] != order[:5] or drawn["2"] != order[:5]  # not the first five
    assert sorted(drawn["1"], key=order.index) == sorted(drawn["1"], key=drawn["1"].index)  # in benchmark order

    chosen = [order[7], order[2]]
    named = sb(tmp_path, "-m", "oracle", "-b", "structext:test", "--sample-id", ",".join(chosen), "--out", "named")
    assert named.returncode == 0, named.stderr
    assert set(ids(tmp_path / "named")) == set(chosen)
    assert json.loads((tmp_path / "named" / "manifest.json").read_text())["config"]["sample_ids"] == chosen
    typo = sb(tmp_path, "-m", "oracle", "-b", "structext:test", "--sample-id", order[3][:-1], "--out", "typo")
    assert typo.returncode == 2 and not (tmp_path / "typo").exists()
    assert f"no sample has an id of --sample-id {order[3][:-1]} (its ids look like {order[0]}" in typo.stderr
    assert "Did you mean: " in typo.stderr
    both = sb(tmp_path, "-m", "oracle", "-b", "structext:test", "--sample", "3", "--limit", "3", "--out", "both")
    assert both.returncode == 2 and "give one" in both.stderr


def test_sampling_flags_and_system_prompt_reach_every_request(tmp_path: Path) -> None:
    seen: list[Request] = []

    def reply(request: Request) -> str:
        seen.append(request)
        return "### Answer:\nx"

    config = configure("mock", "structext:test", limit=3, temperature=0.3, top_p=0.9, system_prompt="Be brief.")
    assert (config.generation.temperature, config.generation.top_p) == (0.3, 0.9)
    selections = prepare(config, DataContext())
    Run(tmp_path / "run", config).execute(MockBackend(reply=reply), selections, cache=None, concurrency=1,
                                          progress=False)
    assert len(seen) == 3
    assert {(r.params.temperature, r.params.top_p) for r in seen} == {(0.3, 0.9)}
    assert all(r.messages is not None and r.messages[0].content.startswith("Be brief.") for r in seen)
    resumed = sb(tmp_path, "--resume", "run", "--temperature", "0.5")
    assert resumed.returncode == 2 and "--temperature would change it" in resumed.stderr


def test_a_system_prompt_with_credential_like_words_is_kept_as_written(tmp_path: Path) -> None:
    from structbench.testing.cli import invoke

    prompt = "Write the answer in basic Python3-compatible English. Authorization: none required."
    args = ("run", "-m", "oracle", "-b", "structext:test", "-n", "3", "--system-prompt", prompt, "--out", "r",
            "--no-progress")
    env = dict(os.environ, STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    first = invoke(*args, env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = invoke(*args, env=env, cwd=tmp_path)  # the same command resumes: the stored configuration is the same
    assert again.returncode == 0, again.stderr
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["config"]["system_prompt"] == prompt and [s["jobs"] for s in manifest["sessions"]] == [3, 0]
    records = [json.loads(line) for line in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    assert all(r["prompt"][0] == {"role": "system", "content": prompt} for r in records)


def test_every_run_option_is_a_flag_with_its_help_and_a_suite_file_refuses_its_own(tmp_path: Path) -> None:
    """The command's options are ``RunArguments``' fields: each under its flag names with its help; those a suite
    file sets are refused beside one, named as the command spells them."""
    from structbench.runner.arguments import FLAGS, RunArguments
    from structbench.testing.cli import invoke

    shown = invoke("run", "--help", env=dict(os.environ, COLUMNS="400", TERM="dumb"))
    assert shown.returncode == 0
    text = " ".join(shown.stdout.split())
    assert set(FLAGS) | {"notify"} == set(RunArguments.model_fields)  # notify: Python's only
    for name, flag in FLAGS.items():
        assert all(n in text for n in flag.names or ("--" + name.replace("_", "-"),)), name
        assert " ".join(flag.help.split())[:40] in text, name
    (tmp_path / "suite.yaml").write_text("models: [oracle]\nbenchmarks: [scitab]\n")
    refused = invoke("run", "suite.yaml", "-o", "a=1", "--sample-id", "x", "--model-option", "k=v", "--device", "cpu",
                     cwd=tmp_path)
    assert refused.returncode == 2
    assert "--option, --sample-id, --model-option, --device cannot be given with a suite file" in refused.stderr


WITH_LITELLM = pytest.mark.skipif(importlib.util.find_spec("litellm") is None, reason="the [litellm] extra")


@pytest.mark.parametrize(("model", "flags", "said"), [
    pytest.param("litellm:nosuchprovider/x", (), "--model litellm:nosuchprovider/x: LiteLLM does not know which "
                 "provider serves it", marks=WITH_LITELLM, id="litellm-unknown-provider"),
    pytest.param("litellm:gemini/gemini-2.5-flash", ("--chat-template-arg", "enable_thinking=false"),
                 "chat_template_args: the litellm backend cannot pass arguments to a chat template", marks=WITH_LITELLM,
                 id="litellm-provider-without-chat-templates"),
    pytest.param("openai:x", ("--base-url", "http://127.0.0.1:9/v1", "-M", "foo=1"),
                 "--model-option foo: not an option of the openai backend (known: n_ctx)", id="model-option"),
    pytest.param("anthropic:claude-x", ("--base-url", "http://127.0.0.1:9", "--reasoning-effort", "none"),
                 "--reasoning-effort none: the anthropic backend sends only", id="reasoning-effort"),
])
def test_what_the_backend_refuses_is_refused_before_any_data_is_read(
        model: str, flags: tuple[str, ...], said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A usage error comes before any work: the backend is built, and the run's settings checked against it, before the
    benchmark's data is read (a missing dataset would otherwise be said first, or a large one read for nothing); exit
    2, one line, no run directory."""
    reads: list[object] = []
    from_env = DataContext.from_env

    def counted(*args: object, **kwargs: object) -> DataContext:
        reads.append(args)
        return from_env(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(DataContext, "from_env", staticmethod(counted))
    proc = sb(tmp_path, "-m", model, "-b", "structext:test", *flags, "--out", "r")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"error: {said}")
    assert reads == [] and not (tmp_path / "r").exists()
