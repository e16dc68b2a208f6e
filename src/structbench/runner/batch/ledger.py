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

from structbench.core.atomic import write_text_atomic
from structbench.core.errors import DataError, UsageError
from structbench.core.redact import redact
from structbench.runfiles.runformat import BATCH_LEDGER

FOLDER, _, LEDGER = BATCH_LEDGER.partition("/")
"""The run directory's folder of batches, and the ledger's name in it."""

State = Literal["submitting", "submitted", "ended", "abandoned"]
"""``submitting``: written before the provider was asked (no id yet); ``submitted``: the provider has it (polled
until it ends); ``ended``: its results are in ``output``; ``abandoned``: it was never created (a kill before the
provider answered, and no batch of its tag exists), or the provider no longer knows it (404: another API key or
organization, or lost); its requests were sent again in another (its notes say which)."""


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
    """``<run>/batches/ledger.json``: every batch of the run, loaded at start and rewritten whole on each change.

    ``salvage`` reads what can be read of a damaged ledger (``structbench batches``): the entries that validate, and
    in ``problems`` one line for each part that does not and for each batch file no entry names; without it, a
    damaged ledger is a ``DataError`` (a run never goes on without knowing its batches: it would pay twice)."""

    def __init__(self, run_dir: Path, *, salvage: bool = False) -> None:
        self.run_dir = run_dir
        self.folder = run_dir / FOLDER
        self.path = self.folder / LEDGER
        self.problems: list[str] = []
        """What could not be read (``salvage`` only)."""
        self.entries: list[BatchEntry] = self._load(salvage)

    def _load(self, salvage: bool) -> list[BatchEntry]:
        if not self.path.exists():
            return self._orphans([]) if salvage else []
        entries = []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            items = data["batches"]
            if not isinstance(items, list):
                raise TypeError(f"'batches' is a {type(items).__name__}, not a list")
            for i, item in enumerate(items, start=1):
                try:
                    entries.append(BatchEntry.model_validate(item))
                except ValidationError as err:
                    if not salvage:
                        raise ValueError(f"entry {i}: {_why(err)}") from None
                    self.problems.append(f"{self.path}: entry {i} unreadable ({_why(err)})")
        except (OSError, ValueError, KeyError, TypeError) as err:
            why = _why(err)
            if salvage:
                self.problems.append(f"{self.path}: unreadable ({why})")
                return self._orphans([])
            raise DataError(f"{self.path}: not a structbench batch ledger ({why}); it lists the run's batches, whose "
                            f"requests would be sent and paid again without it: repair it (structbench batches "
                            f"{self.run_dir} lists what can be read of it)") from None
        return self._orphans(entries) if salvage else entries

    def _orphans(self, entries: list[BatchEntry]) -> list[BatchEntry]:
        """``entries``, with a problem for each batch input file in the folder that none of them names."""
        named = {e.input_name for e in entries}
        for path in sorted(self.folder.glob("sb-*.input.jsonl")) if self.folder.is_dir() else []:
            if path.name not in named:
                self.problems.append(f"{path}: the input of batch {path.name.removesuffix('.input.jsonl')}, which the "
                                     "ledger does not list")
        return entries

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
        """The request ids a batch was sent with, read from its input file; from its results when the input file is
        missing (the ids of requests the batch left out of its results are then unknown)."""
        name = entry.input_name if self.file(entry.input_name).exists() else entry.output_name
        return [str(line["custom_id"]) for line in self.read_lines(name) if "custom_id" in line]


def _why(err: BaseException) -> str:
    """An error reading a ledger, in one line."""
    if isinstance(err, ValidationError):
        problem = err.errors()[0]
        return f"{'.'.join(str(p) for p in problem['loc']) or 'entry'}: {problem['msg']}"
    if isinstance(err, KeyError):
        return f"no {err} field"
    return str(err).splitlines()[0] if str(err) else type(err).__name__


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
