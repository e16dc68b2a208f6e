"""Files of a run directory opened for reading without ever waiting: a run directory is untrusted input, and a FIFO
(or a device) named ``samples.jsonl`` or ``manifest.json`` made a plain ``open()`` wait for a writer for good, in a
call Ctrl-C cannot interrupt (``structbench view`` and ``report`` hung). Every reader of a run's files opens them
here: ``O_NONBLOCK`` so opening returns at once, then only a regular file is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from structbench.core.errors import DataError

KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def not_regular(path: Path, mode: int) -> str:
    """The one line naming ``path`` as a file of the kind ``mode`` says, which is not read."""
    kind = next((name for test, name in KINDS if test(mode)), "not a file")
    return f"{path}: {kind}, not a regular file; not read"


def open_regular(path: Path) -> BinaryIO:
    """``path`` open for reading (binary, blocking reads) when it is a regular file; a ``DataError`` naming it
    otherwise. ``OSError`` (``FileNotFoundError``, no permission) as ``open()`` raises it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise DataError(not_regular(path, mode))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, limit: int = -1) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit`` of them when one is given); see ``open_regular``."""
    with open_regular(path) as fh:
        return fh.read(limit)
