"""A W&B offline run's files read back: its ``.wandb`` transaction log (LevelDB's log format, W&B's header) parsed
into W&B's own protobuf records, for tests that check what was logged without an account or a server."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BLOCK = 32768
"""LevelDB log blocks: a record never starts in a block's last 6 bytes."""
HEADER = struct.Struct("<4sHB")
"""W&B's file header: ``:W&B``, magic 0xBEE1, version."""
CHUNK = struct.Struct("<IHB")
"""A chunk's header: CRC, length, type (1 full, 2 first, 3 middle, 4 last)."""


@dataclass
class OfflineRun:
    """What an offline run's log says: the run, its config, its history steps, final summary and artifacts."""

    run: Any = None
    config: dict[str, str] = field(default_factory=dict)
    """Key -> JSON text."""
    history: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    artifacts: list[Any] = field(default_factory=list)


def offline_run(root: Path) -> Path:
    """The one offline run folder under ``root`` (W&B's ``dir``)."""
    (folder,) = (root / "wandb").glob("offline-run-*")
    return folder


def _chunks(data: bytes) -> list[bytes]:
    ident, magic, _ = HEADER.unpack_from(data, 0)
    assert ident == b":W&B" and magic == 0xBEE1, "not a W&B transaction log"
    out, pending, pos = [], b"", HEADER.size
    while pos + CHUNK.size <= len(data):
        left = BLOCK - pos % BLOCK
        if left < CHUNK.size:
            pos += left
            continue
        _, length, kind = CHUNK.unpack_from(data, pos)
        chunk = data[pos + CHUNK.size : pos + CHUNK.size + length]
        pos += CHUNK.size + length
        if kind == 0:
            continue
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            out.append(pending)
    return out


def records(folder: Path) -> OfflineRun:
    """Parse the offline run in ``folder``."""
    from wandb.proto import wandb_internal_pb2 as pb

    (log,) = folder.glob("run-*.wandb")
    found = OfflineRun()
    for raw in _chunks(log.read_bytes()):
        record = pb.Record()
        record.ParseFromString(raw)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            found.run = record.run
            found.config |= {item.key: item.value_json for item in record.run.config.update}
        elif kind == "config":
            found.config |= {item.key: item.value_json for item in record.config.update}
        elif kind == "history":
            found.history.append({item.key or "/".join(item.nested_key): json.loads(item.value_json)
                                  for item in record.history.item})
        elif kind == "summary":
            found.summary |= {item.key or "/".join(item.nested_key): json.loads(item.value_json)
                              for item in record.summary.update}
        elif kind == "artifact":
            found.artifacts.append(record.artifact)
    return found
