"""Where ClaimDB comes from: the Hugging Face Hub dataset ``michaeltheologitis/claimdb``, downloaded into the cache at
run time (``--data-dir DIR`` reads ``DIR/claimdb/`` laid out as the Hub repository instead)."""

from __future__ import annotations

from dataclasses import dataclass

from structbench.data.datasets import DatasetSource, RemoteFile

REPO = "michaeltheologitis/claimdb"
HOMEPAGE = f"https://huggingface.co/datasets/{REPO}"
NAME = "claimdb"
"""The dataset's folder: ``DIR/claimdb/`` under ``--data-dir``, and in the cache."""


@dataclass(frozen=True)
class Split:
    """One labelled split: its claims file and the zip of the databases they are about."""

    claims: str
    databases: str
    note: str


SPLITS = {
    "test": Split("test-public.jsonl", "test_databases.zip", "the 1,000 public test claims over 11 databases"),
    "train": Split("train.jsonl", "train_databases.zip", "the 51,369 training claims over 80 databases"),
}
"""Variant -> split. ``test-private.jsonl`` (999 claims without labels) cannot be scored here."""


def source(variant: str) -> DatasetSource:
    """The files a variant needs (the Hub publishes no checksums; none are checked)."""
    split = SPLITS[variant]
    files = tuple(RemoteFile(path, f"{HOMEPAGE}/resolve/main/{path}") for path in (split.claims, split.databases))
    return DatasetSource(NAME, HOMEPAGE, files, license="cc-by-sa-4.0")
