"""Stage 3, workload: what the user wants to run.

``spec`` holds the :class:`~planner.workload.spec.Workload` (training or inference, every option
the memory model reads) and :func:`~planner.workload.spec.workload_from_entry`, the entry point that
reads and validates one (it re-exports the names of the modules below); ``options`` the names and
limits the readers accept and the option records (Training, Inference, HostOptions); ``checks`` the
checks against the model both readers make; ``training`` the training reader and its warnings;
``inference`` the inference reader (Transformers, vLLM, llama.cpp) and each engine's GPU needs;
``frameworks`` the training frameworks and their levers; ``recipes`` the precision recipes;
``othernames`` other tools' names for the keys; ``inputs`` turns command-line options and workload
files into workloads. Imports core, model and catalog.
"""
