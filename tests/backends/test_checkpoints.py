"""``backends.checkpoints``: the embedded model's conversion moved into the cache whole, another process's copy kept
when it came first, and a failing disk reported, never taken for that copy (transformers faked: the move is tested,
not the conversion)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from structbench.backends import checkpoints, llamacpp
from structbench.backends.checkpoints import EMBEDDED_DIR, embedded_checkpoint
from structbench.core import atomic


def _writes(name: str) -> object:
    return lambda folder: (Path(folder) / name).write_text("{}")


@pytest.fixture
def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the embedded checkpoint goes, with a conversion that writes its files at once."""
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "cache"))
    gguf = tmp_path / "gemma.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(llamacpp, "embedded_model_path", lambda: gguf)
    tokenizer = SimpleNamespace(chat_template=None, eos_token_id=1, convert_tokens_to_ids=lambda token: 106,
                                save_pretrained=_writes("tokenizer.json"))
    model = SimpleNamespace(hf_quantizer=None, config=SimpleNamespace(), generation_config=SimpleNamespace(),
                            save_pretrained=_writes("config.json"))
    transformers = SimpleNamespace(AutoModelForCausalLM=SimpleNamespace(from_pretrained=lambda *a, **kw: model))
    monkeypatch.setattr(checkpoints, "import_transformers", lambda what: (SimpleNamespace(float32=None), transformers))
    monkeypatch.setattr(checkpoints, "gguf_tokenizer", lambda transformers, gguf: tokenizer)
    return tmp_path / "cache" / "models" / EMBEDDED_DIR


def test_the_conversion_is_moved_into_the_cache(target: Path) -> None:
    assert embedded_checkpoint() == target
    assert sorted(p.name for p in target.iterdir()) == ["SOURCE.json", "config.json", "tokenizer.json"]
    assert [p.name for p in target.parent.iterdir()] == [EMBEDDED_DIR]  # no draft left


def test_another_process_s_copy_moved_in_first_is_kept(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = atomic.move_into_place

    def rival_first(staging: Path, path: Path) -> None:  # another process converts the model meanwhile
        theirs = atomic.staging_dir(path)
        (theirs / "config.json").write_text("theirs")
        real(theirs, path)
        real(staging, path)

    monkeypatch.setattr(checkpoints, "move_into_place", rival_first)
    assert embedded_checkpoint() == target
    assert (target / "config.json").read_text() == "theirs"
    assert [p.name for p in target.parent.iterdir()] == [EMBEDDED_DIR]


def test_a_failing_sync_after_the_move_is_an_error_not_another_process_s_copy(
        target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkpoint was renamed into place but its entry could not be synced (EIO): a power cut could lose it."""
    real = atomic.fsync_dir

    def failing(folder: Path) -> None:
        if Path(folder) == target.parent and target.exists():  # the parent's sync after the rename
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(folder)

    monkeypatch.setattr(atomic, "fsync_dir", failing)
    with pytest.raises(OSError) as err:
        embedded_checkpoint()
    assert err.value.errno == errno.EIO and err.value.filename == str(target)
