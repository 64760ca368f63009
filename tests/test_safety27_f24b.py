"""Issue 28, hostile pass 24: findings of report h24b fixed on branch f24b.

- N1: ``fit()`` given a numpy array of more than one element (or an object whose ``__eq__`` raises) as a
  target keyword (``context=``, ``micro_batch=``, ``gpu_layers=`` ...) raises an OptionError naming the keyword
  and the type, not numpy's "truth value ... ambiguous" ValueError or the object's own exception: a target is
  compared with 'max' only when it is a text. ``task=`` given an array or a list is refused by its type (as
  ``estimate()`` refuses it), not reported as a task mismatch.
- M2: a one-element array (``np.array(['max'])``, ``np.array([['max']])``), a list (``['max']``) and bytes
  (``b'max'``) are no 'max': refused at the keyword by their type. With no target 'max', a target below the
  least it takes (``context=0``, ``-1``; ``--context 0``) or a fraction is named at its keyword instead of the
  generic "needs exactly one ... 'max'" line, which is kept for a whole number in range.
- N2: ``load_catalog(base=DIR)`` naming a missing folder, or a file, carries the path in ``file=``, which every
  output escapes (ESC, BEL, LF, U+202E as ``\\x1b`` ...), as ``overlay=`` does since pass 22; a file is "a
  file, not a directory", a path under a file "no such catalog directory".
- M3: ``compare(tokens_per_month=...)``: a list item, mapping value or bare value that is neither a text nor a
  number (an array, bytes, an object whose ``__str__`` writes 'NAME=1M') is refused naming the item
  (``tokens_per_month[0]``) or key and its type, not split at '=' in the text ``str()`` makes of it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.errors import CatalogError, InputError, UsageError

ROOT = Path(__file__).resolve().parent.parent
SERVE16 = ROOT / "scenarios" / "serve-7b-2k-16users.yaml"  # one workload, chat-7b-16users


@pytest.fixture(scope="module")
def catalog():
    from planner import load_catalog

    return load_catalog()


class RaisingEq:
    """An object whose comparisons raise: fit must never compare it."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("boom eq")

    def __ne__(self, other: object) -> bool:
        raise RuntimeError("boom ne")

    def __bool__(self) -> bool:
        raise RuntimeError("boom bool")

    __hash__ = object.__hash__


def _fit_error(catalog, **kw: object) -> InputError:
    from planner import fit

    args = {"model": "llama-2-7b", "task": "infer", "gpu": "rtx-4090", "catalog": catalog, **kw}
    with pytest.raises(InputError) as caught:
        fit(**args)
    return caught.value


# ----- N1 and M2: fit()'s targets -------------------------------------------------------------------

ODD = "must be a whole number or 'max', not {}"


@pytest.mark.parametrize(("kw", "key", "shown"), [
    ({"context": np.array([1, 2])}, "context", "ndarray"),
    ({"context": np.array(["max", "x"])}, "context", "ndarray"),
    ({"context": "max", "micro_batch": np.array([1, 2])}, "micro_batch", "ndarray"),
    ({"context": "max", "gpu_layers": np.array([1, 2])}, "gpu_layers", "ndarray"),
    ({"context": "max", "concurrency": np.array([4])}, "concurrency", "ndarray"),
    ({"context": RaisingEq()}, "context", "RaisingEq"),
    ({"context": "max", "micro_batch": RaisingEq()}, "micro_batch", "RaisingEq"),
    # M2: one element holding 'max' is still an array; a list and bytes are no text
    ({"context": np.array(["max"])}, "context", "ndarray"),
    ({"context": np.array([["max"]])}, "context", "ndarray"),
    ({"context": ["max"]}, "context", "a list"),
    ({"context": ("max",)}, "context", "a list"),
    ({"context": b"max"}, "context", "bytes"),
])
def test_n1_m2_a_target_of_another_type_is_named_at_its_keyword(catalog, kw: dict, key: str, shown: str) -> None:
    err = _fit_error(catalog, **kw)
    # before: numpy's ValueError (not an InputError), RuntimeError('boom eq'), or 'max' taken from the array
    assert type(err).__name__ == "OptionError"
    assert err.entry == key
    assert err.problem == ODD.format(shown)
    assert err.hint == f"Give {key}='max' (a str) for the largest that fits, or a whole number (an int)."


