"""``structbench.errors``, a path the docs promise plugin authors: everything of
``structbench.core.errors``."""

# re-export written by tools/dev/move_layers.py
from structbench.core.errors import *  # noqa: F403
