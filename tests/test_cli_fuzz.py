"""Property tests (hypothesis): whatever the input files hold, the CLI stays well behaved.

Random scenario, workload and catalog-overlay documents are generated, valid ones (built from
the shipped catalog's ids) and mutated ones (keys dropped, renamed or added, values replaced by
wrong types, random text, huge, negative, NaN or infinite numbers, unknown names, extra nesting;
now and then a file that is not valid YAML or not UTF-8). Each is run through the CLI in a
fresh directory, and every run must:

- exit 0, 1 or 2, never with an exception (no traceback, no "internal error");
- on exit 2, print exactly one line, ``Error: ...``, on stderr;
- leave nothing but the reports asked for: ``<stem>.<format>`` in the output directory, all
  with one stem, no temporary files, nothing outside it; no reports at all on exit 2.

Examples are derandomized (the same every run, so CI is stable); the three random-input tests take
about a minute on two cores, so they are marked slow and run in CI's second step (``-m slow``); the shipped catalog is read once (the CLI's catalog loader
is memoised while the tests without an overlay run). For a deeper search by hand, with fresh
random examples: ``PLANNER_FUZZ_SCALE=20 python -m pytest tests/test_cli_fuzz.py``.
"""

from __future__ import annotations

import json
import os
import re
import string
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import planner.cli.options
from planner.catalog.loader import load_catalog
from planner.cli.main import main

SHIPPED = load_catalog()
#: Small models, so that valid scenarios plan quickly.
MODELS = ["qwen2.5-0.5b", "llama-3.2-1b", "gpt2", "pythia-1.4b", "llama-2-7b", "phi-3-mini"]
GPUS = [g.id for g in SHIPPED.gpus]
PLATFORMS = [p.id for p in SHIPPED.platforms]

#: PLANNER_FUZZ_SCALE=20 runs 20 times the examples, with fresh random ones (for a deeper search by
#: hand); the default runs the same examples every time, sized for CI.
SCALE = float(os.environ.get("PLANNER_FUZZ_SCALE", "1"))


def fuzz_settings(examples: int) -> settings:
    return settings(max_examples=max(1, round(examples * SCALE)), deadline=None, derandomize=SCALE == 1,
                    database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _cached_load(catalog_dir: str | None) -> Any:
    """The CLI's catalog loader with the shipped catalog read once (an overlay is read each time)."""
    return SHIPPED if catalog_dir is None else load_catalog(Path(catalog_dir))


# ----- values ------------------------------------------------------------------------------------

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**15), max_value=10**15),
    st.sampled_from([0, -1, 10**12, 2**63, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["80GB", "80 GiB", "80 Gb", "80", "auto", "..", "../../x", "=SUM(A1)", "llama-2-7", "rtx-409",
                     "fp8", "bf16", "train", "infer", "qlora", "2026-13-45", "1e400"]),
    st.lists(st.integers(-3, 70), max_size=3),
    st.dictionaries(st.sampled_from(["a", "model", "id", "memory"]), st.integers(-1, 3), max_size=2),
)

KEY_NAMES = st.one_of(st.text(string.ascii_lowercase + "_", min_size=1, max_size=12),
                      st.sampled_from(["micro_batch", "microbatch", "seq_len", "model", "task", "gpus", "tp", "zero",
                                       "memory", "price_usd", "source", "as_of", "id", "remove", "workload"]))


@st.composite
def mutated(draw, doc: Any, max_mutations: int = 3) -> Any:
    """``doc`` as it is (about two times in three) or with 1 to ``max_mutations`` random changes."""
    if draw(st.integers(0, 2)) > 0:
        return doc
    for _ in range(draw(st.integers(1, max_mutations))):
        doc = _mutate_once(draw, doc)
    return doc


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, prefix + (i,))
    return out


