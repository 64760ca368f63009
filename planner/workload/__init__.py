"""Stage 3, workload: what the user wants to run.

``spec`` holds the :class:`~planner.workload.spec.Workload` (training or inference, every option
the memory model reads) and the entry point that reads and validates one; ``options`` the names and
limits the readers accept and the option records (Training, Inference, HostOptions); ``checks``
the checks against the model both readers make; ``training`` the training reader and its warnings;
``recipes``
the precision recipes; ``inputs`` turns command-line options and workload files into workloads.
Imports core, model and catalog.
"""
