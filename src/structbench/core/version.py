"""structbench's version, in a module of its own so the core reads it without importing the package's facade."""

__version__ = "0.1.0"
