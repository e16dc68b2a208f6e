"""Atomic files: whole or absent, and as readable as a file ``open`` creates."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from faults import spy_folder_syncs
from structbench.core import atomic
from structbench.core.atomic import (
    FILE_MODE,
    HOST,
    atomic_path,
    fsync_dir,
    make_folders,
    move_into_place,
    placed_by_another,
    remove_stale_drafts,
    staging_dir,
    write_text_atomic,
    write_texts_atomic,
)
from structbench.core.errors import UsageError
from structbench.runner.store import write_json_atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_get_the_umask_mode_not_owner_only(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    write_text_atomic(tmp_path / "a.txt", "é\n")
    write_json_atomic(tmp_path / "metrics.json", {"a": 1})
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "é\n"
    assert _mode(tmp_path / "a.txt") == _mode(plain) == FILE_MODE
    assert _mode(tmp_path / "metrics.json") == FILE_MODE


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out" / "t.json"
    write_text_atomic(target, "old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert sorted(p.name for p in target.parent.iterdir()) == ["t.json"]


def test_a_symbolic_link_is_written_through_not_replaced(tmp_path: Path) -> None:
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    link.symlink_to(real)
    write_text_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "made.txt")
    write_text_atomic(dangling, "x")
    assert dangling.is_symlink() and (tmp_path / "made.txt").read_text() == "x"


def test_a_fifo_or_device_is_written_in_place_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_text_atomic(fifo, "through\n")  # (fsync refuses a pipe: not an error here)
    reader.join(10)
    assert got == [b"through\n"] and stat.S_ISFIFO(fifo.stat().st_mode)
    null = tmp_path / "null"  # (through a link: were it replaced, the link would go, not the system's device)
    null.symlink_to(os.devnull)
    write_text_atomic(null, "gone")
    assert null.is_symlink() and stat.S_ISCHR(null.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null", "pipe"]


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full")
def test_a_full_device_fails_naming_the_file_asked_for(tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.symlink_to("/dev/full")
    with pytest.raises(OSError) as err:
        write_text_atomic(full, "x" * 10_000)
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(full)
    assert full.is_symlink() and stat.S_ISCHR(full.stat().st_mode)


def test_a_file_where_a_folder_is_needed_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(UsageError, match=r"f/x\.json: cannot be written: .*/f is a file, not a folder"):
        write_text_atomic(tmp_path / "f" / "x.json", "x")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        write_text_atomic(tmp_path / "f" / "deeper" / "x.json", "x")


def test_errors_name_the_file_asked_for_not_its_draft(tmp_path: Path) -> None:
    (tmp_path / "a.json").mkdir()
    with pytest.raises(IsADirectoryError) as err:
        write_text_atomic(tmp_path / "a.json", "x")
    assert err.value.filename == str(tmp_path / "a.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def _dead_pid() -> int:
    """The id of a process of this host that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_killed_writers_drafts_are_removed_by_the_next_write_of_the_target(tmp_path: Path) -> None:
    """A SIGKILL left ``.t.json.XXXX.part`` (and a staging folder) beside the target for good."""
    dead, live = _dead_pid(), os.getppid()
    left = [tmp_path / f".t.json.{dead}@{HOST}.abc.part", tmp_path / f".t.json.{dead}@{HOST}.def"]
    left[0].write_text("half")
    (left[1] / "data").mkdir(parents=True)
    kept = [tmp_path / f".t.json.{live}@{HOST}.ghi.part",  # a writer that still runs
            tmp_path / f".t.json.{dead}@other-host.jkl.part",  # another host's, in a shared folder
            tmp_path / f".t.json.bak.{dead}@{HOST}.mno.part"]  # another target's
    for path in kept:
        path.write_text("theirs")
    write_text_atomic(tmp_path / "t.json", "{}")
    assert sorted(tmp_path.iterdir()) == sorted([tmp_path / "t.json", *kept])
    assert remove_stale_drafts(tmp_path / "t.json") == []


def test_a_staging_folder_is_named_after_its_target_and_its_process(tmp_path: Path) -> None:
    staging = staging_dir(tmp_path / "set")
    assert staging.parent == tmp_path and staging.name.startswith(f".set.{os.getpid()}@{HOST}.")
    assert remove_stale_drafts(tmp_path / "set") == [] and staging.is_dir()  # its own process runs


