"""Which prompts are pinned: every benchmark x strategy, plus the variants and options that change a prompt.

The cases are derived from the registry: every strategy of every built-in benchmark
(``structbench.benchmarks.BUILTIN``) on its default variant (``VARIANTS`` names more), so a new benchmark or
strategy is pinned without editing this file; ``pytest tests/prompts --snapshot-update`` writes its snapshots,
and ``test_every_snapshot_belongs_to_a_case`` fails on a snapshot no case produces. The curated cases below
add variants and options that build a prompt differently, and name what each prompt reproduces (the paper's
figure or table, or the official file), which is written at the top of its snapshot file; a derived case
that no curated case names says what its strategy's ``description`` says. The samples are synthetic records
in each release's own format (``tests/synthetic/``, see its README), read by the benchmarks' loaders: the
snapshots hold no released data.

Options that build the prompt differently get a case of their own (one value each); options that only set
sampling parameters or limits are pinned through the ``params`` line of every request. Variants whose
prompts are the same templates over other data are not repeated: StrucText-Eval ``hard`` (larger
generated structures), the RelationalFactQA sources (subsets of ``all``) and ``generated``, SKA-Bench
``csv`` and ``jsonl`` (other instance sources), and StructFact ``full`` (unpublished).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from structbench.benchmarks import BENCHMARKS, BUILTIN

HERE = Path(__file__).resolve().parent
ENHANCED_CONTEXT = "tests/prompts/enhanced_context.json"
"""Stand-in GPT-4o descriptions for StructFact's ``enhanced_context`` (the authors' file is not public)."""


@dataclass(frozen=True)
class Case:
    """One pinned prompt: a benchmark variant, a strategy, options, and the source the prompt reproduces."""

    bench: str
    variant: str
    strategy: str
    reproduces: str
    options: dict[str, str] = field(default_factory=dict)
    """Run options; ``{repo}`` stands for the repository root (kept out of the snapshot text)."""
    samples: tuple[int, int] = (0, 1)
    """Positions, in load order, of the two samples whose requests are pinned."""

    @property
    def id(self) -> str:
        options = (f"{k}={Path(v).name}" for k, v in self.options.items())
        return "-".join([self.bench, self.variant, self.strategy, *options])

    def resolved_options(self, repo: Path) -> dict[str, str]:
        return {**SHARED_OPTIONS.get(self.bench, {}),
                **{k: v.replace("{repo}", str(repo)) for k, v in self.options.items()}}


SHARED_OPTIONS: dict[str, dict[str, str]] = {
    "skabench": {"db": "galois/archipelago", "questions": "3", "budget": "1k"},
}
"""Options every case of a benchmark gets: SKA-Bench builds three questions over the synthetic RelationalFactQA
database, with contexts at a 1k budget, so its snapshots stay readable (the budget changes how much noise fills
the template, not the template)."""

SF = "StructFact (Huang et al.)"
SF_OFFICIAL = "official EganGu/StructFact src/common.py"

STRUCTFACT = [
    Case("structfact", "demo", "zero_shot", f'{SF} Figure 13 "Zero-shot w/o CoT" = {SF_OFFICIAL} TEMPLATE'),
    Case("structfact", "demo", "zero_shot_cot", f'{SF} Figure 13 "Zero-shot w/ CoT" = {SF_OFFICIAL} TEMPLATE_COT'),
    Case("structfact", "demo", "few_shot", f'{SF} Figure 13 "Few-shot w/o CoT" = {SF_OFFICIAL} TEMPLATE_SHOT, '
         "examples from the official pool (src/common.py FEW_SHOT_EXAMPLES)"),
    Case("structfact", "demo", "few_shot_cot", f'{SF} Figure 13 "Few-shot w/ CoT" = {SF_OFFICIAL} TEMPLATE_SHOT_COT'),
    Case("structfact", "demo", "without_data", f'{SF} Figure 14 "w/o Data" = {SF_OFFICIAL} TEMPLATE_WO_DATA'),
    Case("structfact", "demo", "without_data_cot", f'{SF} Figure 14 "w/o Data" + CoT: {SF_OFFICIAL} '
         "TEMPLATE_WO_DATA_COT with the answer instructions of TEMPLATE_COT (README: divergences)"),
    Case("structfact", "demo", "without_data_cot", f"{SF_OFFICIAL} TEMPLATE_WO_DATA_COT, bug-compatible",
         {"official_without_data_cot": "true"}),
    Case("structfact", "demo", "shuffled", f'{SF} Section 4.3 / Table 23 "w/ shuffled data" (rows and columns): '
         f"Figure 13 zero-shot = {SF_OFFICIAL} TEMPLATE over shuffled evidence"),
    Case("structfact", "demo", "format_instructions",
         f'{SF} Figure 14 "Format Instruction" = {SF_OFFICIAL} TEMPLATE_STRUCTURE'),
    Case("structfact", "demo", "self_refine", f'{SF} Figure 14 "Self-Refinement" = {SF_OFFICIAL} '
         "TEMPLATE_SELF_REFINE, asked as a second turn after the zero-shot answer"),
    Case("structfact", "demo", "self_consistency", f"{SF} self-consistency (Figure 14): Figure 13 zero-shot "
         f"({SF_OFFICIAL} TEMPLATE) sampled k = 5 times"),
    Case("structfact", "demo", "enhanced_context", f'{SF} Appendix H.5 "Enhanced Unstructured Context" = '
         f"{SF_OFFICIAL} TEMPLATE_ENHANCED (stand-in descriptions)", {"enhanced_context_file": "{repo}/"
                                                                    + ENHANCED_CONTEXT}),
    Case("structfact", "demo", "zero_shot", f"{SF} Figure 13 zero-shot under option map 1 ({SF_OFFICIAL} "
         "--option_map 1)", {"option_map": "1"}),
    Case("structfact", "demo", "zero_shot", f"{SF} Figure 13 zero-shot under option map 2 ({SF_OFFICIAL} "
         "--option_map 2)", {"option_map": "2"}),
    Case("structfact", "demo", "zero_shot", f"{SF} Figure 13 zero-shot with the evidence re-serialized as JSON "
         "(ours, Figure 14 format study)", {"serialization": "json"}),
    Case("structfact", "demo", "zero_shot", f"{SF} Figure 13 zero-shot without the unstructured context "
         "(NEW_EVIDENCE / text pieces left out)", {"drop_unstructured": "true"}),
    Case("structfact", "demo", "few_shot", f"{SF_OFFICIAL} TEMPLATE_SHOT with generate_few_shot_examples' "
         "literal [data example], bug-compatible", {"few_shot_placeholder": "true"}),
    Case("structfact", "demo", "few_shot", f'{SF} Figure 13 "Few-shot w/o CoT" = {SF_OFFICIAL} TEMPLATE_SHOT '
         "with two examples from the official pool", {"shots": "2"}),
    Case("structfact", "demo", "shuffled", f'{SF} Table 23 "w/ shuffled data (rows)"', {"shuffle": "rows"}),
]

ST = "SciTab (Lu et al., EMNLP 2023)"
SCITAB = [
    case
    for variant, setting in (("all", "three-class"), ("2class", "two-class, option C dropped"))
    for case in (
        Case("scitab", variant, "zero_shot", f'{ST} Appendix H.1 "Zero-shot Prompts", {setting}'),
        Case("scitab", variant, "in_context", f"{ST} Appendix H.2 few-shot (in-context) prompt, {setting}"),
        Case("scitab", variant, "cot", f"{ST} Appendix H.3 chain-of-thought prompt, {setting}"),
        Case("scitab", variant, "pot", f"{ST} Appendix H.4 program-of-thoughts prompt, {setting}"),
        Case("scitab", variant, "tools", f"{ST} Appendix H.1's question over the table's schema, row count and first "
             f"rows, queried with tools (ours); the text protocol, as the oracle backend has no function calling, "
             f"{setting}"),
    )
] + [
    Case("scitab", "all", "zero_shot", f"{ST} Appendix H.1 with the table in Markdown (ours)",
         {"serialization": "markdown"}),
    Case("scitab", "all", "zero_shot", f"{ST} Appendix H.1 with the release's [BOLD]/[ITALIC] cell markers kept",
         {"markup": "keep"}),
    Case("scitab", "all", "open_model", f"{ST} section 4.1 prompt for encoder-decoder and open-source models "
         "(linearized table, caption, claim, A) True B) False C) Unknown?)"),
]

SK = "SKA-Bench (Liu et al., EMNLP 2025) Appendix C"
SKA_FIGURES = {"kg": (15, 19), "table": (16, 20), "kg+text": (17, 21), "table+text": (18, 22)}
SKA_HYBRID = {"budget": "2k"}
"""KG+Text and Table+Text contexts get a 2k budget: some of the synthetic questions' positive units alone pass 1k."""


