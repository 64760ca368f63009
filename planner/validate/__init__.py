"""Stage 9, validate: checking the memory model against real PyTorch runs.

``measure`` runs the validation grid's training steps and generations and records peak tensor
bytes; ``validation`` writes ``reports/validation.md`` from those measurements; ``calibrate``
measures a user's own GPU. The runs themselves (``runs``, ``calibrate``'s run) and the reading of the
test files the report quotes happen in a child process, the ``worker``, so that a caller's interpreter
keeps its settings. Imports the stages before it; torch only inside functions, in the worker.
"""
