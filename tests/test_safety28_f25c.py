"""Issue 28, hostile pass 25: the API reads what a caller's container holds and checks every number.

Covers h25b N3 (estimate(prompt_tokens=, output_tokens=) refuse numpy.ma.masked, numpy.timedelta64,
numpy.datetime64 and numpy.bool_ by their type, as the other numeric keywords do, never numpy's MaskError or
a count of 512 or 1), N1 (the scenario caps on workloads, extras and choice lists, and the catalog-list cap,
counted on the items a list or tuple holds, not on what a subclass's ``__len__`` says), N2 (a mapping read by
``dict.items`` of its base class, so a key a subclass's ``keys()``/``__iter__`` hide is still refused as
unknown) and M7 (a path keyword given a folder names the keyword and says what file to give).
"""
from __future__ import annotations

import numpy as np
import pytest

from planner import estimate
from planner.core.errors import InputError

BASE = dict(model="llama-2-7b", task="infer", weights="fp16", context=2048, gpu="rtx-4090")


@pytest.mark.parametrize("keyword", ["prompt_tokens", "output_tokens"])
@pytest.mark.parametrize("value, shown", [(np.ma.masked, "MaskedConstant"), (np.timedelta64(512, "ns"), "timedelta64"),
                                          (np.True_, "bool"), (np.datetime64(512, "s"), "datetime64")])
def test_token_counts_refuse_numpy_non_numbers(keyword, value, shown):
    with pytest.raises(InputError) as caught:
        estimate(**BASE, **{keyword: value})
    message = str(caught.value)
    assert message.startswith(f"{keyword}: ")
    assert f"must be a whole number of tokens from 1 to 16,777,216, not {shown}." in message


@pytest.mark.parametrize("keyword", ["prompt_tokens", "output_tokens"])
def test_token_counts_still_take_numpy_integers(keyword):
    result = estimate(**BASE, **{keyword: np.int64(300)})
    assert getattr(result.speed, keyword) == 300