@pytest.mark.parametrize("task", [np.array(["infer", "train"]), ["infer"], RaisingEq()])
def test_n1_a_task_that_is_no_text_is_refused_by_its_type(catalog, task: object) -> None:
    from planner import estimate

    err = _fit_error(catalog, task=task, context="max")
    with pytest.raises(InputError) as caught:
        estimate(model="llama-2-7b", task=task, context=2048, catalog=catalog)
    # the same line as estimate() gives, not "context: is an option of task infer, not ['infer']"
    assert str(err) == str(caught.value)
    assert str(err).startswith("task: must be one of the choices, not ")


@pytest.mark.parametrize(("value", "problem", "hint"), [
    (0, "must be at least 1 or 'max', not 0",
     "Give context='max' for the largest that fits, or a whole number from 1."),
    (-1, "must be at least 1 or 'max', not -1",
     "Give context='max' for the largest that fits, or a whole number from 1."),
    (np.int64(0), "must be at least 1 or 'max', not 0",
     "Give context='max' for the largest that fits, or a whole number from 1."),
    (2.5, "must be a whole number or 'max', not 2.5",
     "Give context='max' for the largest that fits. Write a whole number: context=3 (rounded up) or context=2."),
])
def test_m2_with_no_max_a_value_no_count_is_named(catalog, value: object, problem: str, hint: str) -> None:
    err = _fit_error(catalog, context=value)
    assert (err.entry, err.problem, err.hint) == ("context", problem, hint)


def test_m2_gpu_layers_takes_0_so_minus_1_is_named_at_0(catalog) -> None:
    err = _fit_error(catalog, engine="llama.cpp", gpu_layers=-1)
    assert (err.entry, err.problem) == ("gpu_layers", "must be at least 0 or 'max', not -1")


def test_m2_a_count_in_range_without_max_keeps_the_one_max_line(catalog) -> None:
    from planner import fit

    with pytest.raises(UsageError) as caught:
        fit(model="llama-2-7b", task="infer", gpu="rtx-4090", context=2048, catalog=catalog)
    assert str(caught.value) == ("fit() needs exactly one of micro_batch, seq_len, context, concurrency, gpu_layers "
                                 "set to 'max'.")


def test_m2_the_command_line_names_context_0() -> None:
    r = CliRunner().invoke(main, ["fit", "--model", "llama-2-7b", "--task", "infer", "--gpu", "rtx-4090",
                                  "--context", "0"])
    assert r.exit_code == 2
    assert r.output == ("Error: --context: must be at least 1 or 'max', not 0. Give --context max for the largest "
                        "that fits, or a whole number from 1.\n")


def test_n1_a_text_max_is_still_taken(catalog) -> None:
    from planner import fit

    # np.str_ is a str: the text 'max', as a plain str is (the check refuses types, not texts)
    a = fit(model="llama-2-7b", task="infer", gpu="rtx-4090", context=np.str_("max"), catalog=catalog)
    b = fit(model="llama-2-7b", task="infer", gpu="rtx-4090", context="max", catalog=catalog)
    assert a.target == b.target == "context" and a.max_value == b.max_value and a.max_value > 1


# ----- N2: load_catalog(base=) ----------------------------------------------------------------------

HOSTILE = "nowhere\x1b]8;;http://e.vil\x07click\x1b]8;;\x07\u202eLF\nx\x1b[31m"


def _catalog_error(**kw: object) -> CatalogError:
    from planner import load_catalog

    with pytest.raises(CatalogError) as caught:
        load_catalog(**kw)
    return caught.value


