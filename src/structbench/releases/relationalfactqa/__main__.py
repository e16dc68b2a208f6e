"""``python -m structbench.releases.relationalfactqa DATASET_DIR`` regenerates ``manifest.json``."""

from structbench.releases.relationalfactqa import main

main()
