"""Issue 28, hostile pass 30: h30a N2 / h30b N2 (every path keyword of every API function, scenario, workload=,
model=, calibration=, out=, catalog=, load_catalog(overlay, base=), reads a caller's path object once through one
guarded reader, planner.api.inputs.path_arg: an ``__fspath__()`` giving an int, None, a bytearray, another path
object or bytes is an InputError naming the keyword; one giving a str subclass is read as the text it holds, its own
``__str__`` never called; estimate's gpu_layers='max' and a nameless scenario with out= no longer read the path
twice); h30a m2 (each keyword's message names the kind of path it takes: a file, a directory, a config.json or its
folder); the one wording of every guarded read of a caller's object (planner.core.errors.unreadable_problem: a path,
a mapping, a list, a number); h30b N4 (a Catalog whose schema_version is True or numpy.True_ is refused, as the
loader refuses ``schema_version: true``; a numpy 1 comes back a plain 1).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

_ROOT = Path(__file__).resolve().parent.parent
_SCENARIO = str(_ROOT / "scenarios" / "qlora-7b-12gb.yaml")


class _Gives:
    """A path-like whose ``__fspath__()`` gives ``value``, counting the calls."""

    def __init__(self, value: Any) -> None:
        self.value, self.calls = value, 0

    def __fspath__(self) -> Any:
        self.calls += 1
        return self.value


class _Loud(str):
    """A str subclass whose own methods raise: what planner reads of it must be the text it holds."""

    def _boom(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("strboom")

    __str__ = __repr__ = __format__ = strip = startswith = __contains__ = __add__ = _boom


class _LoudBytes(bytes):
    def __str__(self) -> str:
        raise RuntimeError("bstrboom")


#: Each path keyword, the call that gives it ``v``, and the kind of path its message names (h30a m2).
_FILE, _DIR, _MODEL = "a file path", "a directory path", "a path of a config.json or of a folder holding one"
_CALLS = {
    "plan scenario": (lambda v: __import__("planner").plan(v), _FILE),
    "compare scenario": (lambda v: __import__("planner").compare(v), _FILE),
    "workload": (lambda v: __import__("planner").estimate(workload=v), _FILE),
    "estimate model": (lambda v: __import__("planner").estimate(model=v, task="infer"), _MODEL),
    "fit model": (lambda v: __import__("planner").fit(model=v, task="infer", gpu="rtx-4090", context="max"), _MODEL),
    "calibration": (lambda v: __import__("planner").estimate(model="llama-2-7b", task="infer", gpu="rtx-4090",
                                                              calibration=v), _FILE),
    "out": (lambda v: __import__("planner").plan(_SCENARIO, out=v, format="md"), _DIR),
    "catalog": (lambda v: __import__("planner").estimate(model="llama-2-7b", task="infer", catalog=v), _DIR),
    "overlay": (lambda v: __import__("planner").load_catalog(v), _DIR),
    "base": (lambda v: __import__("planner").load_catalog(base=v), _DIR),
}


def _refusal(call: Any) -> Any:
    from planner.core.errors import InputError

    with pytest.raises(InputError) as info:
        call()
    return info.value


@pytest.mark.parametrize("given, gives", [(3, "no path: it gives int"), (None, "no path: it gives NoneType"),
                                          (bytearray(b"x"), "no path: it gives bytearray"),
                                          (_Gives("x"), "no path: it gives _Gives"),
                                          (Path("x"), "no path: it gives PosixPath"),
                                          (b"x", "bytes: planner takes paths as text"),
                                          (_LoudBytes(b"x"), "bytes: planner takes paths as text")])
@pytest.mark.parametrize("call", list(_CALLS))
def test_a_path_object_giving_no_text_is_an_input_error_naming_the_keyword(call: str, given: Any, gives: str) -> None:
    # before: TypeError 'expected P.__fspath__() to return str or bytes, not int' for scenario, workload and model;
    # "must be a directory path" for calibration (h30a m2)
    run, what = _CALLS[call]
    err = _refusal(lambda: run(_Gives(given)))
    keyword = call.split()[-1]
    assert str(err) == (f"{keyword}: must be {what} (a str or pathlib.Path), not a _Gives whose __fspath__ gives "
                        f"{gives}. Pass the path as a str or pathlib.Path.")


@pytest.mark.parametrize("call", [c for c in _CALLS if c != "out"])
def test_a_str_subclass_from_fspath_is_read_as_its_text(call: str, tmp_path: Path) -> None:
    # before: the subclass's own __str__ was called: RuntimeError strboom escaped, for every keyword
    from planner.core.errors import InputError

    missing = str(tmp_path / "missing")
    run, _ = _CALLS[call]
    path = _Gives(_Loud(missing))
    with pytest.raises(InputError) as info:  # a missing file or folder, said as the one named
        run(path)
    assert "strboom" not in str(info.value)
    assert missing in str(info.value), str(info.value)  # no such file (folder): the text the subclass holds
    assert path.calls == 1


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_out_and_a_scenario_of_str_subclasses_from_fspath_are_read_as_their_text(tmp_path: Path) -> None:
    from planner import plan

    out = tmp_path / "o"
    scenario, folder = _Gives(_Loud(_SCENARIO)), _Gives(_Loud(str(out)))
    result = plan(scenario, out=folder, format="md")
    assert {k: Path(v).name for k, v in result.outputs.items()} == {"md": "qlora-7b-12gb.md"}
    assert (out / "qlora-7b-12gb.md").is_file()  # the folder read from the text, not from the subclass's methods
    assert scenario.calls == folder.calls == 1


def test_a_path_object_giving_an_empty_text_is_refused_as_empty() -> None:
    run, _ = _CALLS["out"]
    err = _refusal(lambda: run(_Gives(_Loud(""))))
    assert str(err).startswith("out: is empty."), str(err)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_nameless_scenario_with_out_is_read_once(tmp_path: Path) -> None:
    # need_name read os.fspath(scenario) again for a scenario without name: (h30a N2: one read)
    from planner import plan

    text = Path(_SCENARIO).read_text()
    nameless = tmp_path / "nameless.yaml"
    nameless.write_text("\n".join(line for line in text.splitlines() if not line.startswith("name:")) + "\n")
    assert "name:" not in nameless.read_text().split("workloads:")[0]
    path = _Gives(str(nameless))
    result = plan(path, out=tmp_path / "o", format="md")
    assert path.calls == 1
    assert (tmp_path / "o" / f"{result.scenario}.md").is_file()


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_estimates_most_gpu_layers_reads_the_workload_path_once(tmp_path: Path) -> None:
    # gpu_layers='max' runs fit on the workload, then estimate read it again: two __fspath__ calls before
    from planner import estimate

    file = tmp_path / "w.yaml"
    file.write_text("model: llama-2-7b\ntask: infer\nengine: llama.cpp\n")
    path = _Gives(str(file))
    result = estimate(workload=path, gpu="rtx-4090", gpu_layers="max")
    assert path.calls == 1
    assert result.workload.infer.engine == "llama.cpp"


def test_every_guarded_read_says_the_exception_one_way() -> None:
    # one wording (planner.core.errors.unreadable_problem): the text on one line, its control characters escaped;
    # before, a path's said the raw text (a line break escaped as '\n', a run of blanks kept)
    from planner.api.inputs import check_plain_values, path_arg
    from planner.core.fieldhints import plain_number

    class Raising:
        def __fspath__(self) -> str:
            raise RuntimeError("two\n  lines\x1b")

    from collections.abc import Mapping

    class RaisingMap(Mapping):  # no dict: read through its own __iter__
        def __getitem__(self, key: Any) -> Any:
            return 1

        def __len__(self) -> int:
            return 1

        def __iter__(self) -> Any:
            raise RuntimeError("two\n  lines\x1b")

    said = "RuntimeError: two lines\\x1b."
    errors = [_refusal(lambda: path_arg(Raising(), "out", "a directory path")),
              _refusal(lambda: check_plain_values(RaisingMap(), "scenario"))]
    import numbers

    class Odd:
        def __float__(self) -> float:
            raise RuntimeError("two\n  lines\x1b")

    numbers.Real.register(Odd)
    errors.append(_refusal(lambda: plain_number(Odd(), entry="headroom")))
    assert [e.problem.split(": ", 1)[0] for e in errors] == ["could not be read as a path",
                                                             "could not be read as a mapping",
                                                             "could not be read as a number"]
    for e in errors:
        assert str(e).split(": ", 2)[2].startswith(said), str(e)


@pytest.mark.parametrize("version, said", [
    (True, "must be a whole number, not true."),
    ("numpy.True_", "must be a whole number, not bool."),
    (2, "version 2 is not supported. It is 1."),
])
def test_a_catalogs_schema_version_is_read_as_the_loader_reads_it(version: Any, said: str) -> None:
    # h30b N4: True == 1, so a Catalog with schema_version=True was taken; the loader refuses 'schema_version: true'
    import numpy

    from planner import load_catalog
    from planner.api.inputs import catalog_of
    from planner.core.errors import CatalogError

    if version == "numpy.True_":
        version = numpy.True_
    catalog = dataclasses.replace(load_catalog(), schema_version=version)
    with pytest.raises(CatalogError) as info:
        catalog_of(catalog)
    assert str(info.value).startswith(f"the Catalog given: schema_version: {said}"), str(info.value)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_catalogs_numpy_schema_version_comes_back_a_plain_int() -> None:
    import numpy

    from planner import load_catalog
    from planner.api.inputs import catalog_of

    catalog = catalog_of(dataclasses.replace(load_catalog(), schema_version=numpy.int64(1)))
    assert type(catalog.schema_version) is int and catalog.schema_version == 1


def test_a_path_objects_class_name_is_shown_escaped_and_clipped() -> None:
    from planner import plan

    name = "Q\x1b[31m" + "x" * 500
    odd = type(name, (), {"__fspath__": lambda self: 3})
    err = _refusal(lambda: plan(odd()))
    shown = "Q\\x1b[31m" + "x" * (80 - len("Q\x1b[31m")) + f"... ({len(name)} characters)"
    assert str(err) == (f"scenario: must be a file path (a str or pathlib.Path), not a {shown} whose __fspath__ gives "
                        "no path: it gives int. Pass the path as a str or pathlib.Path.")
