"""The documentation says what the code does: key references match the readers, examples run.

- docs/scenarios.md lists exactly the keys the scenario, workload, constraint, network, extras and
  costs readers accept (the tuples they hand to ``Entry.check_keys``), table by table;
- docs/catalog.md lists exactly the fields the catalog loader accepts for every list, the entries
  of ``prices:`` lists, ``exempt``, ``gpu_slots`` and the overlay-only ``remove``;
- the README stays a front page (at most 10 KiB), keeps the quick-start commands CI runs, its
  inline scenario is the shipped file and plans to the recommendation it quotes, and its Python
  example runs;
- the scenario in docs/scenarios.md plans.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

#: A marker line before a table: ``<!-- keys: NAME -->`` (docs/scenarios.md) or ``<!-- catalog: NAME -->``.
MARKER = re.compile(r"^<!-- (keys|catalog): ([\w-]+) -->$")
#: A table row whose first cell is one backticked key.
ROW_KEY = re.compile(r"^\|\s*`([^`]+)`\s*\|")


def marked_tables(path: Path, kind: str) -> dict[str, list[str]]:
    """NAME -> the keys of the table that follows each ``<!-- kind: NAME -->`` marker, in order.

    The table is the run of ``|`` lines after the marker (blank lines before it skipped); its
    header and separator rows have no backticked first cell and are skipped.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    out: dict[str, list[str]] = {}
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if not m or m.group(1) != kind:
            continue
        name = m.group(2)
        assert name not in out, f"{path.name}: marker {name!r} twice"
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        keys: list[str] = []
        while j < len(lines) and lines[j].startswith("|"):
            row = ROW_KEY.match(lines[j])
            if row:
                keys.append(row.group(1))
            j += 1
        assert keys, f"{path.name}: marker {name!r} is followed by no table of keys"
        out[name] = keys
    return out


def _compare(where: str, documented: list[str], accepted: tuple[str, ...] | list[str]) -> None:
    dup = sorted({k for k in documented if documented.count(k) > 1})
    missing = [k for k in accepted if k not in documented]
    extra = [k for k in documented if k not in accepted]
    assert not dup and not missing and not extra, (
        f"{where}: documented twice {dup}; accepted by the reader but not documented {missing}; "
        f"documented but not accepted {extra}")


# ----- docs/scenarios.md against the scenario readers ------------------------------------------------

def scenario_key_sets() -> dict[str, tuple[str, ...]]:
    """Each documented table's name -> the keys its reader accepts."""
    from planner.cost.tco import COST_KEYS
    from planner.solve.scenario import (
        CONSTRAINT_KEYS,
        EXTRA_KEYS,
        NETWORK_KEYS,
        SCENARIO_KEYS,
        SCENARIO_WORKLOAD_KEYS,
        SLO_KEYS,
    )
    from planner.workload.spec import COMMON_KEYS, HOST_KEYS, INFER_KEYS, TRAIN_KEYS

    return {
        "scenario": SCENARIO_KEYS,
        "workload-common": COMMON_KEYS,
        "workload-train": TRAIN_KEYS,
        # workload_from_entry also accepts gpus for an inference workload file (N / tp replicas) and for a
        # llama.cpp workload in a scenario (one replica's layer split)
        "workload-infer": INFER_KEYS + ("gpus",),
        "workload-host": HOST_KEYS,
        "workload-targets": SCENARIO_WORKLOAD_KEYS,
        "slo": SLO_KEYS,
        "constraints": CONSTRAINT_KEYS,
        "network": NETWORK_KEYS,
        "extras": EXTRA_KEYS,
        "costs": COST_KEYS,
    }


def test_scenario_reference_lists_exactly_the_keys_the_readers_accept():
    tables = marked_tables(DOCS / "scenarios.md", "keys")
    expected = scenario_key_sets()
    assert sorted(tables) == sorted(expected), "docs/scenarios.md: one table per reader"
    for name, accepted in expected.items():
        _compare(f"docs/scenarios.md table {name!r}", tables[name], accepted)


def test_the_workload_tables_cover_the_api_keywords():
    """The workload tables together are the API's workload keywords (planner.api.inputs.workload_keys)."""
    from planner.api.inputs import workload_keys

    tables = marked_tables(DOCS / "scenarios.md", "keys")
    documented = {k for name in ("workload-common", "workload-train", "workload-infer", "workload-host")
                  for k in tables[name]}
    assert documented == set(workload_keys())


