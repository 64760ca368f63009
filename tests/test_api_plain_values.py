"""API arguments the file reader could never produce are InputErrors, not raw exceptions (issue 28,
hostile pass 5B items 5 and 6): a lone surrogate in a text (a file read as UTF-8 cannot hold one, and
the reports cannot write it), a whole number past Python's 4,300-digit limit on writing it, a model id or
overlay path past the file system's name limit."""

from __future__ import annotations

import pytest
import yaml

from planner import compare, estimate, load_catalog, plan
from planner.core.errors import InputError
from tests.test_safety5b import ROOT


@pytest.fixture(scope="module")
def sc():
    return yaml.safe_load((ROOT / "scenarios" / "qlora-7b-12gb.yaml").read_text())


def _message(fn) -> str:
    with pytest.raises(InputError) as info:
        fn()
    return str(info.value)


def test_a_lone_surrogate_in_a_scenario_mapping_is_named(sc):
    msg = _message(lambda: plan({**sc, "workloads": [{**sc["workloads"][0], "name": "w\udcff"}]}))
    assert msg.startswith("scenario.workloads[0].name: holds a lone surrogate ('\\udcff', character 2)"), msg
    msg = _message(lambda: estimate(model="llama-2-7b", task="infer", name="x\ud800"))
    assert msg.startswith("name: holds a lone surrogate"), msg


@pytest.mark.parametrize("call,entry", [
    (lambda sc: plan({**sc, "name": 10**5000}), "scenario.name"),
    (lambda sc: plan(sc, top=10**5000), "top"),
    (lambda sc: compare(sc, top=10**5000), "top"),
    (lambda sc: estimate(model="llama-2-7b", task="infer", engine=10**5000), "engine"),
])
def test_a_number_past_pythons_digit_limit_is_named(sc, call, entry):
    # before: ValueError "Exceeds the limit (4300 digits) for integer string conversion"
    msg = _message(lambda: call(sc))
    assert msg.startswith(f"{entry}: is a whole number of about 5,000 digits"), msg


def test_names_past_the_file_systems_limit_are_input_errors():
    msg = _message(lambda: estimate(model="org/" + "a" * 300, task="infer"))  # before: OSError ENAMETOOLONG
    assert "File name too long" not in msg, msg
    msg = _message(lambda: load_catalog("a" * 5000))
    assert "cannot be read (File name too long)" in msg, msg


def test_an_out_whose_fspath_gives_an_int_is_an_input_error(sc):
    # hostile pass 5A item 5: os.fspath raised a raw TypeError
    class P:
        def __fspath__(self):
            return 3

    msg = _message(lambda: plan(sc, out=P()))
    assert msg.startswith("out: must be a directory path (a str or pathlib.Path), not a P whose __fspath__ gives no "
                          "path"), msg
