"""Files that appear whole or not at all: written under a temporary name beside the target, then renamed; the file
is synced before the rename and its folder after, so a crash of the machine keeps the old file or the new one whole.

The temporary file gets the mode an ordinary ``open`` would give it (``0o666`` less the umask), not
``mkstemp``'s owner-only ``0o600``, so results, manifests and exports stay readable by whoever can read the
directory.

A draft (a file, or a folder of ``staging_dir``) is named after its target and the process writing it,
``.NAME.PID@HOST.XXXXXXXX``: Ctrl-C and SIGTERM remove it on their way out, and what a SIGKILL (or a power cut) left
is removed by the next write of the same target on the same host, once its process is gone. A live writer's draft
(another process, or a host sharing the folder) is never touched.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from structbench.core.errors import StorageError, UsageError
from structbench.core.redact import HOLE, redact, redact_around


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


FILE_MODE = 0o666 & ~_umask()
"""The mode of a newly created file, read once at import (changing the umask is process-wide)."""


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed over ``path`` if the block succeeds, removed if not.

    The draft is synced before the rename and the folder after it (``fsync_dir``), so what a crash of the machine
    (power lost) leaves is the old file or the new one whole: unsynced, the rename could be lost (the old file back,
    or none) or kept over a file whose lines were not. A symbolic link is written through (its target replaced, as
    ``open`` would write it), and a path that is not a regular file (a FIFO, ``/dev/stdout``, ``/dev/null``) is
    written in place: it cannot appear whole, and renaming over it would destroy it. Where no file can be made beside
    it, the error names ``path``: ``UsageError`` when a file stands where a folder is needed."""
    renamed: dict[Path, Path] = {}
    with _draft(path, renamed) as tmp:
        yield tmp
    _sync_folders(renamed)


@contextlib.contextmanager
def _draft(path: Path, renamed: dict[Path, Path], *, synced: bool = False) -> Iterator[Path]:
    """``atomic_path`` but for the folder's sync: the folder of a file renamed into place is added to ``renamed``
    (mapped to the path asked for), for the caller to sync once all its files are in place. ``synced``: the caller
    syncs the draft itself."""
    target = _through_links(path)
    try:
        if _special(target):
            yield target
            return
        tmp = Path(_temporary(target))
        try:
            yield tmp
            if not synced:
                _sync_file(tmp)
            try:
                os.replace(tmp, target)
            except OSError as err:  # (a folder there): named by the file asked for, not its draft
                raise type(err)(err.errno, err.strerror, str(path)) from err
            renamed.setdefault(target.parent, path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as err:
        if err.filename is None:  # a write's error (a full disk) names no file: this one
            raise type(err)(err.errno, err.strerror, str(path)) from err
        raise


def _sync_file(path: Path) -> None:
    """Sync the file ``path``'s lines to the disk (``fsync`` acts on the file, whichever descriptor wrote them):
    renamed into place unsynced, a crash could leave it empty under the target's name."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fsync_if_file(fd)
    finally:
        os.close(fd)


def _sync_folders(renamed: dict[Path, Path]) -> None:
    """``fsync_dir`` each folder a file was renamed into; a failure names the file asked for, as a write's does."""
    for folder, path in renamed.items():
        try:
            fsync_dir(folder)
        except OSError as err:
            raise type(err)(err.errno, err.strerror, str(path)) from err


HOST = re.sub(r"[^\w.-]", "_", socket.gethostname()) or "host"
"""This host's name as drafts carry it (a folder shared between hosts is cleaned by each of its own drafts only)."""


def draft_prefix(path: Path) -> str:
    """The start of the name of a draft of ``path`` made by this process (``mkstemp``/``mkdtemp``'s ``prefix``)."""
    return f".{path.name}.{os.getpid()}@{HOST}."


def _alive(pid: int) -> bool:
    """Whether process ``pid`` of this host still runs (one of another user's counts: it cannot be signalled)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (PermissionError: it runs, as someone else)
        return True
    return True


def remove_stale_drafts(path: Path) -> list[Path]:
    """Remove the drafts of ``path`` (files or folders beside it) whose process, on this host, is gone; the paths
    removed. A process killed with SIGKILL cannot remove its own draft; its next write does."""
    stale = re.compile(rf"{re.escape(f'.{path.name}.')}(\d+)@{re.escape(HOST)}\.[^/]+")
    try:
        entries = list(os.scandir(path.parent))
    except OSError:  # (no folder yet: nothing left there)
        return []
    removed = []
    for entry in entries:
        found = stale.fullmatch(entry.name)
        if found is None or _alive(int(found.group(1))):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            Path(entry.path).unlink(missing_ok=True)
        removed.append(Path(entry.path))
    return removed


def staging_dir(path: Path) -> Path:
    """A new empty folder beside ``path`` to build it in (renamed to ``path`` when whole), named as a draft of it,
    once the drafts a killed process left are removed; the caller removes it if the build fails."""
    remove_stale_drafts(path)
    return Path(tempfile.mkdtemp(prefix=draft_prefix(path), dir=path.parent))


def move_into_place(staging: Path, path: Path) -> None:
    """Rename the folder ``staging`` (``staging_dir``'s, built whole) to ``path`` durably: every file and folder in
    it is synced first, ``path``'s folder after the rename, so a crash of the machine leaves no folder there or this
    one whole, never one of empty files. Like ``os.replace``, an empty folder at ``path`` is replaced and a non-empty
    one raises ``OSError`` (one that names no file names ``path``)."""
    try:
        for root, _, files in os.walk(staging, topdown=False):
            for name in files:
                if not os.path.islink(file := os.path.join(root, name)):
                    _sync_file(Path(file))
            fsync_dir(Path(root))
        os.replace(staging, path)
        fsync_dir(path.parent)
    except OSError as err:
        if err.filename is None:  # (a failing sync)
            raise type(err)(err.errno, err.strerror, str(path)) from err
        raise


def placed_by_another(err: OSError, done: Path) -> bool:
    """Whether ``move_into_place``'s ``err`` means that another process moved its own copy to the target first (the
    rename refused: a non-empty folder there) and that copy is complete (``done``, a file written last or the folder,
    exists): the caller keeps that copy. Any other error is the caller's to raise: a failing sync after the rename
    (the folder in place, but not durable), a full disk while syncing the staged files, a file at the target."""
    return err.errno in (errno.ENOTEMPTY, errno.EEXIST) and done.exists()


def make_folders(path: Path) -> None:
    """``path.mkdir(parents=True, exist_ok=True)``, durably: the folder holding each folder it makes is synced (once,
    after all are made), so a crash of the machine cannot lose the new folder, and every file synced into it since,
    with an entry its parent never had on the disk. A folder already there costs one ``stat``."""
    made: list[Path] = []
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        made.append(probe)
        probe = probe.parent
    path.mkdir(parents=True, exist_ok=True)
    for folder in reversed(made):
        try:
            fsync_dir(folder.parent)
        except OSError as err:
            raise type(err)(err.errno, err.strerror, str(path)) from err


def _through_links(path: Path) -> Path:
    """What ``path`` names once its symbolic links are followed (``path`` itself where they loop)."""
    if not path.is_symlink():
        return path
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop: writing through it fails with its own error
        return path


def _special(path: Path) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a folder (a pipe, a device, a socket)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _temporary(path: Path) -> str:
    """A new empty file beside ``path`` (its folder made if need be), with an ordinary file's mode."""
    try:
        make_folders(path.parent)
        remove_stale_drafts(path)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=draft_prefix(path), suffix=".part")
    except OSError as err:
        blocked = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        if blocked is not None:
            raise UsageError(f"{path}: cannot be written: {blocked} is a file, not a folder") from None
        if err.errno == errno.ENOENT:  # the folder is there and makes no files (/proc)
            raise StorageError(f"{path}: cannot be written: {err.strerror}") from err
        raise type(err)(err.errno, err.strerror, str(path)) from err  # named by the file asked for, not its draft
    try:
        os.fchmod(fd, FILE_MODE)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    return name


