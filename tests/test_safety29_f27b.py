"""Issue 28, hostile pass 26: findings m2 of report h26a and M6 of report h26b (wording of refusals), and
m4 and m1 of h26a.

- h26a m2: a folder, socket, named pipe or symbolic link named ``.planner-reports.json`` in ``--out`` is refused
  in one line that says what it is ("is not a regular file (a folder)") and to move that folder away, not "Move
  that file away" (planner.core.manifest.read_manifest).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.errors import DestinationError

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "scenarios" / "qlora-7b-12gb.yaml"
MANIFEST = ".planner-reports.json"


def _make(kind: str, path: Path) -> None:
    """Make a non-regular file of ``kind`` at ``path``."""
    if kind == "folder":
        path.mkdir()
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(path))
    elif kind == "named pipe":
        os.mkfifo(path)
    else:
        path.symlink_to("nowhere")


@pytest.mark.parametrize("kind", ["folder", "socket", "named pipe", "symbolic link"])
def test_a_manifest_that_is_no_regular_file_is_named_as_what_it_is(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "o"
    out.mkdir()
    _make(kind, out / MANIFEST)
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(out), "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {out / MANIFEST}: is not a regular file (a {kind}), so not a report manifest "
                        "planner wrote, and planner keeps the list of its reports in a file of that name. Move that "
                        f"{kind} away or give another --out.\n")
    assert sorted(os.listdir(out)) == [MANIFEST]  # nothing written beside it


def test_the_api_names_a_manifest_folder_too(tmp_path: Path) -> None:
    from planner import plan

    out = tmp_path / "o"
    (out / MANIFEST).mkdir(parents=True)
    with pytest.raises(DestinationError) as info:
        plan(str(SCENARIO), out=str(out), format="md")
    assert "is not a regular file (a folder)" in str(info.value)
    assert "Move that folder away" in str(info.value)
