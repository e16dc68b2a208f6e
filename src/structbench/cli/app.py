"""``structbench``: list, run, export, score, report, compare and view, one module per command (``cli.*_cmd``); this
module builds the app and is the entry point. Heavy modules are imported inside the commands."""

from __future__ import annotations

import errno
import gc
import importlib
import signal
import sys
import traceback
from typing import Any

import typer
from typer.main import get_group

from structbench.cli.common import echo
from structbench.core.errors import ExitCode, StructbenchError, Terminated
from structbench.core.redact import redact


def _flags_without_type() -> None:
    """typer 0.2x labels every flag ``<bool>`` in ``--help`` (``--no-cache <bool>``, ``--help <bool>``), as if it took
    a value; a flag takes none, so its type column is left empty. Other options keep their ``<int>``, ``<path>``."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "flags_without_type", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    display_type_rich.flags_without_type = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_without_type()

COMMANDS: dict[str, tuple[str, str]] = {
    "list": ("list_cmd", "list_cmd"),
    "embedded-model": ("list_cmd", "embedded_model"),
    "run": ("run_cmd", "run"),
    "export": ("export_cmd", "export"),
    "score": ("score_cmd", "score"),
    "report": ("report_cmds", "report"),
    "compare": ("report_cmds", "compare"),
    "convert": ("interop_cmds", "convert"),
    "publish": ("interop_cmds", "publish"),
    "log": ("log_cmd", "log"),
    "batches": ("batches_cmd", "batches"),
    "view": ("view_cmd", "view"),
}
"""Each command, in ``--help``'s order: the ``structbench.cli`` module and function that implement it."""
GROUPS: dict[str, tuple[str, str]] = {"generate": ("generate_cmd", "generate_app")}
"""Each command group: the module and the ``typer.Typer`` of its commands."""
RESUME_THEMSELVES = frozenset({"run"})
"""Commands that keep the collector paused past their start (``core.collector.pause``) and resume it themselves: a
run once it has loaded its samples (``Run._work``)."""


def _implementation(module: str, name: str) -> Any:
    return getattr(importlib.import_module(f"structbench.cli.{module}"), name)


def _app_for(args: list[str]) -> typer.Typer:
    """The app holding only the command ``args`` name (``run``, ``generate``), or the whole app when they name none
    (``--help``, a misspelt command: its listing and suggestions need them all). Only that command's module is
    imported (the others' options and enums: 5-10 ms), and typer builds a click command of it alone (it reads
    every registered function's annotations on each call: 40-60 ms for all eighteen, 5 ms for ``run``; issue 44)."""
    name = args[0] if args else None
    whole = name not in COMMANDS and name not in GROUPS
    built = typer.Typer(
        add_completion=False,
        no_args_is_help=False,
        help="Evaluate language models on reasoning over structured knowledge.",
        pretty_exceptions_enable=False,
    )
    for command, where in COMMANDS.items():
        if whole or command == name:
            built.command(command)(_implementation(*where))
    for group, where in GROUPS.items():
        if whole or group == name:
            built.add_typer(_implementation(*where), name=group)
    return built


def __getattr__(name: str) -> typer.Typer:
    """``app``: the whole app, every command registered (tests, the docs' CLI reference); made when first asked for."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()["app"] = whole = _app_for([])
    return whole


STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EFBIG})
PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.EISDIR, errno.ENOTDIR})
DUCKDB_INTERRUPTED = "Query interrupted"
"""What DuckDB raises (a ``RuntimeError``) when Ctrl-C comes while it runs a query, in place of KeyboardInterrupt."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated()