def _get(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _mutate_once(draw, doc: Any) -> Any:
    path = draw(st.sampled_from(_paths(doc)))
    target = _get(doc, path)
    kind = draw(st.sampled_from(["replace", "drop", "add", "rename", "nest", "duplicate"]))
    if kind == "replace" or not path and kind in ("drop", "rename"):
        new = draw(JUNK)
        if not path:
            return new
        _get(doc, path[:-1])[path[-1]] = new
    elif kind == "drop" and path:
        parent = _get(doc, path[:-1])
        del parent[path[-1]]
    elif kind == "add" and isinstance(target, dict):
        target[draw(KEY_NAMES)] = draw(JUNK)
    elif kind == "add" and isinstance(target, list):
        target.append(draw(JUNK))
    elif kind == "rename" and isinstance(path[-1], str):
        parent = _get(doc, path[:-1])
        value = parent.pop(path[-1])
        name = path[-1]
        i = draw(st.integers(0, max(len(name) - 1, 0)))
        parent[name[:i] + name[i + 1:] if len(name) > 1 else name + "s"] = value
    elif kind == "nest":
        new = draw(st.sampled_from(["list", "dict"]))
        wrapped = [target] if new == "list" else {"value": target}
        if not path:
            return wrapped
        _get(doc, path[:-1])[path[-1]] = wrapped
    elif kind == "duplicate" and isinstance(target, list) and target:
        target.append(yaml.safe_load(yaml.safe_dump(target[0])))
    return doc


@st.composite
def file_text(draw, doc: Any) -> bytes:
    """The document as YAML bytes; now and then damaged below the YAML level."""
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    kinds = ["truncate", "latin1", "tab", "tag", "alias", "empty", "json"]
    pick = draw(st.integers(0, 6 * len(kinds) - 1))  # about one file in six is damaged
    damage = kinds[pick] if pick < len(kinds) else "none"
    if damage == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif damage == "tab":
        text = text.replace("  ", "\t", 1)
    elif damage == "tag":
        text = "x: !!python/object/apply:os.system ['true']\n" + text
    elif damage == "alias":
        text = "bomb: &a [1, 2, 3]\nbomb2: [*a, *a]\n" + text
    elif damage == "empty":
        text = "# nothing\n"
    elif damage == "json":
        text = json.dumps(doc, default=str)
    data = text.encode("utf-8")
    if damage == "latin1":
        data = data + "\n# caf\u00e9\n".encode("latin-1")
    return data


# ----- documents ---------------------------------------------------------------------------------

@st.composite
def workloads(draw, choices: bool = True) -> dict[str, Any]:
    """A workload mapping; with ``choices``, strategy keys may be lists or 'auto' (as in scenarios)."""
    task = draw(st.sampled_from(["train", "infer"]))
    w: dict[str, Any] = {"name": draw(st.sampled_from(["w", "chat", "=HYPERLINK(\"x\")", "ft 1"])),
                         "model": draw(st.sampled_from(MODELS)), "task": task}
    if task == "train":
        opts = {
            "method": st.sampled_from(["full", "lora", "qlora"]),
            "micro_batch": st.integers(1, 8),
            "seq_len": st.sampled_from([128, 512, 2048]),
            "grad_accum": st.integers(1, 16),
            "zero": st.one_of(st.integers(0, 3), st.just("auto"), st.lists(st.integers(0, 3), min_size=1,
                                                                            max_size=2, unique=True))
            if choices else st.integers(0, 3),
            "checkpointing": st.sampled_from(["none", "full"] + ["auto"] * choices),
            "offload_optimizer": st.sampled_from([False, True] + ["auto"] * choices),
            "gpus": st.sampled_from([1, 2, 4]),
            "recipe": st.sampled_from(["pure-bf16", "mixed-bf16", "mixed-fp16", "fp32"]),
            "optimizer": st.sampled_from(["adamw", "adamw-8bit", "sgd"]),
        }
    else:
        opts = {
            "weights": st.sampled_from(["bf16", "fp16", "fp8", "int8", "int4-awq", "nf4"] + ["auto"] * choices),
            "kv_dtype": st.sampled_from(["bf16", "fp16", "fp8"]),
            "context": st.sampled_from([256, 2048, 8192]),
            "concurrency": st.integers(1, 16),
            "tp": st.sampled_from([1, 2] + ["auto"] * choices),
            "engine": st.sampled_from(["hf", "vllm"]),
        }
    for key, strategy in opts.items():
        if draw(st.booleans()):
            w[key] = draw(strategy)
    return w


@st.composite
def scenarios(draw) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": draw(st.sampled_from(["fuzz", "../../etc/x", "a/b", "=cmd|' /C calc'!A0", "sp ace"])),
        "workloads": draw(st.lists(workloads(), min_size=1, max_size=2, unique_by=lambda w: w["name"])),
        "constraints": {"allowed_gpus": draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=3, unique=True))},
    }
    if draw(st.booleans()):
        doc["constraints"]["allowed_platforms"] = draw(st.lists(st.sampled_from(PLATFORMS), min_size=1, max_size=3,
                                                                unique=True))
    if draw(st.booleans()):
        doc["constraints"]["budget_usd"] = draw(st.sampled_from([1000, 20000, 500000]))
    if draw(st.booleans()):
        doc["constraints"]["max_cards"] = draw(st.integers(1, 8))
    if draw(st.booleans()):
        doc["constraints"]["max_nodes"] = draw(st.integers(1, 2))
        doc["constraints"]["network"] = {"kind": draw(st.sampled_from(["infiniband", "roce"])),
                                         "min_rate": draw(st.sampled_from(["100 Gb/s", "400 Gb/s"]))}
    if draw(st.booleans()):
        doc["description"] = draw(st.sampled_from(["a plan", "+1+2", "@SUM(A1:A3)"]))
    if draw(st.booleans()):
        doc["extras"] = [{"description": "support", "unit_price_usd": 100, "quantity": 2, "source": "quote",
                          "as_of": "2026-01-01"}]
    return doc


