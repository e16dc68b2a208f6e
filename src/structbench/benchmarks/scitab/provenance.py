"""SciTab's data source, license and citation (``structbench publish`` puts them on the dataset card)."""

from structbench.contract.provenance import Provenance

PROVENANCE = Provenance(
    paper=("Xinyuan Lu, Liangming Pan, Qian Liu, Preslav Nakov, Min-Yen Kan. SciTab: A Challenging Benchmark for "
           "Compositional Reasoning and Claim Verification on Scientific Tables. EMNLP 2023."),
    bibtex="""@inproceedings{lu2023scitab,
  title = {{SciTab}: A Challenging Benchmark for Compositional Reasoning and Claim Verification on Scientific Tables},
  author = {Lu, Xinyuan and Pan, Liangming and Liu, Qian and Nakov, Preslav and Kan, Min-Yen},
  booktitle = {Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year = {2023}
}""",
    source=("https://github.com/XinyuanLu00/SciTab, dataset/sci_tab.json at commit "
            "217cfbd71ebf39ba26a0938f0d87a9fce560e0fe: 1,224 claims over 213 tables from 80 papers"),
    license="mit",
    license_note="MIT (the repository's LICENSE file, \"Copyright (c) 2023 Lu Xinyuan\").",
)