def test_a_documented_key_that_the_reader_lacks_fails(tmp_path: Path):
    """The comparison fails both ways (the check above can fail)."""
    doc = tmp_path / "d.md"
    doc.write_text("<!-- keys: costs -->\n| key | type |\n|---|---|\n| `pue` | number |\n| `nonsense` | x |\n")
    with pytest.raises(AssertionError) as e:
        _compare("d.md", marked_tables(doc, "keys")["costs"], ("pue", "spot"))
    assert "not documented ['spot']" in str(e.value) and "not accepted ['nonsense']" in str(e.value)


def test_the_documented_scenario_plans(tmp_path: Path):
    from planner import plan

    text = (DOCS / "scenarios.md").read_text(encoding="utf-8")
    block = re.search(r"## A complete scenario\n\n```yaml\n(.*?)```", text, re.S)
    assert block, "docs/scenarios.md has its complete scenario"
    path = tmp_path / "lab-box.yaml"
    path.write_text(block.group(1), encoding="utf-8")
    result = plan(path)
    assert result.scenario == "lab-box"
    assert result.total_usd <= 6000  # its budget_usd


# ----- docs/catalog.md against the catalog loader ----------------------------------------------------

COMMON_FIELDS = ("id", "source", "as_of", "notes", "verification")


def test_catalog_reference_lists_exactly_the_fields_the_loader_accepts():
    from planner.catalog.loader import CATALOG_FILES, KINDS
    from planner.catalog.platforms import GPU_SLOT_KEYS, PART_KEYS
    from planner.catalog.prices import EXEMPT_CHECKS, PRICE_ITEM_KEYS

    tables = marked_tables(DOCS / "catalog.md", "catalog")
    expected = {"files": tuple(CATALOG_FILES), "common": COMMON_FIELDS, "prices": PRICE_ITEM_KEYS,
                "exempt": EXEMPT_CHECKS, "gpu_slots": GPU_SLOT_KEYS, "parts": PART_KEYS,
                "overlay": ("remove",)}
    for kind, spec in KINDS.items():
        fields = tuple(spec.schema())
        assert set(COMMON_FIELDS) <= set(fields), kind
        expected[kind] = tuple(f for f in fields if f not in COMMON_FIELDS)
    assert sorted(tables) == sorted(expected), "docs/catalog.md: one table per list"
    for name, accepted in expected.items():
        _compare(f"docs/catalog.md table {name!r}", tables[name], accepted)


def test_catalog_reference_names_the_lists_of_each_file():
    from planner.catalog.loader import CATALOG_FILES

    rows = {}
    for line in (DOCS / "catalog.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\| `([a-z]+\.yaml)` \| (.*) \|$", line)
        if m:
            rows[m.group(1)] = tuple(re.findall(r"`(\w+)`", m.group(2)))
    assert rows == CATALOG_FILES


# ----- the README ------------------------------------------------------------------------------------

def readme() -> str:
    return README.read_text(encoding="utf-8")


def test_readme_is_a_front_page():
    assert README.stat().st_size <= 10_240


#: The quick-start commands, as .ci/run runs the second one.
QUICK_START = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/planner plan scenarios/qlora-7b-12gb.yaml",
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest",
)


def test_readme_keeps_the_quick_start_commands_ci_runs():
    text = readme()
    for command in QUICK_START:
        assert f"```bash\n{command}\n```" in text
    assert QUICK_START[1] in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_commands_are_short():
    """Every line of the README's code blocks but the quick start fits 100 characters."""
    blocks = re.findall(r"```\w*\n(.*?)```", readme(), re.S)
    long = [line for b in blocks for line in b.splitlines() if len(line) >= 100 and line not in QUICK_START]
    assert not long


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_links_resolve():
    """Every relative link names an existing file, and every #anchor a heading of that file."""
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", readme()):
        if target.startswith("http"):
            continue
        path, _, anchor = target.partition("#")
        file = ROOT / path if path else README
        if not file.exists():
            bad.append(target)
        elif anchor:
            headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)
            if anchor not in {slug(h) for h in headings}:
                bad.append(target)
    assert not bad


