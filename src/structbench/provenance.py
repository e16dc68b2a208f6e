"""``structbench.provenance``, a path the docs promise plugin authors: everything of
``structbench.contract.provenance``."""

# re-export written by tools/dev/move_layers.py
from structbench.contract.provenance import *  # noqa: F403
