"""Stage 9, validate: checking the memory model against real PyTorch runs.

``measure`` runs the validation grid's training steps and generations and records peak tensor
bytes; ``validation`` writes ``reports/validation.md`` from those measurements; ``calibrate``
measures a user's own GPU. Imports the stages before it; torch only inside functions.
"""
