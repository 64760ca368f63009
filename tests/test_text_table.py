"""planner.report.render.text_table lays a table out as pandas' DataFrame.to_string(index=False) does,
without pandas: the reference here is pandas itself, on the same cells. `planner estimate` prints
its breakdown with it and so never imports pandas (issue 21: text estimate within 1.1x of
`python -c "import pandas"`; benchmarks/bench_cli.py times it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from planner.report.render import text_table

ROOT = Path(__file__).resolve().parents[1]

CASES = [
    # (columns, rows, numeric columns)
    (["component", "when", "per-GPU GiB"], [["weights", "always", 3.6], ["activations", "forward-backward", 10.079]],
     {"per-GPU GiB"}),
    (["a", "GiB"], [["x", 4.0], ["yy", 1.0]], {"GiB"}),  # whole numbers keep one decimal
    (["a", "GiB"], [["x", 4.0], ["yy", 1.5]], {"GiB"}),
    (["a", "GiB"], [["x", 0.0], ["yy", 0.001], ["z", 12345.678]], {"GiB"}),
    (["a much longer header than any cell", "n"], [["x", 0.031], ["y", 0.25]], {"n"}),
    (["text"], [["a\tb"], ["line\nbreak"], [""]], set()),  # escaped as pandas escapes them
    (["only"], [["one"]], set()),
]


@pytest.mark.parametrize("columns,rows,numeric", CASES)
def test_text_table_is_what_pandas_prints(columns, rows, numeric):
    import pandas as pd

    frame = pd.DataFrame(rows, columns=columns)
    assert text_table(columns, rows, numeric) == frame.to_string(index=False, na_rep="")


def test_an_empty_table_reads_as_pandas_reads_it():
    import pandas as pd

    frame = pd.DataFrame({"a": pd.Series([], dtype=object), "GiB": pd.Series([], dtype=float)})
    assert text_table(["a", "GiB"], [], {"GiB"}) == frame.to_string(index=False, na_rep="")


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_estimate_text_imports_no_pandas():
    code = ("import sys\nfrom planner.cli.main import main\n"
            "try:\n    main(['estimate', '--model', 'llama-2-7b', '--task', 'train', '--method', 'qlora'])\n"
            "except SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
            "print([m for m in ('pandas', 'numpy', 'openpyxl', 'scipy') if m in sys.modules], file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert "Per GPU:" in r.stdout
    assert r.stderr.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("rows", [[["a", 1], ["bbbbbb", 1234]], [["x", -1], ["y", 3]], [["long item", 100]]])
def test_int_columns_and_left_aligned_text_are_what_pandas_prints(rows):
    # plan's line items: qty is an int column (pandas leaves room for a sign in its header), the item
    # column is padded on the right by a to_string formatter (planner.report.render.plan_text)
    import pandas as pd

    frame = pd.DataFrame(rows, columns=["item", "qty"])
    wide = max(len(r[0]) for r in rows)
    expected = frame.to_string(index=False, formatters={"item": lambda x: f"{x:<{wide}}"})
    assert text_table(["item", "qty"], rows, integers={"qty"}, left={"item"}) == expected
    assert text_table(["item", "qty"], rows, integers={"qty"}) == frame.to_string(index=False)
