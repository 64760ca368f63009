"""Output failures the command line says (issue 28, second hostile pass)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BASE = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")


def test_a_closed_output_pipe_is_an_error_line_and_exit_2() -> None:
    code = f"import sys; from planner.cli.main import main; sys.argv = ['planner', 'plan', {BASE!r}]; main()"
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.close()  # the reader is gone before a byte is read (as `| (exec 0<&-; ...)`)
    err = p.stderr.read()
    p.stderr.close()
    assert p.wait(timeout=120) == 2
    assert err.count("Error:") == 1 and err.count("\n") == 1
    assert "cannot write the output: the program reading it closed it (broken pipe)" in err
    assert "Traceback" not in err
