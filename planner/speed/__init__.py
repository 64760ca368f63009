"""Stage 5, speed: how long a workload takes on given GPUs (training step, prefill, decode).

It reads a workload, its memory estimate and the catalog's hardware and returns seconds, each
part with its formula and source; the solver (planner.solve), the cost stage and the reports read it.
Modules: timing (training and inference time per job), traffic (bytes a decode step reads,
achieved-efficiency constants).
"""
