"""Issue 28, hostile pass 29: a Catalog object's price ``exempt``, and import-skypilot's printed hints.

Covers h29b N3 (a Catalog given to the API whose Price ``exempt`` is no tuple of (check name, reason)
pairs -- 'stale', 5, None, a mapping, (('stale',),), (('stale', 'x', 'y'),), a check named twice -- on any
priced entry, or set in place with ``object.__setattr__``: one CatalogError naming the entry and field, not a
bare ValueError / TypeError); M3 (import-skypilot's closing hint "use it with --catalog DIR", and
--catalog given twice, print each folder shell-quoted: '/tmp/o;rm x' as '/tmp/o;rm x' in quotes); M2 (a
5,000-character InstanceType left out is clipped in the summary, in the entry's name and the row's pointer).
"""

from __future__ import annotations

import dataclasses
import shlex

import pytest

from planner import load_catalog
from planner.api.inputs import check_catalog_object
from planner.core.errors import CatalogError

_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"
_ROW = 'g5.xlarge,A10G,1,4,16,"{}",1.006,0.4,us-east-1,us-east-1a'


@pytest.fixture(scope="module")
def shipped():
    return load_catalog()


def _first_priced(catalog, attr):
    entries = getattr(catalog, attr)
    i = next(k for k, e in enumerate(entries) if getattr(e, "prices", None))
    return entries, i


def _with_exempt(catalog, attr, value):
    """``catalog`` with the first priced entry of ``attr``'s first price's exempt set to ``value``."""
    entries, i = _first_priced(catalog, attr)
    e = entries[i]
    e2 = dataclasses.replace(e, prices=(dataclasses.replace(e.prices[0], exempt=value),) + tuple(e.prices[1:]))
    return dataclasses.replace(catalog, **{attr: entries[:i] + (e2,) + entries[i + 1:]}), f"{attr}[{i}] ({e.id})"


@pytest.mark.parametrize("attr", ["gpus", "dimms", "platforms", "nics", "switches"])
@pytest.mark.parametrize("value", ["stale", 5, None, {"stale": "x"}, (("stale",),), (("stale", "x", "y"),)])
def test_exempt_that_is_no_pairs_is_refused_at_the_field(shipped, attr, value):
    catalog, where = _with_exempt(shipped, attr, value)
    with pytest.raises(CatalogError) as info:
        check_catalog_object(catalog)
    text = str(info.value)
    assert text.startswith(f"the Catalog given: {where}.prices[0].exempt: must be a tuple of (check name, reason) pairs")
    assert ascii(value) in text and "\n" not in text


def test_exempt_check_name_that_is_no_text_or_repeated(shipped):
    catalog, where = _with_exempt(shipped, "gpus", ((1, "why"),))
    with pytest.raises(CatalogError) as info:
        check_catalog_object(catalog)
    assert str(info.value).startswith(f"the Catalog given: {where}.prices[0].exempt: check name 1 is not a name")
    catalog, where = _with_exempt(shipped, "gpus", (("stale", "a"), ("stale", "b")))
    with pytest.raises(CatalogError) as info:
        check_catalog_object(catalog)
    assert str(info.value).startswith(f"the Catalog given: {where}.prices[0].exempt: names the check 'stale' twice")


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_exempt_as_loader_builds_it_is_taken(shipped):
    # A stated exception, a tuple of pairs or a list of lists: the reader builds the same tuple of pairs.
    for value in ((("stale", "why it stands"),), [["stale", "why it stands"]]):
        catalog, _ = _with_exempt(shipped, "gpus", value)
        entries, i = _first_priced(catalog, "gpus")
        out = check_catalog_object(catalog)
        assert out.gpus[i].prices[0].exempt == (("stale", "why it stands"),)


def test_exempt_changed_in_place_is_refused():
    catalog = load_catalog()
    entries, i = _first_priced(catalog, "gpus")
    object.__setattr__(entries[i].prices[0], "exempt", "stale")
    with pytest.raises(CatalogError) as info:
        check_catalog_object(catalog)
    assert f"gpus[{i}] ({entries[i].id}).prices[0].exempt: must be a tuple" in str(info.value)


def _vms(tmp_path, *rows):
    (tmp_path / "aws").mkdir()
    path = tmp_path / "aws" / "vms.csv"
    path.write_text("\n".join((_HEADER, *rows)) + "\n")
    return path


def _invoke(*args):
    from click.testing import CliRunner

    from planner.cli.main import main

    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("name", ["o v", "o'q", "o;rm x", "plain"])
def test_import_hint_quotes_the_folder(tmp_path, name):
    out = tmp_path / name
    r = _invoke("catalog", "import-skypilot", str(_vms(tmp_path, _ROW)), "--out", str(out))
    assert r.exit_code == 0, r.output
    last = r.output.strip().splitlines()[-1]  # the command on a line of its own, never wrapped (h37b m9)
    assert r.output.strip().splitlines()[-2].endswith("; use it with")
    assert last == f"  --catalog {shlex.quote(str(out))}"
    # pasted into a shell, the hint is the option and the one folder, nothing after it
    assert shlex.split(last) == ["--catalog", str(out)]
    assert (name == "plain") == (f"--catalog {out}" in last)  # quoted only where the path needs it


def test_catalog_given_twice_shows_each_folder_quoted(tmp_path):
    a, b = tmp_path / "a;b", tmp_path / "c"
    r = _invoke("catalog", "list", "gpus", "--catalog", str(a), "--catalog", str(b))
    assert r.exit_code == 2
    assert f"given 2 times (--catalog {shlex.quote(str(a))} --catalog {b});" in r.output


def test_long_instance_type_is_clipped_in_the_summary(tmp_path):
    long = "g" + "x" * 5000
    row = _ROW.replace("g5.xlarge", long)
    r = _invoke("catalog", "import-skypilot", str(_vms(tmp_path, _ROW, row)), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())  # the summary is wrapped at the terminal's width
    # each echo: the first 40 characters and the length (the entry's id is 'aws-' + the type: 5,005); the
    # reason names the row's field, not its id (h32b M1), the row named beside it
    assert "the catalog would refuse its id: 'aws-" + long[:36] + "...' is 5,005 characters long" in text
    assert "(line 3: " + long[:40] + "... (5,001 characters))" in text
    assert "x" * 100 not in r.output and len(r.output) < 1500


def test_shell_word_quotes_only_what_the_shell_reads():
    from planner.core.names import shell_word

    for text in ("café/o-1_2.x", "cafe\u0301"):  # letters and marks of any script are read as themselves
        assert shell_word(text) == text
    for text in ("/tmp/o;rm x", "o v", "o'q", "a$b", "~x", ""):
        assert shell_word(text) == shlex.quote(text) != text
        assert shlex.split(shell_word(text)) == [text] if text else shlex.split(shell_word(text)) == [""]
