"""A run's configuration as the ``run`` flags that repeat it: what a suggested command (the report's "fill with",
"the whole table") must carry to ask for and read replies as the run did.

Everything a command names itself (model, server, benchmarks, strategies, options, sweeps) is left to it; every
other part of the configuration becomes its flags, shell-quoted. The request seed of a suite file
(``generation.seed``) has no flag and is left out.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from structbench.runfiles.runconfig import RunConfig


def _yaml_value(value: Any) -> str:
    """A chat-template argument as ``--chat-template-arg`` reads it back (YAML): a string that YAML would read as
    something else (``true``, ``12``) is quoted, as JSON, which YAML reads."""
    import yaml

    if isinstance(value, str):
        try:
            if yaml.safe_load(value) == value:
                return value
        except yaml.YAMLError:
            pass
    return json.dumps(value, ensure_ascii=False)


def request_flags(config: RunConfig) -> list[str]:
    """The flags of ``config`` that change how replies are asked for or read: token caps and turns, sampling, the
    system prompt and chat-template arguments, and the reasoning settings (budget, effort, think tags, an opened
    thought). A paper's setting has none of them: a run with any is a run the paper did not make."""
    q = shlex.quote
    flags = []
    if config.max_tokens is not None:
        flags.append(f"--max-tokens {config.max_tokens}")
    if config.max_turns is not None:
        flags.append(f"--max-turns {config.max_turns}")
    if config.turn_limit is not None:
        flags.append(f"--turn-limit {config.turn_limit}")
    if config.generation.temperature is not None:
        flags.append(f"--temperature {config.generation.temperature}")
    if config.generation.top_p is not None:
        flags.append(f"--top-p {config.generation.top_p}")
    if config.system_prompt is not None:
        flags.append(f"--system-prompt {q(config.system_prompt)}")
    flags += [f"--chat-template-arg {q(f'{k}={_yaml_value(v)}')}" for k, v in config.chat_template_args.items()]
    reasoning = config.reasoning
    if reasoning.budget:
        flags.append(f"--reasoning-budget {reasoning.budget}")
    if reasoning.effort is not None:
        flags.append(f"--reasoning-effort {reasoning.effort}")
    flags += [f"--think-tags {q(f'{opening},{closing}')}" for opening, closing in reasoning.tags or ()]
    if reasoning.opened:
        flags.append("--thought-opened")
    return flags


def config_flags(config: RunConfig) -> list[str]:
    """The flags that repeat ``config`` beyond what it evaluates: where the data is, which samples, seeds and
    epochs, ``request_flags``, and the model's load options."""
    q = shlex.quote
    flags = []
    if config.data_dir:
        flags.append(f"--data-dir {q(config.data_dir)}")
    if config.allow_modified_data:
        flags.append("--allow-modified-data")
    if config.limit is not None:
        flags.append(f"--limit {config.limit}")
    if config.sample is not None:
        flags.append(f"--sample {config.sample}")
    if config.sample_ids:
        flags.append(f"--sample-id {q(','.join(config.sample_ids))}")
    if config.seed:
        flags.append(f"--seed {config.seed}")
    if config.epochs != 1:
        flags.append(f"--epochs {config.epochs}")
    flags += request_flags(config)
    flags += [f"-M {q(f'{k}={v}')}" for k, v in config.model_options.items()]
    return flags
