"""How close StructFact's regex token counters come to a real tokenizer (the embedded Gemma 3's).

Prints, per counter, the ratio (counter tokens / Gemma tokens) over the demo's joined evidence strings:
mean, spread and range, plus the same on two 20,000-character slices of the paper's text when present.
Run: ``.venv/bin/python benchmarks/structfact_tokens.py`` (reads ``../shared/datasets`` or
``$STRUCTBENCH_SHARED_DATASETS``; assembles the embedded model into the cache on first use).
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

from structbench.backends.tokens import token_counter

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    shared = Path(os.environ.get("STRUCTBENCH_SHARED_DATASETS", REPO.parent / "shared" / "datasets"))
    records = json.loads((shared / "structfact" / "data" / "dataset_demo.json").read_text())
    texts = ["\n".join(e.strip() for e in r["EVIDENCE"]) for r in records]
    paper = shared.parent / "papers" / "structfact.txt"
    prose = []
    if paper.is_file():
        body = paper.read_text()
        prose = [body[:20000], body[20000:40000]]
    reference = token_counter("gemma")
    gold = [reference.count(t) for t in texts]
    gold_prose = [reference.count(t) for t in prose]
    print(f"demo evidence: {len(texts)} records, {sum(gold)} Gemma tokens")
    for name in ("regex", "cl100k-approx", "whitespace"):
        counter = token_counter(name)
        ratios = [counter.count(t) / g for t, g in zip(texts, gold, strict=True)]
        line = (
            f"{name:>10}: mean {statistics.mean(ratios):.2f}  sd {statistics.pstdev(ratios):.2f}  "
            f"min {min(ratios):.2f}  max {max(ratios):.2f}"
        )
        if prose:
            pr = [counter.count(t) / g for t, g in zip(prose, gold_prose, strict=True)]
            line += "  prose " + " ".join(f"{r:.2f}" for r in pr)
        print(line)


if __name__ == "__main__":
    main()
