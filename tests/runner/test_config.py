"""The run configuration: model options are part of it, and runs without them keep their directory names."""

from __future__ import annotations

import pytest

from structbench.core.errors import UsageError
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.config import parse_options


def test_fingerprint_without_model_options_is_unchanged() -> None:
    config = RunConfig(model="llamacpp", benches=["structext:test"], limit=8, max_tokens=64)
    assert config.fingerprint() == "484a3ea653"  # the default suite's directory name before model options existed
    with_args = RunConfig(model="llamacpp", benches=["structext:test"], limit=8, max_tokens=64,
                          model_options={"n_ctx": "4096"})
    assert with_args.fingerprint() != config.fingerprint()
    assert RunConfig.model_validate(with_args.model_dump()) == with_args


def test_bad_pairs_name_their_flag() -> None:
    with pytest.raises(UsageError, match="--model-option 'dtype': expected KEY=VALUE$"):
        parse_options(["dtype"], "--model-option")
    with pytest.raises(UsageError, match=r"--option 'x': expected KEY=VALUE \(or BENCH.KEY=VALUE\)"):
        parse_options(["x"])


def test_reasoning_settings_are_checked() -> None:
    from pydantic import ValidationError

    from structbench.runfiles.runconfig import Reasoning
    from structbench.runner.config import parse_template_args, parse_think_tags

    assert Reasoning().model_dump() == {"budget": 0, "effort": None, "tags": None, "opened": False}
    for bad in ({"budget": -1}, {"effort": "extreme"}, {"tags": [["<t>", "<t>"]]}, {"tags": [["<t>"]]}):
        with pytest.raises(ValidationError):
            Reasoning.model_validate(bad)
    assert parse_think_tags(["<t>,</t>", " [THINK] , [/THINK] "]) == [("<t>", "</t>"), ("[THINK]", "[/THINK]")]
    assert parse_think_tags([]) is None
    with pytest.raises(UsageError, match="--think-tags '<t>': expected OPEN,CLOSE"):
        parse_think_tags(["<t>"])
    assert parse_template_args(["enable_thinking=false", "budget=1024", "mode=deep", "x="]) == {
        "enable_thinking": False, "budget": 1024, "mode": "deep", "x": ""}
    with pytest.raises(UsageError, match="--chat-template-arg 'oops': expected KEY=VALUE"):
        parse_template_args(["oops"])
