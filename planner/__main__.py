"""`python -m planner` runs the command-line interface."""

from planner.cli.main import main

if __name__ == "__main__":  # pragma: no cover
    main()
