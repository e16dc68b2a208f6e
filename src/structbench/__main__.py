"""``python -m structbench``."""

from structbench.core.collector import collect_less

collect_less()  # before the command's imports, which allocate much and keep little

from structbench.cli.app import main  # noqa: E402

main()
