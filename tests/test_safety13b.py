"""Issue 28, hostile pass 10 (report h10b #1, #3, #6-#10, #15, #16 and its minor list).

1. A release number of thousands of digits (bnb_version, engine_version, framework_version, a llama.cpp build)
   is one line naming the field with the release hint, never Python's own int() limit text; the API raises
   InputError.
3. GPU rates and cloud prices have floors (each cited where it is defined); the importer leaves such rows out,
   saying '1e-400' as written.
6. A cloud overlay's provider is printable lower-case ASCII; RunPod regions are upper-case country codes;
   import-skypilot --region matches the region as it writes it.
7. Calibration files refuse duplicate GPUs; --calibration FILE with no entry for --gpu says so.
8. Catalogs, estimate and fit results pickle and deep-copy.
9. compare(tokens_per_month='NAME=200M') and another case are taken; '=1M' is refused.
10. --out and input paths get command-line messages; --out refuses blank-edged folder names, unexpanded
    substitutions and invisible characters; --out ./~ is a folder named '~'.
15. gpu:, headroom:, calibration: in a workload file are command-line options only.
16. Hints, followed, are taken: --format lists, suffixed numbers, dates that are no date.
Minor: fractions of a byte, a base catalog that is a file, plan() without a scenario, extras keys, costs.mfu {}.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import ROOT
from planner import estimate
from planner.cli.main import main
from planner.core.errors import InputError

N5000 = "9" * 5000


def _cli_error(*args: str) -> str:
    """The stderr of ``planner *args``: exit 2 required."""
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 2, r.output
    return r.stderr


# -- 1. release numbers of thousands of digits ----------------------------------------------------------------

def test_a_bnb_version_of_thousands_of_digits_is_one_line_naming_the_option() -> None:
    err = _cli_error("estimate", "--model", "llama-2-7b", "--task", "train", "--method", "qlora",
                     "--bnb-version", "0.43." + N5000)
    assert err == ("Error: --bnb-version: the release '0.43.999999999999999...' (5,003 digits) is too long to read: "
                   "no release planner reads has more than 40 digits. Write it as X.Y.Z, e.g. --bnb-version "
                   "'0.42.0'.\n"), err


@pytest.mark.parametrize("line, shown, hint", [
    ("{model: llama-2-7b, task: train, method: qlora, bnb_version: '0.43.%s'}", "bnb_version: the release "
     "'0.43.999999999999999...' (5,003 digits)", "Write it as X.Y.Z, e.g. bnb_version: '0.42.0'."),
    ("{model: llama-2-7b, task: train, method: lora, framework: torchtune, framework_version: '0.%s.0'}",
     "framework_version: the release '0.999999999999999999...' (5,002 digits)",
     "Write it as torchtune writes it, e.g. '0.5.0'."),
    ("{model: llama-2-7b, task: infer, engine: llama.cpp, weights: q4_k_m, engine_version: 'b%s'}",
     "engine_version: the release 'b9999999999999999999...' (5,000 digits)",
     "Write it as llama.cpp writes it, e.g. 'b11312'."),
    ("{model: llama-2-7b, task: infer, engine: vllm, engine_version: '0.10.%s'}",
     "engine_version: the release '0.10.999999999999999...' (5,003 digits)",
     "Write it as vllm writes it, e.g. '0.14.1'."),
])
def test_a_release_of_thousands_of_digits_in_a_workload_file_is_one_line(tmp_path: Path, line: str, shown: str,
                                                                         hint: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(line % N5000 + "\n", encoding="utf-8")
    err = _cli_error("estimate", "--workload", str(path))
    assert err == (f"Error: {path}:1: {shown} is too long to read: no release planner reads has more than 40 "
                   f"digits. {hint}\n"), err


@pytest.mark.parametrize("kw", [{"task": "train", "method": "qlora", "bnb_version": "0.43." + N5000},
                                {"task": "infer", "engine": "vllm", "engine_version": "0." + N5000 + ".0"}])
def test_the_api_raises_input_error_for_a_release_of_thousands_of_digits(kw: dict) -> None:
    with pytest.raises(InputError) as caught:
        estimate(model="llama-2-7b", **kw)
    text = str(caught.value)
    assert "is too long to read: no release planner reads has more than 40 digits" in text, text
    assert "set_int_max_str_digits" not in text and "4300" not in text, text


# -- 3. floors for GPU rates and cloud prices --------------------------------------------------------------------

def _overlay(tmp_path: Path, name: str, body: str) -> Path:
    """An overlay folder holding ``name`` ('gpus.yaml', 'cloud.yaml') with ``body`` under its list key."""
    d = tmp_path / "ov"
    d.mkdir(exist_ok=True)
    key = "gpus" if name == "gpus.yaml" else "instances"
    (d / name).write_text(f"schema_version: 1\n{key}:\n{body}", encoding="utf-8")
    return d


@pytest.mark.parametrize("line, want", [
    # floors: planner.catalog.gpus MIN_TFLOPS (0.1: below the Jetson Nano's 472 GFLOPS FP16), MIN_GPU_BANDWIDTH
    # (1 GB/s: below its 25.6 GB/s), MIN_MFU_SCALE (0.1: a fifth of the catalog's smallest, 0.5)
    ("bf16_tflops: 1.0e-300", "bf16_tflops: 1e-300 TFLOPS is less than any real GPU (at least 0.1 TFLOPS). Check "
                              "for a missing digit or a wrong unit."),
    ("bf16_tflops: 0.0001", "bf16_tflops: 0.0001 TFLOPS is less than any real GPU (at least 0.1 TFLOPS). Check for "
                            "a missing digit or a wrong unit."),
    ("fp8_tflops: 0.05", "fp8_tflops: 0.05 TFLOPS is less than any real GPU (at least 0.1 TFLOPS). Check for a "
                         "missing digit or a wrong unit."),
    # (a rate written with an exponent, '1.0e-300 GB/s', is refused for that first: tests/test_safety17c.py)
    ("memory_bandwidth: 0.001 GB/s", "memory_bandwidth: '0.001 GB/s' is less than any real GPU memory "
                                     "bandwidth (at least 1 GB/s). Check the unit: GB/s is bytes, Gb/s is bits "
                                     "(8 Gb/s = 1 GB/s)."),
    ("mfu_scale: 1.0e-300", "mfu_scale: 1e-300 is less than any real stack's share of the default MFU (at least "
                            "0.1). Check for a missing digit: the catalog's AMD cards use 0.5."),
])
def test_gpu_rates_below_any_real_card_are_refused(tmp_path: Path, line: str, want: str) -> None:
    d = _overlay(tmp_path, "gpus.yaml", f"  - id: rtx-4090\n    {line}\n")
    err = _cli_error("estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "rtx-4090", "--catalog", str(d))
    assert err == f"Error: {d / 'gpus.yaml'}:4: gpus[0] (rtx-4090).{want}\n", err


def test_gpu_rates_at_their_floor_load(tmp_path: Path) -> None:
    from planner.catalog.loader import load_catalog

    d = _overlay(tmp_path, "gpus.yaml", "  - id: rtx-4090\n    fp8_tflops: 0.1\n    mfu_scale: 0.1\n")
    gpu = load_catalog(d).gpu("rtx-4090")
    assert (gpu.fp8_tflops, gpu.mfu_scale) == (0.1, 0.1)


#: A hand-written instance: the shipped aws-g6-xlarge's figures, with {usd} on line 10 and {line} on line 12.
MY_INSTANCE = ("  - id: aws-my-g6\n    provider: aws\n    instance: my.g6\n    gpu: l4\n    gpu_count: 1\n"
               "    vcpus: 4\n    memory: 16 GiB\n    usd_per_hour: {usd}\n    region: us-east-2\n    {line}\n"
               "    source: a quote\n    as_of: 2026-01-01\n")


@pytest.mark.parametrize("usd, line, where, want", [
    # floor: planner.catalog.cloud MIN_USD_PER_HOUR, $0.001/h (200 x below the catalog's cheapest, $0.20/h spot)
    ("1.0e-300", "notes: hand-written", 10, "usd_per_hour: 1e-300 USD/h is less than any real hourly price (at least "
                                            "0.001 USD/h). Check for a missing digit or a wrong unit."),
    ("0.8048", "spot_usd_per_hour: 1.0e-300", 12, "spot_usd_per_hour: 1e-300 USD/h is less than any real hourly "
                                                  "price (at least 0.001 USD/h). Check for a missing digit or a wrong "
                                                  "unit."),
    ("0.8048", "spot_usd_per_hour: 0.0001", 12, "spot_usd_per_hour: 0.0001 USD/h is less than any real hourly price "
                                                "(at least 0.001 USD/h). Check for a missing digit or a wrong unit."),
])
def test_cloud_prices_below_any_real_one_are_refused(tmp_path: Path, usd: str, line: str, where: int,
                                                     want: str) -> None:
    d = _overlay(tmp_path, "cloud.yaml", MY_INSTANCE.format(usd=usd, line=line))
    err = _cli_error("catalog", "cloud", "--catalog", str(d))
    assert err == f"Error: {d / 'cloud.yaml'}:{where}: instances[0] (aws-my-g6).{want}\n", err


AWS_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
              "AvailabilityZone,Arch\n")


@pytest.mark.parametrize("price, spot, reason", [
    ("4.9e-324", "", "line 2: an on-demand price of '4.9e-324' USD/h, less than any real hourly price (at least 0.001 USD/h)"),
    # float('1e-400') is 0.0: said as written, not as 'no on-demand price (0 or empty)'
    ("1e-400", "", "line 2: an on-demand price of '1e-400' USD/h, less than any real hourly price (at least 0.001 USD/h)"),
    ("0", "", "line 2: no on-demand price (0 or empty)"),
])
def test_the_importer_leaves_out_prices_below_the_floor_with_a_reason(tmp_path: Path, price: str, spot: str,
                                                                      reason: str) -> None:
    from planner.catalog.skypilot import import_file

    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir()
    path.write_text(AWS_HEADER + f"g6.xlarge,L4,1,4,16,,{price},{spot},us-east-1,us-east-1a,x86_64\n",
                    encoding="utf-8")
    res = import_file(path)
    assert res.rows == [] and res.skipped == {"g6.xlarge": reason}, res.skipped


def test_a_spot_price_below_the_floor_is_no_spot_offer(tmp_path: Path) -> None:
    from planner.catalog.skypilot import import_file

    # h36b m1: a spot of 1e-300 (below the 0.001 floor) left the row out, losing its on-demand offer; now no spot
    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir()
    path.write_text(AWS_HEADER + "g6.xlarge,L4,1,4,16,,0.8048,1e-300,us-east-1,us-east-1a,x86_64\n", encoding="utf-8")
    res = import_file(path)
    assert [(r.usd_per_hour, r.spot_usd_per_hour) for r in res.rows] == [(0.8048, None)]
    assert res.spot_floor_lines == ["2"]


# -- 6. a cloud overlay's provider and RunPod's country-code regions -------------------------------------------------

@pytest.mark.parametrize("provider, problem, hint", [
    ("aws ", "'aws ' has a blank at its end", "Write provider: 'aws'."),
    (" gcp", "' gcp' has a blank at its start", "Write provider: 'gcp'."),
    ("aws\u00a0", "'aws\\xa0' holds U+00A0 (NO-BREAK SPACE), not a printable ASCII character", "Write provider: 'aws'."),
    ("\uff41\uff57\uff53", "'\\uff41\\uff57\\uff53' holds U+FF41 (FULLWIDTH LATIN SMALL LETTER A), not a printable "
                           "ASCII character", "Write provider: 'aws'."),
    ("AWS", "'AWS' has upper-case letters", "Write provider: 'aws'."),
    ("\u0430ws", "'\\u0430ws' holds U+0430 (CYRILLIC SMALL LETTER A), not a printable ASCII character",
     "Write provider: 'aws'."),
    ("Coreweave", "'Coreweave' has upper-case letters", "Write it in lower-case ASCII letters and digits, as "
                                                        "costs.providers names it, e.g. 'aws'."),
    # h35b: a formula's first character, or punctuation no provider's name holds
    ("=1+1", "'=1+1' holds '=', not a letter, digit, '-', '_' or '.'", "Write it in lower-case ASCII letters and "
                                                                      "digits, as costs.providers names it, e.g. 'aws'."),
    ("-cmd", "'-cmd' starts with '-', not a letter or digit", "Write it in lower-case ASCII "
     "letters and digits, as costs.providers names it, e.g. 'aws'."),
])
def test_a_cloud_overlays_provider_is_printable_lower_case_ascii(tmp_path: Path, provider: str, problem: str,
                                                                 hint: str) -> None:
    body = MY_INSTANCE.format(usd="0.8048", line="notes: hand-written").replace("provider: aws",
                                                                                  f"provider: \"{provider}\"")
    d = _overlay(tmp_path, "cloud.yaml", body)
    err = _cli_error("catalog", "cloud", "--catalog", str(d))
    assert err == (f"Error: {d / 'cloud.yaml'}:4: instances[0] (aws-my-g6).provider: {problem}; a provider is "
                   f"written in lower-case ASCII (costs.providers would not select this row). {hint}\n"), err


def test_a_hand_written_runpod_region_is_an_upper_case_country_code(tmp_path: Path) -> None:
    body = (MY_INSTANCE.format(usd="0.8048", line="notes: hand-written").replace("provider: aws", "provider: runpod")
            .replace("region: us-east-2", "region: us"))
    d = _overlay(tmp_path, "cloud.yaml", body)
    err = _cli_error("catalog", "cloud", "--catalog", str(d))
    assert err == (f"Error: {d / 'cloud.yaml'}:11: instances[0] (aws-my-g6).region: region 'us' has lower-case "
                   "letters, and runpod names its regions as upper-case country codes. Write region: 'US'.\n"), err


RUNPOD_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Region,SpotPrice,Price,AvailabilityZone,GpuInfo\n"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("region", [None, "us", "US", "us "])
def test_import_skypilot_writes_runpod_regions_in_upper_case(tmp_path: Path, region: str | None) -> None:
    path = tmp_path / "runpod" / "vms.csv"
    path.parent.mkdir()
    # h37b N4: a RunPod GPU row carries its GpuInfo (SkyPilot's fetcher writes one on every GPU row; an empty one
    # is now left out)
    info = "\"{'Gpus': [{'Name': 'L4', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24}}]}\""
    path.write_text(RUNPOD_HEADER + f"1x_L4_SECURE,L4,1,8,32,us,0.3,0.44,US-TX-1,{info}\n", encoding="utf-8")
    out = tmp_path / "o"
    args = ["catalog", "import-skypilot", str(path), "--out", str(out)] + (["--region", region] if region else [])
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "  region in lower case written in upper case, as the cloud names its country codes: 1 row(s) (line 2)" \
        in r.stderr.splitlines(), r.stderr
    assert '    region: "US"' in (out / "cloud.yaml").read_text(encoding="utf-8").splitlines()


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("region", ["US-EAST-1", "us-east-1 ", "Us-East-1"])
def test_import_skypilot_region_matches_the_lower_cased_region(tmp_path: Path, region: str) -> None:
    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir()
    path.write_text(AWS_HEADER + "g6.xlarge,L4,1,4,16,,0.8,0.3,US-EAST-1,us-east-1a,x86_64\n"
                    "g6.xlarge,L4,1,4,16,,0.7,0.3,us-east-2,us-east-2a,x86_64\n", encoding="utf-8")
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(path), "--out", str(out), "--region", region])
    assert r.exit_code == 0, r.output
    text = (out / "cloud.yaml").read_text(encoding="utf-8")
    assert '    region: "us-east-1"' in text.splitlines() and "usd_per_hour: 0.8\n" in text, text


# -- 7. calibration files: duplicate GPUs, and a file with no entry for the --gpu given ----------------------------

def _calibration(path: Path, *names: str) -> Path:
    """A calibration file with one entry per GPU name (figures of a planner calibrate run's form)."""
    body = "".join(f"  - gpu_name: \"{n}\"\n    cuda_context: {600 - 100 * i} MiB\n    allocator_fraction: 0.05\n"
                   f"    measured_on: 2026-11-01\n    versions: {{}}\n" for i, n in enumerate(names))
    path.write_text("schema_version: 1\ngpus:\n" + body, encoding="utf-8")
    return path


# 'NVIDIA  L4' (two spaces) is refused before this by the name rule for blanks (h15b #5; tests/test_safety20c.py)
@pytest.mark.parametrize("second", ["NVIDIA L4", "nvidia l4", "L4"])
def test_two_calibration_entries_of_one_gpu_are_refused(tmp_path: Path, second: str) -> None:
    path = _calibration(tmp_path / "c.yaml", "NVIDIA L4", second)
    err = _cli_error("estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4", "--calibration", str(path))
    assert err == (f"Error: {path}:8: gpus[1].gpu_name: duplicate gpu_name {second!r} (also gpus[0], 'NVIDIA L4': "
                   "the lookup reads both as one GPU, ignoring case, runs of spaces and a leading 'NVIDIA '). Keep "
                   "one entry per GPU: remove the one no longer measured.\n"), err


def test_a_calibration_file_with_no_entry_for_the_gpu_says_so(tmp_path: Path) -> None:
    path = _calibration(tmp_path / "c.yaml", "NVIDIA L4 typo", "NVIDIA L40S")
    res = estimate(model="llama-2-7b", task="infer", gpu="l4", calibration=path)
    note = (f"--calibration {path} has no entry for GPU l4 (NVIDIA L4): it holds 'NVIDIA L4 typo', 'NVIDIA L40S'; "
            "the default CUDA context and allocator reserve are used. Run 'planner calibrate' on that GPU, or give "
            "the file that has it.")
    assert note in res.notes, res.notes
    # an entry that applies: no such note
    ok = estimate(model="llama-2-7b", task="infer", gpu="l4", calibration=_calibration(tmp_path / "l4.yaml", "NVIDIA L4"))
    assert not [n for n in ok.notes if "has no entry" in n], ok.notes


# -- 8. catalogs, estimates and fits pickle and deep-copy -------------------------------------------------------------

def test_a_catalog_and_estimate_and_fit_results_pickle_and_deep_copy() -> None:
    import copy
    import pickle

    from planner import fit, load_catalog

    cat = load_catalog()
    est = estimate(model="llama-2-7b", task="infer", gpu="l4", catalog=cat)
    fitted = fit(model="llama-2-7b", task="infer", gpu="l4", context="max", catalog=cat)
    for how in (lambda o: pickle.loads(pickle.dumps(o)), copy.deepcopy):
        again = how(cat)
        assert again.gpus == cat.gpus and again.instances == cat.instances and again.models == cat.models
        assert dict(again.models[0].config) == dict(cat.models[0].config)
        assert again.sha256 == cat.sha256
        assert how(est).to_dict() == est.to_dict()  # the speed parts' formulas written out, the same words
        assert how(fitted).to_dict() == fitted.to_dict()


def test_a_frozen_map_is_read_only_and_pickles() -> None:
    import pickle

    from planner.core.frozenmap import FrozenMap

    m = FrozenMap({"a": 1, "b": (2, 3)})
    assert m == {"a": 1, "b": (2, 3)} and pickle.loads(pickle.dumps(m)) == m and list(m) == ["a", "b"]
    with pytest.raises(TypeError):
        m["a"] = 2  # type: ignore[index]
    with pytest.raises(AttributeError):
        m._data = {}  # type: ignore[misc]


# -- 9. compare(tokens_per_month=...) as the CLI takes it ---------------------------------------------------------------

def test_tokens_per_month_takes_name_equals_count_in_one_string_and_any_case() -> None:
    from planner.api.comparisons import volume_overrides

    # '200M' = 2 x 10^8 tokens (parse_token_count's decimal suffix)
    assert volume_overrides("qlora-7b=200M", ["qlora-7b", "chat"]) == {"qlora-7b": 200_000_000.0}
    # two workloads' names never differ only in case (clash_key), so another case names one of them
    assert volume_overrides(["QLORA-7B=1M", "Chat=2M"], ["qlora-7b", "chat"]) == {"qlora-7b": 1e6, "chat": 2e6}


@pytest.mark.parametrize("value", ["=1M", ["=1M"], [" =1M"]])
def test_tokens_per_month_with_an_empty_name_is_refused(value) -> None:
    from planner.api.comparisons import volume_overrides

    with pytest.raises(InputError) as caught:
        volume_overrides(value, ["qlora-7b"])
    shown = value if isinstance(value, str) else value[0]
    assert str(caught.value) == (f"tokens_per_month: {shown!r} names no workload before '='. Write NAME=1M (e.g. "
                                 "tokens_per_month='qlora-7b=1M'), or the count alone for a one-workload scenario.")


def test_the_cli_refuses_an_empty_tokens_per_month_name(tmp_path: Path) -> None:
    err = _cli_error("compare", str(ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"), "--out", str(tmp_path / "o"),
                     "--tokens-per-month", "=1M")
    assert err == ("Error: --tokens-per-month: '=1M' names no workload before '='. Write NAME=1M (e.g. "
                   "--tokens-per-month qlora-7b=1M), or the count alone for a one-workload scenario.\n"), err


# -- 10. --out and input paths, in the command line's words ------------------------------------------------------------

QLORA = str(ROOT / "scenarios" / "qlora-7b-12gb.yaml")


def test_out_dot_slash_tilde_is_a_folder_named_tilde(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", QLORA, "--out", "./~/x", "--format", "json"])
    assert r.exit_code == 0, r.output
    # said as './~/...': '~/...' would read as the home folder
    assert r.stdout.splitlines()[-1] == "Wrote ./~/x/qlora-7b-12gb.json", r.stdout
    assert (tmp_path / "~" / "x" / "qlora-7b-12gb.json").is_file()


@pytest.mark.parametrize("out, want", [
    (" o", "' o' has the folder name ' o', which begins with a space that no listing shows. Write --out 'o'."),
    ("a /b", "'a /b' has the folder name 'a ', which ends with a space that no listing shows. Write --out 'a/b'."),
    ("a/ b", "'a/ b' has the folder name ' b', which begins with a space that no listing shows. Write --out 'a/b'."),
    ("x/$HOME", "'x/$HOME' holds '$HOME', which the shell did not expand (it was quoted), so it would be part of a "
                "folder's name. Write it unquoted, or give the path itself."),
    # a command substitution gets no "write it unquoted": following that would run the command (h41a N19)
    ("$(pwd)/x", "'$(pwd)/x' holds '$(', which the shell did not expand (it was quoted), so it would be part of a "
                 "folder's name. Give the path itself."),
    ("`pwd`", "'`pwd`' holds '`', which the shell did not expand (it was quoted), so it would be part of a folder's "
              "name. Give the path itself."),
    ("o\u200b", "'o\\u200b' holds U+200B (ZERO WIDTH SPACE), which no listing shows, so the folder's name would look "
                "like another. Write --out 'o' without it."),
])
def test_out_refuses_blank_edged_folders_unexpanded_substitutions_and_invisible_characters(
        tmp_path: Path, monkeypatch, out: str, want: str) -> None:
    monkeypatch.chdir(tmp_path)
    err = _cli_error("plan", QLORA, "--out", out, "--format", "json")
    assert err == f"Error: --out: {want}\n", err
    assert list(tmp_path.iterdir()) == []  # nothing made


@pytest.mark.parametrize("args, want", [
    (["estimate", "--workload", ""], "--workload: is empty: no workload file is named. Give a workload file, e.g. "
                                     "scenarios/workloads/qlora-7b.yaml."),
    (["estimate", "--workload", "a\nb.yaml"], "--workload: 'a\\nb.yaml' holds a line break and names no file: it "
                                              "looks like YAML text, not a file path. Write the text to a file and "
                                              "give its path, e.g. scenarios/workloads/qlora-7b.yaml."),
    (["compare", "x: 1\ny.yaml"], "scenario: 'x: 1\\ny.yaml' holds a line break and names no file: it looks like "
                                  "YAML text, not a file path. Write the text to a file and give its path, e.g. "
                                  "scenarios/qlora-7b-12gb.yaml."),
    (["plan", "name: x\nworkloads: []"], "scenario: 'name: x\\nworkloads: []' holds a line break and names no "
                                         "file: it looks like YAML text, not a file path. Write the text to a file "
                                         "and give its path, e.g. scenarios/qlora-7b-12gb.yaml."),
])
def test_input_paths_are_refused_in_the_command_lines_words(tmp_path: Path, monkeypatch, args: list, want: str) -> None:
    monkeypatch.chdir(tmp_path)
    err = _cli_error(*args)
    assert err == f"Error: {want}\n", err
    assert "plan(" not in err and "yaml.safe_load" not in err


def test_the_api_takes_out_dot_slash_tilde(tmp_path: Path, monkeypatch) -> None:
    from planner import plan

    monkeypatch.chdir(tmp_path)
    r = plan(QLORA, out="./~", format="json")
    assert r.outputs["json"] == Path("~") / "qlora-7b-12gb.json" and (tmp_path / "~" / "qlora-7b-12gb.json").is_file()


# -- 15. workload-file keys that are command-line options only ---------------------------------------------------------

@pytest.mark.parametrize("line, want", [
    ("gpu: rtx-4090", "gpu: --gpu is a command-line option only, not a workload-file key. Remove it and give it on the "
                      "command line: planner estimate --workload FILE --gpu rtx-4090 ('planner catalog gpus' lists the "
                      "ids); a scenario picks GPUs itself (constraints.allowed_gpus limits them)."),
    ("headroom: 0.1", "headroom: --headroom is a command-line option only, not a workload-file key. Remove it and give "
                      "it on the command line: planner estimate --workload FILE --gpu ID --headroom 0.1."),
    ("calibration: c.yaml", "calibration: --calibration is a command-line option only, not a workload-file key. Remove "
                            "it and give it on the command line: planner estimate --workload FILE --gpu ID "
                            "--calibration calibration.yaml."),
])
def test_command_line_only_keys_in_a_workload_file_say_so(tmp_path: Path, line: str, want: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(f"model: llama-2-7b\ntask: infer\n{line}\n", encoding="utf-8")
    err = _cli_error("estimate", "--workload", str(path))
    assert err == f"Error: {path}:3: {want}\n", err


def test_the_readme_says_which_options_have_no_file_key() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Every option also has" not in text
    assert "`--gpu`, `--headroom`,\n`--calibration`, `--prompt-tokens`, `--output-tokens` are command-line only." in text
    assert len(text.encode("utf-8")) <= 10_240


# -- 16. hints that hold when followed ------------------------------------------------------------------------------------

@pytest.mark.parametrize("given, want", [
    ("csv;json", "'csv;json' is not a report format: formats are separated by commas. Write --format csv,json."),
    ("csv json", "'csv json' is not a report format: formats are separated by commas. Write --format csv,json."),
    ("\uff43\uff53\uff56", "'\uff43\uff53\uff56' is not a report format: format names are written in ASCII letters. "
                           "Write --format csv."),
])
@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_format_hints_name_the_whole_list(tmp_path: Path, given: str, want: str) -> None:
    err = _cli_error("plan", QLORA, "--out", str(tmp_path / "o"), "--format", given)
    assert err == f"Error: --format: {want}\n", err
    fixed = want.rsplit("--format ", 1)[1].rstrip(".")
    r = CliRunner().invoke(main, ["plan", QLORA, "--out", str(tmp_path / "o"), "--format", fixed])
    assert r.exit_code == 0, r.output  # the hint, followed, is taken


@pytest.mark.parametrize("given, want, fixed", [
    # 20 x 1024 = 20480, 2 x 1024 = 2048 (the IEC binary prefix Ki)
    ("2_0Ki", "'2_0Ki' is written with '_' separators. Write the whole number, without a suffix: --seq-len 20480 "
              "(20 x 1024).", "20480"),
    ("\uff12Ki", "'\uff12Ki' is not written in ASCII digits. Write the whole number, without a suffix: --seq-len 2048 "
                 "(2 x 1024).", "2048"),
    ("0Ki", "'0Ki' is not a whole number. '0Ki' is 0 whatever the suffix: write the number you mean in digits, "
            "without a suffix, e.g. --seq-len 1024 (1 x 1024).", "1024"),
])
def test_suffix_hints_give_a_value_the_option_takes(given: str, want: str, fixed: str) -> None:
    args = ["estimate", "--model", "llama-2-7b", "--task", "train", "--method", "qlora", "--seq-len"]
    err = _cli_error(*args, given)
    assert err == f"Error: --seq-len: {want}\n", err
    r = CliRunner().invoke(main, args + [fixed])
    assert r.exit_code == 0, r.output


def test_a_date_that_is_no_date_is_hinted_without_quoting_where_quoting_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: m\nworkloads:\n  - {model: llama-2-7b, task: infer}\nextras:\n  - {description: x, "
                    "unit_price_usd: 1, source: s, as_of: 2026-02-29}\n", encoding="utf-8")
    err = _cli_error("plan", str(path), "--out", str(tmp_path / "o"), "--format", "json")
    # 2026 is no leap year (not divisible by 4): February has 28 days
    assert err == (f"Error: {path}:5: extras[0].as_of: '2026-02-29' looks like a date but is not one. Write a real "
                   "date as YYYY-MM-DD (2026-02 has 28 days: its last is 2026-02-28); only where a text belongs "
                   "(notes), quote it.\n"), err


# -- minor items -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("size, hint", [("0.5 B", "'1 B'"), ("1.5 B", "'1 B' or '2 B'"), ("0.0001 kB", "'1 B'")])
def test_a_fraction_of_a_byte_is_refused(tmp_path: Path, size: str, hint: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(f"model: llama-2-7b\ntask: train\nmethod: qlora\ndataset_size: '{size}'\n", encoding="utf-8")
    err = _cli_error("estimate", "--workload", str(path))
    assert err == (f"Error: {path}:4: dataset_size: '{size}' is a fraction of a byte: a size is a whole number of "
                   f"bytes. Write a whole number of bytes, e.g. {hint}.\n"), err


def test_a_base_catalog_that_is_a_file_says_so(tmp_path: Path) -> None:
    from planner import load_catalog
    from planner.core.errors import CatalogError

    (tmp_path / "gpus.yaml").write_text((ROOT / "catalog" / "gpus.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(CatalogError) as caught:
        load_catalog(base=tmp_path / "gpus.yaml")
    assert str(caught.value) == (f"{tmp_path / 'gpus.yaml'}: is a file, not a directory (base=). Give "
                                 f"the folder that holds it: base={str(tmp_path)!r}.")


@pytest.mark.parametrize("name", ["plan", "compare"])
def test_plan_and_compare_without_a_scenario_raise_input_error(name: str) -> None:
    import planner

    with pytest.raises(InputError) as caught:
        getattr(planner, name)()
    assert isinstance(caught.value, TypeError)  # as Python's own missing-argument error is
    assert str(caught.value) == (f"{name}() needs a scenario: a scenario file or a mapping. For example "
                                 f"{name}('scenarios/qlora-7b-12gb.yaml').")


@pytest.mark.parametrize("line, want", [
    ("price_kind: quote-range", "price_kind: price_kind quote-range needs a range, which an extras line has no keys "
                                "for. Write price_kind: quote with the price quoted, or estimate."),
    ("category: gpu", "category: category 'gpu' is one of planner's own quote lines (gpu, platform, memory, network), "
                      "each priced from the catalog. Use another word for what this line buys, e.g. category: storage; "
                      "a GPU, platform, memory or NIC to plan with belongs in a catalog overlay."),
    ("condition: used", "condition: an extras line has no condition: a used part is priced as used. Write price_kind: "
                        "used (and say so in the description)."),
])
def test_extras_keys_that_would_mislead_are_refused(tmp_path: Path, line: str, want: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: m\nworkloads:\n  - {model: llama-2-7b, task: infer}\nextras:\n  - {description: x, "
                    f"unit_price_usd: 1, source: s, as_of: 2026-01-01, {line}}}\n", encoding="utf-8")
    err = _cli_error("plan", str(path), "--out", str(tmp_path / "o"), "--format", "json")
    assert err == f"Error: {path}:5: extras[0].{want}\n", err


def test_an_empty_costs_mfu_mapping_is_refused(tmp_path: Path) -> None:
    text = (ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml").read_text(encoding="utf-8")
    path = tmp_path / "s.yaml"
    path.write_text(text.replace("\ncosts:\n", "\ncosts:\n  mfu: {}\n", 1), encoding="utf-8")
    line = path.read_text(encoding="utf-8").splitlines().index("  mfu: {}") + 1
    err = _cli_error("compare", str(path), "--out", str(tmp_path / "o"))
    assert err == (f"Error: {path}:{line}: costs.mfu: an empty mapping pins no workload's MFU. Give mfu: 0.3 for every "
                   "workload, or mfu: {NAME: 0.3}, or leave mfu out to use the speed model's.\n"), err


def test_the_api_refuses_yaml_text_as_a_workload_path() -> None:
    with pytest.raises(InputError) as caught:
        estimate(workload="a\nb.yaml")
    assert str(caught.value) == ("workload: is YAML text, not a file path: workload= reads a workload file or a "
                                 "mapping. Pass the mapping, e.g. workload=yaml.safe_load(text), or write the text to "
                                 "a file.")
