"""The ``structbench`` command."""
