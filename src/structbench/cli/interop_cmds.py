"""``structbench convert`` and ``structbench publish``; registered on the app by ``cli.app``.

The converters (inspect-ai, pyarrow, huggingface_hub) load inside the commands, so ``structbench --help`` stays
fast and a missing extra is one clear line.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from structbench.cli.common import echo

REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


class Target(StrEnum):
    """``convert --to``."""

    inspect = "inspect"
    lm_eval = "lm-eval"


def convert(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    to: Annotated[Target, typer.Option("--to", help="inspect: one Inspect AI log (.eval) per benchmark, variant and "
                                       "strategy; lm-eval: lm-evaluation-harness results and samples files.")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write into (created if missing).")],
) -> None:
    """Write a run's results where other tools read them: Inspect AI logs or lm-evaluation-harness files."""
    from structbench.core.errors import UsageError
    from structbench.core.redact import register_env_secrets
    from structbench.interop.rundir import read_run

    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a folder")
    run = read_run(run_dir)
    register_env_secrets()
    if to == Target.inspect:
        try:
            from structbench.interop.inspect_log import write_logs
        except ImportError as err:
            raise UsageError(f"--to inspect needs inspect-ai: pip install 'structbench[inspect]' ({err})") from None
        written = write_logs(run, out)
        what = f"{len(written)} Inspect log(s) (one per benchmark, variant and strategy); open them with " \
               f"`inspect view --log-dir {out}`"
    else:
        from structbench.interop.lmeval import write_lmeval

        written = write_lmeval(run, out)
        what = f"lm-evaluation-harness results and {len(written) - 1} samples file(s)"
    for path in written:
        echo(f"wrote {path}")
    echo(f"{run_dir}: {what}")


def publish(
    run_dirs: Annotated[list[Path], typer.Argument(help="One or more run directories.")],
    out: Annotated[Path, typer.Option("--out", help="The dataset folder to write (new, empty, or an earlier "
                                      "publish's, which is replaced).")],
    repo: Annotated[str | None, typer.Option("--repo", help="Also upload the folder to this Hugging Face dataset "
                                             "repository, ORG/NAME (created if missing; token: HF_TOKEN or "
                                             "`hf auth login`).")] = None,
    private: Annotated[bool, typer.Option("--private", help="Create the repository private.")] = False,
) -> None:
    """Runs as a Hugging Face dataset: results and samples as Parquet, a dataset card, the runs' configurations."""
    from structbench.core.errors import UsageError

    if repo is not None and not REPO_NAME.match(repo):
        raise UsageError(f"--repo {repo!r}: expected ORG/NAME, e.g. my-lab/structbench-results")
    try:
        from structbench.interop.hub import publish as write
        from structbench.interop.hub import upload
    except ImportError as err:
        raise UsageError(f"publish needs pyarrow: pip install 'structbench[datasets]' ({err})") from None
    from structbench.interop.rundir import read_run

    seen: dict[Path, Path] = {}
    for path in run_dirs:  # a run given twice would be published twice, its rows duplicated
        first = seen.setdefault(path.resolve(), path)
        if first is not path:
            also = f" (as {first} too)" if str(first) != str(path) else ""
            raise UsageError(f"{path}: given twice{also}; give each run directory once")
    runs = [read_run(path) for path in run_dirs]
    folder = write(runs, out, repo=repo)
    echo(f"wrote {folder} ({sum(len(r) for r in runs)} samples of {len(runs)} run(s)); load it with "
               f"datasets.load_dataset({str(folder)!r}, 'results')")
    if repo is not None:
        echo(f"uploaded to https://huggingface.co/datasets/{repo}: {upload(folder, repo, private=private)}")
