"""Stage 3, workload: what the user wants to run.

``spec`` holds the :class:`~planner.workload.spec.Workload` (training or inference, every option
the memory model reads) and its validation; ``recipes`` the precision recipes; ``inputs`` turns
command-line options and workload files into workloads. Imports core, model and catalog.
"""
