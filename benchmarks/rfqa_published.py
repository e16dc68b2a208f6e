"""RelationalFactQA's published runs scored by the presets, query by query against galois' own scores.

galois (RelationalFactQA's released code, branch ``reproducibility``) holds the LLM caches of the paper's runs
(``core/src/test/resources/llm-bench/cache/<model>/cache-TogetheraiLlama3{NL,SQL}QueryExecutor-*.json``: every
call, its prompt, reply and token counts) and its own per-query scores of them (``llm-results/<model>_complete
_results.xlsx``, which give every cell of the paper's Table 2; their method headers are permuted: the paper's NL
is the xlsx ``SQL`` block, ``TABLE`` for Mistral and Gemma, the paper's SQL is ``NL``, CoT the block with 620
values). For each model and for NL and SQL, this script:

1. builds every release query's first prompt as the ``rfqa-table2`` preset sends it (``prompt_wording=
   published``) and looks it up in the model's cache, as galois' cache keys it;
2. runs the preset's conversation (``reading=galois``) against the cache, each reply made into a ``Choice`` as a
   backend makes it (a DeepSeek thought taken apart), and keeps the queries whose conversation is wholly in the
   cache and whose token totals are the results file's (the published conversation, not another run's);
3. writes their outputs as a predictions file and scores it with ``structbench score rfqa --preset rfqa-table2
   --samples FILE``, then compares each query's cell F1 and tuple similarity with galois' (to its 3 decimals).

It prints one row per model and method and exits 1 where the mean AVG differs by more than 0.003, or fewer than
98% of the queries have galois' tuple similarity or 99% its F1. CoT cannot be replayed: galois words CoT's base
queries in its own expression syntax (``select a and b from t where x == "v"``), which structbench does not.

    pip install openpyxl   # reads the results files
    git clone -b reproducibility https://github.com/dbunibas/galois
    python benchmarks/rfqa_published.py galois [--data-dir ../shared/datasets] [--out /tmp/rfqa-published]
    python benchmarks/rfqa_published.py galois --write-schemas   # galois_schemas.json from galois' configs
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from structbench.backends.base import GenerationParams, Request, Response, reply_choice
from structbench.benchmarks.rfqa import RFQABenchmark, prompts, published_runs
from structbench.benchmarks.rfqa.paper import TABLE2
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from structbench.runner.export import ExportSettings, export_lines
from structbench.testing.cli import invoke

REPO = Path(__file__).resolve().parents[1]
BENCH = "core/src/test/resources/llm-bench"
MODELS = {  # results file -> (cache folder, cache file suffix, the xlsx block of the paper's NL)
    "DeepSeek-R1-Distill-Llama-70B": ("DeepSeek-R1-Distill-Llama-70B-free", "deepseek", "SQL"),
    "Llama-3.3-70B-Instruct-Turbo": ("Llama-3.3-70B-Instruct-Turbo", "llama3", "SQL"),
    "Llama-3.1-8B-Instruct-Turbo": ("Meta-Llama-3.1-8B-Instruct-Turbo", "llama3", "SQL"),
    "Mistral-7B-Instruct-v0.3": ("Mistral-7B-Instruct-v0.3", "mistral", "TABLE"),
    "Qwen2.5-7B-Instruct-Turbo": ("Qwen2.5-7B-Instruct-Turbo", "qwen", "SQL"),
    "gemma-2-9b-it": ("gemma-2-9b-it", "gemma", "TABLE"),
}
EXECUTOR = {"nl": "NL", "sql": "SQL"}
F1, TS = "CellSimilarityF1ScoreFilteredAttributes", "TupleCellSimilarityFilteredAttributes"
TOKENS_IN, TOKENS_OUT = "LLM Total Input Tokens", "LLM Total Output Tokens"
MEAN_AVG_WITHIN, TS_EQUAL, F1_EQUAL = 0.003, 0.98, 0.99


class Unrecoverable(Exception):
    """The conversation needs a call the cache does not hold (a first re-prompt: galois keyed every query's alike)."""


@dataclass
class Cache:
    """One executor's LLM cache: first prompts, and the calls after them by (first prompt, iteration, message)."""

    first: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    later: dict[tuple[str, int, str], Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> Cache:
        cache = cls()
        pattern = re.compile(r"-iter:(\d+)-(" + re.escape(prompts.ITERATIVE) + "|" + re.escape(prompts.INVALID_JSON)
                             + r")$", re.S)
        for key, entry in json.loads(path.read_text(encoding="utf-8")).items():
            if key.startswith("iter:0-"):
                cache.first[key.removeprefix("iter:0-")] = entry
            elif key.startswith("fp:") and (found := pattern.search(key)):
                cache.later[(key[3 : found.start()], int(found.group(1)), found.group(2))] = entry
        return cache


@dataclass
class Replay:
    """A model that answers one conversation from galois' cache, and the tokens galois counted for it."""

    cache: Cache
    first: str | None = None
    iteration: int = 0
    tokens_in: float = 0.0
    tokens_out: float = 0.0

    async def __call__(self, request: Request) -> Response:
        assert request.messages is not None
        message = request.messages[-1].content
        counted = True
        if self.first is None:
            self.first, entry = message, self.cache.first.get(message)
        elif message == prompts.ITERATIVE:
            self.iteration += 1
            entry = self.cache.later.get((self.first, self.iteration, message))
        else:  # galois counts no tokens of a re-prompt
            counted = False
            entry = self.cache.later.get((self.first, self.iteration, message)) if self.iteration else None
        if entry is None:
            raise Unrecoverable(message[:60])
        if counted:
            self.tokens_in += entry["inputTokens"]
            self.tokens_out += entry["outputTokens"]
        return Response(choices=(reply_choice(entry["response"], GenerationParams()),))


def read_results(path: Path, nl_block: str) -> dict[str, dict[str, dict[str, Any]]]:
    """A results file as method -> query -> galois' values (``nl``, ``sql``, ``cot``)."""
    from openpyxl import load_workbook

    rows = list(load_workbook(path, read_only=True).worksheets[0].iter_rows(values_only=True))
    metrics = rows[1]
    blocks: dict[str, dict[str, dict[str, Any]]] = {}
    for label in ("TABLE", "SQL", "NL"):
        start = rows[0].index(label)
        blocks[label] = {str(r[1]): {str(metrics[start + k]): r[start + k] for k in range(15)}
                         for r in rows[2:] if r[1]}
    scored = {label: sum(isinstance(v[F1], int | float) for v in block.values()) for label, block in blocks.items()}
    cot = min(scored, key=lambda label: scored[label])
    return {"nl": blocks[nl_block], "sql": blocks["NL"], "cot": blocks[cot]}


def equal(ours: float, theirs: Any) -> bool:
    """Whether ``ours`` is galois' value as its results file prints it (3 decimals)."""
    return isinstance(theirs, int | float) and abs(ours - float(theirs)) <= 0.0005 + 1e-9


def replay(bench: RFQABenchmark, sample: Sample, method: str, cache: Cache) -> tuple[str, float, float] | None:
    """The preset's output for ``sample`` from the cached conversation and galois' token totals; None when the
    conversation is not wholly in the cache."""
    model = Replay(cache)
    try:
        attempt = asyncio.run(bench.strategy(method).run(sample, model))
    except Unrecoverable:
        return None
    return attempt.output, model.tokens_in, model.tokens_out


def compare(galois_dir: Path, data_dir: Path, out: Path) -> bool:
    options = dict(TABLE2.preset.options)
    bench = RFQABenchmark(options)
    samples = bench.load("all", DataContext(data_dir=data_dir, offline=True), seed=0, limit=None)
    by_id = {s.id: s for s in samples}
    print("| model | method | prompts found | matched | F1 equal | TS equal | mean AVG galois | mean AVG preset | "
          "mean AVG corrected |\n|---|---|---|---|---|---|---|---|---|")
    ok = True
    for results, (folder, suffix, nl_block) in MODELS.items():
        galois = read_results(galois_dir / BENCH / "llm-results" / f"{results}_complete_results.xlsx", nl_block)
        for method, executor in EXECUTOR.items():
            name = f"cache-TogetheraiLlama3{executor}QueryExecutor-{suffix}.json"
            path = galois_dir / BENCH / "cache" / folder / name
            if not path.is_file():
                print(f"| {results} | {method} | no cache in the checkout ({path.name}) | | | | | | |")
                continue
            cache = Cache.read(path)
            settings = ExportSettings(bench="rfqa:all", strategy=method, options=options)
            lines = {line["id"]: line for line in export_lines(bench, "all", samples, bench.strategy(method), settings)}
            found = [i for i, line in lines.items() if line["prompt"][0]["content"] in cache.first]
            predictions = []
            for qid in found:
                got = replay(bench, by_id[qid], method, cache)
                row = galois[method].get(qid, {})
                if got is not None and (got[1], got[2]) == (row.get(TOKENS_IN), row.get(TOKENS_OUT)):
                    predictions.append({"id": qid, "fingerprint": lines[qid]["fingerprint"], "output": got[0]})
            run = out / results / method
            run.mkdir(parents=True, exist_ok=True)
            (run / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
            done = invoke("score", "rfqa", "--preset", TABLE2.preset.name, "-s", method, "-p",
                          str(run / "predictions.jsonl"), "--missing", "skip", "--samples", str(run / "samples.jsonl"),
                          "--out", str(run / "metrics.json"), "--data-dir", str(data_dir), "--offline")
            if done.returncode != 0:
                raise SystemExit(f"structbench score failed ({done.returncode}): {done.stderr.strip()}")
            scored = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
            n = len(scored)
            f1_equal = sum(equal(s["values"]["cell_f1"], galois[method][s["id"]][F1]) for s in scored)
            ts_equal = sum(equal(s["values"]["tuple_similarity"], galois[method][s["id"]][TS]) for s in scored)
            theirs = sum((galois[method][s["id"]][F1] + galois[method][s["id"]][TS]) / 2 for s in scored) / n
            ours = sum(s["score"] for s in scored) / n
            corrected = sum(s["values"]["corrected:score"] for s in scored) / n
            good = abs(ours - theirs) <= MEAN_AVG_WITHIN and ts_equal >= TS_EQUAL * n and f1_equal >= F1_EQUAL * n
            ok = ok and good
            print(f"| {results} | {method} | {len(found)} | {n} | {f1_equal} ({f1_equal / n:.1%}) | {ts_equal} "
                  f"({ts_equal / n:.1%}) | {theirs:.4f} | {ours:.4f} | {corrected:.4f} |{'' if good else ' FAIL'}")
            for s in scored:
                row = galois[method][s["id"]]
                if not (equal(s["values"]["cell_f1"], row[F1]) and equal(s["values"]["tuple_similarity"], row[TS])):
                    print(f"|  | {s['id']} | | | F1 {s['values']['cell_f1']:.3f} (galois {row[F1]}) | TS "
                          f"{s['values']['tuple_similarity']:.3f} (galois {row[TS]}) | | | |")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("galois", type=Path, help="a checkout of dbunibas/galois, branch reproducibility")
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--out", type=Path, default=Path("/tmp/rfqa-published"),
                        help="where the predictions and --samples files go")
    parser.add_argument("--write-schemas", action="store_true",
                        help="rewrite the packaged galois_schemas.json from the checkout's configs, and stop")
    args = parser.parse_args()
    if args.write_schemas:
        print(f"wrote {published_runs.write_schemas(args.galois)}")
        return 0
    return 0 if compare(args.galois, args.data_dir, args.out) else 1


if __name__ == "__main__":
    sys.exit(main())