def _ska_budget(knowledge: str) -> dict[str, str]:
    return SKA_HYBRID if knowledge.endswith("+text") else {}


SKABENCH = [
    Case("skabench", "rfqa", "direct", f"{SK} Fig. {qa} ({knowledge} QA), noise robustness testbed",
         {"knowledge": knowledge, "testbed": "noise", **_ska_budget(knowledge)})
    for knowledge, (qa, _) in SKA_FIGURES.items()
] + [
    Case("skabench", "rfqa", "direct", f"{SK} Fig. {rejection} ({knowledge} negative rejection)"
         + (" (printed without its text: instruction of Fig. 18 and Fig. 21)" if rejection == 22 else ""),
         {"knowledge": knowledge, "testbed": "negative", **_ska_budget(knowledge)})
    for knowledge, (_, rejection) in SKA_FIGURES.items()
] + [
    Case("skabench", "rfqa", "direct", f"{SK} Fig. 16 (table QA), order insensitivity testbed",
         {"knowledge": "table", "testbed": "order"}),
    Case("skabench", "rfqa", "direct", f"{SK} Fig. 17 (kg+text QA), information integration testbed",
         {"knowledge": "kg+text", "testbed": "integration", **SKA_HYBRID}),
    Case("skabench", "rfqa", "self_consistency", f"{SK} Fig. 16 (table QA) sampled 5 times at temperature 0.7 "
         "(self-consistency, ours)", {"knowledge": "table", "testbed": "noise"}),
]

