"""A run's ``RunConfig`` built from its options (``runner.arguments.RunArguments``): the one way ``evaluate``,
``configure``, the ``run`` command and a suite file's models turn options into what decides a run's results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from structbench.core.errors import UsageError
from structbench.runner.arguments import flag_name, named
from structbench.runner.option_values import bench_entries, names, option_text, preset_config, sweep_values

if TYPE_CHECKING:
    from structbench.runfiles.runconfig import Generation, Reasoning, RunConfig
    from structbench.runner.arguments import RunArguments

DEFAULT_SUITE = ["structfact:generated"]
"""What runs without ``bench``: StructFact questions over a fictional world (no download, facts no model has seen),
few-shot with A/B/C options, so even the embedded base model answers with a parseable option letter (constrained
decoding where the backend has it) and its score can be read against the chance and majority baselines beside it."""
DEFAULT_STRATEGIES = ["few_shot"]
DEFAULT_OPTIONS = {"structfact.tables": "synthetic", "structfact.per_task": "6", "structfact.answer": "constrained"}
"""Six questions per task (30 in all, about a minute on two CPU cores); given options win."""


def _generation(args: RunArguments, flags: bool, caller: str) -> Generation:
    """The run's sampling settings; a bad value is a usage error naming it."""
    from pydantic import ValidationError

    from structbench.runfiles.runconfig import Generation

    try:
        return Generation(temperature=args.temperature, top_p=args.top_p)
    except ValidationError as err:
        problem = err.errors()[0]
        name = str(problem["loc"][0])
        where = named(name, problem["input"], flags)
        raise UsageError(f"{where if flags else f'{caller}({where})'}: {problem['msg'].lower()}") from None


def _reasoning(args: RunArguments, flags: bool, caller: str) -> Reasoning:
    """The run's ``Reasoning``; a bad value is a usage error naming the setting."""
    from pydantic import ValidationError

    from structbench.runfiles.runconfig import Reasoning

    tags = [(opening, closing) for opening, closing in args.think_tags] if args.think_tags is not None else None
    try:
        return Reasoning(budget=args.reasoning_budget, effort=args.reasoning_effort, tags=tags,
                         opened=args.thought_opened)
    except ValidationError as err:
        problem = err.errors()[0]
        name = {"effort": "reasoning_effort", "tags": "think_tags"}.get(str(problem["loc"][0]), "reasoning_budget")
        where = named(name, problem["input"], False)
        shown = flag_name(name) if flags else f"{caller}({where})"
        raise UsageError(f"{shown}: {problem['msg'].removeprefix('Value error, ')}") from None


def run_config(args: RunArguments, *, flags: bool = False, caller: str = "configure") -> RunConfig:
    """What decides the run ``args`` describe, checked: an unknown benchmark, a bad option ... is a ``UsageError``
    naming the option as its caller wrote it (``limit=0``; ``flags``: as the run command's flag, ``--limit 0``)."""
    from structbench.runfiles.runconfig import RunConfig

    def arg(name: str, value: object) -> str:
        return named(name, value, flags)

    if args.sample is not None and args.limit is not None:
        raise UsageError(f"{arg('limit', args.limit)} takes the first samples and {arg('sample', args.sample)} a "
                         "seeded random set of them; give one")
    ids = names(args.sample_ids) if args.sample_ids is not None else None
    if args.sample_ids is not None and not ids:
        raise UsageError(f"{arg('sample_ids', args.sample_ids)} names no sample; give ID[,ID...]")
    opts = {key: option_text(value) for key, value in (args.options or {}).items()}
    strategies = names(args.strategy)
    benches = bench_entries(args.bench)
    sweeps = sweep_values(args.sweep)
    if args.preset is not None:
        from structbench.runner.sweep import preset_sweeps

        if args.bench is not None or args.strategy is not None:
            drop = "--bench and --strategy" if flags else "bench and strategy"
            raise UsageError(f"{arg('preset', args.preset)} sets the benchmarks and strategies; drop {drop}")
        benches, strategies, opts = preset_config(args.preset, opts, flags)
        sweeps = preset_sweeps(args.preset, sweeps)
    elif benches is None:
        benches = DEFAULT_SUITE
        strategies = strategies or DEFAULT_STRATEGIES
        opts = DEFAULT_OPTIONS | opts
    elif not benches:
        raise UsageError(f"{arg('bench', repr(args.bench) if flags else args.bench)} names no benchmark; give "
                         "BENCH[:VARIANT],... or 'all' (structbench list shows them)")
    base_url = args.base_url
    if base_url is not None:
        from structbench.backends.openai_compat import shown_base_urls

        base_url = shown_base_urls(base_url)  # passwords [REDACTED]: the configuration is stored
    model_options = {key: option_text(value) for key, value in (args.model_options or {}).items()}
    model_options |= {key: value for key, value in (("device", args.device), ("dtype", args.dtype))
                      if value is not None}
    return RunConfig(
        model=args.model,
        base_url=base_url or None,
        benches=benches,
        strategies=strategies,
        options=opts,
        sweeps=sweeps,
        limit=args.limit,
        sample=args.sample,
        sample_ids=ids,
        seed=args.seed,
        epochs=args.epochs,
        data_dir=str(args.data_dir) if args.data_dir else None,
        allow_modified_data=args.allow_modified_data,
        max_tokens=args.max_tokens,
        model_options=model_options,
        system_prompt=args.system_prompt or None,
        chat_template_args=dict(args.chat_template_args or {}),
        generation=_generation(args, flags, caller),
        reasoning=_reasoning(args, flags, caller),
        max_turns=args.max_turns,
        turn_limit=args.turn_limit,
    )
