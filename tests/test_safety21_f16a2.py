"""Findings of hostile pass 16A fixed on branch f16a2.

5. A TMPDIR inside --out (named like a staging folder, or not) is refused by every run that makes temporary files;
   a staging-named folder in --out that is (or holds) the temporary folder is never removed as a leftover.
7. Standard output onto the Hugging Face cache's refs/main, which planner reads to find a hub id's config.json, is
   refused as the config.json is.
8. Standard output or error onto a name of planner's bookkeeping in --out (a temporary manifest
   ``..planner-reports.json.XXXXXXXX.tmp``, a file in a staging-named folder) is refused before any work; the
   cleanup of a dead run never removes the run's own standard output or error (the API, where nothing refuses it).
6. The lock line says what is known: the holder may be any process that can open the folder.
3. (Not changed, documented in docs/commands.md: swapping the program's signal handlers during the moves would be a
   process-wide change made by a library call, which tests/test_global_state.py forbids.)
Minor: calibrate --out /dev/null and a FIFO --out are named as what they are; --format given twice hints the values
given, joined.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import QLORA, _cli
from planner.cli.main import main
from planner.core.errors import DestinationError, OutputError
from planner.core.reportset import ReportSet

TMP_MANIFEST = "..planner-reports.json.abcd1234.tmp"  # planner.core.manifest.MANIFEST_TMP's form


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _set_tmpdir(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """TMPDIR=folder for an in-process run (tempfile.tempdir, which gettempdir caches, cleared)."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setenv("TMPDIR", str(folder))


# -- 5. TMPDIR inside --out --

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_tmpdir_inside_out_is_refused_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "o"
    assert _run("plan", str(QLORA), "--out", str(out), "--format", "json").exit_code == 0
    temp = out / ".planner-staging-abc12345"
    temp.mkdir(mode=0o700)  # a private temp folder of the user's, named like a staging folder
    _set_tmpdir(monkeypatch, temp)
    r = _run("plan", str(QLORA), "--out", str(out), "--format", "json,xlsx")
    assert r.exit_code == 2
    assert temp.is_dir() and not (out / "qlora-7b-12gb.xlsx").exists()
    assert _flat(r.stderr) == (
        f"Error: the temporary folder {temp} (TMPDIR) is inside the --out folder {out}: temporary files (openpyxl's, "
        "the importer's check copy) would be made there, under that folder, where planner cleans up what its "
        "stopped runs left. Set TMPDIR to a private folder of your own elsewhere (one made with mkdir -m 700), or "
        "unset it (then /tmp is used).")
    # a run that makes no temporary file goes on, and leaves the folder (it used to be removed without a word)
    r = _run("plan", str(QLORA), "--out", str(out), "--format", "json")
    assert r.exit_code == 0, r.output
    assert temp.is_dir()
    assert (f"Left {temp}: it is the temporary folder (TMPDIR), or holds it, so it is not a folder a stopped "
            "planner run left.") in _flat(r.stderr)


def test_a_tmpdir_deeper_inside_out_is_refused_for_import_too(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "io"
    temp = out / "tmp" / "mine"
    temp.mkdir(parents=True)
    csv = tmp_path / "aws" / "vms.csv"
    csv.parent.mkdir()
    csv.write_text("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
                   "AvailabilityZone\ng5.xlarge,A10G,1,4,16,,1.006,0.45,us-east-1,us-east-1a\n")
    _set_tmpdir(monkeypatch, temp)
    r = _run("catalog", "import-skypilot", str(csv), "--out", str(out))
    assert r.exit_code == 2
    assert not (out / "cloud.yaml").exists()
    assert _flat(r.stderr).startswith(f"Error: the temporary folder {temp} (TMPDIR) is inside the --out folder {out}:")


def test_the_api_refuses_tempfile_tempdir_inside_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    import planner

    out = tmp_path / "o"
    (out / "t").mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(out / "t"))
    with pytest.raises(DestinationError) as info:
        planner.plan(str(QLORA), out=str(out), format="xlsx")
    said = str(info.value)
    # the API names the keyword (h19a M1)
    assert said.startswith(f"the temporary folder {out / 't'} (tempfile.tempdir) is inside the out= folder {out}:")