SE = "StrucText-Eval (Gu et al.)"
SE_OFFICIAL = "official StrucText-Eval Evaluation/generate_dataset.py get_data"
STRUCTEXT = [
    case
    for variant in ("test", "official")
    for case in (
        Case("structext", variant, "naive", f'{SE} Table 7 "Prompt of Naive Prompt method"'),
        Case("structext", variant, "self_cot", f'{SE} Table 8 "Prompt of CoT method"'),
        Case("structext", variant, "ps_cot", f"{SE} Table 8's layout with the Plan-and-Solve trigger (Wang et al. "
             "2023; not printed in the paper)"),
        Case("structext", variant, "rule_hint", f'{SE} Table 10 "Prompt of \\w Hint method"'),
        Case("structext", variant, "few_shot", f'{SE} Table 9 "Prompt of Few Shot method", 3 demonstrations'),
        Case("structext", variant, "simple_few_shot", f"{SE} Table 9 with the smallest demonstrations"),
        Case("structext", variant, "official", f"{SE_OFFICIAL}"),
        Case("structext", variant, "official_hint", f"{SE_OFFICIAL}, with its '### Hint:' section"),
    )
] + [
    Case("structext", "test", "few_shot", f'{SE} Table 9 "Prompt of Few Shot method", one demonstration',
         {"shots": "1"}),
    Case("structext", "test", "naive", f"{SE} Table 7, then the LLM-as-judge verdict request (Sec. 4.3; the paper "
         "prints no judge prompt: ours, MT-Bench style reference-guided grading)", {"judge": "same"}),
]

