"""Tables as named numpy columns: the planner's candidate, alternative and summary tables.

The solver's tables are a few dozen columns of equal length (ints, floats, bools and texts).
They live here as one numpy array per column, in a fixed order, so that a plan never imports
pandas: pandas costs as much to import as the rest of a plan does (issue 21, benchmarks/). A
table becomes a pandas DataFrame only where one is asked for (:meth:`Table.to_frame`: the
Python API's ``to_frame()``, notebooks). Its CSV (:meth:`Table.to_csv`) is byte for byte what
``DataFrame.to_csv(index=False, lineterminator="\\n")`` writes for the same columns (pandas'
``CSVFormatter``: the standard library's ``csv.writer`` with minimal quoting; floats as their
shortest repr, NaN and None as empty cells, booleans as True/False).

numpy is imported inside the methods, so importing this module costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

#: Rows of CSV text :meth:`Table.csv_chunks` makes at a time (about 5 MB for the candidate table).
CSV_CHUNK_ROWS = 10_000


class Table:
    """Named 1-D numpy columns of one length, in order; rows are numbered 0..n-1.

    Args:
        columns: column name -> values (a numpy array or a sequence; a sequence becomes an
            array, texts and mixed values an object array). Every column has the same length.
        length: the number of rows when ``columns`` is empty (default 0).

    Raises:
        ValueError: columns of different lengths, or a column that is not one-dimensional.
    """

    __slots__ = ("_cols", "_n")

    def __init__(self, columns: Mapping[str, Any] | None = None, *, length: int = 0) -> None:
        self._cols: dict[str, Any] = {}
        self._n = length
        for i, (name, values) in enumerate((columns or {}).items()):
            arr = _array(values)
            if i == 0:
                self._n = len(arr)
            self._check(name, arr)
            self._cols[str(name)] = arr

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Table:
        """A table of ``records`` (one mapping per row), with ``columns`` in that order (a key a
        record lacks is None there; keys not in ``columns`` are left out)."""
        rows = list(records)
        return cls({c: _array([r.get(c) for r in rows]) for c in columns}, length=len(rows))

    def _check(self, name: str, arr: Any) -> None:
        if arr.ndim != 1:
            raise ValueError(f"column {name!r}: {arr.ndim}-D values; a table column is 1-D")
        if len(arr) != self._n:
            raise ValueError(f"column {name!r} has {len(arr)} values; the table has {self._n} rows")

    # ----- shape and columns ---------------------------------------------------------------

    @property
    def columns(self) -> list[str]:
        """The column names, in order."""
        return list(self._cols)

    def __len__(self) -> int:
        return self._n

    def __contains__(self, name: object) -> bool:
        return name in self._cols

    def __getitem__(self, name: str) -> Any:
        """The column ``name`` (the numpy array itself: writing into it writes into the table).

        Raises:
            KeyError: no such column (the message lists the columns).
        """
        try:
            return self._cols[name]
        except KeyError:
            raise KeyError(f"no column {name!r}; columns: {', '.join(self._cols)}") from None

    def __setitem__(self, name: str, values: Any) -> None:
        """Set (or append, at the end) column ``name``; ``values`` must have one value per row."""
        arr = _array(values)
        self._check(name, arr)
        self._cols[name] = arr

    def __repr__(self) -> str:
        return f"Table({self._n} rows x {len(self._cols)} columns: {', '.join(self._cols)})"

    # ----- new tables ----------------------------------------------------------------------

    def copy(self) -> Table:
        """A deep copy: its columns are new arrays."""
        return Table({k: v.copy() for k, v in self._cols.items()}, length=self._n)

    def take(self, rows: Sequence[int] | Any) -> Table:
        """The rows at positions ``rows`` (ints or an int array), in that order, renumbered from 0."""
        import numpy as np

        idx = np.asarray(rows, dtype=np.int64)
        return Table({k: v[idx] for k, v in self._cols.items()}, length=len(idx))

    def select(self, names: Sequence[str]) -> Table:
        """The columns ``names`` (in that order), sharing their arrays with this table."""
        return Table({n: self[n] for n in names}, length=self._n)

    def renamed(self, names: Mapping[str, str]) -> Table:
        """This table with columns renamed by ``names`` (old -> new), order kept."""
        return Table({names.get(k, k): v for k, v in self._cols.items()}, length=self._n)

    def with_first(self, name: str, values: Any) -> Table:
        """A table with column ``name`` before this table's columns."""
        return Table({name: _array(values), **{k: v for k, v in self._cols.items() if k != name}}, length=self._n)

    def without(self, names: Iterable[str]) -> Table:
        """This table less the columns ``names``."""
        drop = set(names)
        return Table({k: v for k, v in self._cols.items() if k not in drop}, length=self._n)

    # ----- rows ----------------------------------------------------------------------------

    def row(self, i: int) -> dict[str, Any]:
        """Row ``i`` as column -> value, numpy scalars as Python ones (int, float, bool, str)."""
        return {k: _scalar(v[i]) for k, v in self._cols.items()}

    def rows(self) -> Iterator[tuple[Any, ...]]:
        """Each row as a tuple of Python values, in column order."""
        return zip(*(v.tolist() for v in self._cols.values())) if self._cols else iter(())

    def records(self) -> list[dict[str, Any]]:
        """Every row as a dict of Python values (as ``DataFrame.to_dict(orient="records")``)."""
        names = list(self._cols)
        return [dict(zip(names, r)) for r in self.rows()]

    def equals(self, other: Any) -> bool:
        """Whether ``other`` is a table with the same columns, in order, and the same values
        (NaN equal to NaN)."""
        import numpy as np

        if not isinstance(other, Table) or other.columns != self.columns or len(other) != len(self):
            return False
        for k, v in self._cols.items():
            w = other._cols[k]
            if v.dtype != w.dtype:
                return False
            if v.dtype.kind == "f":
                if not np.array_equal(v, w, equal_nan=True):
                    return False
            elif not np.array_equal(v, w):
                return False
        return True

    # ----- out -----------------------------------------------------------------------------

    def to_frame(self) -> Any:
        """The table as a pandas DataFrame (index 0..n-1; imports pandas)."""
        import pandas as pd

        if not self._cols:
            return pd.DataFrame(index=range(self._n))
        return pd.DataFrame({k: v for k, v in self._cols.items()})

    def to_csv(self, text: Any = None) -> str:
        """The table as CSV text, as ``DataFrame.to_csv(index=False, lineterminator="\\n")`` writes it.

        Args:
            text: a function applied to every text cell before it is written (e.g. the formula
                guard of planner.report.export), None: as they are.

        pandas' CSVFormatter (pandas/io/formats/csvs.py) writes with ``csv.writer`` (QUOTE_MINIMAL,
        '"' doubled inside a quoted cell) and turns each column into text first: floats by their
        shortest repr (numpy's ``astype(str)``, the same digits as Python's ``repr``), NaN and None
        as '', booleans as True/False. A table without columns writes '""\\n' per row, as pandas
        does (an empty header line for no rows).
        """
        return "".join(self.csv_chunks(text))

    def csv_chunks(self, text: Any = None, rows: int = CSV_CHUNK_ROWS) -> Iterator[str]:
        """:meth:`to_csv`'s text in pieces of at most ``rows`` rows each (the header with the first),
        so that a large table is written without all its text in memory at once; joined, the pieces
        are :meth:`to_csv`'s text (each cell is turned into text on its own, so a slice writes as the
        whole column would)."""
        import csv
        import io

        names = list(self._cols)
        if not names:
            yield '""\n' * (self._n + 1) if self._n else "\n"
            return
        for start in range(0, max(self._n, 1), rows):
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\n")
            if start == 0:
                w.writerow(names)
            cells = [_csv_cells(v[start:start + rows], text) for v in self._cols.values()]
            w.writerows(zip(*cells))
            yield buf.getvalue()