# -- 7. refs/main of the Hugging Face cache --

def _tiny_cache(root: Path) -> Path:
    """A cache holding acme/tiny-llama: refs/main names snapshot H, whose config.json links to a blob."""
    repo = root / "hub" / "models--acme--tiny-llama"
    rev = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "snapshots" / rev).mkdir(parents=True)
    (repo / "blobs").mkdir()
    (repo / "refs" / "main").write_text(rev)
    (repo / "blobs" / "cfg").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
        "intermediate_size": 5632, "num_attention_heads": 32, "num_key_value_heads": 4, "num_hidden_layers": 22,
        "vocab_size": 32000, "max_position_embeddings": 2048, "torch_dtype": "bfloat16"}))
    (repo / "snapshots" / rev / "config.json").symlink_to("../../blobs/cfg")
    return repo / "refs" / "main"


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_stdout_onto_the_hub_caches_refs_main_is_refused(tmp_path: Path) -> None:
    ref = _tiny_cache(tmp_path / "hf")
    before = ref.read_bytes()
    env = {"HF_HOME": str(tmp_path / "hf")}
    r = _cli(shell=f"python -m planner estimate --model acme/tiny-llama --task infer >> {shlex.quote(str(ref))}",
             env=env)
    assert r.returncode == 2
    assert ref.read_bytes() == before
    assert r.stderr == (f"Error: standard output is {ref}, an input of this run; planner does not write into it. "
                        "Redirect standard output to another file.\n")
    # a scenario naming the hub id: the same (1<> would overwrite the revision in place)
    (tmp_path / "s.yaml").write_text("name: hfplan\nworkloads:\n  - name: w\n    model: acme/tiny-llama\n"
                                     "    task: infer\n")
    r = _cli(shell=f"python -m planner plan s.yaml --out o --format json 1<> {shlex.quote(str(ref))}",
             env=env, cwd=tmp_path)
    assert r.returncode == 2 and ref.read_bytes() == before
    assert r.stderr.startswith(f"Error: standard output is {ref}, an input of this run;")


# -- 8. stdout or stderr named like planner's bookkeeping --

@pytest.mark.slow  # three runs in a subprocess
def test_streams_onto_bookkeeping_names_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert _cli("plan", str(QLORA), "--out", "o", "--format", "json", cwd=tmp_path).returncode == 0
    q = shlex.quote(str(QLORA))
    r = _cli(shell=f"python -m planner plan {q} --out o --format json >> o/{TMP_MANIFEST}", cwd=tmp_path)
    assert r.returncode == 2
    assert (out / TMP_MANIFEST).read_bytes() == b""  # kept, and nothing written into it
    assert r.stderr == (f"Error: standard output is o/{TMP_MANIFEST}, a file in the output folder (--out), which "
                        "this run may replace or remove; planner does not write into it. Redirect standard output "
                        "to another file.\n")
    r = _cli(shell=f"python -m planner plan {q} --out o --format json,md 2>> o/..planner-reports.json.ffff0000.tmp",
             cwd=tmp_path)
    assert r.returncode == 2  # said on the other stream; the file kept, empty
    assert (out / "..planner-reports.json.ffff0000.tmp").read_bytes() == b""
    assert r.stdout.startswith(
        "Error: standard error is o/..planner-reports.json.ffff0000.tmp, a file in the output folder (--out)")
    (out / ".planner-staging-mk").mkdir(mode=0o700)
    r = _cli(shell=f"python -m planner plan {q} --out o --format json >> o/.planner-staging-mk/.planner-staging",
             cwd=tmp_path)
    assert r.returncode == 2 and (out / ".planner-staging-mk" / ".planner-staging").is_file()
    assert r.stderr.startswith("Error: standard output is o/.planner-staging-mk/.planner-staging, a file in the "
                               "output folder (--out)")


