"""SKA-Bench's data source, license and citation (``structbench publish`` puts them on the dataset card)."""

from structbench.contract.provenance import Provenance

PROVENANCE = Provenance(
    paper=("Liu et al. SKA-Bench: A Fine-Grained Benchmark for Evaluating Structured Knowledge Understanding of "
           "LLMs. EMNLP 2025, arXiv 2507.17178."),
    bibtex="""@inproceedings{liu2025skabench,
  title = {{SKA-Bench}: A Fine-Grained Benchmark for Evaluating Structured Knowledge Understanding of {LLMs}},
  author = {Liu and Niu and Hua and Sun and Liang and Chen and Zhang},
  booktitle = {Proceedings of the 2025 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year = {2025},
  eprint = {2507.17178},
  archivePrefix = {arXiv}
}""",
    source=("instances built by structbench from a RelationalFactQA database "
            "(https://github.com/dario-tnn/relational-fact-qa at commit 31b934035c8250c05e5f8ef46888b27ed6841a5e); "
            "the paper's own instances could not be retrieved"),
    license="unknown",
    license_note=("The paper's release states no license (its sources: WebQSP, MSR Data License; CWQ, GPL v2+; WTQ "
                  "and TableBench, Apache-2.0; STaRK and HybridQA, MIT). The default variant's tables are "
                  "RelationalFactQA's, whose release states no license either."),
    variants={
        "csv": "instances built from the CSV tables the user gave (--option path)",
        "jsonl": "instances read from the user's JSONL file (--option path)",
        "contexts": "laid-out testbed contexts read from the user's file (--option path)",
    },
)
