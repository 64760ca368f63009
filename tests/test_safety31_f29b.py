"""Issue 28, hostile pass 29: a Catalog object's price ``exempt``, and import-skypilot's printed hints.

Covers h29b N3 (a Catalog given to the API whose Price ``exempt`` is no tuple of (check name, reason)
pairs -- 'stale', 5, None, a mapping, (('stale',),), (('stale', 'x', 'y'),), a check named twice -- on any
priced entry, or set in place with ``object.__setattr__``: one CatalogError naming the entry and field, not a
bare ValueError / TypeError).
"""

from __future__ import annotations

import dataclasses

import pytest

from planner import load_catalog
from planner.api.inputs import check_catalog_object
from planner.core.errors import CatalogError


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
