"""``structbench.datasets``, a path the docs promise plugin authors: everything of
``structbench.data.datasets``."""

# re-export written by tools/dev/move_layers.py
from structbench.data.datasets import *  # noqa: F403
