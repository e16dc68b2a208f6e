"""RelationalFactQA's data source, license and citation (``structbench publish`` puts them on the dataset card)."""

from structbench.contract.provenance import Provenance

PROVENANCE = Provenance(
    paper=("Dario Satriani, Enzo Veltri, Donatello Santoro, Paolo Papotti. RelationalFactQA: A Benchmark for "
           "Evaluating Tabular Fact Retrieval from Large Language Models. arXiv 2505.21409, 2025."),
    bibtex="""@misc{satriani2025relationalfactqa,
  title = {{RelationalFactQA}: A Benchmark for Evaluating Tabular Fact Retrieval from Large Language Models},
  author = {Satriani, Dario and Veltri, Enzo and Santoro, Donatello and Papotti, Paolo},
  year = {2025},
  eprint = {2505.21409},
  archivePrefix = {arXiv}
}""",
    source=("https://github.com/dario-tnn/relational-fact-qa, dataset/ at commit "
            "31b934035c8250c05e5f8ef46888b27ed6841a5e: 696 queries and the database tables they run on"),
    license="unknown",
    license_note=("None stated: the repository has no LICENSE file and its README names none. The databases come "
                  "from BIRD, Spider, Galois and QATCH/YAGO; check their terms."),
    variants={"generated": "question/SQL pairs the user gave or generated (--option path), over their own tables"},
)
