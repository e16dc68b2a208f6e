"""``structbench list`` and ``structbench embedded-model``: what can be run, and the embedded model's file."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from structbench.api import DEFAULT_MODEL
from structbench.cli.common import echo, plain

if TYPE_CHECKING:
    from pydantic import BaseModel


def _option_default(field: Any) -> str:
    """An option's default as ``--option KEY=VALUE`` takes it (``none`` for no value)."""
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    return str(value)


def field_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """Each field's description: its ``Field(description=...)``, else the docstring written under it in the class
    body (of the model or a base it inherits the field from). The docstrings are read from the source here, when they
    are shown: pydantic's ``use_attribute_docstrings`` reads them when the class is created, which costs every run
    that imports a benchmark a scan of every loaded module's file (``inspect.getmodule``)."""
    import ast
    import inspect
    import itertools
    import textwrap

    from pydantic import BaseModel

    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not issubclass(cls, BaseModel) or cls is BaseModel:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError, SyntaxError):  # no source (a class made at run time)
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for stmt, after in itertools.pairwise(body):
            if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return {name: field.description or docs.get(name, "") for name, field in model.model_fields.items()}


def _option_blocks(options: type[BaseModel], width: int) -> list[str]:
    """``    KEY (default VALUE): what it means`` per run option, from the Options model's field docstrings."""
    import re
    import textwrap

    blocks = []
    meanings = field_docstrings(options)
    for name, field in options.model_fields.items():
        meaning = re.sub(r"``([^`]*)``", r"\1", " ".join(meanings[name].split()))
        blocks.append(textwrap.fill(f"{name} (default {_option_default(field)}){': ' + meaning if meaning else ''}",
                                    width=width, initial_indent="    ", subsequent_indent="        ",
                                    break_long_words=False, break_on_hyphens=False))
    return blocks


def list_cmd() -> None:
    """Benchmarks with their variants, strategies, metrics and options (meaning and default); presets; backends;
    where the embedded model's GGUF file is."""
    import shutil
    import textwrap

    from structbench.backends import BACKENDS
    from structbench.benchmarks import BENCHMARKS
    from structbench.core.plugins import warn_plugin

    width = max(40, shutil.get_terminal_size((100, 24)).columns)

    def field(label: str, items: list[str]) -> str:
        """``label: a, b, c`` wrapped between items only, so every name stays whole and copyable."""
        return textwrap.fill(
            ", ".join(items) or "-", width=width, initial_indent=f"  {label + ':':<11} ", subsequent_indent=" " * 14,
            break_long_words=False, break_on_hyphens=False,
        )

    blocks = []
    for name, cls in BENCHMARKS.usable(warn_plugin):  # a plugin that fails to load is a warning, left out
        bench = cls()
        strategies = [f"{s} (default)" if s == cls.default_strategy else s for s in bench.strategies()]
        metrics = [f"{cls.headline} (headline)", *(m for m in cls.metric_names if m != cls.headline)]
        variants = [f"{v} (default)" if i == 0 else v for i, v in enumerate(cls.variants)]
        options = _option_blocks(cls.Options, width)
        blocks.append("\n".join([
            f"{name}  {cls.title}",
            field("variants", variants),
            field("strategies", strategies),
            field("metrics", metrics),
            *(["  options:", *options] if options else [field("options", [])]),
        ]))
    echo("\n\n".join(blocks))
    echo("\n" + textwrap.fill(
        "Options are given as --option KEY=VALUE (every selected benchmark that has KEY) or --option BENCH.KEY=VALUE "
        "(one benchmark).", width=width, break_long_words=False, break_on_hyphens=False))
    title = ("presets: a robustness grid (docs/usage/robustness.md) or one paper table's configuration each "
             "(structbench run --model M --preset NAME [--limit N])")
    echo("\n\n" + textwrap.fill(title, width=width, break_long_words=False, break_on_hyphens=False) + "\n")
    echo("\n\n".join(_preset_blocks(field, width)))
    backends = [name for name, _ in BACKENDS.usable(warn_plugin)]
    echo("\n" + field("backends", [f"{b} (default)" if b == DEFAULT_MODEL else b for b in backends]))
    echo(textwrap.fill(
        f"The embedded model (Gemma 3 270M, Q4_K_M) is assembled on first use into {_embedded_path()}; "
        "`structbench embedded-model` prints its path (assembling it first), to serve it with llama.cpp yourself.",
        width=width, break_long_words=False, break_on_hyphens=False))


def _preset_blocks(field: Callable[[str, list[str]], str], width: int) -> list[str]:
    """``--preset`` names with the configuration behind each paper table, and each robustness grid."""
    import math
    import textwrap

    from structbench.benchmarks.presets import paper_tables, robustness_presets

    blocks = []
    for r in robustness_presets():  # a grid: --sweep values, cells x samples x strategies calls
        cells = math.prod(len(v) for v in r.sweeps.values())
        head = f"{r.name}  robustness grid, {cells} cells: {r.description}"
        blocks.append("\n".join([
            textwrap.fill(head, width=width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False),
            field("benchmarks", list(r.benches)),
            field("strategies", list(r.strategies)),
            field("options", [f"{k}={v}" for k, v in r.options.items()]),
            *(field(f"sweep {k}", list(v)) for k, v in r.sweeps.items()),
        ]))
    for t in paper_tables():
        p, data = t.preset, t.published
        head = f"{p.name}  {data.source} ({len(data.rows)} rows x {len(data.columns)} columns)"
        blocks.append("\n".join([
            textwrap.fill(head, width=width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False),
            field("benchmarks", list(p.benches)),
            field("strategies", list(p.strategies)),
            field("options", [f"{k}={v}" for k, v in p.options.items()]),
        ]))
    return blocks


def _embedded_path() -> str:
    from structbench.backends.llamacpp import embedded_model_file

    return str(embedded_model_file())


def embedded_model(
    serve: Annotated[
        bool,
        typer.Option("--serve", help=plain("Print the command that serves the file with llama-cpp-python's server "
                                           "(its [server] extra), prompting the model as the embedded runs do.")),
    ] = False,
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="The server's port (with --serve).")] = 8080,
) -> None:
    """Print the path of the embedded model's GGUF file (Gemma 3 270M, Q4_K_M), assembling it first if needed; the
    file carries the chat template the embedded runs use, so a server of it prompts the model the same way (serve it
    with --serve's command, or `llama-server --jinja -m "$(structbench embedded-model)" -c 8192`)."""
    import shlex

    from structbench.backends.gguf_template import has_chat_template
    from structbench.backends.llamacpp import SERVED_NAME, embedded_model_file, embedded_model_path, serve_command

    if not has_chat_template(embedded_model_file()):
        echo(f"assembling the embedded model into {embedded_model_file()} (once) ...", err=True)
    path = embedded_model_path()
    if not serve:
        echo(str(path))
        return
    echo(shlex.join(serve_command(path, port)))
    echo(f"then: structbench run --model openai:{SERVED_NAME} --base-url http://localhost:{port}/v1 "
               "-M n_ctx=8192 --concurrency 2 --max-tokens 512", err=True)