def _gpu_entry(draw, gid: str) -> dict[str, Any]:
    mem = draw(st.sampled_from([12, 24, 48, 80]))
    pcie = draw(st.booleans())
    entry = {
        "id": gid, "name": "Fuzz GPU", "vendor": "nvidia", "segment": "workstation", "architecture": "ada",
        "memory": f"{mem} GiB", "memory_usable": f"{mem * 1024 - 300} MiB", "memory_bandwidth": "900 GB/s",
        "bf16_tflops": draw(st.sampled_from([50, 180.5, 990])), "bf16": True, "fp8": draw(st.booleans()),
        "int8": True, "pcie_gen": draw(st.sampled_from([4, 5])), "pcie_lanes": 16, "tdp_w": 300,
        "form_factor": "pcie" if pcie else "sxm", "price_usd": draw(st.sampled_from([999, 6800.5])),
        "price_kind": "quote", "source": "fuzz quote", "as_of": "2026-01-15",
    }
    if pcie:
        entry["slot_width"] = draw(st.integers(1, 3))
    return entry


@st.composite
def overlays(draw) -> dict[str, Any]:
    """{file name: document} for a catalog overlay directory."""
    files: dict[str, Any] = {}
    gpus = []
    for i in range(draw(st.integers(0, 2))):
        choice = draw(st.sampled_from(["new", "price", "remove"]))
        if choice == "new":
            gpus.append(_gpu_entry(draw, f"fuzz-gpu-{i}"))
        elif choice == "price":
            gpus.append({"id": draw(st.sampled_from(GPUS)), "price_usd": draw(st.sampled_from([100, 2500.5])),
                         "price_kind": "quote", "source": "fuzz quote", "as_of": "2026-02-01"})
        else:
            gpus.append({"id": draw(st.sampled_from(GPUS)), "remove": True})
    if gpus or draw(st.booleans()):
        files["gpus.yaml"] = {"schema_version": 1, "gpus": gpus}
    if draw(st.booleans()):
        pid = draw(st.sampled_from(PLATFORMS))
        files["platforms.yaml"] = {"schema_version": 1, "platforms": [
            {"id": pid, "base_price_usd": draw(st.sampled_from([1500, 3000.25])), "price_kind": "quote",
             "source": "fuzz quote", "as_of": "2026-02-01"}]}
    if not files:
        files["gpus.yaml"] = {"schema_version": 1, "gpus": []}
    return files


# ----- running -----------------------------------------------------------------------------------

