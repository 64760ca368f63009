"""scenarios/README.md's table says what the tool says with the shipped catalog.

Each row of the "| file | seed-article figure | result with the shipped catalog |" table is checked
against a plan of its scenario: the first "N x GPU on PLATFORM" it writes is the plan's choice (with
"K nodes of" before it when the plan buys K > 1 nodes), and its first "(R GiB RAM" is the chosen RAM
per node. The infeasible row's per-GPU need and each printed suggestion are checked against the
solver's NoFeasiblePlan. The shipped example workbook (reports/examples/lab-workstation-mix.xlsx,
docs/planning.md "Example report") must show the machine its scenario plans to now.
"""

from __future__ import annotations

import re
from pathlib import Path

import openpyxl
import pytest

from planner import load_catalog, plan
from planner.solve.solver import NoFeasiblePlan

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
README = SCENARIOS / "README.md"
EXAMPLE = ROOT / "reports" / "examples" / "lab-workstation-mix.xlsx"
HEADER = "| file | seed-article figure | result with the shipped catalog |"
GiB = 2**30

# "2 nodes of 8 x h200-sxm on hgx-h200-8gpu", "1 x rtx-4090 on am5-desktop"
MACHINE = re.compile(r"(?:(\d+) nodes of )?(\d+) x ([a-z0-9][\w.-]*) on ([a-z0-9][\w.-]*)")
RAM = re.compile(r"\(([\d,]+) GiB RAM")


def table_rows(text: str) -> dict[str, str]:
    """{scenario file name: result cell} of the README's table."""
    lines = text.splitlines()
    start = lines.index(HEADER)
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 3, f"a row of the scenarios table has {len(cells)} cells, not 3: {line}"
        m = re.fullmatch(r"`([\w.-]+\.yaml)`", cells[0])
        assert m, f"the first cell names a scenario file in backticks: {cells[0]}"
        rows[m.group(1)] = cells[2]
    return rows


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def plans(catalog):
    """{file name: PlanResult, or the NoFeasiblePlan it raised} of every shipped scenario."""
    got = {}
    for path in sorted(SCENARIOS.glob("*.yaml")):
        try:
            got[path.name] = plan(path, catalog=catalog)
        except NoFeasiblePlan as e:
            got[path.name] = e
    return got


def check_machine_row(cell: str, choice: dict) -> None:
    m = MACHINE.search(cell)
    assert m, f"the row names no 'N x GPU on PLATFORM': {cell}"
    nodes = int(choice["nodes"])
    written = (int(m.group(1) or 1), int(m.group(2)), m.group(3), m.group(4))
    planned = (nodes, int(choice["cards_per_node"]), choice["gpu_id"], choice["platform_id"])
    assert written == planned, f"the row says {m.group(0)!r}; the tool plans {nodes} node(s) of " \
                               f"{planned[1]} x {planned[2]} on {planned[3]}"
    r = RAM.search(cell)
    if r:  # the rows that give RAM give the chosen RAM per node
        assert int(r.group(1).replace(",", "")) * GiB == pytest.approx(choice["ram_bytes"]), \
            f"the row says {r.group(1)} GiB RAM; the tool plans {choice['ram_bytes'] / GiB:g} GiB"


def suggestion_phrases(suggestion: str) -> list[str]:
    """What the README row must say for one of the solver's 'What would fit' lines."""
    if m := re.match(r"ZeRO-3 across >= (\d+) GPUs of (\S+) \(.*?\): ([\d.]+) GiB per GPU at \d+", suggestion):
        n, gpu, gib = m.groups()
        return [f"ZeRO-3 across {n} or more {gpu}", f"{gib} GiB per GPU at {n}"]
    if m := re.match(r"QLoRA \(method: qlora\) on (\d+) x (\S+) \(.*?\): ([\d.]+) GiB per GPU", suggestion):
        n, gpu, gib = m.groups()
        return [f"QLoRA on {n} x {gpu}", f"{gib} GiB per GPU"]
    if m := re.match(r"(?:framework: fsdp|ZeRO-3) with offload_params.*? on (\d+) x (\S+) \(.*?\): ([\d.]+) GiB per GPU",
                     suggestion):
        n, gpu, gib = m.groups()
        return [f"parameters offloaded to host RAM on {n} x {gpu}", f"{gib} GiB per GPU"]
    if m := re.match(r"seq_len: (\d+) .*? on (\d+) x (\S+) \(.*?\): ([\d.]+) GiB per GPU", suggestion):
        x, n, gpu, gib = m.groups()
        return [f"seq_len {x} on {n} x {gpu}", f"{gib} GiB per GPU"]
    if m := re.match(r"a larger card as written: ([\w.-]+),", suggestion):
        return ["a larger card", m.group(1)]
    raise AssertionError(f"a suggestion this test does not know; write it into scenarios/README.md's "
                         f"table and teach suggestion_phrases its wording: {suggestion}")


