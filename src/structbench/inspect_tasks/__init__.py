"""structbench's benchmarks as Inspect AI tasks (``pip install 'structbench[inspect]'``).

Installing structbench registers one Inspect task per benchmark through Inspect's ``inspect_ai`` entry point
(``_registry``), so ``inspect eval structbench/<bench> -T strategy=... --model ...`` runs it: the dataset
comes from structbench's loaders, the solver runs structbench's strategy through Inspect's model API
(multi-turn strategies included), and the scorer applies structbench's own parser and metrics.
"""

from structbench.inspect_tasks.tasks import benchmark_task

__all__ = ["benchmark_task"]
