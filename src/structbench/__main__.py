"""``python -m structbench``."""

from structbench.core.collector import collect_less, pause

collect_less()  # before the command's imports, which allocate much and keep little
pause()  # until the command starts (``cli.app.main``), or a run has loaded its samples

from structbench.cli.app import main  # noqa: E402

main()