RF = "RelationalFactQA (Satriani et al.)"
RF_RELEASED = "official dbunibas/galois (branch reproducibility) EPrompts"
RFQA = [
    Case("rfqa", "all", "nl", f'{RF_RELEASED} NL template, then the "List more values" follow-up of {RF} '
         "Appendix C"),
    Case("rfqa", "all", "sql", f'{RF_RELEASED} SQL template, then the "List more values" follow-up'),
    Case("rfqa", "all", "cot", f"{RF_RELEASED} CoT template (paper Figure 7): one retrieval prompt per table of the "
         "join, then follow-ups (two joins)", samples=(1, 2)),
    Case("rfqa", "all", "nl", f"{RF_RELEASED} NL template with the table's JSON Schema as response_format "
         "(structured output)", {"structured_output": "true"}),
    Case("rfqa", "all", "nl", f"{RF} Appendix C Figure 5 (NL), verbatim", {"prompt_wording": "paper"}),
    Case("rfqa", "all", "sql", f"{RF} Appendix C Figure 6 (SQL), verbatim", {"prompt_wording": "paper"}),
    Case("rfqa", "all", "cot", f"{RF} Appendix C Figure 7 (CoT), verbatim", {"prompt_wording": "paper"},
         samples=(1, 2)),
]

DB = "SemEval-2025 Task 8 baseline: databench-eval 4.0.1 databench_eval/utils.py example_generator"
DATABENCH = [
    Case("databench", "databench", "pot", f"{DB}, verbatim, as a chat turn"),
    Case("databench", "databench", "pot", f"{DB}, verbatim, as a completion prompt", {"pot_request": "completion"}),
]


CDB = "ClaimDB (Theologitis et al.)"
CLAIMDB = [
    Case("claimdb", "test", "tools", f"{CDB} released claimdb/experiments.py: FACT_CHECKER_PROMPT_3SHOT and the "
         "'Claim: ... Extra Information: ...' input, with the text protocol's instructions for the <db>_execute_sql "
         "tool (the oracle backend has no function calling)"),
]


TB = "TableBench (Wu et al., AAAI 2025)"
TABLEBENCH = [
    Case("tablebench", "test", itype.lower(), f"{TB}: the {itype} instruction of the release's "
         f"TableBench_{itype}.jsonl as the only user turn (lines in its layout written by structbench generate "
         "tablebench: a question and a bar chart)")
    for itype in ("DP", "TCoT", "SCoT", "PoT")
] + [
    Case("tablebench", "test", "dp", f"{TB}: the DP instruction with its table in Markdown (ours: the robustness "
         "grid's format study)", {"serialization": "markdown"}),
]

CURATED: list[Case] = [*STRUCTFACT, *SCITAB, *SKABENCH, *STRUCTEXT, *RFQA, *DATABENCH, *CLAIMDB, *TABLEBENCH]

VARIANTS: dict[str, tuple[str, ...]] = {"scitab": ("all", "2class"), "structext": ("test", "official")}
"""Benchmarks whose every strategy is pinned on more than the default variant (the variant changes the prompt)."""

DERIVED_OPTIONS: dict[str, dict[str, str]] = {
    "skabench": {"knowledge": "table", "testbed": "noise"},
    "structfact.enhanced_context": {"enhanced_context_file": "{repo}/" + ENHANCED_CONTEXT},
}
"""Options of a benchmark's (``NAME``) or a strategy's (``NAME.STRATEGY``) derived cases: what a strategy needs to
build its prompt at all (StructFact's enhanced context file), or the one configuration pinned by default."""


def derived() -> list[Case]:
    """One case per built-in benchmark, pinned variant and strategy, in registry order."""
    cases = []
    for name in BUILTIN:
        cls = BENCHMARKS.get(name)
        for variant in VARIANTS.get(name, cls.variants[:1]):
            for key, strategy in cls().strategies().items():
                options = {**DERIVED_OPTIONS.get(name, {}), **DERIVED_OPTIONS.get(f"{name}.{key}", {})}
                reproduces = f"{cls.title}, strategy {key}: {strategy.description or '(no description)'}"
                cases.append(Case(name, variant, key, reproduces, options))
    return cases


def _cases() -> list[Case]:
    """The curated cases, then each derived case that no curated one pins already (same id)."""
    curated = {c.id for c in CURATED}
    return [*CURATED, *(c for c in derived() if c.id not in curated)]


CASES: list[Case] = _cases()