def _as_stdout(path: Path):
    """Context: file descriptor 1 points at ``path`` (appended), as a shell's ``>> path`` makes it."""
    import contextlib

    @contextlib.contextmanager
    def swapped():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        saved = os.dup(1)
        os.dup2(fd, 1)
        os.close(fd)
        try:
            yield
        finally:
            os.dup2(saved, 1)
            os.close(saved)

    return swapped()


def test_the_cleanup_never_removes_the_runs_own_stdout(tmp_path: Path) -> None:
    out = tmp_path / "o"
    with ReportSet(out, set_name="s") as rs:
        rs.path("a.json").write_text("{}")
        rs.commit()
    tmp = out / TMP_MANIFEST  # empty: the start of a temporary manifest, which the cleanup removes ...
    folder = out / ".planner-staging-mk"
    folder.mkdir(mode=0o700)
    mark = folder / ".planner-staging"  # ... and an empty mark, with its folder
    for stream in (tmp, mark):
        with _as_stdout(stream):
            with ReportSet(out, set_name="s") as rs:
                rs.path("a.json").write_text("{}")
                rs.commit()
        assert stream.is_file(), stream  # ... unless it is this run's standard output
        notes = rs.notes
        if stream == tmp:
            assert f"Kept {tmp}: it is this run's standard output or error, not a file an earlier planner run " \
                   "left." in notes
    assert mark.exists()
    assert f"Left {folder}: it holds .planner-staging, which planner cannot tell it wrote; check it and remove it " \
           "yourself." in notes


# -- 6. the lock --

def test_a_lock_held_by_another_program_is_said_as_that(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "o"
    out.mkdir()
    # what `flock -x o sleep 30` does, as any reader of o can: in another process (a lock of this process's own is
    # said as that: test_reportset, h19a M7)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], "
                               "os.O_RDONLY | os.O_DIRECTORY); fcntl.flock(fd, fcntl.LOCK_EX); print('held', "
                               "flush=True); time.sleep(60)", str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(OutputError) as info:
            with ReportSet(out):
                pass
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert str(info.value) == (f"{out}: another process holds this directory's lock (another planner run writing "
                               "reports into it, or any program of any user who can read the folder). Wait for it "
                               f"to finish, find it with fuser -v {out} or lsof {out}, or give another --out (a "
                               "private one: chmod 700).")


# -- minor messages --

def test_calibrate_out_a_device_is_said_as_an_output(tmp_path: Path) -> None:
    r = _run("calibrate", "--model", "llama-2-7b", "--task", "infer", "--out", "/dev/null")
    assert r.exit_code == 2
    assert _flat(r.stderr) == ("Error: /dev/null: is a character device, not a regular file: calibrate reads the "
                               "calibration file it adds its result to, then replaces it. Give --out the path of a "
                               "calibration file (it is created if missing), e.g. --out ./calibration.yaml.")


def test_a_fifo_out_is_called_a_named_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "afifo"
    os.mkfifo(fifo)
    r = _run("plan", str(QLORA), "--out", str(fifo))
    assert r.exit_code == 2
    assert _flat(r.stderr) == (f"Error: {fifo}: is a named pipe (FIFO), not a directory. Give --out a directory (it "
                               "is created if missing).")


@pytest.mark.parametrize("given, joined", [(["json", "md"], "json,md"), (["json,md", "md,csv"], "json,md,csv")])
def test_format_twice_hints_the_values_given(given: list[str], joined: str) -> None:
    args = [w for v in given for w in ("--format", v)]
    r = _run("plan", str(QLORA), *args)
    assert r.exit_code == 2
    shown = " ".join(f"--format {v}" for v in given)
    assert _flat(r.stderr) == (f"Error: --format: given 2 times ({shown}); a run takes one. Give the formats as one "
                               f"comma-separated list: --format {joined}.")
