"""TableBench's data source, license and citation (``structbench publish`` puts them on the dataset card)."""

from structbench.contract.provenance import Provenance

PROVENANCE = Provenance(
    paper=("Xianjie Wu, Jian Yang, Linzheng Chai, Ge Zhang, Jiaheng Liu, Xinrun Du, Di Liang, Daixin Shu, Xianfu "
           "Cheng, Tianzhen Sun, Tongliang Li, Zhoujun Li, Guanglin Niu. TableBench: A Comprehensive and Complex "
           "Benchmark for Table Question Answering. AAAI 2025, arXiv 2408.09174."),
    bibtex="""@inproceedings{wu2025tablebench,
  title = {{TableBench}: A Comprehensive and Complex Benchmark for Table Question Answering},
  author = {Wu, Xianjie and Yang, Jian and Chai, Linzheng and Zhang, Ge and Liu, Jiaheng and Du, Xeron and Liang, Di
            and Shu, Daixin and Cheng, Xianfu and Sun, Tianzhen and Li, Tongliang and Li, Zhoujun and Niu, Guanglin},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  volume = {39},
  number = {24},
  pages = {25497--25506},
  year = {2025}
}""",
    source=("https://huggingface.co/datasets/Multilingual-Multimodal-NLP/TableBench (main): TableBench.jsonl and "
            "TableBench_{DP,TCoT,SCoT,PoT}.jsonl, 886 questions, the cleaned release of 2025-04-18"),
    license="apache-2.0",
    license_note=("Apache-2.0 (the Hub dataset card's license, and the repository's 'Data License' badge; the code, "
                  "github.com/TableBench/TableBench, is MIT)."),
)