def test_n2_a_missing_base_is_named_escaped(tmp_path: Path) -> None:
    path = tmp_path / HOSTILE
    err = _catalog_error(base=path)
    text = str(err)
    assert err.file == str(path) and err.problem == "no such catalog directory (base=)"
    assert not any(c in text for c in "\x1b\x07\n\u202e")  # before: all four reached the terminal
    escaped = str(tmp_path) + "/nowhere\\x1b]8;;http:/e.vil\\x07click\\x1b]8;;\\x07\\u202eLF\\nx\\x1b[31m"
    assert text.startswith(escaped + ": no such catalog directory (base=). ")
    # the same escaping as overlay= gives (pass 22)
    assert str(_catalog_error(overlay=path)).startswith(escaped + ": no such catalog directory. ")


def test_n2_a_base_that_is_a_file_says_so_escaped(tmp_path: Path) -> None:
    path = tmp_path / "cat\x1b[31m.yaml"
    path.write_text("x: 1\n", encoding="utf-8")
    err = _catalog_error(base=path)
    assert str(err) == (f"{tmp_path}/cat\\x1b[31m.yaml: is a file, not a directory (base=). Give the folder that "
                        f"holds it: base={str(tmp_path)!r}.")
    under = _catalog_error(base=path / "sub")
    assert under.problem == "no such catalog directory (base=)" and "\x1b" not in str(under)


def test_n2_the_one_line_form_is_escaped_too(tmp_path: Path) -> None:
    line = _catalog_error(base=tmp_path / HOSTILE).one_line()  # what the command line prints for an InputError
    assert not any(c in line for c in "\x1b\x07\n\u202e") and "\\u202e" in line


# ----- M3: compare(tokens_per_month=) items ---------------------------------------------------------

def _volume_error(tmp_path: Path, tokens: object) -> InputError:
    from planner import compare

    with pytest.raises(InputError) as caught:
        compare(SERVE16, out=tmp_path / "o", tokens_per_month=tokens)
    return caught.value


class StrNamesIt:
    """An object whose text is a valid NAME=COUNT: before, taken through str()."""

    def __str__(self) -> str:
        return "chat-7b-16users=1M"


@pytest.mark.parametrize(("tokens", "entry", "shown", "what"), [
    ([np.array(["chat-7b-16users=1M"])], "tokens_per_month[0]", "of type ndarray", "a text"),
    ([b"chat-7b-16users=1M"], "tokens_per_month[0]", "b'chat-7b-16users=1M' (bytes)", "a text"),
    ([StrNamesIt()], "tokens_per_month[0]", "of type StrNamesIt", "a text"),
    (["chat-7b-16users=1M", None], "tokens_per_month[1]", "None (NoneType)", "a text"),
    ({"chat-7b-16users": np.array([1e8])}, "tokens_per_month['chat-7b-16users']", "of type ndarray", "a count"),
    ({"chat-7b-16users": b"1M"}, "tokens_per_month['chat-7b-16users']", "b'1M' (bytes)", "a count"),
    (np.array(["200M"]), "tokens_per_month", "of type ndarray", "a count"),
])
def test_m3_an_item_no_text_or_number_is_named_with_its_type(tmp_path: Path, tokens: object, entry: str, shown: str,
                                                             what: str) -> None:
    err = _volume_error(tmp_path, tokens)
    # before: "1M']" is not a token count (a fragment of numpy's repr), or StrNamesIt taken as 1M
    assert (err.entry, err.problem) == (entry, f"is {shown}, not {what}")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_m3_texts_and_numbers_are_still_taken(tmp_path: Path) -> None:
    from planner import compare

    for i, tokens in enumerate((["chat-7b-16users=1M"], [1_000_000], {"chat-7b-16users": np.int64(1_000_000)})):
        r = compare(SERVE16, tokens_per_month=tokens)
        assert r is not None, (i, tokens)
