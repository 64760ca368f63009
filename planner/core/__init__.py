"""Stage 0, core: what every other stage stands on.

Errors and their one-line messages (``errors``), integer-byte units and their parsing (``units``),
safe YAML reading with line marks (``yamlio``), field validation for entries read from files
(``fields``) and atomic writes of output files (``atomic``). Imports nothing else of planner.
"""
