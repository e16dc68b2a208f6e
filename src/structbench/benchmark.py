"""``structbench.benchmark``, a path the docs promise plugin authors: everything of
``structbench.contract.benchmark``."""

# re-export written by tools/dev/move_layers.py
from structbench.contract.benchmark import *  # noqa: F403
