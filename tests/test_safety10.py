"""Issue 28, hostile pass 7B items 4, 5, 6, 13 and 14.

4. A config.json declaring quant_method 'mxfp4' on a model without experts: one line at the config's
   quantization_config (MXFP4 as gpt-oss ships it quantizes the MoE experts only), not an internal error.
5. A workload file's relative ``model`` path is read from the file's directory, as a scenario's is
   (docs/scenarios.md, ``model``); ``--model`` on the command line from the current one.
6. quantization_config values: a boolean written as text ("false") or a group size that is no whole number
   is refused; a whole float (4096.0) is that number; an NF4 checkpoint's bnb_4bit_use_double_quant is the
   default of double_quant.
13. A workbook cell is cut to Excel's 32,767 characters counted in UTF-16 units.
14. Markdown: GitHub math ``$`` and emoji shortcodes ``:name:`` are backslash-escaped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.errors import ModelConfigError
from planner.model.architecture import from_hf_config

LLAMA_7B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000,
            "max_position_embeddings": 4096, "tie_word_embeddings": False}


def _refusal(cfg: dict) -> str:
    raised = None
    try:
        from_hf_config(cfg, "config.json")
    except ModelConfigError as exc:
        raised = str(exc)
    assert raised is not None, "accepted"
    return raised


def test_mxfp4_on_a_dense_model_is_one_line_at_its_config(tmp_path: Path) -> None:
    cfg = {**LLAMA_7B, "quantization_config": {"quant_method": "mxfp4"}}
    assert _refusal(cfg).startswith("config.json: quantization_config: quantization_config declares quant_method "
                                    "'mxfp4', which quantizes the MoE experts' weights (as gpt-oss ships them), but "
                                    "this llama model has no experts. Copy the model's own config.json")
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg, indent=1))
    r = CliRunner().invoke(main, ["estimate", "--model", str(d), "--task", "infer"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {d / 'config.json'}:") and "internal error" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize("key, value, hint", [
    ("load_in_4bit", "false", 'Write a JSON boolean (true or false, no quotes): "load_in_4bit": false.'),
    ("bnb_4bit_use_double_quant", 1, 'Write a JSON boolean (true or false, no quotes): "bnb_4bit_use_double_quant": '
                                     'true.'),
])
def test_a_quantization_flag_that_is_no_boolean_is_refused(key: str, value, hint: str) -> None:
    q = {"quant_method": "bitsandbytes", "load_in_8bit": True, key: value}
    assert _refusal({**LLAMA_7B, "quantization_config": q}) == (
        f"config.json: quantization_config: quantization_config.{key} must be true or false, not {json.dumps(value)}. {hint}")


@pytest.mark.parametrize("group, hint", [
    ("32", "Write the number without quotes: 32."),
    (0, "Copy the checkpoint's value (most GPTQ and AWQ checkpoints use 128)."),
    (32.5, "Copy the checkpoint's value (most GPTQ and AWQ checkpoints use 128)."),
])
def test_a_group_size_that_is_no_whole_number_is_refused(group, hint: str) -> None:
    q = {"quant_method": "gptq", "bits": 4, "group_size": group}
    assert _refusal({**LLAMA_7B, "quantization_config": q}) == (
        "config.json: quantization_config: quantization_config.group_size must be a whole number of weights per "
        f"scale (or -1, one group per output column), not {json.dumps(group)}. {hint}")


def _weights_gib(tmp_path: Path, q: dict, *extra: str) -> str:
    d = tmp_path / "q"
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps({**LLAMA_7B, "quantization_config": q}))
    r = CliRunner().invoke(main, ["estimate", "--model", str(d), "--task", "infer", "--json", *extra])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    return next(c for c in doc["components"] if c["name"].startswith("weights"))["bytes"]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_whole_float_group_size_is_that_number(tmp_path: Path) -> None:
    gptq = {"quant_method": "gptq", "bits": 4}
    assert _weights_gib(tmp_path, {**gptq, "group_size": 64.0}) == _weights_gib(tmp_path, {**gptq, "group_size": 64})
    assert _weights_gib(tmp_path, {**gptq, "group_size": 64}) != _weights_gib(tmp_path, {**gptq, "group_size": 128})


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_nf4_checkpoints_double_quant_setting_is_the_default(tmp_path: Path) -> None:
    nf4 = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}
    single = _weights_gib(tmp_path, {**nf4, "bnb_4bit_use_double_quant": False})
    double = _weights_gib(tmp_path, {**nf4, "bnb_4bit_use_double_quant": True})
    # QLoRA (Dettmers et al. 2023, sec. 3): single quantization stores one fp32 absmax per 64 weights
    # (32/64 = 0.5 bit/param), double 8-bit constants plus fp32 per 256 of them (8/64 + 32/(64*256) = 0.127)
    assert single > double
    assert _weights_gib(tmp_path, {**nf4, "bnb_4bit_use_double_quant": False}, "--double-quant") == double


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_workload_files_model_path_is_read_from_its_directory(tmp_path: Path, monkeypatch) -> None:
    small = {**LLAMA_7B, "num_hidden_layers": 2}
    for where, cfg in ((tmp_path / "models" / "my", LLAMA_7B), (tmp_path / "sub" / "models" / "my", small)):
        where.mkdir(parents=True)
        (where / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "sub" / "w.yaml").write_text("model: models/my\ntask: infer\n")

    def params(*args: str) -> int:
        r = CliRunner().invoke(main, ["estimate", *args, "--json"])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)["parameters"]

    monkeypatch.chdir(tmp_path)
    from_file = params("--workload", "sub/w.yaml")  # sub/models/my: the file's directory, not ./models/my
    monkeypatch.chdir(tmp_path / "sub")
    assert params("--workload", "w.yaml") == from_file
    assert from_file == from_hf_config(small).parameters
    monkeypatch.chdir(tmp_path)  # --model on the command line: from the current directory
    assert params("--workload", "sub/w.yaml", "--model", "models/my") == from_hf_config(LLAMA_7B).parameters


def test_a_workbook_cell_is_cut_in_utf16_units() -> None:
    from planner.report.cells import clean_text

    cut = clean_text("\U0001F600" * 40_000)  # each emoji: a surrogate pair, 2 UTF-16 units
    assert len(cut.encode("utf-16-le")) // 2 == 32_767  # 16,383 emoji (32,766 units) + the ellipsis
    assert cut == "\U0001F600" * 16_383 + "\u2026"
    assert clean_text("a" * 32_767) == "a" * 32_767  # at the limit: kept whole


def test_markdown_math_and_shortcodes_are_escaped() -> None:
    from planner.core.escape import md_text

    assert md_text("$\\color{red}x$") == "\\$\\\\color\\{red\\}x\\$"
    assert md_text(":warning: ok") == "\\:warning\\: ok"
    assert md_text("at 10:30") == "at 10:30"  # no shortcode: left as typed


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_workbooks_saved_in_threads_leave_tempfile_tempdir_as_it_was(tmp_path: Path, monkeypatch) -> None:
    # hostile pass 7A item 10: openpyxl's save sets tempfile.tempdir; saves in threads put it back one at a time
    import tempfile
    import threading

    import planner

    scenario = Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml"
    monkeypatch.setattr(tempfile, "tempdir", None)  # as in a fresh process: the first gettempdir() sets it
    before = tempfile.tempdir
    threads = [threading.Thread(target=planner.plan, args=(scenario,),
                                kwargs=dict(out=tmp_path / str(i), format="xlsx")) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert tempfile.tempdir == before
    assert all((tmp_path / str(i) / "qlora-7b-12gb.xlsx").is_file() for i in range(8))


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_manifest_that_cannot_be_updated_after_the_moves_is_said_and_the_set_stands(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    # hostile pass 7A item 2: the disk fills after the reports were swapped in; the manifest written before the
    # moves knows them, so the run says so in a note rather than fail as if nothing had been written
    from planner.core import reportset
    from tests.test_safety35_f31a import _failing_second_manifest

    scenario = Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml"
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json,md"]).exit_code == 0
    real = reportset.write_manifest
    _failing_second_manifest(monkeypatch)  # the manifest written after the moves fails
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert (f"The reports are in place, but the manifest was not brought up to date: {out / reportset.MANIFEST}: "
            "cannot write (No space left on device). It still lists the previous reports' hashes") in r.output
    assert sorted(p.name for p in out.iterdir()) == [reportset.MANIFEST, "qlora-7b-12gb.json"]  # the stale md gone
    monkeypatch.setattr(reportset, "write_manifest", real)
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output  # the next run recognises the set and replaces it


def test_running_out_of_memory_is_one_line_not_a_bug_report(tmp_path: Path, monkeypatch) -> None:
    # hostile pass 7A item 4: under 'ulimit -v' an allocation fails with MemoryError: one Error line, exit 2, and
    # the staging folder removed as for any failure
    import planner.core.atomic as atomic

    def no_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(atomic, "write_text_chunks", no_memory)  # the csv writer, inside the report set
    scenario = Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml"
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(tmp_path / "o"), "--format", "csv"])
    assert r.exit_code == 2, r.output
    assert r.stderr == ("Error: out of memory: the run could not allocate what it needs. Free memory, or raise the "
                        "limit ('ulimit -v'), and run again.\n"), r.stderr
    assert not (tmp_path / "o").exists()  # the folder it made, the staging folder in it: removed


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_infeasible_comparison_replaces_the_earlier_one(tmp_path: Path) -> None:
    # hostile pass 7A item 5: as 'planner plan' does, the json says nothing fits and the stale workbook goes
    root = Path(__file__).resolve().parent.parent
    scenario = root / "scenarios" / "compare-qlora-7b-12gb.yaml"
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["compare", str(scenario), "--out", str(out)]).exit_code == 0
    text = scenario.read_text()
    assert "micro_batch: 1" in text and "seq_len: 512" in text
    infeasible = tmp_path / "compare-qlora-7b-12gb.yaml"  # same name: the same report set
    infeasible.write_text(text.replace("micro_batch: 1", "micro_batch: 64").replace("seq_len: 512", "seq_len: 16384"))
    r = CliRunner().invoke(main, ["compare", str(infeasible), "--out", str(out), "--json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert doc["feasible"] is False and doc["outputs"] == {"json": str(out / "compare-qlora-7b-12gb-compare.json")}
    assert (f"Removed the stale {out / 'compare-qlora-7b-12gb-compare.xlsx'} of an earlier comparison: nothing fits "
            "now.") in r.stderr
    assert sorted(p.name for p in out.iterdir()) == [".planner-reports.json", "compare-qlora-7b-12gb-compare.json"]
    assert json.loads((out / "compare-qlora-7b-12gb-compare.json").read_text())["feasible"] is False


@pytest.mark.parametrize("kind, line_end", [
    ("folder", "platforms.yaml: is a directory, not a file.\n"),
    ("broken link", "ram.yaml: no such file.\n"),
    ("fifo", "gpus.yaml: is a named pipe (FIFO), not a regular file (reading one waits until another program "
             "writes to it)."),
])
def test_import_skypilot_checks_the_overlay_folder_as_the_loader_reads_it(tmp_path: Path, kind: str,
                                                                          line_end: str) -> None:
    # hostile pass 7A item 6: a catalog-named folder, broken link or FIFO in --out makes --catalog DIR fail
    # later, so the import refuses before writing (docs/catalog.md)
    import os

    root = Path(__file__).resolve().parent
    out = tmp_path / "ov"
    out.mkdir()
    {"folder": lambda: (out / "platforms.yaml").mkdir(), "broken link": lambda: (out / "ram.yaml").symlink_to(
        tmp_path / "nonexistent"), "fifo": lambda: os.mkfifo(out / "gpus.yaml")}[kind]()
    before = sorted(p.name for p in out.iterdir())
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(root / "data" / "skypilot" / "aws" / "vms.csv"),
                                  "--out", str(out)])
    assert r.exit_code == 2, r.output
    last = r.stderr.splitlines()[-1] + "\n"  # after the lines on what was read and left out
    assert last.startswith(f"Error: the overlay would not load, so nothing was written: {out}/"), r.stderr
    assert line_end in last, r.stderr
    assert sorted(p.name for p in out.iterdir()) == before  # no cloud.yaml


def test_the_staging_mark_goes_last_and_an_empty_staging_folder_is_left_and_said(tmp_path: Path, monkeypatch) -> None:
    # hostile pass 7A item 8: a run killed while emptying its staging folder must leave the mark listing what is
    # still there. An empty folder of planner's staging name was removed by the next run until hostile pass 35A m12
    # showed a user's own empty one (made 0700, as mkdtemp does) removed too: planner cannot tell it made an empty
    # folder, so each is left and said
    import os

    from planner.core import reportset

    scenario = Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml"
    out = tmp_path / "o"
    out.mkdir()
    (out / (reportset.STAGING_PREFIX + "dead1234")).mkdir(mode=0o700)  # a run killed after its mark went leaves
    (out / (reportset.STAGING_PREFIX + "dead1234")).chmod(0o700)  # as tempfile.mkdtemp makes it, whatever the umask
    (out / (reportset.STAGING_PREFIX + "mine")).mkdir(mode=0o755)  # the user's own (hostile pass 8A item 7): kept
    unlinked: list[str] = []
    real = os.unlink

    def record(path, *args, **kwargs):
        if reportset.STAGING_PREFIX in str(path):
            unlinked.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", record)
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json,csv"])
    assert r.exit_code == 0, r.output
    assert unlinked and unlinked[-1] == reportset.STAGING_MARK, unlinked
    assert sorted(p.name for p in out.iterdir()) == [".planner-reports.json", reportset.STAGING_PREFIX + "dead1234",
                                                     reportset.STAGING_PREFIX + "mine",
                                                     "qlora-7b-12gb.csv", "qlora-7b-12gb.json"]
    said = " ".join(r.output.split())
    assert f"Left {out / (reportset.STAGING_PREFIX + 'mine')}: it holds no planner mark" in said
    assert (f"Left {out / (reportset.STAGING_PREFIX + 'dead1234')}: it holds nothing, not even planner's mark, so "
            "planner cannot tell it made it (a run stopped just after making its folder, or just after removing its "
            "mark, leaves one so); check it and remove it yourself.") in said


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("kind, shown", [("fifo", "a named pipe"), ("folder", "a folder"),
                                         ("broken link", "a symbolic link")])
def test_a_stale_name_that_holds_no_regular_file_is_kept_and_said(tmp_path: Path, kind: str, shown: str) -> None:
    # hostile pass 7A item 9: as a changed regular file is, with the real reason
    import os

    scenario = Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml"
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json,md"]).exit_code == 0
    md = out / "qlora-7b-12gb.md"
    md.unlink()
    {"fifo": lambda: os.mkfifo(md), "folder": md.mkdir, "broken link": lambda: md.symlink_to("nowhere")}[kind]()
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    # the kind named (h18a minor #4: planner.core.destinations.what_it_is), not "a folder, a link or a pipe"
    assert (f"Kept {md}, a name of this report set not written this time: it is not a regular file ({shown}), "
            "which planner never writes.") in " ".join(r.output.split()), r.output
    assert os.path.lexists(md)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_dead_staging_folder_with_previous_reports_is_said(tmp_path: Path) -> None:
    # hostile pass 7A item 7 (and 8A item 2): a run killed during its moves leaves its manifest listing two hashes
    # for a name (the one written before the moves) and its files in the staging folder; the next run removes
    # them (they are planner's) and says which reports may mix the two runs' files; a run killed after its
    # whole commit (the manifest after the moves) gets no such note
    import json as _json

    from planner.core import reportset

    scenario = Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml"
    out = tmp_path / "o"

    def dead_staging() -> Path:
        dead = out / (reportset.STAGING_PREFIX + "dead5678")
        dead.mkdir()
        # a previous report the moves kept: here the same plan's json, whose SHA-256 the manifest lists (h17a #2:
        # an N.old that no hash in the manifest matches was written to since, and is left)
        (dead / "0.old").write_bytes((out / "qlora-7b-12gb.json").read_bytes())
        (dead / reportset.STAGING_MARK).write_bytes(reportset._MARK_HEADER + b'"0.old"\n')
        return dead

    assert CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json"]).exit_code == 0
    dead = dead_staging()  # killed after the commit: the manifest lists one hash per report
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0 and "may mix" not in r.output and not dead.exists(), r.output
    manifest = out / reportset.MANIFEST
    doc = _json.loads(manifest.read_text())
    doc["files"]["qlora-7b-12gb.json"]["sha256"].append("0" * 64)  # the manifest before the moves: two hashes
    manifest.write_text(_json.dumps(doc, indent=1) + "\n")
    dead = dead_staging()
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    # this very run rewrites qlora-7b-12gb.json, so it says so rather than asking for another run (h37a 11); a run
    # that does not rewrite it (compare: tests/test_safety19a.py) asks for one
    assert (f"Removed {dead}, which a planner run stopped during its moves left, with 1 file(s) of its reports: the "
            f"reports of that run in {out} (qlora-7b-12gb.json) may have mixed its new files with older ones; this "
            "run has rewritten them whole.") in " ".join(r.output.split()), r.output
    assert not dead.exists()
