"""Hostile pass 40A: standard output onto a deleted hard link of an installation file (N1), calibrate --out into the
standard library or named as a module (N2), --tokens-per-month lookalike hints that echo more than one value (N3)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CALIBRATE = ["calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16", "--micro-batch", "2",
             "--seq-len", "512"]


def test_a_deleted_hard_link_to_a_startup_file_as_standard_output_is_refused(tmp_path: Path) -> None:
    # h40a N1: `exec 3>>link; rm link` left the start-up file with one link, its own, and /proc named the removed
    # link: neither the path rule nor the hard-link look-up (st_nlink > 1) saw it, and --version was appended
    site_dir = tmp_path / "pp"
    site_dir.mkdir()
    (site_dir / "sitecustomize.py").write_text("\n")
    link = tmp_path / "notes.txt"
    os.link(site_dir / "sitecustomize.py", link)
    with open(link, "a") as fh:
        os.unlink(link)
        r = subprocess.run([sys.executable, "-m", "planner", "--version"], stdout=fh, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{site_dir}"})
    assert r.returncode == 2, r.stderr
    assert (site_dir / "sitecustomize.py").read_text() == "\n"
    # the refusal names the file written into, by a name that is there
    assert r.stderr.startswith(f"Error: standard output is {site_dir / 'sitecustomize.py'}, a file of planner's "
                               "installation or of the Python it runs on"), r.stderr


def test_a_deleted_plain_file_as_standard_output_is_written(tmp_path: Path) -> None:
    # the look-up is for installation files only: a removed log file of the user's takes the output as asked
    log = tmp_path / "log.txt"
    with open(log, "w") as fh:
        os.unlink(log)
        r = subprocess.run([sys.executable, "-m", "planner", "--version"], stdout=fh, stderr=subprocess.PIPE,
                           text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr


def _calibrate_refusal(out: str, cwd: Path) -> str:
    from click.testing import CliRunner

    from planner.cli.main import main

    old = os.getcwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(main, [*CALIBRATE, "--out", out])
    finally:
        os.chdir(old)
    assert r.exit_code == 2, r.output
    return " ".join(r.output.split())


@pytest.mark.parametrize("where", ["stdlib", "scripts"])
def test_calibrate_out_into_the_python_installation_is_refused_before_the_measurement(tmp_path: Path,
                                                                                     where: str) -> None:
    # h40a N2: '<stdlib>/yaml.py' passed every check (only the torch check stopped it here); the standard library's
    # folder comes before site-packages on sys.path, so it would hide PyYAML from every program of that Python
    folder = os.path.realpath(sysconfig.get_paths()[where])
    said = _calibrate_refusal(os.path.join(folder, "yaml.py"), tmp_path)
    assert said.startswith(f"Error: {folder}/yaml.py: its folder is, or is inside, {folder}, a folder of the Python "
                           "installation planner runs on"), said
    assert "PyTorch" not in said


def test_calibrate_out_named_as_a_module_on_the_search_path_is_refused(tmp_path: Path) -> None:
    said = _calibrate_refusal("click.py", tmp_path)  # the current folder, searched first for a script run there
    assert said.startswith(f"Error: click.py: is named as a Python module, in {os.path.realpath(tmp_path)}, the "
                           "current folder"), said
    assert "PyTorch" not in said


def test_calibrate_out_onto_pyvenv_cfg_is_refused_for_what_it_is(tmp_path: Path) -> None:
    # it was refused only as "the top level is a single value" (its content), by luck
    from planner.core.errors import DestinationError
    from planner.core.importpath import refuse_import_shadow

    cfg = Path(sys.prefix) / "pyvenv.cfg"
    with pytest.raises(DestinationError) as err:
        refuse_import_shadow(cfg.parent, cfg.name)
    assert "is the pyvenv.cfg of the Python environment planner runs in" in str(err.value)


def test_calibrate_out_a_yaml_file_elsewhere_passes_the_installation_rule(tmp_path: Path) -> None:
    from planner.core.importpath import refuse_import_shadow

    refuse_import_shadow(tmp_path, "calibration.yaml")  # no error


@pytest.mark.parametrize("value", ["\uff12\uff10\uff10M x", "\uff12\uff10\uff10M,\uff13\uff10\uff10M",
                                   "\uff12\uff10\uff10M,,"])
def test_a_tokens_per_month_lookalike_is_hinted_only_as_one_value_the_option_takes(value: str) -> None:
    # h40a N3: '２００M x' was hinted as --tokens-per-month 200M x (two words), '２００M,３００M' as 200M,300M and
    # 'q=２００M' as q=200M: each refused when pasted
    from planner.api.comparisons import VolumeError, volume_overrides

    with pytest.raises(VolumeError) as err:
        volume_overrides(value, ["qlora-7b"])
    assert err.value.hint == "Write the number in ASCII digits, nothing else with it."


def test_a_tokens_per_month_lookalike_count_of_an_unknown_name_is_refused_for_the_name() -> None:
    # 'q=２００M' was a count case here; since h41a N12 the name is judged before its count, so the line refuses the
    # unknown workload 'q' (no hint naming q=200M, which would be refused when pasted)
    from planner.api.comparisons import VolumeError, volume_overrides

    with pytest.raises(VolumeError) as err:
        volume_overrides("q=\uff12\uff10\uff10M", ["qlora-7b"])
    said = err.value.cli_line()
    assert "no workload 'q' in the scenario" in said and "q=200M" not in said, said


def test_a_plain_tokens_per_month_lookalike_is_still_hinted() -> None:
    from planner.api.comparisons import VolumeError, volume_overrides

    with pytest.raises(VolumeError) as err:
        volume_overrides("qlora-7b=\uff12\uff10\uff10M", ["qlora-7b"])
    assert err.value.cli_line().endswith("Write ASCII digits: --tokens-per-month qlora-7b=200M."), err.value.cli_line()


def test_a_number_lookalike_with_a_blank_inside_gets_no_value_hint() -> None:
    from planner.core.fieldhints import ascii_digits_hint

    assert ascii_digits_hint("\uff15\uff11\uff12 x", lambda n: f"--top {n}") == \
        "Write the number in ASCII digits, nothing else with it."
    assert ascii_digits_hint("\uff15\uff11\uff12", lambda n: f"--top {n}") == "Write ASCII digits: --top 512."


def test_a_hard_link_to_the_interpreters_shared_library_as_standard_output_is_refused(tmp_path: Path) -> None:
    # h40b m4: libpython3.x.so is outside site-packages, the standard library and the scripts folder; a run that
    # succeeded appended its "Wrote" line to it
    from planner.core.importpath import interpreter_files

    files = interpreter_files()
    assert os.path.realpath(sys.executable) in files
    libs = [f for f in files if os.path.basename(f).startswith("libpython")]
    if not libs:
        pytest.skip("this Python has no shared library (a static build)")
    link = tmp_path / "hl_lib.so"
    try:
        os.link(libs[0], link)
    except OSError as exc:  # another file system (EXDEV), or no permission to link another user's file
        pytest.skip(f"cannot hard-link the library here: {exc}")
    size = link.stat().st_size
    with open(link, "a") as fh:
        r = subprocess.run([sys.executable, "-m", "planner", "--version"], stdout=fh, stderr=subprocess.PIPE,
                           text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2, r.stderr
    assert link.stat().st_size == size
    assert "the interpreter and its shared library" in r.stderr


def test_calibrate_out_into_a_catalog_overlay_folder_is_refused(tmp_path: Path) -> None:
    # h40a N8: 'calibrate --catalog ov --out ov/gpus.yaml' passed to the torch check; every later --catalog ov run
    # would read the calibration as the overlay's gpus.yaml (and any other *.yaml there is refused by the loader)
    from planner.cli.calibrate import refuse_catalog_name
    from planner.core.errors import DestinationError

    ov = tmp_path / "ov"
    ov.mkdir()
    with pytest.raises(DestinationError) as err:
        refuse_catalog_name(ov / "gpus.yaml", str(ov))
    said = err.value.cli_line()
    assert said.startswith(f"{ov / 'gpus.yaml'}: is a YAML file in the --catalog overlay folder of this run: every "
                           "later run reading that folder as an overlay would read it as its gpus.yaml and fail."), said
    (ov / "cloud.yaml").write_text("schema_version: 1\ninstances: []\n")  # an overlay, not given as --catalog
    with pytest.raises(DestinationError) as err:
        refuse_catalog_name(ov / "cal.yaml", None)
    assert "a catalog overlay folder (it holds cloud.yaml)" in err.value.cli_line()
    refuse_catalog_name(tmp_path / "cal.yaml", None)  # a folder of no overlay: fine
    refuse_catalog_name(ov / "notes.txt", str(ov))  # not YAML: the loader passes over it


@pytest.mark.slow
def test_compare_json_with_top_says_top_shapes_the_text_only(tmp_path: Path) -> None:
    # h40a N7: --top was silently ignored under --json
    r = subprocess.run([sys.executable, "-m", "planner", "compare", str(ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"),
                        "--json", "--top", "1"], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}, timeout=300)
    assert r.returncode == 0, r.stderr
    assert ("Note: --top shapes the text output only; the JSON lists every cloud instance that fits each "
            "workload.") in r.stderr, r.stderr


def test_a_stop_signal_after_the_run_ends_the_process_with_its_own_status() -> None:
    # h40a N10, h41a N9: a SIGTERM in the last instant (handlers put back, the interpreter shutting down) ended a
    # finished run with 143 and no line; the process's own run (a final guard) ignores its stop signals from then on
    code = ("import os, signal; from planner.core.interrupt import SignalGuard\n"
            "with SignalGuard(final=True):\n    pass\n"
            "os.kill(os.getpid(), signal.SIGTERM); os.kill(os.getpid(), signal.SIGHUP); print('done')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert (r.returncode, r.stdout) == (0, "done\n"), r.stderr


def test_a_signal_while_the_guard_puts_its_handlers_back_goes_to_the_handler_put_back() -> None:
    # h41a N8: the guard's own handler raised Interrupted inside __exit__ (a traceback, exit 1); now the signal is
    # held there and delivered again to the handler the guard puts back
    import signal

    from planner.core.interrupt import SignalGuard

    got: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
    try:
        guard = SignalGuard()
        with guard:
            guard._closing = True  # the instant __exit__ begins (as a signal would find it)
            guard._handle(signal.SIGTERM, None)  # raises nothing
        assert got == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_runner_given_its_arguments_keeps_its_signal_handlers() -> None:
    import signal

    from click.testing import CliRunner

    from planner.cli.main import main

    before = signal.getsignal(signal.SIGTERM)
    CliRunner().invoke(main, ["--version"])
    assert signal.getsignal(signal.SIGTERM) is before


def test_an_out_hint_never_names_an_input_of_the_run(tmp_path: Path, monkeypatch) -> None:
    # h40a N4: "$'w.yaml'" with --workload w.yaml was hinted as --out 'w.yaml', refused when pasted as the run's input;
    # "'ov1'" with --catalog ov1 likewise
    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    Path("w.yaml").write_text("model: llama-3.2-1b\ntask: train\nrecipe: pure-bf16\nmicro_batch: 2\nseq_len: 512\n")
    Path("ov1").mkdir()
    runs = {
        "input file": ["calibrate", "--workload", "w.yaml", "--out", "'w.yaml'"],
        "file in the overlay": ["calibrate", "--workload", "w.yaml", "--catalog", "ov1", "--out", "'ov1/c.yaml'"],
        "elsewhere": ["calibrate", "--workload", "w.yaml", "--out", "'c.yaml'"],
    }
    said = {k: " ".join(CliRunner().invoke(main, args).output.split()) for k, args in runs.items()}
    assert "Write --out" not in said["input file"], said["input file"]
    assert "Write --out" not in said["file in the overlay"], said["file in the overlay"]
    assert said["elsewhere"].endswith("Write --out 'c.yaml'."), said["elsewhere"]
