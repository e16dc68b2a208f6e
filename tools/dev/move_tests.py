"""Move the tests of the modules that moved into folders (issue 39) so that ``tests/`` mirrors the package layout.

Run from the repository root on a clean tree: ``python tools/dev/move_tests.py`` (``--dry-run`` lists what it would
do). Idempotent, like ``move_layers.py``: a second run changes nothing. Steps:

1. ``git mv`` each test file (or folder) of ``MOVES`` to the folder of the module it tests;
2. rewrite every mention of the old path in the tracked text files (docs, comments, other tests);
3. apply ``FIXUPS``: the lines that depend on a test file's depth or on its folder's import name.

Tests of the command line (``tests/cli``), of several layers at once, or of a name two folders share stay where they
are; ``tests/test_api.py``, ``test_readme.py``, ``test_layers.py`` and ``test_contributing.py`` test the repository as
a whole and stay at the top.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

MOVES: dict[str, str] = {
    # core
    "tests/test_atomic.py": "tests/core/test_atomic.py",
    "tests/test_collector.py": "tests/core/test_collector.py",
    "tests/test_forkmap.py": "tests/core/test_forkmap.py",
    "tests/test_plugins.py": "tests/core/test_plugins.py",
    "tests/test_redact.py": "tests/core/test_redact.py",
    "tests/test_registry.py": "tests/core/test_registry.py",
    # statistics
    "tests/test_confusion.py": "tests/stats/test_confusion.py",
    # data
    "tests/test_csvdb.py": "tests/data/test_csvdb.py",
    "tests/test_datasets.py": "tests/data/test_datasets.py",
    # models
    "tests/test_prices.py": "tests/backends/test_prices.py",
    "tests/test_tokens.py": "tests/backends/test_tokens.py",
    "tests/test_usage.py": "tests/backends/test_usage.py",
    # the contract
    "tests/test_benchmark.py": "tests/contract/test_benchmark.py",
    "tests/test_provenance.py": "tests/contract/test_provenance.py",
    # the run files
    "tests/test_outcomes.py": "tests/runfiles/test_outcomes.py",
    "tests/test_results.py": "tests/runfiles/test_results.py",
    "tests/test_rundir.py": "tests/runfiles/test_rundir.py",
    "tests/test_runformat.py": "tests/runfiles/test_runformat.py",
    "tests/view/test_tail.py": "tests/runfiles/test_recordlines.py",  # view.tail became runfiles.recordlines.RecordTail
    # analysis
    "tests/test_record_metrics.py": "tests/analysis/test_record_metrics.py",
    # the batch APIs are part of the runner
    "tests/batch": "tests/runner/batch",
}
"""Old path -> new path (a file or a folder)."""

FIXUPS: dict[str, list[tuple[str, str]]] = {
    "tests/core/test_plugins.py": [
        ("REPO = Path(__file__).resolve().parents[1]", "REPO = Path(__file__).resolve().parents[2]"),
    ],
}
"""New path -> (old line part, new line part): what depends on where a test file lies."""

IMPORTS: dict[str, str] = {"batch": "runner.batch"}
"""A moved folder of tests as the other tests import it (``tests`` is on the path): old name -> new name."""


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def move(dry_run: bool) -> list[tuple[str, str]]:
    done = []
    for old, new in MOVES.items():
        if not Path(old).exists():
            continue
        done.append((old, new))
        print(f"git mv {old} {new}")
        if not dry_run:
            Path(new).parent.mkdir(parents=True, exist_ok=True)
            git("mv", old, new)
    return done


def rewrite(dry_run: bool) -> None:
    for name in git("ls-files").splitlines():
        path = Path(name)
        if name.startswith("tools/dev/") or not path.is_file() or path.suffix not in {".py", ".md", ".toml", ".yml",
                                                                                       ".yaml", ".cfg", ".txt", ""}:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        new_text = text
        for old, new in MOVES.items():
            new_text = re.sub(re.escape(old) + r"(?![\w.])", new, new_text)
        if name.startswith("tests/"):
            for old, new in IMPORTS.items():
                new_text = re.sub(rf"^(from|import) {re.escape(old)}\.", rf"\1 {new}.", new_text, flags=re.M)
        for old_part, new_part in FIXUPS.get(name, []):
            new_text = new_text.replace(old_part, new_part)
        if new_text != text:
            print(f"rewrite {name}")
            if not dry_run:
                path.write_text(new_text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    move(args.dry_run)
    rewrite(args.dry_run)


if __name__ == "__main__":
    main()
