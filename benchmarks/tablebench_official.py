"""TableBench's released parser and metrics run beside structbench's on the same replies; prints the agreement.

Usage:
    python benchmarks/tablebench_official.py [--official DIR] [--data-dir DIR] [--size N] [--out FILE]

``--official`` is a clone of github.com/TableBench/TableBench (default: cloned into a temporary folder at run time,
never into this repository); two of its commits are read: ``REFINED`` (the parser and refined metrics of April
2025, ``parse_tablebench_instruction_response_script.py`` and ``eval_tablebench_script.py``) and ``ORIGINAL`` (the
August 2024 code behind the paper's table, ``eval/batch_parse_response_script.py`` and
``eval/batch_eval_response_script.py``). ``--data-dir`` holds ``tablebench/`` (default: a set written by
``structbench generate tablebench --size N``).

Every question gets six replies of each instruction type (right, right after restating the answer format,
reformatted, near, wrong, empty; for programs: right, two answer lines, a bare printed answer, near, a crash, a
helper function; for charts: right, drawn on the current figure, near values, a crash, no code), and the
repository's own example replies (``eval_examples/inference_results``, o3-mini on 54 questions of the release) are
added. The released code parses and scores them in a subprocess, under this environment's pandas, matplotlib and
rouge_score and with ``wrapt_timeout_decorator`` installed beside it (``pip install --target``); the libraries its
metric module loads from the Hugging Face hub at run time (``evaluate.load('rouge')`` ...) are replaced by the same
computation on ``rouge_score`` (the bootstrap aggregator seeded), since nothing is downloaded here. structbench scores
the same replies with ``--option scorer=released`` (and ``scorer=paper`` against the August 2024 code), programs run
in its sandbox. Printed: per-sample agreement of the parse, the execution flag and each metric, and the largest
difference of every aggregate the released evaluation reports.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from structbench.benchmarks.tablebench import TableBench
from structbench.benchmarks.tablebench.generate import write_set
from structbench.benchmarks.tablebench.oracle import chart_program
from structbench.benchmarks.tablebench.parse import python_block
from structbench.benchmarks.tablebench.program import ProgramOutcome, chart_references
from structbench.benchmarks.tablebench.samples import to_sample
from structbench.benchmarks.tablebench.source import INSTRUCTION_FILES, Instructed
from structbench.benchmarks.tablebench.taxonomy import INSTRUCTION_TYPES, VISUALIZATION
from structbench.contract.benchmark import Attempt
from structbench.data.sample import Sample

REPOSITORY = "https://github.com/TableBench/TableBench"
REFINED = "6c61a20340409dea8f96edb8675e66bb4abd7b28"
"""The repository's head: "fix param error of em_score_with_error_2" (its metrics of April 2025)."""
ORIGINAL = "340cf3f1873c45997d7120d086b4e461023395d0"
"""The last commit before the refined metrics (its parser and evaluation unchanged since 2024-08-21): the code of
the paper's table."""
EXAMPLE = "eval_examples/inference_results/o3-mini-2025-01-31=TableBench_DP=Example.jsonl"
KINDS = ("right", "restated", "reformatted", "near", "wrong", "empty")

SHIMS = r'''
import sys, types, numpy as np
from rouge_score import rouge_scorer, scoring

class _Rouge:  # what evaluate.load("rouge") computes: rouge_score's scorer, its bootstrap aggregator's mid
    def compute(self, predictions, references, **_):
        scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=False)
        aggregator = scoring.BootstrapAggregator()
        for ref, pred in zip(references, predictions):
            aggregator.add_scores(scorer.score(ref, pred))
        return {k: v.mid.fmeasure for k, v in aggregator.aggregate().items()}

class _ExactMatch:
    def compute(self, predictions, references, **_):
        return {"exact_match": float(np.mean([p == r for p, r in zip(predictions, references)]))}

class _Unused:
    def compute(self, **_):
        return {"score": 0.0}

evaluate = types.ModuleType("evaluate")
evaluate.load = lambda name: {"rouge": _Rouge(), "exact_match": _ExactMatch()}.get(name, _Unused())
datasets = types.ModuleType("datasets")
datasets.load_metric = datasets.list_metrics = lambda *a, **k: None
sys.modules["evaluate"], sys.modules["datasets"] = evaluate, datasets
np.random.seed(0)
import matplotlib
matplotlib.use("Agg")
'''

