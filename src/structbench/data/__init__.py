"""The data model: samples, typed evidence, gold answers, and evidence serializers."""

from structbench.data.evidence import (
    Evidence,
    Graph,
    ItemList,
    StructuredText,
    Table,
    Text,
    Tree,
)
from structbench.data.sample import (
    AnswerListGold,
    Gold,
    LabelGold,
    Sample,
    TableGold,
    TextGold,
)

__all__ = [
    "AnswerListGold",
    "Evidence",
    "Gold",
    "Graph",
    "ItemList",
    "LabelGold",
    "Sample",
    "StructuredText",
    "Table",
    "TableGold",
    "Text",
    "TextGold",
    "Tree",
]
