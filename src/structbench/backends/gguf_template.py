"""A chat template written into a GGUF file's metadata (``tokenizer.chat_template``), so that whatever serves the file
prompts the model as structbench's own backend does.

The embedded Gemma 3 270M GGUF is a base model's and carries no chat template: llama-cpp-python's server then falls
back to Llama 2's ``[INST]`` format, while the ``llamacpp`` backend uses Gemma's turns. With the template in the file,
the server, llama.cpp's ``llama-server --jinja`` and the backend all render the same prompt from it.

The template goes in as the first key-value pair of the header, followed by the file's bytes unchanged: the pair is
padded (inside a Jinja comment, which renders nothing) to a multiple of the tensor data's alignment, so every tensor
offset, which counts from the aligned start of the data, still holds. The GGUF layout (version 3, little-endian):
``GGUF``, version (u32), tensor count (u64), key-value count (u64), the pairs (key: u64 length and bytes; type u32;
a string value: u64 length and bytes), the tensor infos, padding to the alignment, the data.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator, Sequence
from pathlib import Path

from structbench.core.atomic import atomic_path

KEY = "tokenizer.chat_template"
MAGIC = b"GGUF"
HEADER = struct.Struct("<4sIQQ")
"""Magic, version, tensor count, key-value count."""
STRING = 8
"""GGUF's value type of a UTF-8 string."""
ALIGNMENT = 32
"""GGUF's default alignment of the tensor data (a file without ``general.alignment``, as the embedded model's)."""
PADDING_NOTE = "{# structbench: the chat template the embedded model is run with"
"""How the comment that pads the template begins (it ends with ``#}`` after the padding spaces)."""


def _pair(key: str, value: str) -> bytes:
    name, text = key.encode(), value.encode()
    return struct.pack("<Q", len(name)) + name + struct.pack("<IQ", STRING, len(text)) + text


def padded(template: str) -> str:
    """``template`` with a Jinja comment at its end that makes its key-value pair a multiple of ``ALIGNMENT`` bytes
    long (the comment renders nothing)."""
    bare = len(_pair(KEY, template + PADDING_NOTE + "#}"))
    return template + PADDING_NOTE + " " * (-bare % ALIGNMENT) + "#}"


def first_key(path: Path) -> str | None:
    """The key of a GGUF file's first key-value pair (None: not a GGUF file, or no pair)."""
    with path.open("rb") as f:
        head = f.read(HEADER.size + 8)
        if len(head) < HEADER.size + 8:
            return None
        magic, _, _, pairs = HEADER.unpack(head[: HEADER.size])
        (size,) = struct.unpack("<Q", head[HEADER.size:])
        if magic != MAGIC or not pairs or size > 1024:
            return None
        return f.read(size).decode(errors="replace")


def has_chat_template(path: Path) -> bool:
    """Whether a file written by ``write_with_chat_template`` (its template first) has its template."""
    return path.is_file() and first_key(path) == KEY


def _blocks(parts: Sequence[Path], size: int = 16 * 2**20) -> Iterator[bytes]:
    """The bytes of ``parts`` one after the other (a file split in chunks is read as one)."""
    for part in parts:
        with part.open("rb") as f:
            while block := f.read(size):
                yield block


def write_with_chat_template(parts: Sequence[Path], target: Path, template: str, sha256: str | None = None) -> None:
    """Write the GGUF file that ``parts`` hold (one file, or its chunks in order; without a chat template, aligned to
    ``ALIGNMENT``) to ``target`` with ``template`` as its chat template (``padded``), atomically; with ``sha256``, the
    source's bytes must have that digest (else nothing is written)."""
    digest = hashlib.sha256()
    blocks = _blocks(parts)
    first = next(blocks, b"")
    if len(first) < HEADER.size:
        raise ValueError(f"{parts[0]}: not a GGUF file")
    magic, version, tensors, pairs = HEADER.unpack(first[: HEADER.size])
    if magic != MAGIC or version < 2:
        raise ValueError(f"{parts[0]}: not a GGUF file of version 2 or later")
    pair = _pair(KEY, padded(template))
    assert len(pair) % ALIGNMENT == 0
    with atomic_path(target) as tmp, tmp.open("wb") as out:
        out.write(HEADER.pack(magic, version, tensors, pairs + 1) + pair + first[HEADER.size:])
        digest.update(first)
        for block in blocks:
            out.write(block)
            digest.update(block)
        if sha256 is not None and digest.hexdigest() != sha256:
            raise ValueError(f"{', '.join(map(str, parts))}: SHA-256 {digest.hexdigest()}, expected {sha256}")