def as_table(value: Any) -> Table | None:
    """``value`` as a :class:`Table`: None stays None, a table stays itself, and a pandas
    DataFrame (anything with ``columns`` and ``to_numpy``) becomes a table of its columns
    (its index dropped; pandas' missing texts become NaN in an object column).

    Raises:
        TypeError: anything else.
    """
    if value is None or isinstance(value, Table):
        return value
    if hasattr(value, "columns") and hasattr(value, "to_numpy"):
        return Table({str(c): value[c].to_numpy() for c in value.columns}, length=len(value))
    raise TypeError(f"not a table: {type(value).__name__}")


def _array(values: Any) -> Any:
    import numpy as np

    if isinstance(values, np.ndarray):
        return values
    values = list(values)
    if values and all(isinstance(v, bool) for v in values):
        return np.array(values, dtype=bool)
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=float)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _scalar(value: Any) -> Any:
    return value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) else value


def _csv_cells(arr: Any, text: Any) -> list[str]:
    """A column's cells as pandas' CSV writer turns them into text."""
    kind = arr.dtype.kind
    if kind == "f":
        import numpy as np

        out = arr.astype(str)
        out[np.isnan(arr)] = ""
        return out.tolist()
    if kind in "iub":
        return [str(v) for v in arr.tolist()]
    cells = []
    for v in arr.tolist():
        if v is None or (isinstance(v, float) and v != v):
            cells.append("")
        elif isinstance(v, str):
            cells.append(text(v) if text is not None else v)
        else:
            cells.append(str(v))
    return cells


__all__ = ["Table", "as_table"]
