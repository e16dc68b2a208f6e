"""Public dataset releases that more than one benchmark reads: their files, checksums and schema metadata.

Below the benchmarks (the data layer): a benchmark takes another release's files from here, never from
the benchmark that owns it.
"""