def check_infeasible_row(cell: str, err: NoFeasiblePlan) -> None:
    assert cell.startswith("**infeasible** (exit 1)"), cell
    need = re.search(r"needs ([\d.]+) GiB per GPU", str(err))
    assert need, str(err)
    written = re.search(r"([\d.]+) GiB per GPU needed", cell)
    assert written and written.group(1) == need.group(1), \
        f"the row says {written and written.group(0)!r}; the tool says {need.group(0)!r}"
    for s in err.suggestions:
        for phrase in suggestion_phrases(s):
            assert phrase in cell, f"the row does not say {phrase!r} (the tool suggests: {s})"
    if "offload" in cell:
        assert any("offload" in s for s in err.suggestions), \
            f"the row mentions offload; the tool suggests none: {err.suggestions}"


def check_table(text: str, plans: dict) -> None:
    rows = table_rows(text)
    assert sorted(rows) == sorted(plans), "the table has one row per shipped scenario file"
    for name, cell in rows.items():
        got = plans[name]
        try:
            if isinstance(got, NoFeasiblePlan):
                check_infeasible_row(cell, got)
            else:
                assert "infeasible" not in cell, f"the tool plans {got.choice['gpu_id']}"
                check_machine_row(cell, got.choice)
        except AssertionError as e:
            raise AssertionError(f"scenarios/README.md, row {name}: {e}") from None


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_table_says_what_the_tool_plans(plans):
    check_table(README.read_text(), plans)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_check_fails_on_a_stale_row(plans):
    """The check above catches a wrong GPU, count, platform, RAM, node count or infeasible figure."""
    text = README.read_text()
    rows = table_rows(text)
    lab = rows["lab-workstation-mix.yaml"]
    c = plans["lab-workstation-mix.yaml"].choice
    right = f"{c['cards_per_node']} x {c['gpu_id']} on {c['platform_id']}"
    assert right in lab
    for wrong in (f"{c['cards_per_node']} x rtx-a6000 on {c['platform_id']}",
                  f"{c['cards_per_node'] + 1} x {c['gpu_id']} on {c['platform_id']}",
                  f"{c['cards_per_node']} x {c['gpu_id']} on xeon-w2400-not-this-one",
                  f"2 nodes of {right}"):
        with pytest.raises(AssertionError) as e:
            check_table(text.replace(lab, lab.replace(right, wrong, 1)), plans)
        assert str(e.value).startswith("scenarios/README.md, row lab-workstation-mix.yaml: the row says")
    ram = RAM.search(lab).group(0)
    with pytest.raises(AssertionError) as e:
        check_table(text.replace(lab, lab.replace(ram, "(1 GiB RAM", 1)), plans)
    assert str(e.value).startswith("scenarios/README.md, row lab-workstation-mix.yaml: the row says 1 GiB RAM")
    zero2 = rows["ft-13b-2x24gb-zero2.yaml"]
    with pytest.raises(AssertionError) as e:
        check_table(text.replace(zero2, zero2.replace(" GiB per GPU needed", "0 GiB per GPU needed", 1)), plans)
    assert str(e.value).startswith("scenarios/README.md, row ft-13b-2x24gb-zero2.yaml: the row says")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_example_workbook_shows_the_planned_machine(plans, catalog):
    """Summary's Configuration column and Quote's GPU line are the machine the scenario plans to now
    (regenerate: docs/planning.md, 'Example report')."""
    c = plans[EXAMPLE.stem + ".yaml"].choice
    machine = f"{c['cards_per_node']} x {c['gpu_id']} on {c['platform_id']}"
    if int(c["nodes"]) > 1:
        machine = f"{c['nodes']} nodes of {machine}"
    wb = openpyxl.load_workbook(EXAMPLE)
    summary = wb["Summary"]
    assert summary["B2"].value == EXAMPLE.stem
    header = next(cell for row in summary.iter_rows() for cell in row if cell.value == "Configuration")
    configs = []
    for r in range(header.row + 1, summary.max_row + 1):
        v = summary.cell(row=r, column=header.column).value
        if v is None:
            break
        configs.append(v)
    assert configs, "the Summary sheet lists a configuration per workload"
    stale = [v for v in configs if not v.startswith(machine)]
    assert not stale, f"{EXAMPLE.name} shows {stale[0]!r}; the tool plans {machine}: regenerate it"
    ram = RAM.search(configs[0])
    assert ram and int(ram.group(1).replace(",", "")) * GiB == pytest.approx(c["ram_bytes"])

    quote = wb["Quote"]
    head = next(cell for row in quote.iter_rows() for cell in row if cell.value == "Category")
    gpu_lines = [(quote.cell(row=r, column=head.column - 1).value, quote.cell(row=r, column=head.column + 2).value)
                 for r in range(head.row + 1, quote.max_row + 1)
                 if quote.cell(row=r, column=head.column).value == "gpu"]
    name = catalog.gpu(c["gpu_id"]).name
    assert [(d.startswith(name), q) for d, q in gpu_lines] == [(True, int(c["cards_per_node"]) * int(c["nodes"]))], \
        f"{EXAMPLE.name}'s Quote has GPU lines {gpu_lines}; the tool plans {machine} ({name})"