def main() -> None:
    """Entry point: known failures print one line (secrets redacted) and exit with their ``ExitCode``; a bug
    prints its traceback (redacted too) and exits 1; SIGTERM ends like Ctrl-C, with 143."""
    from typer.exceptions import TyperException

    from structbench.core.blas_threads import sleep_when_idle
    from structbench.core.collector import collect_less, freeze_at_exit, pause, resume
    from structbench.core.plugins import skip_pydantic_plugin_scan
    from structbench.core.words import flag_words

    thresholds = collect_less()  # (``python -m structbench`` did already, before its imports)
    pause()
    freeze_at_exit()
    skip_pydantic_plugin_scan()
    sleep_when_idle()  # before numpy's import
    signal.signal(signal.SIGTERM, _terminate)
    _redact_logs()
    words = flag_words.set(True)  # errors deep in a run name its options as this command's flags
    try:
        command = get_group(_app_for(sys.argv[1:]))
        if not RESUME_THEMSELVES.intersection(sys.argv[1:2]):
            resume()
        code = command(standalone_mode=False)  # typer's own errors come back here, to be printed as one line
        sys.exit(code if isinstance(code, int) else ExitCode.OK)
    except TyperException as err:  # a bad flag value, an unknown option: one line, as every other usage error
        if type(err).__name__ == "NoArgsIsHelpError":  # a command group given no command: its help
            echo(err.format_message(), err=True)
        else:
            echo(redact(usage_line(err)), err=True)
        sys.exit(err.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        echo("interrupted (Ctrl-C)", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except RuntimeError as err:
        if str(err) != DUCKDB_INTERRUPTED:
            _crash()
        echo("interrupted (Ctrl-C)", err=True)  # DuckDB took the SIGINT, stopped its query and raised this instead
        sys.exit(ExitCode.INTERRUPTED)
    except Terminated:
        echo("terminated (SIGTERM)", err=True)
        sys.exit(ExitCode.TERMINATED)
    except SystemExit as stop:  # typer ends with 1, the code of a bug, where its output's reader went away (EPIPE)
        if stop.code == ExitCode.INTERNAL and _output_closed():
            sys.exit(ExitCode.OUTPUT_CLOSED)
        raise
    except StructbenchError as err:
        echo(redact(f"error: {err}"), err=True)
        sys.exit(err.exit_code)
    except OSError as err:
        if err.errno in PATH_ERRNOS:  # a path given that cannot name the file wanted: the user's to fix
            echo(redact(f"error: {err.filename or ''}: {err.strerror}"), err=True)
            sys.exit(ExitCode.USAGE)
        if err.errno not in STORAGE_ERRNOS:
            _crash()
        where = f"{err.filename}: " if err.filename else ""
        echo(redact(f"error: {where}cannot be written: {err.strerror}"), err=True)
        sys.exit(ExitCode.STORAGE)
    except Exception:
        _crash()
    finally:
        flag_words.reset(words)  # an in-process invocation (testing.cli) leaves Python's words to the library
        resume()  # and its collector as it was
        gc.set_threshold(*thresholds)


def _output_closed() -> bool:
    """Whether standard output is a pipe whose reader has closed it (``| head``): the kernel reports an error on it."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.__stdout__.fileno() if sys.__stdout__ is not None else 1, select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def usage_line(err: Exception) -> str:
    """A command-line error of typer's (``--concurrency 0``, ``--bogus``) as one line: the message, then where the
    command's help is."""
    message = " ".join(getattr(err, "format_message", err.__str__)().split()).removesuffix(".")
    ctx = getattr(err, "ctx", None)
    where = f"; see '{ctx.command_path} --help'" if ctx is not None else ""
    return f"error: {message[:1].lower()}{message[1:]}{where}"


def _redact_logs() -> None:
    """Log warnings to stderr as Python would without a handler, with secrets redacted."""
    import logging

    class Redacting(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return redact(super().format(record))

    class ToStderr(logging.StreamHandler):
        """Writes to the ``sys.stderr`` of the moment (a command run in-process has its own)."""

        @property
        def stream(self) -> Any:
            return sys.stderr

        @stream.setter
        def stream(self, value: Any) -> None:
            pass

    root = logging.getLogger()
    if any(type(h).__name__ == "ToStderr" for h in root.handlers):
        return  # main() ran before in this process (structbench.testing.cli)
    handler = ToStderr()
    handler.setLevel(logging.WARNING)
    handler.setFormatter(Redacting("%(message)s"))
    root.addHandler(handler)


def _crash() -> None:
    echo(redact(traceback.format_exc()), err=True)
    sys.exit(ExitCode.INTERNAL)