REFINED_RUN = SHIMS + r'''
import json, os
tree, records_path, out_path, work = sys.argv[1:5]
sys.path.insert(0, tree)
os.chdir(work)
import parse_tablebench_instruction_response_script as parse
import eval_tablebench_script as evaluation
from metrics.qa_metrics import QAMetric
parse.__name__ = "__main__"  # as the script runs: the programs it execs test __name__ in its globals
records = [json.loads(line) for line in open(records_path)]
parsed = parse.parse_inference_results(records)
metric = QAMetric()
samples = []
for r in parsed:
    out = {"key": r["key"], "parsed": r["parsed_result"].get("parsed_prediction"),
           "ecr": r["parsed_result"].get("ecr_1"), "parse": r["parsed_result"].get("Parse@1")}
    if r["qtype"] != "Visualization":
        scores = metric.compute(references=[r["answer"]], predictions=[out["parsed"]])
        out.update(em=scores["EM"], em_10=scores["EM_with_error_10"], rouge_l=scores["ROUGE-L"])
    samples.append(out)
merged = os.path.join(work, "merged.json")
json.dump([{k: v for k, v in r.items() if k not in ("instruction", "prediction")} for r in parsed], open(merged, "w"))
evaluation.EVAL_RESULT_DIR = work
np.random.seed(0)
groups = evaluation.build_categoried_llm_inference_results([merged], [])
by_type = evaluation.eval_by_type(groups, metric)
json.dump({"samples": samples, "by_type": by_type}, open(out_path, "w"))
'''

ORIGINAL_RUN = SHIMS + r'''
import json, os
tree, records_path, out_path, work = sys.argv[1:5]
sys.path[:0] = [tree, os.path.join(tree, "eval")]
os.chdir(work)
import eval.batch_parse_response_script as parse
import eval.batch_eval_response_script as evaluation
from metrics.qa_metrics import QAMetric
parse.__name__ = "__main__"  # as the script runs: the programs it execs test __name__ in its globals
records = [json.loads(line) for line in open(records_path)]
samples, simple = [], []
for r in records:  # the loop of the script's __main__, for one file per instruction type
    table = json.loads(r["table"])
    if r["instruction_type"] in ("SCoT", "TCoT", "DP"):
        if r["qtype"] == "Visualization":
            parse.pre_save_table_to_csv(table)
            prediction, ecr = parse.parse_chart_code_then_exec(r)
            result = {"parsed_prediction": prediction, "ecr_1": ecr}
        else:
            prediction = parse.parse_dp_prediction(r["prediction"])
            result = {"parsed_prediction": prediction}
    else:
        parse.pre_save_table_to_csv(table)
        if r["qtype"] == "Visualization":
            prediction, ecr = parse.parse_chart_code_then_exec(r)
        else:
            prediction, ecr = parse.parse_general_code_then_exec(r["prediction"])
        result = {"parsed_prediction": prediction, "ecr_1": ecr}
    result["Parse@1"] = prediction != ""
    simple.append({"model_name": r["model_name"], "prompt_type": r["instruction_type"], "qtype": r["qtype"],
                   "qsubtype": r["qsubtype"], "answer": r["answer"], "parsed_result": result})
    samples.append({"key": r["key"], "parsed": prediction, "ecr": result.get("ecr_1"), "parse": result["Parse@1"]})
metric = QAMetric()
for s, r in zip(samples, simple):
    if r["qtype"] != "Visualization":
        s["rouge_l"] = metric.compute([r["parsed_result"]["parsed_prediction"]], [r["answer"]])["ROUGE-L"]
evaluation.EVAL_RESULT_DIR = work
json.dump(simple, open(os.path.join(work, "overall_sim_inference_results.json"), "w"))
np.random.seed(0)
groups = evaluation.build_categoried_llm_inference_results()
evaluation.eval_by_type(groups, metric, "ROUGE-L")
evaluation.eval_by_overall(groups, metric, "ROUGE-L")
by_type = json.load(open(os.path.join(work, "llm_eval_type_results.json")))
overall = json.load(open(os.path.join(work, "llm_eval_overall_results.json")))
json.dump({"samples": samples, "by_type": by_type, "overall": overall}, open(out_path, "w"))
'''


