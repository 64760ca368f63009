"""YAML reading: merge keys follow YAML's merge rule; written duplicates are refused."""

from __future__ import annotations

import pytest

from planner.core.yamlio import YamlProblem, parse_yaml

ANCHORED = """\
base: &card {id: rtx-5090, price_usd: 1999, tdp_w: 575}
gpus:
- <<: *card
  id: rtx-5090-oc
- <<: [*card, {price_usd: 2499, cooling: blower}]
  tdp_w: 600
"""


def test_a_written_key_overrides_a_merged_one():
    # yaml.org/type/merge.html: keys written in the mapping override merged ones; among several merged
    # mappings the first given wins (price 1999 from *card over 2499).
    gpus = parse_yaml(ANCHORED)["gpus"]
    assert gpus[0] == {"id": "rtx-5090-oc", "price_usd": 1999, "tdp_w": 575}
    assert gpus[1] == {"id": "rtx-5090", "price_usd": 1999, "tdp_w": 600, "cooling": "blower"}


def test_two_written_keys_are_a_duplicate_even_beside_a_merge():
    with pytest.raises(YamlProblem) as info:
        parse_yaml("b: &q {x: 1}\nc:\n  <<: *q\n  y: 1\n  y: 2\n")
    msg = str(info.value)
    assert msg.startswith("duplicate key 'y' (first on line 4)")
