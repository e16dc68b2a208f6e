"""A run's configuration as ``run`` flags: read back by the ``run`` command, they give the same configuration."""

from __future__ import annotations

import shlex

import typer

from structbench.api import configure
from structbench.runfiles.runconfig import RunConfig
from structbench.runfiles.runflags import config_flags


def _read_back(config: RunConfig) -> RunConfig:
    """The configuration the ``run`` command makes of ``config``'s model, benchmarks and strategies and its flags."""
    from structbench.cli.app import _app_for
    from structbench.cli.run_cmd import _keywords
    from structbench.runner.arguments import check_arguments
    from structbench.runner.configure import run_config

    command = typer.main.get_command(_app_for(["run"]))  # the app of one command is that command
    args = ["-m", config.model, "-b", ",".join(config.benches), "-s", ",".join(config.strategies),
            *shlex.split(" ".join(config_flags(config)))]
    params = command.make_context("run", args).params
    return run_config(check_arguments(_keywords(params), caller="run", flags=True), flags=True, caller="run")


def test_every_setting_that_asks_for_or_reads_replies_comes_back() -> None:
    config = configure("oracle", "structext:test", strategy="zero_shot", limit=3, sample_ids=None, seed=4,
                       max_tokens=64, max_turns=5, epochs=2, temperature=0.25, top_p=0.9,
                       system_prompt="Be brief; don't 'think' aloud.", chat_template_args={
                           "enable_thinking": False, "mode": "true", "budget": 512, "note": "a b"},
                       reasoning_budget=1000, reasoning_effort="high", think_tags=[("[THINK]", "[/THINK]"),
                                                                                    ("<seed:think>", "</seed:think>")],
                       thought_opened=True, data_dir="/tmp/a dir", allow_modified_data=True,
                       model_options={"n_ctx": "4096"})
    assert _read_back(config).model_dump() == config.model_dump()


def test_a_default_run_needs_no_flag() -> None:
    assert config_flags(configure("oracle", "structext:test")) == []
