"""How a relational table becomes knowledge units: rows, (entity, attribute, value) triples, sentences.

Every row is an entity. Its name (the triples' subject and the paragraphs' title) is the value of the
table's subject column: a column whose values are all present and distinct, a text one when there is
one (preferably named ``*name*``/``*title*``). When the only such column is numeric (an id), the entity
is called "<noun> with <column> <value>"; with none at all, "<noun> record <n>".
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from dataclasses import dataclass
from functools import lru_cache

from structbench.benchmarks.skabench.database import Relation
from structbench.benchmarks.skabench.units import Passage, Triple

_NAMEISH = re.compile(r"name|title", re.IGNORECASE)


@lru_cache(maxsize=4096)
def humanize(column: str) -> str:
    """``life_expectancy`` -> ``life expectancy``."""
    return " ".join(column.replace("_", " ").split())


def singular(table: str) -> str:
    """A table name as a singular noun: ``movies_total_gross`` -> ``movies total gross``, ``cities`` -> ``city``."""
    words = humanize(table).split(" ")
    last = words[-1]
    if last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif last.endswith("sses"):
        last = last[:-2]
    elif last.endswith("s") and not last.endswith("ss") and len(last) > 3:
        last = last[:-1]
    return " ".join([*words[:-1], last])


@dataclass(frozen=True)
class TableProfile:
    """What the builder needs to know about a relation to phrase questions and units over it."""

    relation: Relation
    noun: str
    subject_column: int | None
    """A column with all values present and distinct; None when there is none."""
    natural_subject: bool
    """The subject column is text, so its values name the entities."""
    name_column: int | None
    """The column whose values answer "which ..." questions (the subject column when natural)."""

    @property
    def columns(self) -> list[str]:
        return self.relation.columns

    def subject(self, row: int) -> str:
        """The entity name of ``row``."""
        if self.subject_column is None:
            return f"{self.noun} record {row + 1}"
        value = self.relation.cells[row][self.subject_column]
        if self.natural_subject:
            return str(value)
        return f"{self.noun} with {humanize(self.columns[self.subject_column])} {value}"

    def attribute_columns(self) -> list[int]:
        """Columns that become triples (all but a natural subject column, whose value is the subject)."""
        return [j for j in range(len(self.columns)) if not (self.natural_subject and j == self.subject_column)]

    def triples(
        self, row: int, columns: Iterable[int], group: str | None = None, grouped: Container[int] = ()
    ) -> list[tuple[int, Triple]]:
        """``(subject, column, value)`` for each of ``columns`` with a value in ``row``; the triples of
        ``grouped`` columns get ``group``."""
        subject = self.subject(row)
        cells = self.relation.cells[row]
        return [
            (j, Triple(subject, self.columns[j], value, group if j in grouped else None))
            for j in columns
            if (value := cells[j]) is not None
        ]

    def passage(self, row: int, columns: Iterable[int], group: str | None = None) -> Passage | None:
        """``row``'s values in ``columns`` as sentences titled with its entity; None without any value."""
        subject = self.subject(row)
        cells = self.relation.cells[row]
        sentences = [
            f"The {humanize(self.columns[j])} of {subject} is {cells[j]}." for j in columns if cells[j] is not None
        ]
        if not sentences:
            return None
        return Passage(f"{subject}: " + " ".join(sentences), group)


def profile(relation: Relation) -> TableProfile:
    """Choose the subject and name columns of ``relation``."""
    n = len(relation.cells)
    distinct = [len({r[j] for r in relation.cells if r[j] is not None}) for j in range(len(relation.columns))]
    complete = [all(r[j] is not None for r in relation.cells) for j in range(len(relation.columns))]
    unique = [j for j in range(len(relation.columns)) if complete[j] and distinct[j] == n]
    text_unique = [j for j in unique if not relation.numeric(j)]
    named = [j for j in text_unique if _NAMEISH.search(relation.columns[j])]
    subject: int | None = (named or text_unique or unique or [None])[0]  # type: ignore[list-item]
    natural = subject is not None and not relation.numeric(subject)
    if natural:
        name_column: int | None = subject
    else:
        texts = [j for j in range(len(relation.columns)) if not relation.numeric(j) and distinct[j] > 1]
        most = max((distinct[j] for j in texts), default=0)
        # The most varied text column, or a *name*/*title* one that is nearly as varied.
        texts.sort(key=lambda j: (not (_NAMEISH.search(relation.columns[j]) and 2 * distinct[j] >= most), -distinct[j]))
        name_column = texts[0] if texts else None
    return TableProfile(
        relation=relation,
        noun=singular(relation.name),
        subject_column=subject,
        natural_subject=natural,
        name_column=name_column,
    )
