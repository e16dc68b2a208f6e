"""``python -m structbench``."""

from structbench.cli.app import main

main()
