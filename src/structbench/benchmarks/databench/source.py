"""Where DataBench comes from: the Hub repository ``cardiffnlp/databench``, one folder per dataset.

The release is ``data/<id>_<Name>/`` for each of its 65 datasets, with the whole table (``all.parquet``), its
20-row sample (``sample.parquet``, DataBench Lite) and the dataset's 20 questions (``qa.parquet``). A local copy
(``--data-dir DIR``) is laid out the same way under ``DIR/databench/``; its datasets are the folders it holds
(so a set ``structbench generate databench`` wrote reads like the release). Without one, each dataset's files are
downloaded into the cache as they are needed: the questions and the tables of the variant's kind only.

The Hub files are read from the repository's ``main`` branch: this build could not reach the Hub to record a
revision and the files' checksums (no file is declared with a SHA-256, so a local copy is not checked).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from structbench.core.errors import DatasetUnavailableError
from structbench.data.datasets import DataContext, DatasetSource, RemoteFile

HUB_REPO = "cardiffnlp/databench"
HOMEPAGE = f"https://huggingface.co/datasets/{HUB_REPO}"
REVISION = "main"
NAME = "databench"
"""The dataset's folder under ``--data-dir`` and in the download cache."""
DATA = "data"
QA_FILE = "qa.parquet"
ALL_FILE = "all.parquet"
SAMPLE_FILE = "sample.parquet"
TABLE_FILES = {"databench": ALL_FILE, "lite": SAMPLE_FILE}
"""Variant -> the table its questions are asked of: the whole table, or DataBench Lite's 20-row sample."""

DATASETS = (
    "001_Forbes", "002_Titanic", "003_Love", "004_Taxi", "005_NYC", "006_London", "007_Fifa", "008_Tornados",
    "009_Central", "010_ECommerce", "011_SF", "012_Heart", "013_Roller", "014_Airbnb", "015_Food", "016_Holiday",
    "017_Hacker", "018_Staff", "019_Aircraft", "020_Real", "021_Telco", "022_Airbnbs", "023_Climate", "024_Salary",
    "025_Data", "026_Predicting", "027_Supermarket", "028_Predict", "029_NYTimes", "030_Professionals",
    "031_Trustpilot", "032_Delicatessen", "033_Employee", "034_World", "035_Billboard", "036_US", "037_Ted",
    "038_Stroke", "039_Happy", "040_Speed", "041_Airline", "042_Predict", "043_Predict", "044_IMDb", "045_Predict",
    "046_120", "047_Bank", "048_Data", "049_Boris", "050_ING", "051_Pokemon", "052_Professional", "053_Patents",
    "054_Joe", "055_German", "056_Emoji", "057_Spain", "058_US", "059_Second", "060_Bakery", "061_Disneyland",
    "062_Trump", "063_Influencers", "064_Clustering", "065_RFM",
)
"""The release's 65 dataset folders (the Hub's ``qa`` configuration lists them in this order)."""


def url(path: str) -> str:
    """The download address of ``path`` (relative to the repository root) on the Hub."""
    return f"{HOMEPAGE}/resolve/{REVISION}/{path}"


def dataset_source(dataset: str, files: Sequence[str]) -> DatasetSource:
    """The files ``files`` of one dataset folder, as a source ``DataContext`` locates (downloading what is missing)."""
    paths = [f"{DATA}/{dataset}/{name}" for name in files]
    return DatasetSource(name=NAME, homepage=HOMEPAGE, files=tuple(RemoteFile(p, url(p)) for p in paths),
                         license="mit")


def dataset_names(data: DataContext) -> list[str]:
    """The datasets to read: the folders of a local copy that hold a ``qa.parquet``, by name; else the release's."""
    if data.data_dir is None:
        return list(DATASETS)
    folder = data.data_dir / NAME / DATA
    found = sorted(p.parent.name for p in folder.glob(f"*/{QA_FILE}")) if folder.is_dir() else []
    if not found:
        raise DatasetUnavailableError(
            f"databench: no {DATA}/<dataset>/{QA_FILE} under {data.data_dir / NAME} (from "
            f"{data.dir_flag.rstrip('=')}): lay out a copy of {HOMEPAGE} as DIR/{NAME}/{DATA}/<id>_<Name>/, or "
            f"write a test set with `structbench generate databench --out DIR`"
        )
    return found


def dataset_files(data: DataContext, dataset: str, variant: str) -> tuple[Path, Path]:
    """The local paths of ``dataset``'s questions and of the table ``variant`` asks them of (downloaded if need be)."""
    table = TABLE_FILES[variant]
    root = data.locate(dataset_source(dataset, (QA_FILE, table)))
    folder = root / DATA / dataset
    return folder / QA_FILE, folder / table