def fsync_if_file(fd: int) -> None:
    """``os.fsync``, but for what has nothing to flush to a disk (a pipe, a terminal: ``atomic_path``'s special
    files), which refuses it."""
    try:
        os.fsync(fd)
    except OSError as err:
        if err.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EROFS) or stat.S_ISREG(os.fstat(fd).st_mode):
            raise


def fsync_dir(path: Path) -> None:
    """Sync the folder ``path``'s entries to the disk: a file created in it survives a crash of the machine (power
    lost) only once its entry in the folder is synced too, whatever was synced of its lines. A file system that cannot
    sync a folder refuses it as it refuses a pipe (``fsync_if_file``): taken as it is.

    A folder its user may write in but not read (mode ``0o300``) cannot be opened to be synced (EACCES, EPERM): the
    sync is skipped, as the write it follows succeeded and failing it would report an error for data now in place;
    the entry reaches the disk when the file system next writes its metadata back. Any other error (EIO) raises."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except PermissionError:  # (EACCES, EPERM)
        return
    try:
        fsync_if_file(fd)
    finally:
        os.close(fd)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` durably (the file synced before the rename, its folder after)."""
    write_texts_atomic([(path, text)])


def write_texts_atomic(texts: Sequence[tuple[Path, str]]) -> None:
    """Write each (path, text) as ``write_text_atomic`` does, all or none: every draft is made and written before the
    first is renamed into place, so a path that cannot be written (a file where a folder is needed, a full disk)
    leaves none of them behind. Each folder is synced once, after the last rename."""
    renamed: dict[Path, Path] = {}
    with contextlib.ExitStack() as stack:
        drafts = [(stack.enter_context(_draft(path, renamed, synced=True)), text) for path, text in texts]
        for draft, text in drafts:  # each synced before the first rename: a failing disk leaves none renamed
            with draft.open("w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                fsync_if_file(out.fileno())
    _sync_folders(renamed)  # once a folder, after every rename


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str, allow_nan=False)


def json_text(data: Any, verbatim: str | None = None) -> str:
    """``data`` as redacted JSON; its top-level ``verbatim`` part (the run's configuration: what the user wrote, which
    a resumed run compares) loses only registered secrets, so a credential-like word of a prompt stays as it was."""
    if verbatim is None or not isinstance(data, dict) or verbatim not in data:
        return redact(_dumps(data)) + "\n"
    part = _dumps(data[verbatim]).replace("\n", "\n  ")  # indented as a top-level value
    return redact_around(_dumps({**data, verbatim: HOLE}), part) + "\n"


def write_json_atomic(path: Path, data: Any, verbatim: str | None = None) -> None:
    """Write JSON (secrets redacted, but for its ``verbatim`` part's credential-like words) to a temporary file and
    rename it over ``path``: readers never see half a file."""
    write_text_atomic(path, json_text(data, verbatim))
