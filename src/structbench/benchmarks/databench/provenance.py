"""DataBench's data source, license and citation (``structbench publish`` puts them on the dataset card)."""

from structbench.contract.provenance import Provenance

PROVENANCE = Provenance(
    paper=("Jorge Osés Grijalba, L. Alfonso Ureña-López, Eugenio Martínez Cámara, Jose Camacho-Collados. Question "
           "Answering over Tabular Data with DataBench: A Large-Scale Empirical Evaluation of LLMs. LREC-COLING 2024; "
           "and SemEval-2025 Task 8: Question Answering over Tabular Data, SemEval 2025."),
    bibtex="""@inproceedings{oses-grijalba-etal-2024-question,
  title = {Question Answering over Tabular Data with {DataBench}: A Large-Scale Empirical Evaluation of {LLM}s},
  author = {Os{\\'e}s Grijalba, Jorge and Ure{\\~n}a-L{\\'o}pez, L. Alfonso and Mart{\\'i}nez C{\\'a}mara, Eugenio and
            Camacho-Collados, Jose},
  booktitle = {Proceedings of the 2024 Joint International Conference on Computational Linguistics, Language
               Resources and Evaluation (LREC-COLING 2024)},
  year = {2024}
}
@inproceedings{oses-grijalba-etal-2025-semeval,
  title = {{SemEval}-2025 Task 8: Question Answering over Tabular Data},
  author = {Os{\\'e}s Grijalba, Jorge and Ure{\\~n}a-L{\\'o}pez, L. Alfonso and Mart{\\'i}nez C{\\'a}mara, Eugenio and
            Camacho-Collados, Jose},
  booktitle = {Proceedings of the 19th International Workshop on Semantic Evaluation (SemEval-2025)},
  year = {2025}
}""",
    source=("https://huggingface.co/datasets/cardiffnlp/databench (branch main), data/<id>_<Name>/ with all.parquet, "
            "sample.parquet and qa.parquet: 65 datasets x 20 questions"),
    license="mit",
    license_note="MIT (the Hub repository's license: cardiffnlp/databench).",
)