@contextmanager
def _workdir():
    old = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            yield Path(tmp)
        finally:
            os.chdir(old)


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _invoke(args: list[str]) -> Any:
    return CliRunner().invoke(main, args)


def _check(result: Any, root: Path, before: set[str], formats: tuple[str, ...] = ()) -> None:
    """The properties every run must have (see the module docstring)."""
    event(f"exit {result.exit_code}")
    if result.exit_code == 2:
        event("error: " + result.stderr.split(": ")[-1][:40] if result.stderr else "usage")
    output = result.output + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    assert result.exit_code in (0, 1, 2), result.exit_code
    assert "Traceback" not in output
    assert "internal error" not in output, output
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    new = _tree(root) - before
    out = root / "out"
    reports = sorted(p for p in new if p.startswith("out/"))
    assert set(new) - set(reports) - {"out"} == set(), f"stray files: {sorted(new)}"
    if result.exit_code == 2:
        assert "out" not in new, sorted(new)
    # the manifest of what planner wrote (planner.core.reportset.MANIFEST) is the one hidden file allowed
    names = [Path(p).name for p in reports if Path(p).name != ".planner-reports.json"]
    assert all(re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]*", n) for n in names), names  # no temp or hidden files
    if names:
        assert len({Path(n).stem for n in names}) == 1, names
        assert {Path(n).suffix[1:] for n in names} <= set(formats), names
        assert out.is_dir()
    if result.exit_code == 0 and formats:
        assert {Path(n).suffix[1:] for n in names} == set(formats), (names, formats)


FORMATS = st.sampled_from([("csv", "json"), ("json",), ("xlsx",), ("csv",)])


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.longest  # about 80 s on 2 cores
@fuzz_settings(300)
@given(doc=scenarios().flatmap(lambda d: mutated(d)), data=st.data(), formats=FORMATS)
def test_plan_on_random_scenarios(doc: Any, data: st.DataObject, formats: tuple[str, ...]) -> None:
    raw = data.draw(file_text(doc))
    with _workdir() as root, mock.patch.object(planner.cli.options, "load_catalog_option", _cached_load):
        (root / "scenario.yaml").write_bytes(raw)
        before = _tree(root)
        result = _invoke(["plan", "scenario.yaml", "--out", "out", "--format", ",".join(formats), "--top", "2"])
        _check(result, root, before, formats)


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
@fuzz_settings(200)
@given(doc=workloads(choices=False).flatmap(lambda d: mutated(d)), data=st.data(),
       gpu=st.one_of(st.none(), st.sampled_from(["rtx-3090", "t4", "h100-sxm", "mi300x", "rtx-409"])),
       as_json=st.booleans())
def test_estimate_on_random_workloads(doc: Any, data: st.DataObject, gpu: str | None, as_json: bool) -> None:
    raw = data.draw(file_text(doc))
    with _workdir() as root, mock.patch.object(planner.cli.options, "load_catalog_option", _cached_load):
        (root / "workload.yaml").write_bytes(raw)
        before = _tree(root)
        args = ["estimate", "--workload", "workload.yaml"] + (["--gpu", gpu] if gpu else []) + (
            ["--json"] if as_json else [])
        _check(_invoke(args), root, before)


OVERLAY_SCENARIO = """\
name: overlay-check
workloads:
  - {name: chat, model: qwen2.5-0.5b, task: infer, weights: fp16, kv_dtype: fp16, context: 1024, tp: 1}
constraints:
  max_cards: 1
"""


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
@fuzz_settings(50)
@given(files=overlays(), data=st.data())
def test_plan_with_random_catalog_overlays(files: dict[str, Any], data: st.DataObject) -> None:
    with _workdir() as root:
        (root / "scenario.yaml").write_text(OVERLAY_SCENARIO)
        (root / "overlay").mkdir()
        for name, doc in files.items():
            doc = data.draw(mutated(doc, max_mutations=2))
            (root / "overlay" / name).write_bytes(data.draw(file_text(doc)))
        before = _tree(root)
        result = _invoke(["plan", "scenario.yaml", "--catalog", "overlay", "--out", "out", "--format", "json"])
        _check(result, root, before, ("json",))
