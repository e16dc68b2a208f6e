"""``structbench.tokens``, a path the docs promise plugin authors: everything of
``structbench.backends.tokens``."""

# re-export written by tools/dev/move_layers.py
from structbench.backends.tokens import *  # noqa: F403
