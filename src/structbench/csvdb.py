"""``structbench.csvdb``, a path the docs promise plugin authors: everything of
``structbench.data.csvdb``."""

# re-export written by tools/dev/move_layers.py
from structbench.data.csvdb import *  # noqa: F403
