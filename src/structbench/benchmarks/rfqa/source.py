"""Where RelationalFactQA comes from: the public release, file by file, with checksums.

The release is described in the data layer (``structbench.releases.relationalfactqa``), since SKA-Bench
builds its instances from the same database tables; this module names what the benchmark uses of it.
"""

from __future__ import annotations

from structbench.releases.relationalfactqa import (
    COMMIT,
    DATA_DIR,
    MISSING_IN_RELEASE,
    QUERIES_FILE,
    REPOSITORY,
    build_manifest,
    dataset_source,
    main,
    manifest,
)

__all__ = [
    "COMMIT",
    "DATA_DIR",
    "MISSING_IN_RELEASE",
    "QUERIES_FILE",
    "REPOSITORY",
    "build_manifest",
    "dataset_source",
    "main",
    "manifest",
]

if __name__ == "__main__":
    main()