def test_slug_follows_github():
    assert slug("Training stacks and memory levers (`--framework`)") == "training-stacks-and-memory-levers---framework"
    assert slug("llama.cpp and Ollama (`--engine llama.cpp`)") == "llamacpp-and-ollama---engine-llamacpp"


def readme_commands() -> list[str]:
    """The complete commands of the README's question table (no '...', no file of yours)."""
    out = []
    for line in readme().splitlines():
        if line.startswith("|"):
            for cmd in re.findall(r"`(planner [^`]+)`", line):
                if "..." not in cmd and "my-" not in cmd:
                    out.append(cmd)
    return out


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_readme_commands_run(tmp_path: Path, monkeypatch):
    """Each complete command the README shows runs and succeeds (in the checkout, reports to tmp_path)."""
    import shlex

    from click.testing import CliRunner

    from planner.cli.main import main

    commands = readme_commands()
    assert any(c.startswith("planner estimate") for c in commands) and any(c.startswith("planner compare")
                                                                             for c in commands)
    monkeypatch.chdir(ROOT)
    for cmd in commands:
        args = shlex.split(cmd)[1:]
        if args[0] in ("plan", "compare"):
            args += ["--out", str(tmp_path)]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, (cmd, r.output)


def _readme_scenario() -> str:
    block = re.search(r"<!-- scenario: (\S+) -->\n```yaml\n(.*?)```", readme(), re.S)
    assert block, "the README shows one complete scenario, marked with the shipped file it is"
    return block.group(1), block.group(2)


def test_readme_scenario_is_the_shipped_file():
    name, text = _readme_scenario()
    assert yaml.safe_load(text) == yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))


def test_readme_scenario_plans_to_what_the_readme_quotes(tmp_path: Path):
    from click.testing import CliRunner

    from planner.cli.main import main

    name, _ = _readme_scenario()
    r = CliRunner().invoke(main, ["plan", str(ROOT / name), "--out", str(tmp_path), "--format", "json"])
    assert r.exit_code == 0, r.output
    quoted = re.search(r"<!-- output: .* -->\n```text\n(.*?)```", readme(), re.S)
    assert quoted, "the README quotes the plan's output"
    output = [line.rstrip() for line in r.output.splitlines()]
    for line in quoted.group(1).splitlines():
        if line.strip() and line.strip() != "...":
            assert line.rstrip() in output, line


def test_readme_overlay_changes_the_price_it_says(tmp_path: Path):
    from planner import load_catalog, plan

    block = re.search(r"<!-- overlay: (\S+) -->\n```yaml\n(.*?)```", readme(), re.S)
    assert block, "the README shows a price overlay"
    (tmp_path / block.group(1)).write_text(block.group(2), encoding="utf-8")
    name, _ = _readme_scenario()
    base = plan(ROOT / name)
    mine = plan(ROOT / name, catalog=load_catalog(tmp_path))
    assert mine.choice["gpu_id"] == base.choice["gpu_id"] == "rtx-3060-12gb"
    total = re.search(r"pays the quoted \$(\d+) for the card \(total \$([\d,.]+)\)", readme())
    assert total, "the README says what the overlay changes"
    assert mine.total_usd == float(total.group(2).replace(",", ""))
    lines = mine.to_frame("line_items").set_index("catalog_id")
    assert lines.loc["rtx-3060-12gb", "unit_price_usd"] == float(total.group(1))
    assert lines.loc["rtx-3060-12gb", "price_kind"] == "quote"


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_readme_python_example_runs(tmp_path: Path, monkeypatch):
    block = re.search(r"```python\n(.*?)```", readme(), re.S)
    assert block, "the README shows the Python API"
    code = block.group(1)
    assert "from planner import estimate, fit, plan, compare, load_catalog" in code
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    # writes go to a temporary folder, not to the checkout's reports/
    exec(compile(code.replace('out="reports"', f'out={str(tmp_path)!r}'), "README.md", "exec"), namespace)
    assert namespace["r"].fits is True
    assert round(namespace["r"].per_gpu_total_bytes / 2**30, 2) == 16.47  # the value the comment quotes
    assert namespace["most"] == 2
    assert namespace["p"].choice["gpu_id"] == "rtx-3060-12gb"
    assert (tmp_path / "qlora-7b-12gb.xlsx").is_file()
