"""The official release: ``Benchmark/`` (1,276 files) and ``New_Benchmark/`` (348 files), one sample each.

Each released JSON file holds a Question, its Answer, the Reference text, a Label (language, depth
``node_number``, width ``n_ary_ratio``, ``few_shot_num``, task), the RuleHint and ``few_shot_num``
worked ``examples``. The file name's ``_N`` suffix is the template slot. Files are declared with
raw GitHub URLs at the commits named in the release's SOURCE notes and their SHA-256
(``official_manifest.json``).
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from structbench.benchmarks.structext.prompts import Demo
from structbench.benchmarks.structext.templates import BY_SLOT, LANGUAGES, TEMPLATES, Template
from structbench.core.errors import DataError
from structbench.data.datasets import DataContext, DatasetSource, RemoteFile
from structbench.data.evidence import StructuredText
from structbench.data.sample import Sample, TextGold

NAME = "structext-eval"
HOMEPAGE = "https://github.com/MikeGu721/StrucText-Eval"
SLOT = re.compile(r"_(\d+)\.json$")


@cache
def manifest() -> dict[str, Any]:
    """``{"repository", "commits": {top folder: commit}, "files": {path: sha256}}``."""
    text = resources.files(__package__).joinpath("official_manifest.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def source() -> DatasetSource:
    """The release as a ``DatasetSource`` (raw GitHub URLs pinned to commits, with checksums)."""
    man = manifest()
    base = f"https://raw.githubusercontent.com/{man['repository']}"
    files = tuple(
        RemoteFile(path=path, url=f"{base}/{man['commits'][path.split('/', 1)[0]]}/{path}", sha256=digest)
        for path, digest in man["files"].items()
    )
    return DatasetSource(name=NAME, homepage=HOMEPAGE, files=files, license="MIT")


_KINDS: dict[type, str] = {str: "a string", int: "an integer", list: "a list", dict: "an object"}


def _field(record: dict[str, Any], key: str, where: str, kind: type = str) -> Any:
    """``record[key]``, which must be of ``kind`` (``DataError`` naming the file and field if missing or not)."""
    if not isinstance(record, dict):
        raise DataError(f"{where}: must be an object, not {type(record).__name__}")
    if key not in record:
        raise DataError(f"{where}: missing field {key!r}")
    value = record[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise DataError(f"{where}: field {key!r} must be {_KINDS[kind]}, not {type(value).__name__}")
    return value


def demo(template: Template, example: dict[str, str]) -> Demo:
    """A released example as a prompt demonstration."""
    ask, requirement = template.split(example["question"].strip())
    return Demo(ask, requirement, example["question"], example["reference"], example["answer"].strip(),
                raw_answer=example["answer"])


def read_sample(root: Path, path: str) -> Sample:
    """One released file as a ``Sample`` (``DataError`` naming the file and field when malformed)."""
    where = str(root / path)
    try:
        record = json.loads((root / path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise DataError(f"{where}: cannot read JSON ({err})") from err
    label = _field(record, "Label", where, dict)
    slot = SLOT.search(path)
    if slot is None:
        raise DataError(f"{where}: the name must end in _N.json")
    language = _field(label, "typename", f"{where} Label")
    template = BY_SLOT.get((language, int(slot.group(1))))
    tasks = _field(label, "other_label_list", f"{where} Label", list)
    if template is None or not tasks or tasks[0] != template.task:
        raise DataError(f"{where}: Label.typename/other_label_list {language!r}/{tasks!r} match no template")
    examples = [
        {"question": _field(ex, "Question", f"{where} examples[{i}]"),
         "answer": _field(ex, "Answer", f"{where} examples[{i}]"),
         "reference": _field(ex, "Reference", f"{where} examples[{i}]")}
        for i, ex in enumerate(_field(record, "examples", where, list) if record.get("examples") is not None
                                 else [])
    ]
    shots = _field(label, "few_shot_num", f"{where} Label", int)
    if len(examples) != shots:
        raise DataError(f"{where}: Label.few_shot_num is {shots} but there are {len(examples)} examples")
    return Sample(
        id=path.removesuffix(".json"),
        benchmark="structext",
        variant="official",
        task=template.task,
        question=_field(record, "Question", where),
        evidence=[StructuredText(language=language, text=_field(record, "Reference", where))],
        gold=TextGold(text=_field(record, "Answer", where)),
        meta={
            "language": language,
            "template": template.id,
            "depth": _field(label, "node_number", f"{where} Label", int),
            "width": _field(label, "n_ary_ratio", f"{where} Label", int),
            "shots": shots,
            "release": path.split("/", 1)[0],
        },
        extra={"rule_hint": _field(record, "RuleHint", where), "examples": examples},
    )


def load(data: DataContext) -> list[Sample]:
    """Every released file, interleaved over templates as the generated suites are (see ``interleave``)."""
    root = data.locate(source())
    return interleave([read_sample(root, path) for path in manifest()["files"] if path.endswith(".json")])


def interleave(samples: list[Sample]) -> list[Sample]:
    """Round robin over templates, taken slot by slot and language by language (one question per language
    first, then one per template); each template's samples keep their manifest order (``Benchmark/``
    before ``New_Benchmark/``), so ``--limit`` draws a spread sample."""
    languages = list(LANGUAGES)
    order = {t.id: (t.index, languages.index(t.language)) for t in TEMPLATES.values()}
    rank: dict[str, int] = {}
    keyed = []
    for position, sample in enumerate(samples):
        template = sample.meta["template"]
        rank[template] = rank.get(template, -1) + 1
        keyed.append(((rank[template], *order[template], position), sample))
    return [sample for _, sample in sorted(keyed, key=lambda pair: pair[0])]