def checkout(official: Path | None, work: Path) -> Path:
    """A clone of the repository (``official``, or cloned now)."""
    if official is not None:
        return official
    target = work / "TableBench"
    subprocess.run(["git", "clone", "--quiet", REPOSITORY, str(target)], check=True)
    return target


def tree(repo: Path, commit: str, work: Path) -> Path:
    """The files of ``commit`` in a folder of their own."""
    folder = work / commit[:7]
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def timeout_library(work: Path) -> Path:
    """A folder holding ``wrapt_timeout_decorator`` (the released parser's timeout), installed by pip."""
    target = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target),
                    "wrapt_timeout_decorator==1.5.1"], check=True)
    return target


def near(gold: str) -> str:
    """A near miss: numbers 4% off (a decimal more), text cut to its first half."""
    parts = []
    for part in gold.split(", "):
        try:
            value = float(part.rstrip("%"))
        except ValueError:
            words = part.split()
            parts.append(" ".join(words[: max(1, len(words) // 2)]))
            continue
        parts.append(f"{value * 1.04:.3f}" + ("%" if part.endswith("%") else ""))
    return ", ".join(parts)


def text_reply(kind: str, gold: str) -> str:
    return {
        "right": f"Final Answer: {gold}",
        "restated": f"Thought: the answer goes on a line 'Final Answer: AnswerName1, ...'.\nFinal Answer: {gold}",
        "reformatted": f"Final Answer: {gold.upper()}.",
        "near": f"Final Answer: {near(gold)}",
        "wrong": "Final Answer: none of them",
        "empty": "",
    }[kind]


def program_reply(kind: str, gold: str) -> str:
    code = {
        "right": f"answer = {gold!r}\nprint(f'Final Answer: {{answer}}')",
        "restated": f"print('Format: Final Answer: AnswerName1')\nprint('Final Answer: ' + {gold!r})",
        "reformatted": f"print({gold!r})",
        "near": f"print('Final Answer: ' + {near(gold)!r})",
        "wrong": "print('Final Answer: 0')\nraise ValueError('no')",
        "empty": f"import json\ndef answer():\n    return json.loads({json.dumps(gold)!r})\n"
                 "print('Final Answer:', answer())",
    }[kind]
    return f"```python\nimport pandas as pd\ndf = pd.read_csv('table.csv')\n{code}\n```"


def chart_reply(kind: str, gold: str, chart_type: str | None) -> str:
    if kind == "empty":
        return "I cannot draw it."
    code = chart_program(gold, chart_type)
    if kind == "restated":
        code = code.replace("plt.figure()\n", "")
    elif kind == "near":
        references = [[v * 1.1 for v in series] for series in chart_references(gold)]
        code = chart_program(f"y_references = {references!r}", chart_type)
    elif kind == "wrong":
        code = code.replace("plt.show()", "raise ValueError('no')")
    elif kind == "reformatted":
        code = code.replace("plt.show()", "plt.gca().patches[0].remove() if plt.gca().patches else None\nplt.show()")
    return f"```python\n{code}\n```"


def reply(kind: str, itype: str, sample: Sample, gold: str) -> str:
    if sample.task == VISUALIZATION:
        return chart_reply(kind, gold, sample.meta.get("chart_type"))
    return program_reply(kind, gold) if itype == "PoT" else text_reply(kind, gold)


def generated_records(data_dir: Path) -> Iterable[dict[str, Any]]:
    """Every question of the set under every instruction type and reply kind, as the released scripts read them."""
    for itype in INSTRUCTION_TYPES:
        path = data_dir / "tablebench" / INSTRUCTION_FILES[itype]
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for kind in KINDS:
                sample = to_sample(Instructed.model_validate(record), {itype: record["instruction"]}, "test")
                yield {**record, "model_name": kind, "key": f"{kind}/{itype}/{record['id']}",
                       "prediction": reply(kind, itype, sample, record["answer"])}


def example_records(repo: Path) -> Iterable[dict[str, Any]]:
    """The repository's example replies (o3-mini, DP), with the fields the other records carry."""
    text = subprocess.run(["git", "-C", str(repo), "show", f"{REFINED}:{EXAMPLE}"], check=True, capture_output=True,
                          text=True).stdout
    for line in text.splitlines():
        record = json.loads(line)
        yield {**record, "model_name": "o3-mini example", "key": f"example/DP/{record['id']}"}


def official(script: str, code: Path, records: list[dict[str, Any]], work: Path, site: Path) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(dir=work))
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (folder / "run.py").write_text(script, encoding="utf-8")
    env_path = f"{site}"
    subprocess.run([sys.executable, str(folder / "run.py"), str(code), str(folder / "records.jsonl"),
                    str(folder / "out.json"), str(folder)], check=True, cwd=folder, stdout=subprocess.DEVNULL,
                   env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(folder)})
    return json.loads((folder / "out.json").read_text())


def sample_of(record: dict[str, Any]) -> Sample:
    return to_sample(Instructed.model_validate(record), {record["instruction_type"]: record["instruction"]}, "test")


def run_programs(records: list[dict[str, Any]], scorer: str) -> dict[tuple[str, str], ProgramOutcome]:
    """Every distinct program of the replies, run once in the sandbox as ``scorer``'s parser runs it."""
    bench = TableBench({"scorer": scorer})
    needs = {(r["id"], r["prediction"]): r for r in records
             if r["qtype"] == VISUALIZATION or r["instruction_type"] == "PoT"}
    with ThreadPoolExecutor(max_workers=2) as pool:
        mode = bench.options.execution
        outcomes = pool.map(lambda r: bench.execute(sample_of(r), r["prediction"], mode), needs.values())
        return dict(zip(needs, outcomes, strict=True))


def ours(records: list[dict[str, Any]], scorer: str, runs: dict[tuple[str, str], ProgramOutcome]) -> dict[str, Any]:
    """structbench's scores of every record under ``scorer`` (with the programs' outcomes from ``run_programs``)."""
    bench = TableBench({"scorer": scorer})
    samples = {r["key"]: sample_of(r) for r in records}
    scored, groups = {}, defaultdict(list)
    for r in records:
        sample, strategy = samples[r["key"]], bench.strategy(r["instruction_type"].lower())
        outcome = runs.get((r["id"], r["prediction"]))
        mode = bench.options.execution
        artifacts = {"program": {"code": python_block(r["prediction"]), mode: outcome.to_json()}} if outcome else {}
        result = bench._score(sample, Attempt(output=r["prediction"], artifacts=artifacts), strategy)
        scored[r["key"]] = result
        groups[(r["model_name"], r["instruction_type"])].append(result)
    return {"scored": scored, "aggregates": {g: bench.aggregate(s) for g, s in groups.items()}}


def compare_samples(theirs: list[dict[str, Any]], mine: dict[str, Any], fields: dict[str, str]) -> dict[str, Any]:
    """How many samples agree on the parse, the execution flag and each metric (in percent, two decimals)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    examples: dict[str, list[str]] = defaultdict(list)
    for t in theirs:
        s = mine[t["key"]]
        chart = s.task == VISUALIZATION
        parsed_mine = ("" if s.parsed is None else s.parsed) if chart else (s.parsed or "")
        if chart and isinstance(t["parsed"], str) and t["parsed"]:  # the August 2024 parser prints 'True'/'False'
            parsed_mine = str(parsed_mine)
        checks = {"parse": t["parsed"] == parsed_mine, "Parse@1": bool(t["parse"]) == bool(s.values["parsed"])}
        if "executed" in s.values:
            checks["ECR@1"] = bool(t["ecr"]) == bool(s.values["executed"])
        for theirs_key, mine_key in fields.items():
            if theirs_key in t:
                checks[theirs_key] = abs(t[theirs_key] - round(100 * s.values[mine_key], 2)) < 0.006
        for name, ok in checks.items():
            counts[name][0] += ok
            counts[name][1] += 1
            if not ok and len(examples[name]) < 3:
                examples[name].append(t["key"])
    return {name: f"{a}/{n}" for name, (a, n) in counts.items()} | {"disagreements": dict(examples)}


def gaps(pairs: list[tuple[str, float, float]]) -> dict[str, Any]:
    """The largest difference among the aggregates that average ROUGE-L (the released code takes a bootstrap median
    of the mean) and among the others (means of 0/1 or exact-match scores, which differ by rounding only)."""
    out: dict[str, Any] = {}
    for name, part in (("with ROUGE-L", [p for p in pairs if "ROUGE" in p[0] or "DataAnalysis" in p[0]
                                          or "Overall" in p[0] or "overall" in p[0]]),
                       ("without ROUGE-L", [p for p in pairs if not ("ROUGE" in p[0] or "DataAnalysis" in p[0]
                                                                  or "Overall" in p[0] or "overall" in p[0])])):
        if part:
            worst = max(part, key=lambda p: abs(p[1] - p[2]))
            out[name] = {"compared": len(part), "largest difference": round(abs(worst[1] - worst[2]), 4),
                         "at": f"{worst[0]}: released {worst[1]:.2f}, structbench {worst[2]:.2f}"}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--official", type=Path, help="a clone of github.com/TableBench/TableBench")
    parser.add_argument("--data-dir", type=Path, help="a folder holding tablebench/ (default: a generated set)")
    parser.add_argument("--size", type=int, default=1, help="tables of each kind in the generated set")
    parser.add_argument("--out", type=Path, help="write the comparison as JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tablebench-official-") as tmp:
        work = Path(tmp)
        repo = checkout(args.official, work)
        data_dir = args.data_dir
        if data_dir is None:
            data_dir = work / "data"
            write_set(data_dir, seed=0, size=args.size)
        records = [*generated_records(data_dir), *example_records(repo)]
        site = timeout_library(work)
        print(f"{len(records)} replies; running the released code ...", flush=True)
        refined = official(REFINED_RUN, tree(repo, REFINED, work), records, work, site)
        original_records = [{**r, "table": json.dumps(r["table"])} for r in records]
        original = official(ORIGINAL_RUN, tree(repo, ORIGINAL, work), original_records, work, site)
        print("structbench (scorer=released, scorer=paper) ...", flush=True)
        released = ours(records, "released", run_programs(records, "released"))
        paper = ours(records, "paper", run_programs(records, "paper"))
    report: dict[str, Any] = {
        "replies": len(records),
        "refined (April 2025) per sample": compare_samples(
            refined["samples"], released["scored"], {"em": "em", "em_10": "em_10", "rouge_l": "rouge_l"}),
        "original (August 2024) per sample": compare_samples(original["samples"], paper["scored"],
                                                             {"rouge_l": "rouge_l"}),
    }
    keys = {"FactChecking": ("EM", "fact_checking"), "NumericalReasoning": ("EM", "numerical_reasoning"),
            "DataAnalysis": ("Mix_Metric", "data_analysis"), "Visualization": ("Pass@1", "visualization"),
            "Overall": ("Mix_Metric", "overall")}
    pairs = []
    for group, types in refined["by_type"].items():
        model, itype = group.split("/")
        mine = released["aggregates"][(model, itype)]
        for qtype, (theirs_key, mine_key) in keys.items():
            pairs.append((f"{group} {qtype} {theirs_key}", types[qtype][theirs_key], 100 * mine[mine_key]))
        pairs.append((f"{group} Parse@1", types["Overall"]["Parse@1"], 100 * mine["parse_rate"]))
    report["refined aggregates"] = gaps(pairs)
    pairs = []
    old_keys = {"FactChecking": "fact_checking_original", "NumericalReasoning": "numerical_reasoning_original",
                "DataAnalysis": "data_analysis_original"}
    for group, types in original["by_type"].items():
        model, itype = group.split("/")
        mine = paper["aggregates"][(model, itype)]
        for qtype, mine_key in old_keys.items():
            pairs.append((f"{group} {qtype} ROUGE-L", types[qtype]["ROUGE-L"], 100 * mine[mine_key]))
        pairs.append((f"{group} Visualization Pass@1", types["Visualization"]["Pass@1"], 100 * mine["visualization"]))
        pairs.append((f"{group} overall MIX", original["overall"][group]["MIX_Metric"], 100 * mine["overall_original"]))
    report["original aggregates"] = gaps(pairs)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