def test_a_folder_is_synced_and_one_the_file_system_cannot_sync_is_taken_as_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fsync_dir`` syncs the folder itself (a new file's entry in it), closing what it opened; a file system that
    refuses to sync a folder (EINVAL) is no error, a failing disk (EIO) is."""
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.fstat(fd).st_ino))
    fsync_dir(tmp_path)
    assert synced == [tmp_path.stat().st_ino]
    for code, raises in ((errno.EINVAL, False), (errno.EIO, True)):
        def refuse(fd: int, code: int = code) -> None:
            raise OSError(code, os.strerror(code))

        monkeypatch.setattr(os, "fsync", refuse)
        if raises:
            with pytest.raises(OSError, match="Input/output"):
                fsync_dir(tmp_path)
        else:
            fsync_dir(tmp_path)


def _record_syncs(monkeypatch: pytest.MonkeyPatch, watched: Path) -> list[tuple[str, bool]]:
    """Each path ``os.fsync`` is given (the file behind its descriptor), with whether ``watched`` then exists."""
    synced: list[tuple[str, bool]] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append((os.readlink(f"/proc/self/fd/{fd}"), watched.exists())))
    return synced


def _is_draft(name: str, target: Path) -> bool:
    return Path(name).parent == target.parent and Path(name).name.startswith(f".{target.name}.{os.getpid()}@")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="no /proc/self/fd")
def test_a_file_is_synced_then_renamed_then_its_folder_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the folder's sync after the rename, a power cut could bring back the old manifest or lose metrics.json
    after the command said it was written."""
    def through_the_block(path: Path) -> None:  # as a caller writing its own file does
        with atomic_path(path) as tmp:
            tmp.write_text("x")

    (tmp_path / "run").mkdir()  # (a folder made for the file is synced in its parent too: tested below)
    for write in (lambda p: write_text_atomic(p, "x"), lambda p: write_json_atomic(p, {"a": 1}), through_the_block):
        target = tmp_path / "run" / "metrics.json"
        target.unlink(missing_ok=True)
        synced = _record_syncs(monkeypatch, target)
        write(target)
        assert len(synced) == 2 and _is_draft(synced[0][0], target) and not synced[0][1]  # the draft, before
        assert synced[1] == (str(tmp_path / "run"), True)  # then the folder, after the rename


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="no /proc/self/fd")
def test_several_files_sync_each_folder_once_after_every_rename(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, c = tmp_path / "r" / "a.md", tmp_path / "r" / "b.md", tmp_path / "s" / "c.md"
    a.parent.mkdir(), c.parent.mkdir()  # (folders made for the files are synced in their parent too: tested below)
    synced = _record_syncs(monkeypatch, a)
    write_texts_atomic([(a, "1"), (b, "2"), (c, "3")])
    drafts, folders = synced[:3], synced[3:]
    assert [any(_is_draft(name, t) for t in (a, b, c)) for name, _ in drafts] == [True] * 3
    assert not any(there for _, there in drafts)  # every draft synced before the first rename
    assert sorted(folders) == [(str(tmp_path / "r"), True), (str(tmp_path / "s"), True)]
    assert (a.read_text(), b.read_text(), c.read_text()) == ("1", "2", "3")


def test_a_failing_folder_sync_names_the_file_and_one_that_cannot_sync_a_folder_is_taken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EIO (a failing disk) after the rename raises as the file's own sync would, naming the file asked for; EINVAL
    (a file system that cannot sync a folder) is taken as it is."""
    target = tmp_path / "manifest.json"
    real = os.fsync
    for code in (errno.EIO, errno.EINVAL):
        def refuse_folders(fd: int, code: int = code) -> None:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                raise OSError(code, os.strerror(code))
            real(fd)

        monkeypatch.setattr(os, "fsync", refuse_folders)
        for write in (lambda: write_text_atomic(target, "new"), lambda: write_texts_atomic([(target, "new")])):
            target.write_text("old")
            if code == errno.EIO:
                with pytest.raises(OSError) as err:
                    write()
                assert err.value.errno == errno.EIO and err.value.filename == str(target)
            else:
                write()
            assert target.read_text() == "new"  # (renamed: only its durability is in doubt)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="no /proc/self/fd")
def test_a_staged_folder_is_synced_whole_then_moved_then_its_parent_synced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A generated set (or a converted checkpoint) renamed into place unsynced could be found after a power cut as a
    folder of empty files, and taken as complete."""
    target = tmp_path / "set"
    staging = staging_dir(target)
    (staging / "data").mkdir()
    (staging / "data" / "qa.parquet").write_text("rows")
    (staging / "README.md").write_text("card")
    (staging / "link").symlink_to(staging / "README.md")
    synced = _record_syncs(monkeypatch, target)
    move_into_place(staging, target)
    names = [name.replace(str(staging), "S") for name, _ in synced]
    assert names == ["S/data/qa.parquet", "S/data", "S/README.md", "S", str(tmp_path)]  # deepest first, no link
    assert [there for _, there in synced] == [False] * 4 + [True]  # all of it before the rename, the parent after
    assert (target / "data" / "qa.parquet").read_text() == "rows" and not staging.exists()


def test_made_folders_have_their_entries_synced_once_and_a_folder_there_costs_no_sync(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new folder whose parent is not synced can vanish in a power cut with every file synced into it."""
    synced = spy_folder_syncs(monkeypatch)
    make_folders(tmp_path / "a" / "b" / "run")
    assert (tmp_path / "a" / "b" / "run").is_dir()
    assert synced == [tmp_path, tmp_path / "a", tmp_path / "a" / "b"]  # the parent of each folder made, once
    synced.clear()
    make_folders(tmp_path / "a" / "b" / "run")
    make_folders(tmp_path / "a" / "b" / "run" / "more")
    assert synced == [tmp_path / "a" / "b" / "run"]  # only the one made
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError):
        make_folders(tmp_path / "file")


def test_an_atomic_write_into_a_new_folder_syncs_the_folder_s_entry(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    synced = spy_folder_syncs(monkeypatch)
    write_text_atomic(tmp_path / "report" / "figures" / "a.md", "x")
    assert synced == [tmp_path, tmp_path / "report", tmp_path / "report" / "figures"]  # the last after the rename
    synced.clear()
    write_text_atomic(tmp_path / "report" / "figures" / "b.md", "x")
    assert synced == [tmp_path / "report" / "figures"]


def test_a_folder_that_cannot_be_read_is_not_synced_and_other_errors_raise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder of mode 0o300 (written and searched, not read) cannot be opened to sync it: a write into it succeeds
    with the sync skipped; a failing disk (EIO) while opening it still raises."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o300)
    real_open = os.open

    def refuse(code: int) -> None:
        def opener(path: Any, flags: int, *args: Any, **kw: Any) -> int:
            if Path(path) == locked and not flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                raise OSError(code, os.strerror(code), str(path))
            return real_open(path, flags, *args, **kw)

        monkeypatch.setattr(os, "open", opener)

    try:
        if os.geteuid() == 0:  # (root reads any folder: the refusal is simulated)
            refuse(errno.EACCES)
        fsync_dir(locked)
        write_text_atomic(locked / "metrics.json", "{}")
        assert (locked / "metrics.json").read_text() == "{}"
        refuse(errno.EPERM)
        fsync_dir(locked)
        refuse(errno.EIO)
        with pytest.raises(OSError) as err:
            write_text_atomic(locked / "metrics.json", "{}")
        assert err.value.errno == errno.EIO and err.value.filename == str(locked / "metrics.json")
    finally:
        locked.chmod(0o700)


def test_a_failing_sync_after_the_move_is_no_rival_s_copy_but_a_refused_rename_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``placed_by_another``: ENOTEMPTY from the rename (another process moved its copy first) is taken once the
    copy is complete; EIO from syncing the parent after this process's own rename is not."""
    target = tmp_path / "set"
    theirs = staging_dir(target)
    (theirs / "done").write_text("theirs")
    mine = staging_dir(target)
    (mine / "done").write_text("mine")
    move_into_place(theirs, target)
    with pytest.raises(OSError) as refused:
        move_into_place(mine, target)
    assert placed_by_another(refused.value, target / "done") and not placed_by_another(refused.value, target / "x")
    assert (target / "done").read_text() == "theirs"

    shutil.rmtree(target)
    real = atomic.fsync_dir

    def failing_parent(path: Path) -> None:
        if Path(path) == tmp_path:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(path)

    monkeypatch.setattr(atomic, "fsync_dir", failing_parent)
    with pytest.raises(OSError) as failed:
        move_into_place(mine, target)
    assert failed.value.errno == errno.EIO and failed.value.filename == str(target)
    assert (target / "done").read_text() == "mine"  # renamed: only its durability is in doubt
    assert not placed_by_another(failed.value, target / "done")
