"""The run configuration: model options are part of it, and runs without them keep their directory names."""

from __future__ import annotations

import pytest

from structbench.errors import UsageError
from structbench.runner.config import RunConfig, parse_options


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
