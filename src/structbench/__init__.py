"""structbench: evaluate language models on reasoning over structured knowledge."""

from structbench.version import __version__

__all__ = ["__version__"]
