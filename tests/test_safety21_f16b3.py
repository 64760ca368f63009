"""Hostile pass h16b: findings 4, 7, 8, 10 and minors a, b, g, h, o.

4. A calibration file's ``schema_version``, when given, follows the catalog files' rule: only 1.
7. A count written with 'B' or 'T' gets the expanded number as the hint (as 'k' and 'M' do), never "without 'B'".
8. An engine that is not one of the choices (e.g. the wrong case) is named before the weights/engine pairing.
10. On the command line a scenario or workload path holding a line break is a path (opened); paths in
    messages show a line break escaped.
a. A cost written '$100' gets "without '$'"; b. an empty cost gets a hint.
g. numpy.bool_ is a bool in the API; the API's bool hint does not speak of YAML.
h. ``--out -`` is refused with a hint.
o. A hub-cache config.json that is a FIFO is said to be no regular file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main


def _cli_error(*args: str) -> str:
    """The last stderr line of ``planner *args``: exit 2 required."""
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 2, r.output
    return r.stderr.strip().splitlines()[-1]


def _calibration(path: Path, version: str) -> Path:
    path.write_text(f'schema_version: {version}\ngpus:\n  - gpu_name: "NVIDIA L4"\n    cuda_context: 2000 MiB\n'
                    "    allocator_fraction: 0.5\n    measured_on: 2026-11-01\n", encoding="utf-8")
    return path


# -- 4. calibration schema_version -------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["2", "0", "99999999999999999999"])
def test_a_calibration_of_another_schema_version_is_refused(tmp_path: Path, version: str) -> None:
    path = _calibration(tmp_path / "c.yaml", version)
    err = _cli_error("estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4", "--calibration", str(path))
    # the wording of a catalog overlay's refusal (planner.catalog.loader), naming the line of the key (1)
    assert err == (f"Error: {path}:1: schema_version: version {version} is not supported. This planner reads "
                   "schema_version 1 (docs/memory-model.md).")


@pytest.mark.parametrize("version, told", [
    ("true", "must be a whole number, not true."),
    ('"1"', "must be a whole number, not '1'. Write the number without quotes: 1."),
    ("1.5", "must be a whole number, not 1.5."),
])
def test_a_calibration_schema_version_that_is_no_whole_number_is_refused(tmp_path: Path, version: str,
                                                                        told: str) -> None:
    path = _calibration(tmp_path / "c.yaml", version)
    err = _cli_error("estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4", "--calibration", str(path))
    assert err.startswith(f"Error: {path}:1: schema_version: {told}")


def test_a_calibration_of_schema_version_1_or_none_is_applied(tmp_path: Path) -> None:
    # 2000 MiB of CUDA context = 2000/1024 GiB = 1.953 GiB, printed in the estimate's table
    for text in ("1", None):
        path = _calibration(tmp_path / "c.yaml", text or "1")
        if text is None:
            path.write_text(path.read_text().replace("schema_version: 1\n", ""))
        r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4",
                                      "--calibration", str(path)])
        assert r.exit_code == 0, r.output
        assert "1.953" in r.output
