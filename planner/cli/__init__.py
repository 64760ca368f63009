"""Stage 11, cli: the ``planner`` command (click), a thin layer over the stages before it.

Only this stage reads options, prints, and maps errors to exit codes.
"""
