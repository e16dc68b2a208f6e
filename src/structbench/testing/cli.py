"""Run a ``structbench`` command in this process, as the console script would, and keep what it printed.

Tests call this instead of a ``python -m structbench`` subprocess: the same entry point (``cli.app.main``: one-line
errors, exit codes), without a second interpreter's start-up on every call. A few tests keep a real subprocess for
what only one shows (signals, a crash's exit code, the console script itself)."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Invocation:
    """What one command did: its exit status and what it wrote to stdout and stderr."""

    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None, cwd: Path | None) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = Path.cwd()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def invoke(*args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Invocation:
    """``structbench ARGS`` in this process, in ``cwd`` with ``env`` (this process's when None), the modules ``env``
    names in ``STRUCTBENCH_PLUGINS`` imported as a new process would."""
    import sys

    from structbench.cli.app import main
    from structbench.core.plugins import import_env_plugins

    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    code = 0
    with _environment(env, cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        sys.argv = ["structbench", *args]
        try:
            # a new process imports the modules ``env`` names in STRUCTBENCH_PLUGINS when it first loads the
            # registry; this one may have loaded it already, under another environment
            import_env_plugins()
            main()
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        finally:
            sys.argv = argv
    return Invocation(code, out.getvalue(), err.getvalue())
