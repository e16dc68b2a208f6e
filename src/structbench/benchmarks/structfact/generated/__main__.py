"""``python -m structbench.benchmarks.structfact.generated``: write a generated set in the release's JSON format."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from structbench.benchmarks.structfact.generated.generator import BUDGET, LABEL_MIXES
from structbench.benchmarks.structfact.generated.release import write_release
from structbench.benchmarks.structfact.generated.variant import generate_set
from structbench.benchmarks.structfact.loader import LABELS
from structbench.datasets import DataContext
from structbench.errors import ExitCode, StructbenchError
from structbench.tokens import token_counter


def main(argv: Sequence[str] | None = None, write: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m structbench.benchmarks.structfact.generated",
        description="Generate StructFact questions from tables and write them in the release's JSON format.",
    )
    parser.add_argument(
        "--tables", default="rfqa", help="rfqa[/<dataset>[/<db>]], scitab, or CSV files (comma-separated)"
    )
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--per-task", type=int, default=200)
    parser.add_argument("--label-mix", choices=sorted(LABEL_MIXES), default="paper")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", help="local copy of the public releases (<dir>/<dataset>/...)")
    parser.add_argument("--offline", action="store_true", help="never download")
    parser.add_argument("--token-counter", default="regex", help="a token counter spec (regex, cl100k, hf:MODEL ...)")
    parser.add_argument("--max-evidence-tokens", type=int, default=BUDGET)
    args = parser.parse_args(argv)
    if args.per_task < 1 or args.max_evidence_tokens < 1:
        parser.error("--per-task and --max-evidence-tokens must be at least 1")
    try:
        questions = generate_set(
            args.tables,
            DataContext.from_env(args.data_dir, offline=args.offline),
            per_task=args.per_task,
            label_mix=args.label_mix,
            seed=args.seed,
            counter=token_counter(args.token_counter),
            budget=args.max_evidence_tokens,
        )
    except StructbenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return int(err.exit_code)
    try:
        write_release([q.record() for q in questions], args.out)
    except OSError as err:
        print(f"error: {args.out}: cannot write: {err.strerror or err}", file=sys.stderr)
        return int(ExitCode.STORAGE)
    counts = Counter((q.task, q.label) for q in questions)
    for task in dict.fromkeys(q.task for q in questions):
        write(f"{task}: " + ", ".join(f"{counts[task, label]} {label}" for label in LABELS))
    write(f"wrote {len(questions)} questions to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
