"""The foundation every layer may import: errors and exit codes, atomic files, secrets' redaction,
registries and plugins, user YAML read safely, untrusted names checked, forked work, the collector's pace, work kept
per process by file identity (``memo``), generated sets' size bounds, the version.
It imports nothing else of structbench."""
