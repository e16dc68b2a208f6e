"""Where a local model's files are, and what identifies them: shared by the ``hf`` and ``vllm`` backends.

``MODEL`` is a directory holding ``config.json``, a ``.gguf`` file, a Hugging Face hub id found in the
local hub cache (a download only when the user allows it), or ``embedded``: the embedded Gemma 3 270M
GGUF converted once by transformers (``gguf_file``) into a checkpoint directory in structbench's cache,
with Gemma's chat template and end-of-turn token, so that transformers and vLLM load it like any other.

The identity (part of every cache key) is the resolved location or hub commit plus a digest of the
files: weights (and any file over 64 MiB) by name, size and modification time (hashing gigabytes per run
would cost minutes), every other file (config, tokenizer, chat template) by content.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from structbench.core.atomic import make_folders, move_into_place, placed_by_another, staging_dir
from structbench.core.errors import UsageError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".ckpt", ".h5", ".msgpack")
"""Files identified by size and modification time rather than by content."""
CONTENT_HASH_LIMIT = 64 << 20
"""Other files larger than this are identified by size and modification time as well."""

EMBEDDED = "embedded"
EMBEDDED_DIR = "gemma-3-270m-q4_k_m-hf"
"""The embedded GGUF converted for transformers/vLLM, under ``<cache>/models/``."""

GEMMA_END_OF_TURN = "<end_of_turn>"


@dataclass(frozen=True)
class Checkpoint:
    """A model as transformers loads it: a directory, and the GGUF file in it when there is one."""

    path: Path
    gguf_file: str | None = None
    revision: str | None = None
    """The hub commit, for a model from the hub cache."""
    repo_id: str | None = None

    @property
    def location(self) -> str:
        """``hf://REPO@COMMIT`` for a hub model, else ``file://`` and the resolved path."""
        if self.repo_id is not None:
            return f"hf://{self.repo_id}@{self.revision}"
        target = self.path / self.gguf_file if self.gguf_file else self.path
        return f"file://{target.resolve()}"

    def digest(self) -> str:
        """A short hash of the model's files (see the module docstring)."""
        h = hashlib.sha256()
        if self.gguf_file:
            files = [self.path / self.gguf_file]
        else:
            files = sorted(p for p in self.path.rglob("*") if p.is_file())
        for file in files:
            rel = file.relative_to(self.path).as_posix()
            stat = file.stat()
            if file.suffix in WEIGHT_SUFFIXES or stat.st_size > CONTENT_HASH_LIMIT:
                h.update(f"{rel}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
            else:
                h.update(f"{rel}\0".encode() + hashlib.sha256(file.read_bytes()).digest() + b"\n")
        return h.hexdigest()[:16]

    def identity(self) -> str:
        return f"{self.location}#{self.digest()}"


def looks_like_path(name: str) -> bool:
    """A name meant as a file path rather than a hub id."""
    return name.startswith(("/", ".", "~")) or name.endswith(".gguf") or name.count("/") > 1


def resolve(name: str, *, backend: str, download: bool = False, revision: str | None = None) -> Checkpoint:
    """The checkpoint ``name`` denotes; a ``UsageError`` naming the model when there is none."""
    if name == EMBEDDED:
        return Checkpoint(embedded_checkpoint())
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise UsageError(f"--model {backend}:{name}: no config.json there (not a transformers checkpoint)")
        return Checkpoint(path)
    if path.is_file():
        if path.suffix != ".gguf":
            raise UsageError(f"--model {backend}:{name}: expected a checkpoint directory or a .gguf file")
        return Checkpoint(path.parent, gguf_file=path.name)
    if looks_like_path(name):
        raise UsageError(f"--model {backend}:{name}: no such model directory or GGUF file (nor a hub id ORG/NAME)")
    return _from_hub(name, backend=backend, download=download, revision=revision)


def _from_hub(repo_id: str, *, backend: str, download: bool, revision: str | None) -> Checkpoint:
    """A hub model from the local hub cache (``HF_HUB_CACHE``); downloaded only when ``download``."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        raise UsageError(f"--model {backend}:{repo_id}: hub models need huggingface_hub "
                         "(pip install 'structbench[hf]')") from None
    try:
        folder = snapshot_download(repo_id, revision=revision, local_files_only=not download)
    except LocalEntryNotFoundError:
        raise UsageError(
            f"--model {backend}:{repo_id}: not in the local Hugging Face cache; download it first "
            f"(hf download {repo_id}), or allow it with --model-option download=true"
        ) from None
    except Exception as err:  # network, authentication, unknown repository
        raise UsageError(f"--model {backend}:{repo_id}: {err}") from None
    path = Path(str(folder))
    return Checkpoint(path, revision=path.name, repo_id=repo_id)


def embedded_checkpoint() -> Path:
    """Convert (once) the embedded Gemma 3 270M GGUF into a transformers checkpoint directory.

    transformers dequantizes the Q4_K_M weights to float32 (the exact values llama.cpp multiplies
    with); the tokenizer is converted from the GGUF vocabulary and given Gemma's chat template, and the
    generation config Gemma's end-of-turn token as a second end-of-sequence id.
    """
    from structbench.backends.llamacpp import embedded_model_path, fallback_template
    from structbench.data.datasets import cache_root

    target = cache_root() / "models" / EMBEDDED_DIR
    if (target / "config.json").is_file():
        return target
    gguf = embedded_model_path()
    torch, transformers = import_transformers("hf:embedded")
    make_folders(target.parent)
    tmp = staging_dir(target)
    try:
        with gguf_read_once():
            tokenizer = gguf_tokenizer(transformers, gguf)
            model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                                      dtype=torch.float32)
        tokenizer.chat_template = fallback_template("gemma3")
        tokenizer.save_pretrained(tmp)
        # the dequantized weights are plain tensors: save them as a regular checkpoint
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        end_of_turn = tokenizer.convert_tokens_to_ids(GEMMA_END_OF_TURN)
        model.generation_config.eos_token_id = [tokenizer.eos_token_id, end_of_turn]
        model.save_pretrained(tmp)
        (tmp / "SOURCE.json").write_text(json.dumps({"converted_from": gguf.name, "by": "transformers gguf_file"}))
        try:
            move_into_place(tmp, target)
        except OSError as err:
            if not placed_by_another(err, target / "config.json"):  # (then another process finished first: its copy)
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


_GGUF_READING = threading.RLock()


@contextmanager
def gguf_read_once() -> Iterator[None]:
    """Within the block each GGUF file is parsed once (``gguf.GGUFReader``, memory-mapped and only read).

    Loading one GGUF file, transformers parses it whole three times or more (for the tokenizer, the config and the
    weights), each about 15 s of Python for the embedded model's 262k-token vocabulary. The reader parses plain
    array views of the mapped file (``_plain_views``), not ``numpy.memmap`` slices: 27 → 7 CPU s for the embedded
    model, the same fields and tensors. One load at a time in a process: the reader is swapped in the ``gguf``
    module, where transformers finds it."""
    try:
        import gguf
    except ImportError:  # transformers then says that GGUF files need it
        yield
        return
    with _GGUF_READING:
        original = gguf.GGUFReader
        reader = _plain_views(original) if isinstance(original, type) else original
        readers: dict[tuple[str, str], Any] = {}

        def read_once(path: os.PathLike[str] | str, mode: str = "r") -> Any:
            key = (os.path.realpath(path), mode)
            if key not in readers:
                readers[key] = reader(path, mode)
            return readers[key]

        gguf.GGUFReader = read_once  # type: ignore[assignment,misc]
        try:
            yield
        finally:
            gguf.GGUFReader = original  # type: ignore[misc]


def _plain_views(reader: type) -> type:
    """``reader`` (``gguf.GGUFReader``) reading the file it maps through a plain ``numpy.ndarray`` view of the map:
    its parse slices the file a few times per vocabulary entry, and each ``numpy.memmap`` slice runs Python
    (``__getitem__``, ``__array_finalize__``); the bytes are the same mapped file."""
    import numpy as np

    def get(self: Any) -> Any:
        return self.__dict__["_mapped"]

    def put(self: Any, value: Any) -> None:
        self.__dict__["_mapped"] = np.asarray(value)

    return type(f"Plain{reader.__name__}", (reader,), {"data": property(get, put)})


def load_tokenizer(transformers: Any, checkpoint: Checkpoint) -> Any:
    """The checkpoint's tokenizer from its local files: a GGUF file's through ``gguf_tokenizer``."""
    if checkpoint.gguf_file:
        return gguf_tokenizer(transformers, checkpoint.path / checkpoint.gguf_file)
    return transformers.AutoTokenizer.from_pretrained(checkpoint.path, local_files_only=True)


def gguf_tokenizer(transformers: Any, gguf: Path) -> Any:
    """A GGUF file's tokenizer through transformers, adding BOS when the file says to (transformers'
    conversion drops ``tokenizer.ggml.add_bos_token``)."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    if gguf_metadata(gguf).get("tokenizer.ggml.add_bos_token") == "true":
        tokenizer.add_bos_token = True
    return tokenizer


def gguf_metadata(gguf: Path) -> dict[str, str]:
    """A GGUF file's scalar metadata as llama.cpp reads it (its vocabulary only): under a second for the embedded
    model, where ``gguf.GGUFReader`` parses every field in Python, about 15 s for a 262k-token vocabulary."""
    from llama_cpp import Llama

    vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    try:
        return dict(vocab.metadata)
    finally:
        vocab.close()


def import_transformers(what: str) -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as err:
        raise UsageError(f"{what} needs PyTorch and transformers: pip install 'structbench[hf]' ({err})") from None
    return torch, transformers
