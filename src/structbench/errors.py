"""Exceptions the CLI turns into clear messages and exit codes."""

from __future__ import annotations


class StructbenchError(Exception):
    """Base class for errors that carry a message meant for the user."""

    exit_code = 1


class UsageError(StructbenchError):
    """Bad arguments, unknown names or malformed input data (exit code 2)."""

    exit_code = 2


class DataError(UsageError):
    """A data file is missing or malformed; the message names the file and line or field."""


class DatasetUnavailableError(DataError):
    """A dataset is neither cached nor downloadable; the message says what to fetch and where."""
