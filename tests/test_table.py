"""planner.core.table.Table: the solver's tables without pandas (issue 21: pandas only where a
frame is built). The reference for its CSV, records and frames is pandas itself, on the same
columns; and a plan, a plan that finds nothing and a compare never import pandas."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.core.table import Table, as_table

ROOT = Path(__file__).resolve().parents[1]

_texts = st.text(alphabet=st.sampled_from(list('ab ,"\'\n\r=+-@.x1')), max_size=6)
_floats = st.floats(allow_nan=True, allow_infinity=False, width=64) | st.sampled_from(
    [0.0, -0.0, 1e16, 1.5e-5, 123456789.125, 1e-300, 2.0**60, 0.1 + 0.2])


@st.composite
def tables(draw):
    n = draw(st.integers(0, 5))
    kinds = draw(st.lists(st.sampled_from(["int", "float", "bool", "text", "mixed"]), min_size=1, max_size=5))
    cols = {}
    for i, kind in enumerate(kinds):
        if kind == "int":
            values = np.array(draw(st.lists(st.integers(-2**62, 2**62), min_size=n, max_size=n)), dtype=np.int64)
        elif kind == "float":
            values = np.array(draw(st.lists(_floats, min_size=n, max_size=n)), dtype=float)
        elif kind == "bool":
            values = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
        else:
            cells = draw(st.lists(_texts if kind == "text" else (_texts | st.none()), min_size=n, max_size=n))
            values = np.empty(n, dtype=object)
            values[:] = cells
        cols[f"c{i}_{kind}"] = values
    return Table(cols, length=n)


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=150, deadline=None)
@given(tables())
def test_csv_is_byte_for_byte_what_pandas_writes(t):
    assert t.to_csv() == t.to_frame().to_csv(index=False, lineterminator="\n")


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=100, deadline=None)
@given(tables())
def test_records_and_rows_are_pandas_records_with_python_values(t):
    mine, theirs = t.records(), t.to_frame().to_dict(orient="records")
    assert len(mine) == len(theirs) == len(t)
    for a, b in zip(mine, theirs):
        assert list(a) == list(b) == t.columns
        for k in a:
            x, y = a[k], b[k]
            assert type(x) in (int, float, bool, str, type(None)), (k, type(x))
            # a missing text is None here and NaN in pandas (pandas' str dtype): the JSON writes null for both
            assert (_missing(x) and _missing(y)) or x == y
    for i in range(len(t)):
        assert t.row(i) == mine[i] or any(isinstance(v, float) and v != v for v in mine[i].values())


def _missing(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def test_a_csv_guard_sees_only_text_cells():
    t = Table({"name": ["=1+1", "ok", None], "n": [1, -2, 3], "x": [1.0, float("nan"), -4.0]})
    guarded = t.to_csv(text=lambda s: "'" + s if s.startswith(("=", "-")) else s)
    # the int -2 and the float -4.0 stay numbers; None and NaN are empty cells
    assert guarded.splitlines() == ["name,n,x", "'=1+1,1,1.0", "ok,-2,", ",3,-4.0"]


def test_new_tables_take_select_rename_and_insert():
    t = Table({"a": [3, 1, 2], "b": ["x", "y", "z"], "c": [0.5, 1.5, 2.5]})
    taken = t.take([2, 0])
    assert taken["a"].tolist() == [2, 3] and taken["b"].tolist() == ["z", "x"] and len(taken) == 2
    assert t.select(["c", "a"]).columns == ["c", "a"]
    assert t.renamed({"a": "rank"}).columns == ["rank", "b", "c"]
    assert t.with_first("#", [1, 2, 3]).columns == ["#", "a", "b", "c"]
    assert t.without(["b"]).columns == ["a", "c"]
    copy = t.copy()
    copy["a"][0] = 99
    assert t["a"][0] == 3  # a copy's columns are its own
    assert t.equals(Table({"a": [3, 1, 2], "b": ["x", "y", "z"], "c": [0.5, 1.5, 2.5]}))
    assert not t.equals(taken)


def test_from_records_keeps_the_column_order_and_fills_missing_keys():
    t = Table.from_records([{"b": 1, "a": "x"}, {"a": "y"}], ["a", "b"])
    assert t.columns == ["a", "b"] and t["a"].tolist() == ["x", "y"] and t["b"].tolist() == [1, None]
    empty = Table.from_records([], ("a", "b"))
    assert len(empty) == 0 and empty.columns == ["a", "b"]
    assert empty.to_csv() == "a,b\n"


def test_bad_columns_are_refused_with_the_column_named():
    with pytest.raises(ValueError) as e:
        Table({"a": [1, 2], "b": [1]})
    assert "column 'b' has 1 values; the table has 2 rows" in str(e.value)
    t = Table({"a": [1, 2]})
    with pytest.raises(KeyError) as k:
        t["gpu"]
    assert "no column 'gpu'; columns: a" in str(k.value)
    with pytest.raises(ValueError) as e2:
        t["b"] = [1, 2, 3]
    assert "column 'b' has 3 values" in str(e2.value)


def test_as_table_reads_a_dataframe_and_refuses_other_things():
    import pandas as pd

    df = pd.DataFrame({"gpu_id": ["a", "b"], "capex_usd": [1.0, 2.0]}, index=[5, 7])
    t = as_table(df)
    assert t.columns == ["gpu_id", "capex_usd"] and t["gpu_id"].tolist() == ["a", "b"]
    assert as_table(None) is None and as_table(t) is t
    with pytest.raises(TypeError) as e:
        as_table([1, 2])
    assert "not a table: list" in str(e.value)


@pytest.mark.parametrize("args", [
    ["plan", "scenarios/qlora-7b-12gb.yaml", "--out", "{tmp}/a"],
    ["plan", "scenarios/lab-workstation-mix.yaml", "--format", "md,csv,json,xlsx", "--out", "{tmp}/b"],
    ["compare", "scenarios/compare-qlora-7b-12gb.yaml", "--out", "{tmp}/c"],
])
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_and_compare_import_no_pandas(tmp_path, args):
    code = ("import sys\nfrom planner.cli.main import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
            "print('pandas' in sys.modules, file=sys.stderr)\n")
    argv = [a.format(tmp=tmp_path) for a in args]
    r = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip().splitlines()[-1] == "False"


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_plan_that_finds_nothing_imports_no_pandas(tmp_path):
    scenario = tmp_path / "nofit.yaml"
    scenario.write_text("name: nofit\nworkloads:\n  - name: serve\n    model: llama-2-7b\n    task: infer\n"
                        "    context: 4096\n    concurrency: 4\nconstraints:\n  budget_usd: 100\n")
    code = ("import sys\nfrom planner.cli.main import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    print('exit', exc.code, file=sys.stderr)\n"
            "print('pandas' in sys.modules, file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code, "plan", str(scenario), "--out", str(tmp_path / "r")],
                       capture_output=True, text=True, cwd=ROOT)
    assert "No machine fits scenario 'nofit'" in r.stdout + r.stderr
    # exit 1: nothing fits (docs/commands.md); the reasons were written, and pandas never imported
    assert r.stderr.strip().splitlines()[-2:] == ["exit 1", "False"]
    assert (tmp_path / "r" / "nofit.csv").exists()


def test_csv_chunks_join_to_the_whole_text():
    """Written a few rows at a time (issue 33), the CSV is the same text: each piece after the first
    starts at a row, the header comes once, and every cell reads as in the whole column."""
    import numpy as np

    t = Table({"n": np.arange(25), "x": np.linspace(0, 1, 25), "s": np.array([f"=a{i}" for i in range(25)], dtype=object)},
              length=25)
    pieces = list(t.csv_chunks(text=lambda v: "'" + v, rows=10))
    assert len(pieces) == 3
    assert "".join(pieces) == t.to_csv(text=lambda v: "'" + v)
    assert pieces[1].startswith("10,") and pieces[0].startswith("n,x,s\n")
    assert list(Table({}, length=0).csv_chunks()) == ["\n"]
