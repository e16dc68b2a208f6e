"""The run directory's record of its batches: ``batches/ledger.json``, and each batch's input and output files.

An entry is written (synced, then renamed into place) before the batch is created at the provider, with the name
structbench gives it (``tag``, in the provider's metadata where it has any); the provider's batch id is added as
soon as the provider returns it, before the first poll. So a run killed at any moment finds every batch it paid
for: one with an id is polled again, one created without its id being written (a kill in between) is found by its
tag (OpenAI) or by its time and size (Anthropic), and one never created is sent anew. Nothing here holds a secret:
the input files are the requests exactly as they are sent (a prompt is never rewritten: the provider answers what a
direct call would have asked), the output files what came back (redacted), the ledger structbench's notes (redacted).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from structbench.atomic import write_text_atomic
from structbench.errors import DataError, UsageError
from structbench.redact import redact

FOLDER = "batches"
LEDGER = "ledger.json"

State = Literal["submitting", "submitted", "ended", "abandoned"]
"""``submitting``: written before the provider was asked (no id yet); ``submitted``: the provider has it (polled
until it ends); ``ended``: its results are in ``output``; ``abandoned``: it was never created (a kill before the
provider answered, and no batch of its tag exists), its requests were sent again in another."""


class BatchEntry(BaseModel):
    """One batch of a run."""

    model_config = ConfigDict(extra="forbid")

    tag: str
    """structbench's name for it (``sb-`` and 12 hex digits): its files' names, and the provider's metadata."""
    provider: str
    """``openai`` (the Batch API) or ``anthropic`` (Message Batches)."""
    model: str
    """``BACKEND:NAME`` of the model."""
    base_url: str | None = None
    id: str | None = None
    """The provider's batch id (None until the provider returned it)."""
    state: State = "submitting"
    status: str | None = None
    """The provider's last word on it (``in_progress``, ``completed``, ``expired``, ``ended`` ...)."""
    endpoint: str = ""
    requests: int = 0
    """Lines sent (a request drawing ``n`` replies from Anthropic is ``n`` lines)."""
    step: int = 0
    """Which batch of the session's steps it was (1: the samples' first calls ...)."""
    round: int = 0
    """0: a first submission; 1, 2: lines of an earlier batch that failed, sent again."""
    created: float = Field(default_factory=time.time)
    """When structbench wrote the entry (seconds since the epoch), just before asking the provider."""
    ended: float | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    """The provider's request counts at the last poll (completed, failed ...)."""
    notes: list[str] = Field(default_factory=list)
    """What went wrong with it, in words (expired, lines missing from the output, ids never sent)."""

    @property
    def input_name(self) -> str:
        return f"{self.tag}.input.jsonl"

    @property
    def output_name(self) -> str:
        return f"{self.tag}.output.jsonl"

    @property
    def open(self) -> bool:
        """Whether the provider may still be working on it."""
        return self.state in ("submitting", "submitted")


class Ledger:
    """``<run>/batches/ledger.json``: every batch of the run, loaded at start and rewritten whole on each change."""

    def __init__(self, run_dir: Path) -> None:
        self.folder = run_dir / FOLDER
        self.path = self.folder / LEDGER
        self.entries: list[BatchEntry] = self._load()

    def _load(self) -> list[BatchEntry]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [BatchEntry.model_validate(e) for e in data["batches"]]
        except (OSError, ValueError, KeyError, TypeError, ValidationError) as err:
            raise DataError(f"{self.path}: not a structbench batch ledger ({err}); the run's batches are listed "
                            "there: repair or remove it (structbench batches lists what it can read)") from err

    def save(self) -> None:
        """Write the ledger durably (synced before the rename)."""
        text = redact(json.dumps({"batches": [e.model_dump(mode="json") for e in self.entries]}, indent=2)) + "\n"
        write_text_atomic(self.path, text)

    def new(self, lines: list[dict[str, Any]], **fields: Any) -> BatchEntry:
        """A new entry named by a fresh tag: its input file (``lines``) written first, then the ledger."""
        entry = BatchEntry(tag=f"sb-{secrets.token_hex(6)}", **fields)
        self.write_lines(entry.input_name, lines, verbatim=True)
        self.entries.append(entry)
        self.save()
        return entry

    def update(self, entry: BatchEntry, **changes: Any) -> None:
        for key, value in changes.items():
            setattr(entry, key, value)
        self.save()

    def file(self, name: str) -> Path:
        return self.folder / name

    def write_lines(self, name: str, lines: Iterable[dict[str, Any]], *, verbatim: bool = False) -> Path:
        """A JSON-lines file of the run's batches, written whole and synced: secrets redacted, or ``verbatim`` (the
        requests of an input file, which are uploaded as written: no key is in them, and a prompt is never
        rewritten)."""
        path = self.file(name)
        texts = (json.dumps(line, ensure_ascii=False) for line in lines)
        write_text_atomic(path, "".join((text if verbatim else redact(text)) + "\n" for text in texts))
        return path

    def read_lines(self, name: str) -> Iterator[dict[str, Any]]:
        """The lines of one of its files (none when it does not exist); a torn line is skipped."""
        path = self.file(name)
        if not path.exists():
            return
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if isinstance(line, dict):
                yield line

    def custom_ids(self, entry: BatchEntry) -> list[str]:
        """The request ids a batch was sent with (read from its input file)."""
        return [str(line.get("custom_id")) for line in self.read_lines(entry.input_name)]


def refuse_direct_while_open(run_dir: Path) -> None:
    """A ``UsageError`` when a batch of the run in ``run_dir`` may still be running: continued without ``--batch``,
    the run would send its requests again directly and pay for them twice, its answers never used."""
    if not (run_dir / FOLDER / LEDGER).exists():
        return
    open_ = [e for e in Ledger(run_dir).entries if e.open]
    if not open_:
        return
    first = open_[0]
    which = f"batch {first.id}" if first.id else f"batch {first.tag} (its id not yet known)"
    more = f" and {len(open_) - 1} more" if len(open_) > 1 else ""
    raise UsageError(
        f"{run_dir}: {which}{more}, sent with --batch, may still be running at the provider; continued without "
        f"--batch, its requests would be sent again and paid twice: run the same command with --batch to wait for "
        f"its answers and use them, or cancel it (structbench batches {run_dir} --cancel) and run once with --batch "
        "to use the answers it holds")
