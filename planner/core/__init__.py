"""Stage 0, core: what every other stage stands on.

Errors and their one-line messages (``errors``), integer-byte units and their parsing (``units``),
the one bounded reader of input files (``infile``), safe YAML reading with line marks (``yamlio``),
field validation for entries read from files (``fields``), names safe to show and to use as file
names (``names``), atomic writes of output files (``atomic``) and of report sets as one unit
(``reportset``), and SIGINT/SIGTERM/SIGHUP turned into a clean stop (``interrupt``). Imports nothing
else of planner.
"""
