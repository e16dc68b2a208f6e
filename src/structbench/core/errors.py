"""Exceptions the CLI turns into clear messages, and the exit codes every command uses."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a ``structbench`` process's exit status means (documented in the README)."""

    OK = 0
    """Finished; every sample was scored."""
    INTERNAL = 1
    """A bug in structbench (an unexpected exception, printed with its traceback)."""
    USAGE = 2
    """Bad arguments, unknown names, malformed or missing data; nothing was run. Also a machine that cannot run what
    the run needs (``MachineError``): the run stops at the first sample that needs it."""
    FAILED_SAMPLES = 3
    """The run finished, but some samples failed (model errors after retries, or harness errors);
    running the same command again retries exactly those."""
    STOPPED = 4
    """The run stopped early because every request was failing the same way (server down, bad key,
    unknown model): a circuit breaker, so no believable row of zeros is produced."""
    STORAGE = 5
    """The run directory or the response cache could not be written (read-only, disk full)."""
    BUDGET = 6
    """The run stopped because it reached its budget (``--max-cost``, ``--max-tokens-total``); the same command
    with a larger budget resumes it without repeating a call."""
    INTERRUPTED = 130
    """Ctrl-C (SIGINT)."""
    TERMINATED = 143
    """SIGTERM."""
    OUTPUT_CLOSED = 141
    """What reads the output closed it before the end (``structbench list | head -1``): as a command ended by SIGPIPE,
    with no message; the files the command writes are not affected."""


class StructbenchError(Exception):
    """Base class for errors that carry a message meant for the user."""

    exit_code: int = ExitCode.INTERNAL


class UsageError(StructbenchError):
    """Bad arguments, unknown names or malformed input data (exit code 2)."""

    exit_code = ExitCode.USAGE


class DataError(UsageError):
    """A data file is missing or malformed; the message names the file and line or field."""


class DatasetUnavailableError(DataError):
    """A dataset is neither cached nor downloadable; the message says what to fetch and where."""


class MachineError(StructbenchError):
    """This machine cannot run what the run needs (a sandbox that cannot start its programs): the same for every
    sample, so the run stops at the first that meets it (exit code 2), which is not recorded; the message says what
    to change, and the same command then continues the run. The core knows what it means, never who raises it."""

    exit_code = ExitCode.USAGE


class StorageError(StructbenchError):
    """The run directory or the response cache cannot be written (read-only, disk full); exit code 5.

    Raised after every answer that could be kept was kept; the message says where."""

    exit_code = ExitCode.STORAGE


class RunStoppedError(StructbenchError):
    """The circuit breaker stopped the run: model calls kept failing the same way (exit code 4)."""

    exit_code = ExitCode.STOPPED


class BudgetError(StructbenchError):
    """The run reached its budget (``--max-cost`` or ``--max-tokens-total``), or cannot keep it (a server that reports
    no usage); exit code 6. Finished samples and every answer received are kept."""

    exit_code = ExitCode.BUDGET


class Terminated(SystemExit):
    """SIGTERM, raised in the main thread like ``KeyboardInterrupt`` is for SIGINT.

    A ``SystemExit`` so that asyncio lets it through every task and callback, and so that, if nothing
    catches it, the process still exits with 143 without a traceback."""

    def __init__(self) -> None:
        super().__init__(ExitCode.TERMINATED)


class LoggedWarning(UserWarning):
    """A warning structbench also logs (for a caller of the library, both): within a run, where its logged warnings
    become the run's notes (``runner.session.notes_from_logs``), it is not shown a second time."""
