"""structbench: evaluate language models on reasoning over structured knowledge."""

__version__ = "0.1.0"

__all__ = ["__version__"]
