"""What the API functions (and the commands over them) read the same way: keyword arguments,
the catalog, a catalog GPU, and a workload from a file, a mapping or keyword arguments.

Every reader here raises the error the command line reports for the same input: an unknown
keyword is :class:`planner.core.errors.UnknownKeywordError` (a TypeError too) with its close
matches; a value is checked by the workload reader (planner.workload.spec, through
planner.workload.inputs) and refused as :class:`planner.workload.inputs.OptionError`, which names
the keyword (``micro_batch``; the command line prints the option, ``--micro-batch``), or at the file's key as
:class:`planner.core.errors.ScenarioError`.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.core.errors import InputError, UnknownKeywordError, UsageError, did_you_mean
from planner.core.names import clip_text, escape_unsafe

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog.gpus import Gpu
    from planner.catalog.loader import Catalog
    from planner.workload.spec import Workload

#: Default fraction of a GPU's CUDA total kept free in a fit check (``--headroom``, a scenario's vram_headroom).
DEFAULT_HEADROOM = 0.05
#: Largest headroom accepted (``--headroom`` takes 0 to 0.95).
MAX_HEADROOM = 0.95


def workload_keys() -> tuple[str, ...]:
    """Every workload key a file may hold, which the API takes as keyword arguments: the command
    line's workload options (``--micro-batch`` is ``micro_batch``) and the keys that only files give
    (``checkpoint_dtype``, ``pin_memory``, ...; planner.workload.spec)."""
    from planner.workload.options import COMMON_KEYS, HOST_KEYS, INFER_KEYS, TRAIN_KEYS

    return tuple(dict.fromkeys(COMMON_KEYS + TRAIN_KEYS + INFER_KEYS + HOST_KEYS + ("gpus",)))


def check_positional(function: str, extra: tuple, takes: str, example: str) -> None:
    """Refuse positional arguments past those ``function`` takes (``takes``: 'the scenario', 'none'), as
    Python's own TypeError would, but as an InputError whose hint shows the keyword form (``example``).

    Raises:
        UnknownKeywordError: ``extra`` is not empty (an InputError and a TypeError).
    """
    if extra:
        raise UnknownKeywordError(f"{function}() got {len(extra)} positional argument(s) more than it takes "
                                  f"({takes})", hint=f"Give the others as keywords, e.g. {example}; see "
                                                     f"help(planner.{function}).")


#: Request-timing keywords the API functions other than estimate() do not take: why not (after "got an
#: unexpected keyword argument 'NAME': "), and what to do instead. fit() times the request at its answer
#: (planner.api.inputs.card_speed: tokens_per_request output tokens, else 256 at most half the context, after a
#: prompt of the rest of the context); a latency target is a scenario workload's slo: block (planner.solve.slo),
#: which plan() meets by choosing the hardware. Without this the close match of 'prompt_tokens' is the unrelated
#: 'document_tokens' (h16b minor f).
_FIT_TIMES = ("fit() takes no request to time: it times one at its answer (inference), of tokens_per_request output "
              "tokens (else 256, at most half the context) after a prompt of the rest of the context",
              "Shape that request with context= and tokens_per_request=, or time a request of your own with "
              "planner.estimate(gpu=..., task='infer', prompt_tokens=..., output_tokens=...).")
_TARGET = ("a latency target belongs to a scenario workload's slo: block, which planner.plan() meets by choosing the "
           "hardware; {function}() times a request on one card (with gpu=) and returns its ttft_s and tpot_s",
           "Read result.speed.ttft_s and result.speed.tpot_s, or write slo: {ttft_s: ..., tpot_s: ...} in a "
           "scenario's workload and plan it.")
NOT_TAKEN = {
    f: {**{k: (_TARGET[0].format(function=f), _TARGET[1]) for k in ("ttft_s", "tpot_s", "slo")},
        **({k: _FIT_TIMES for k in ("prompt_tokens", "output_tokens", "input_tokens")} if f == "fit" else {})}
    for f in ("fit", "estimate")
}


def check_keywords(function: str, given: Iterable[str], allowed: Iterable[str]) -> None:
    """Refuse a keyword argument ``function`` does not take, naming its close matches.

    Another tool's name for one of the keywords (``batch_size``, ``per_device_train_batch_size``)
    gets the planner's keyword as the hint (planner.workload.othernames), before close matches; a
    keyword of another function that ``function`` has no use for (:data:`NOT_TAKEN`: ``fit(prompt_tokens=)``)
    gets why not and what to do instead.

    Raises:
        UnknownKeywordError: the first unknown name (an InputError and a TypeError).
    """
    allowed = list(allowed)
    for name in given:
        if isinstance(name, str) and type(name) is not str:
            if plain_text(name) in allowed:
                # a str subclass whose __eq__ or __hash__ keeps it from matching its own text (h27b N1): the keyword
                # it spells, given twice (estimate(**{'context': 1, H('context'): 2})) or once in a form Python
                # does not match to the keyword
                raise UnknownKeywordError(f"{function}() got keyword argument {plain_text(name)!r} as a str "
                                          f"subclass ({type(name).__name__}) that Python does not match to the "
                                          "keyword (its __eq__ or __hash__ differ from a str's)",
                                          hint="Give keyword names as plain str; each keyword once.")
            name = plain_text(name)  # an unknown one named by its text, never through its own methods (h31b N3)
        if name not in allowed:
            why = NOT_TAKEN.get(function, {}).get(name)
            if why is not None:
                raise UnknownKeywordError(f"{function}() got an unexpected keyword argument {name!r}: {why[0]}",
                                          hint=why[1])
            from planner.workload.othernames import keyword_hint  # another tool's name: batch_size

            hint = keyword_hint(name, set(allowed).__contains__) or did_you_mean(name, allowed)
            if hint is None or not hint.startswith(("Did you mean", repr(name))):
                hint = f"See help(planner.{function}) for the keywords it takes."
            if name == "out":  # not a misspelt option: the function writes no files ('lora_dropout' is no hint)
                raise UnknownKeywordError(f"{function}() got an unexpected keyword argument 'out': {function}() writes "
                                          "no files, it returns its result",
                                          hint="Save the result yourself (json.dump(result.to_dict(), f)); "
                                               "planner.plan() and planner.compare() take out= for report files.")
            # a runaway name echoed as its first 80 characters (h24b M6)
            raise UnknownKeywordError(f"{function}() got an unexpected keyword argument {clip_text(name)!r}",
                                      hint=hint)


#: The most bits of a whole number an argument may carry: 2**1100 is about 1.4e331, past the range of
#: every field (the largest, ``dataset_tokens``, ends at 1e16) and of a float (1.8e308), and far below
#: Python's 4,300-digit limit on writing an int as text, which a message about it would hit.
MAX_ARGUMENT_BITS = 1100


#: The workload options that take a number: their own checks (planner.workload) say the range, a huge
#: whole number included ("must be at most 65536, not a number of about 5001 digits").
NUMBER_OPTIONS = frozenset((
    "hours_per_month", "tokens_per_month", "micro_batch", "seq_len", "grad_accum", "gpus", "gpus_per_node", "tp",
    "zero", "lora_rank", "lora_dropout", "dataset_tokens", "epochs", "loss_chunks", "group_size", "context",
    "concurrency", "gpu_memory_utilization", "max_num_batched_tokens", "max_num_seqs", "sliding_window",
    "tokens_per_request", "requests_per_hour", "gpu_layers", "max_loras", "max_lora_rank", "max_cpu_loras",
    "dataloader_workers", "dataset_size", "document_tokens", "prompt_tokens", "output_tokens", "headroom"))

#: The deepest nesting of mappings and lists an argument may hold: a scenario is four levels deep (scenario,
#: workloads, a workload, its variants or options); past Python's recursion limit (1,000) a deeper one would end
#: in RecursionError rather than one line.
MAX_ARGUMENT_DEPTH = 100


def _other_sequence(value: Any) -> bool:
    """A caller's ``collections.abc.Sequence`` that is no list or tuple (a UserList, a class of its own), read as the
    list it holds; never a text, bytes, a memoryview or a range (each refused, or taken, as itself)."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray, memoryview, range, list,
                                                                  tuple))


def _held(value: Any, entry: str) -> list[Any]:
    """What a caller's mapping (its (key, value) pairs) or list holds (planner.core.held), read once.

    Raises:
        InputError: naming ``entry``, when the container's own ``items()``, ``__iter__``, ``__getitem__`` or
            ``__len__`` raises any Exception: 'could not be read: RuntimeError: boom' (h28b N1).
    """
    from planner.core.errors import unreadable_problem
    from planner.core.held import held_items, held_list

    try:
        if isinstance(value, Mapping):
            return held_items(value)
        return held_list(value) if isinstance(value, (list, tuple)) else list(value)
    except InputError:
        raise
    except Exception as exc:
        kind = "mapping" if isinstance(value, Mapping) else "list"
        raise InputError(unreadable_problem(exc, f"a {kind}"),  # the exception's text, clipped and escaped
                         entry=entry or None, hint=f"Pass a plain {'dict' if kind == 'mapping' else 'list'} "
                         "(its own items(), __iter__ or __getitem__ raised).") from None


def check_plain_values(value: Any, entry: str, _within: tuple[int, ...] = ()) -> None:
    """Refuse, in ``value`` and every key and value inside it (mappings, lists, tuples), a text holding a
    lone surrogate (a file read as UTF-8 cannot hold one, and no report can write it: the YAML reader
    refuses the same), a whole number of more than :data:`MAX_ARGUMENT_BITS` bits, a mapping or list that
    holds itself (``l.append(l)``: the YAML reader refuses a recursive alias the same way) and one nested more
    than :data:`MAX_ARGUMENT_DEPTH` deep. ``_within``: the ids of the containers around ``value``.

    Raises:
        InputError: naming the entry (``scenario.workloads[0].name``) of the first such value.
    """
    if isinstance(value, (Mapping, list, tuple)) or _other_sequence(value):
        if id(value) in _within:
            raise InputError(f"holds itself (a {type(value).__name__} inside itself), so it never ends", entry=entry,
                             hint="Pass a mapping or list that does not contain itself (copy.deepcopy keeps the loop).")
        if len(_within) >= MAX_ARGUMENT_DEPTH:
            raise InputError(f"is nested more than {MAX_ARGUMENT_DEPTH} levels deep; a scenario is four", entry=entry,
                             hint="Pass the scenario's mapping itself.")
        _within = (*_within, id(value))
    if isinstance(value, str):
        for i, ch in enumerate(plain_text(value)):  # a str subclass's text, never its own __iter__ (h31b N3)
            if "\ud800" <= ch <= "\udfff":
                raise InputError(f"holds a lone surrogate ({ch!a}, character {i + 1}), which is not a character",
                                 entry=entry, hint="Pass the text as a str of real characters (decoded as UTF-8).")
    elif isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > MAX_ARGUMENT_BITS:
            digits = int(value.bit_length() * 0.30103)
            raise InputError(f"is a whole number of about {digits:,} digits, beyond every field's range",
                             entry=entry, hint="Give the real value.")
    elif isinstance(value, Mapping):
        for k, v in _held(value, entry):  # what a dict subclass stores, not what its keys() or items() show
            check_plain_values(k, f"{entry} (a key)", _within)
            check_plain_values(v, _key_entry(entry, k), _within)
    elif isinstance(value, (list, tuple)) or _other_sequence(value):
        for i, v in enumerate(_held(value, entry)):
            check_plain_values(v, f"{entry}[{i}]", _within)


def plain_text(value: Any) -> Any:
    """``value`` as the plain ``str`` of its characters when it is an instance of a ``str`` subclass (a rich-text
    or lazy-translation string whose ``__str__`` or ``__format__`` may give other text than it holds), so that
    what the checks read is what the reports write; any other value as it is. ``str.__str__`` of str itself is
    called, which a subclass cannot override (its own ``__str__``, ``__add__``, ``__getitem__``... are not
    used)."""
    return str.__str__(value) if isinstance(value, str) and type(value) is not str else value


def plain_texts(value: Any, _within: tuple[int, ...] = (), *, entry: str = "") -> Any:
    """``value`` with every text in it (mapping keys and values, list and tuple items, at any depth) made a
    plain ``str`` (:func:`plain_text`), every ``int`` or ``float`` subclass the plain number it stores, and every
    mapping, list and tuple made of what it stores
    (planner.core.held: ``dict.items``, ``list.__iter__``, never a subclass's ``keys()``, ``__iter__`` or
    ``__len__``, h25b N1/N2). A plain dict, list or tuple that holds no such text or container comes back as the
    same object; a dict, list or tuple subclass, or another Mapping or Sequence (a UserList), as a new plain dict,
    list or tuple, so that
    the checks count and read what is there (the scenario caps, unknown keys). A mapping or list that holds
    itself, or is nested more than :data:`MAX_ARGUMENT_DEPTH` deep, is left as it is there, for the checks that
    refuse it (:func:`check_plain_values`, the workload reader). ``_within``: the ids of the containers around
    ``value``; ``entry``: what the value is ('scenario', 'workload'), for the message below.

    Raises:
        InputError: a mapping holding one key twice once its keys are made plain (a ``str`` and a ``str`` subclass
            whose ``__hash__`` or ``__eq__`` differ, both spelling 'context'), as the YAML reader refuses a key
            written twice, naming the mapping's entry (h27b N1); a plain dict would keep the later value only.
            A container whose own items(), __iter__ or __getitem__ raises, naming its entry (h28b N1)."""
    if isinstance(value, str):
        return plain_text(value)
    if isinstance(value, (int, float)) and type(value) not in (int, float, bool):
        # an int or float subclass as the number it stores, never through its own __int__, __index__ or __float__
        # (h26b N1: one that raises escaped as its exception, not InputError)
        return int.__index__(value) if isinstance(value, int) else float.__float__(value)
    if not (isinstance(value, (Mapping, list, tuple)) or _other_sequence(value)) or id(value) in _within \
            or len(_within) >= MAX_ARGUMENT_DEPTH:
        return value
    _within = (*_within, id(value))
    if isinstance(value, Mapping):
        stored = _held(value, entry)
        keys = [plain_texts(k, _within) for k, _ in stored]  # named by its plain text (or number), never its own repr
        items = [(pk, plain_texts(v, _within, entry=_key_entry(entry, pk))) for pk, (_, v) in zip(keys, stored)]
        same = type(value) is dict and all(a is k and b is v for (a, b), (k, v) in zip(items, stored))
        made = value if same else dict(items)
        if len(made) != len(items):
            _refuse_repeated_key(items, entry)
        return made
    stored = _held(value, entry)
    items = [plain_texts(v, _within, entry=f"{entry}[{i}]") for i, v in enumerate(stored)]
    if type(value) in (list, tuple) and all(a is v for a, v in zip(items, stored)):
        return value
    return tuple(items) if isinstance(value, tuple) else items  # another Sequence as the list it holds


def _key_entry(entry: str, key: Any) -> str:
    """The entry of ``key``'s value in the mapping at ``entry`` ('scenario.workloads[0].context')."""
    name = plain_text(key) if isinstance(key, str) else f"[{key!r}]"
    return f"{entry}.{name}" if entry and isinstance(key, str) else f"{entry}{name}"


def _refuse_repeated_key(items: list[tuple[Any, Any]], entry: str) -> None:
    """Refuse the first key of ``items`` (a mapping's keys made plain) that repeats one before it.

    Raises:
        InputError: 'duplicate key ...', naming ``entry`` (the mapping), as the YAML reader says it.
    """
    seen: set[Any] = set()
    for key, _ in items:
        if key in seen:
            shown = clip_text(key) if isinstance(key, str) else key
            raise InputError(f"duplicate key {shown!r} (two keys hold it, one of a subclass whose __eq__ or __hash__ "
                             "keeps them apart)", entry=entry or None,
                             hint="Remove one of them; a repeated key would silently replace the first.")
        seen.add(key)


def given_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The workload options given: None means not given (as an option left off the command line);
    ``lora_targets`` may be a comma-separated string, as ``--lora-targets`` takes it (:func:`lora_target_list`);
    ``model`` a pathlib.Path of a config folder (always a path: :func:`path_text`)."""
    out = {}
    for key, value in options.items():
        if value is None:
            continue
        # a str subclass as the text it holds, read first, once: what is checked is what is given, and no method of
        # the caller's object runs (its own __iter__ raising escaped, h31b N3)
        value = plain_texts(value, entry=key)
        # texts (a config folder's path may hold a byte that was not UTF-8, PEP 383), and numbers given
        # where a text, choice or yes/no belongs; a number option's own check names its range
        if key != "model" and not (key in NUMBER_OPTIONS and isinstance(value, numbers.Number)):
            check_plain_values(value, key)
        if key == "lora_targets" and isinstance(value, str):
            value = lora_target_list(value)
        if key == "model" and isinstance(value, os.PathLike):  # a config folder as pathlib.Path, as other paths
            value = path_text(path_arg(value, "model", MODEL_PATH))
        out[key] = value
    return out


#: What each kind of path keyword names, as its messages say it ('must be a file path (a str or pathlib.Path)').
FILE_PATH, DIR_PATH = "a file path", "a directory path"
MODEL_PATH = "a path of a config.json or of a folder holding one"


def path_arg(value: Any, entry: str, what: str) -> Any:
    """A path argument (``scenario``, ``workload=``, ``calibration=``, ``model=``, ``out=``, ``catalog=``,
    ``load_catalog(overlay, base=)``) read once, guarded: the one place a caller's path object is read.

    A ``str`` (a subclass's too) comes back as the plain ``str`` it holds (``str.__str__``: the subclass's own
    ``__str__`` is never called); an os.PathLike (pathlib.Path included) as the ``pathlib.Path`` of the text its
    ``__fspath__()`` gives, made a plain ``str`` the same way, so that no later read can give another path or run
    the caller's code again; one giving '' as '' (refused as empty by the caller, as '' given itself). Any other
    value (None, bytes, an int, a mapping) comes back as it is, for the caller to take or refuse by its type.
    Idempotent: a value it gave back is given back the same.

    Args:
        what: what ``entry`` names, for the message (:data:`FILE_PATH`, :data:`DIR_PATH`, :data:`MODEL_PATH`).

    Raises:
        InputError: naming ``entry``, when ``__fspath__()`` raises anything (h29a N1; the exception's text, as
            planner.core.errors.unreadable_problem says it), or gives anything but a text: bytes (no keyword takes
            a path of bytes), an int, None, a bytearray, another os.PathLike (h30a N2, h30b N2).
    """
    from planner.core.errors import unreadable_problem

    if isinstance(value, str):
        return plain_text(value)
    if not isinstance(value, os.PathLike):
        return value
    try:
        # os.fspath(value), less its check of the result, which is made below to name what was given
        text = type(value).__fspath__(value)
    except Exception as exc:  # anything a user's __fspath__ raises: the keyword named, no traceback
        raise InputError(unreadable_problem(exc, "a path"), entry=entry,
                         hint="Pass the path as a str or pathlib.Path.") from None
    if not issubclass(type(text), str):  # by type: an object claiming str through __class__ is none
        gives = ("bytes: planner takes paths as text" if issubclass(type(text), bytes) else
                 f"no path: it gives {clip_text(type(text).__name__, 80)}")
        raise InputError(escape_unsafe(f"must be {what} (a str or pathlib.Path), not a "
                                       f"{clip_text(type(value).__name__, 80)} whose __fspath__ gives {gives}"),
                         entry=entry, hint="Pass the path as a str or pathlib.Path.")
    text = str.__str__(text)  # a str subclass as the text it holds, never through its own __str__
    return Path(text) if text else text


def workload_paths(workload: Any, options: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """``workload=`` and the ``model=`` option with a path object in them read once (:func:`path_arg`), for a
    function that hands them on (estimate's gpu_layers='max' runs fit on them) and reads them again after.

    Raises:
        InputError: naming 'workload' or 'model', a path object whose ``__fspath__`` raises or gives no text.
    """
    if workload is not None and not isinstance(workload, Mapping):
        workload = path_arg(workload, "workload", FILE_PATH)
    model = options.get("model")
    if isinstance(model, os.PathLike) and not isinstance(model, str):
        return workload, {**options, "model": path_arg(model, "model", MODEL_PATH)}
    return workload, dict(options)


def path_text(value: os.PathLike) -> Any:
    """A ``model=`` given as an os.PathLike (pathlib.Path) as the text the model resolver reads as a path, never
    as a catalog or hub id: a relative path gets './' in front (``Path('./llama-2-7b')`` is
    ``Path('llama-2-7b')``, whose text is also the catalog id llama-2-7b; ``Path('org/model')`` would read as a
    hub id). An absolute path, or one that starts with '.' or '~' (read as a path already), is left as it is;
    so is a value whose ``__fspath__`` gives no text (refused later as a model name)."""
    text = os.fspath(value)
    if not isinstance(text, str) or not text or os.path.isabs(text) or text.startswith((".", "~")):
        return text
    return os.curdir + os.sep + text


def lora_target_list(text: str) -> list[str]:
    """``--lora-targets`` (or ``lora_targets=``) as a text: the comma-separated module names, blanks around
    each stripped; '' (or blanks) is the empty list, which the workload reader refuses ("lists no module").

    Raises:
        OptionError: an empty item ('q_proj,,v_proj', 'q_proj,'), which would be dropped without a word.
    """
    from planner.workload.inputs import OptionError

    parts = [v.strip() for v in text.split(",")]
    if parts == [""]:
        return []
    if not all(parts):
        shown = ",".join(p for p in parts if p)
        raise OptionError(f"{escape_unsafe(repr(text))} has an empty item (two commas together, or one at an end)",
                          entry="lora_targets", hint=f"Separate the module names with single commas: "
                                                     f"lora_targets: {escape_unsafe(shown)}.")
    return parts


def catalog_of(catalog: Any = None) -> Catalog:
    """A loaded catalog: ``catalog`` itself when it is one, else the shipped catalog with the overlay
    directory ``catalog`` (a path) merged over it, or the shipped catalog alone (None).

    Raises:
        CatalogError: as :func:`planner.catalog.loader.load_catalog`; a Catalog object with a value
            the loader refuses in a file (:func:`check_catalog_object`).
        InputError: ``catalog`` is neither a Catalog, a path nor None.
    """
    from planner.catalog.fingerprint import still_checked
    from planner.catalog.loader import Catalog, load_catalog

    if isinstance(catalog, Catalog):
        # the content, not the object, is trusted: one changed in code (dataclasses.replace) or in place
        # (object.__setattr__ past the freeze) no longer gives the fingerprint the loader took, and is checked as a
        # file would be (h23b N1)
        if not still_checked(catalog):
            return check_catalog_object(catalog)
        return catalog
    if catalog is None:
        return load_catalog(None)
    if isinstance(catalog, (str, os.PathLike)) and not isinstance(catalog, bytes):
        # read once (planner.api.inputs.path_arg); '' would read the current directory
        return load_catalog(dir_path_of(catalog, "catalog", "Give the overlay directory, e.g. catalog='my-catalog', "
                                                            "or None for the shipped catalog"))
    raise InputError(f"catalog must be a Catalog (planner.load_catalog()), an overlay directory or None, not "
                     f"{type(catalog).__name__}", entry="catalog")


def out_of(out: Any, inputs: tuple = ()) -> Path | None:
    """``out=`` (``--out``) checked: a directory path (str or os.PathLike) or None. ``inputs``: the run's input
    paths (the ``catalog=`` overlay folder): an ``os.path.expandvars`` hint that gives one of them is withheld, as
    the CLI withholds ``--out "$V"`` (h41a N13).

    Raises:
        InputError: another type (an int, bytes, a list), an empty or blank path, one holding a NUL
            or a character no file name can be encoded with (a lone surrogate), one beginning with '~', or one
            naming another folder than meant (planner.core.outpath.out_path_problem: '$HOME/r', ' o', a tab).
    """
    if out is None:
        return None
    out = path_arg(out, "out", DIR_PATH)  # a str or pathlib.Path, read once (a str subclass as its text)
    path = dir_path_of(out, "out", "Give a directory for the reports, e.g. out='reports'",
                       empty=" (or '.' for the current directory)")
    # the text as given: Path('./~') prints as '~', but './~' is how a folder named '~' is written on purpose
    if os.fspath(out).startswith("~"):  # Python expands no '~': it would name a folder '~' in the current directory
        text = os.fspath(out)  # the path, not a PathLike object's repr
        folder = escape_unsafe(repr(text.split("/", 1)[0]))  # '~', or '~+' / '~user' (h31a m1)
        raise InputError(f"out={escape_unsafe(repr(text))} begins with '~', which Python does not expand, so it would "
                         f"name a folder {folder} in the current directory", entry="out",
                         hint=f"Expand it first: out=os.path.expanduser({escape_unsafe(repr(text))})." if
                         _expands_to_passing(text) else "Give the folder's path itself, e.g. out='reports'.")
    from planner.core.outpath import out_path_problem

    problem = out_path_problem(os.fspath(out)) if isinstance(out, (str, os.PathLike)) else None
    if problem is not None:
        text = os.fspath(out)
        from planner.core.outpath import utf8_reading

        from planner.core.outhint import settled_path

        utf = utf8_reading(text) if isinstance(text, str) else None
        fixed = settled_path(problem[1]) if problem[1] != text else None  # never refused in turn (h35a: "$'-'")
        hint = (f"Its bytes are UTF-8 for {utf!a}: run under a UTF-8 locale (LC_ALL=C.UTF-8) or with PYTHONUTF8=1."
                if utf is not None else
                f"Expand it first, e.g. out=os.path.expandvars({text!r}), or give the folder's path itself."
                if problem[1] == text and _expands_to_passing(text) and not _names_input(text, inputs) else
                "Give the folder's path itself, e.g. out='reports'." if problem[1] == text else
                f"Give out=os.path.expanduser({fixed!r})." if fixed is not None and fixed.startswith("~") and
                _expands_to_passing(fixed) else
                f"Give out={fixed!r}." if fixed is not None and not fixed.startswith("~") else
                "Give out= a local folder's path, e.g. out='reports'.")  # a URL or a Windows path: none meant
        raise InputError(f"out={escape_unsafe(repr(text))} {problem[0]}", entry="out", hint=hint)
    return path


def _names_input(text: str, inputs: tuple) -> bool:
    """Whether ``text`` with its variables expanded is one of the paths ``inputs`` (same device and inode)."""
    full = os.path.expandvars(text)
    for given in inputs:
        try:
            if isinstance(given, (str, os.PathLike)) and os.path.exists(full) and os.path.samefile(full, given):
                return True
        except (OSError, ValueError, TypeError):
            continue
    return False


def _expands_to_passing(text: str) -> bool:
    """Whether ``os.path.expanduser`` (a '~' start) or ``os.path.expandvars`` (a '$VAR' in it) turns the ``out=``
    ``text`` into a path the checks take: every start and variable known and not empty (an unknown user or an unset
    variable is left as written, an empty one gives a path at '/'), and the path it gives passes
    planner.core.outpath.out_path_problem and planner.core.outhint.refused_destination (h37a 5, 6)."""
    import re

    from planner.core.outhint import expansion, refused_destination
    from planner.core.outpath import out_path_problem

    if text.startswith("~"):
        if expansion(text.split("/", 1)[0]) is None:
            return False
        full = os.path.expanduser(text)
    else:
        names = re.findall(r"\$(?:\{([A-Za-z_][A-Za-z_0-9]*)\}|([A-Za-z_][A-Za-z_0-9]*))", text)
        if not names or any(not os.environ.get(a or b) for a, b in names):
            return False
        full = os.path.expandvars(text)
    if full == text or "$" in full or full.startswith("~"):
        return False
    return out_path_problem(full) is None and not refused_destination(full)


def dir_path_of(value: Any, entry: str, hint: str, *, empty: str = "", what: str = DIR_PATH) -> Path:
    """A directory argument (``out=``, ``catalog=``, ``load_catalog(overlay, base=)``), or with ``what`` another
    path argument, read once (:func:`path_arg`) and checked as a path: a str or os.PathLike whose text is neither
    empty nor holds a NUL or a character the file system's encoding cannot write (a lone surrogate such as
    '\\ud800'; the surrogate escapes of undecodable bytes, '\\udcff', are kept).

    Args:
        what: what ``entry`` names, for the messages: :data:`DIR_PATH` ('a directory path'), :data:`FILE_PATH`.

    Raises:
        InputError: naming ``entry``, with ``hint`` (a sentence without its full stop).
    """
    value = path_arg(value, entry, what)  # a str, a pathlib.Path, or another type, refused here
    if not isinstance(value, (str, Path)):
        raise InputError(f"must be {what} (a str or pathlib.Path), not {type(value).__name__}", entry=entry,
                         hint=hint + ".")
    text = os.fspath(value)  # a plain str: path_arg made it one
    if not text.strip():
        raise InputError("is empty" if not text else f"is blank ({text!r}): a path of spaces alone", entry=entry,
                         hint=hint + empty + ".")
    if "\0" in text:
        raise InputError("holds a NUL character, which no path may hold", entry=entry, hint=hint + ".")
    try:
        os.fsencode(text)
    except UnicodeEncodeError as exc:
        raise InputError(f"holds {text[exc.start]!a}, a character no file name can hold (a lone surrogate)",
                         entry=entry, hint=hint + ".") from None
    return Path(text)


def file_path_of(value: Any, entry: str, hint: str) -> Path:
    """A file argument (``calibration=``) checked as :func:`dir_path_of` checks a directory: a str or
    os.PathLike, read once, not empty, without NUL or a character no file name can hold, naming no folder.

    Raises:
        InputError: naming ``entry``, with ``hint`` (a sentence without its full stop).
    """
    path = dir_path_of(value, entry, hint, what=FILE_PATH)
    refuse_directory(path, entry, hint)
    return path


def refuse_directory(path: Any, entry: str, hint: str, error: type[InputError] = InputError) -> None:
    """Refuse a file argument (``calibration=``, ``workload=``, a scenario) that names a folder, naming the
    keyword and the file to give, as the CLI names its option (h25b M7); the file reader's own "is a directory"
    line names neither. A path that cannot be looked at (missing, unreadable, a NUL) is left to the reader.

    Raises:
        ``error`` (an InputError): naming ``entry``, with ``hint`` (a sentence without its full stop).
    """
    try:
        folder = os.path.isdir(path)
    except (TypeError, ValueError, OSError):
        return
    if folder:
        raise error(f"{escape_unsafe(repr(os.fspath(path)))} is a directory, not a file", entry=entry,
                    hint=hint + ".")


def check_catalog_object(catalog: Any) -> Catalog:
    """Refuse a Catalog object holding what the catalog loader refuses in a file: the loader's own
    checks, run on the object (:func:`planner.catalog.objcheck.check_catalog`: each entry's keys through
    the field readers, duplicate ids, each entry's rules, the references across lists). A Catalog
    changed in code (``dataclasses.replace(gpu, price_usd=float('nan'))``, or in place with ``object.__setattr__``)
    has skipped them.

    Returns:
        the Catalog with its numbers as the loader builds them (``numpy.float64(329.0)`` -> 329.0,
        ``Decimal(16)`` -> 16): the one the API plans with.

    Raises:
        CatalogError: naming the entry ('the Catalog given: gpus[3] (rtx-4090).vendor'), the problem
            and a hint.
    """
    from planner.catalog.objcheck import check_catalog

    return check_catalog(catalog)


def gpu_of(catalog: Catalog, gpu_id: Any) -> Gpu:
    """The catalog GPU named by ``gpu`` (``--gpu``); an unknown id is an error at the option, with close matches.

    Raises:
        OptionError: an unknown id, or one that is not a string.
    """
    from planner.core.errors import CatalogError
    from planner.workload.inputs import OptionError

    gpu_id = plain_text(gpu_id)
    if not isinstance(gpu_id, str):
        raise OptionError(f"must be a catalog GPU id (a string), not {type(gpu_id).__name__}", entry="gpu",
                          hint="'planner catalog gpus' lists the ids.")
    try:
        return catalog.gpu(gpu_id)
    except CatalogError as exc:
        raise OptionError(exc.problem, entry="gpu", hint=exc.hint) from None


def headroom_of(headroom: Any) -> float:
    """``headroom`` (``--headroom``) checked: a number from 0 to 0.95; None is the default, 0.05.

    Raises:
        OptionError: not a number, or out of range.
    """
    from planner.workload.inputs import OptionError

    from planner.core.fields import plain_number, shown_number

    if headroom is None:
        return DEFAULT_HEADROOM
    if not isinstance(headroom, str):
        plain_number(headroom, entry="headroom")  # its own __float__ raising: InputError first (h28b N1)
    from planner.core.units import UNDERFLOW_HINT, exact_text, outside_exactly, underflow_problem

    if not isinstance(headroom, str) and outside_exactly(headroom, 0, MAX_HEADROOM) is not None:
        # Decimal('0.95000000000000000001'), whose float is 0.95: judged and shown as given (h27b M2)
        raise OptionError(f"must be a fraction from 0 to {MAX_HEADROOM}, not {exact_text(headroom, MAX_HEADROOM)}",
                          entry="headroom", hint="It is the share of the GPU's CUDA total kept free, e.g. 0.05.")
    headroom = plain_number(headroom, entry="headroom")  # numpy.float32(0.1), Decimal('0.1'), Fraction(1, 10)

    underflow = underflow_problem(headroom)  # Decimal('1e-400') reads as 0.0, which was never given (h17b #3)
    if underflow is not None:
        raise OptionError(underflow, entry="headroom", hint=UNDERFLOW_HINT)
    # the range first: an int beyond any float (10**309) compares, but math.isfinite() overflows on it
    if isinstance(headroom, bool) or not isinstance(headroom, (int, float)) or not 0 <= headroom <= MAX_HEADROOM \
            or not math.isfinite(headroom):
        raise OptionError(f"must be a fraction from 0 to {MAX_HEADROOM}, not {shown_number(headroom)}", entry="headroom",
                          hint="It is the share of the GPU's CUDA total kept free, e.g. 0.05.")
    return float(headroom) + 0.0  # -0.0 is 0 (IEEE 754-2019, 6.3: x + (+0) is +0 for x = -0), never '-0%'


def workload_source(workload: Any) -> tuple[Mapping[str, Any], str | None, str]:
    """What ``workload`` (``--workload``) holds: (its keys as written, the file as named or None for a
    mapping, the workload's default name). None gives an empty mapping.

    Raises:
        ScenarioError: the file cannot be read or is not a mapping.
        InputError: ``workload`` is neither a path, a mapping nor None.
    """
    from planner.workload.inputs import default_workload_name, read_workload_file

    if workload is None:
        return {}, None, "workload"
    if isinstance(workload, Mapping):
        workload = plain_texts(workload, entry="workload")  # a str subclass as its text: what is checked is what is given
        return workload, None, str(workload.get("model", "workload"))
    workload = path_arg(workload, "workload", FILE_PATH)  # a str or pathlib.Path, read once
    if isinstance(workload, str) and ("\n" in workload or "\r" in workload):  # YAML text, not a path
        raise InputError("is YAML text, not a file path: workload= reads a workload file or a mapping",
                         entry="workload", hint="Pass the mapping, e.g. workload=yaml.safe_load(text), or write the text "
                                                "to a file.")
    if isinstance(workload, (str, os.PathLike)):
        from planner.core.errors import ScenarioError

        refuse_directory(workload, "workload", "Give a workload file in it, e.g. "
                         "workload='scenarios/workloads/qlora-7b.yaml', or a mapping of workload keys", ScenarioError)
        shown = str(workload)
        return read_workload_file(Path(workload), shown=shown), shown, default_workload_name(workload)
    raise InputError(f"workload must be a file path or a mapping of workload keys, not {type(workload).__name__}",
                     entry="workload")


def read_workload(catalog: Catalog, workload: Any, options: Mapping[str, Any], *, gpu: Any = None,
                  function: str = "estimate", source: tuple[Mapping[str, Any], str | None, str] | None = None,
                  ) -> tuple[Workload, Mapping[str, Any]]:
    """The workload of ``workload`` (a file path or a mapping of workload keys; ``options`` replace its
    keys) or of ``options`` alone, and the keys ``workload`` wrote (empty without it).

    Args:
        options: the workload options given (:func:`given_options`), names with underscores.
        gpu: a catalog GPU (``--gpu``): dtypes it has no support for are refused at the key that
            chose them (planner.workload.spec.check_gpu_support).
        function: the API function, for the message when neither a model nor a workload is given.
        source: ``workload`` as :func:`workload_source` read it, when the caller already did.

    Raises:
        ScenarioError: the file cannot be read, or a key of it is invalid.
        OptionError: an option's value is invalid.
        UsageError: neither ``model`` nor ``workload`` given.
    """
    from planner.workload.inputs import load_workload_mapping, workload_from_options

    if workload is None:
        if "model" not in options:
            raise UsageError(f"{function}() needs model= (and task=), or workload= (a workload file or mapping)",
                             usage="give --model (or --workload FILE)" if function == "fit" else
                             "give --model (and --task), or --workload FILE")
        return workload_from_options(dict(options), catalog, gpu=gpu), {}
    data, file, name = source if source is not None else workload_source(workload)
    return load_workload_mapping(data, catalog, options, file=file, default_name=name, gpu=gpu), data


def tp_from_gpus(given: Mapping[str, Any], written: Mapping[str, Any]) -> bool:
    """Whether an inference workload's tp comes from ``gpus`` N: no tp was given (option or workload
    key), so the N GPUs are one replica at tp N (the workload reader, planner.workload.spec, reads gpus
    and tp and refuses a count that does not hold whole replicas; ``written``: the workload's keys)."""
    return (given.get("task", written.get("task")) == "infer" and "gpus" in given and "tp" not in given
            and "tp" not in written)


def vllm_headroom(workload: Workload, headroom: float | None) -> float:
    """The planning headroom for a check on one card: none for an engine: vllm workload (its
    gpu_memory_utilization is the margin; a headroom given for one is refused), else ``headroom``
    (None: the default, 0.05).

    Raises:
        OptionError: a headroom given for an engine: vllm workload.
    """
    from planner.solve.usages import takes_headroom
    from planner.workload.inputs import OptionError

    if takes_headroom(workload):
        return headroom_of(headroom)
    if headroom is not None:
        chosen = workload.infer is not None and workload.infer.engine_defaulted
        raise OptionError("does not apply to engine vllm" + (" (the default for concurrency above 1)" if chosen else "")
                          + ": vLLM keeps 1 - gpu_memory_utilization of the card free", entry="headroom",
                          hint="Lower --gpu-memory-utilization for a larger margin"
                          + (", or give --engine hf to size Transformers generate with a headroom." if chosen else "."))
    return 0.0


def vllm_context_note(workload: Workload, context_given: bool, longest_fit: int | None = None) -> str | None:
    """For engine vllm or llama.cpp with the context left at its default: what to start the engine with.

    ``vllm serve`` sets max_model_len to the model's maximum unless told otherwise, and refuses to
    start when one sequence that long does not fit its KV cache; the plan sized the default context.
    ``longest_fit``: the longest max_model_len vLLM starts with on the card, when known
    (:meth:`planner.memory.vllm.VllmBudget.longest_model_len`). llama-server and llama-cli without
    ``-c`` take the model's training context (llama-server --help: "-c, --ctx-size N ... (default: 0,
    0 = loaded from model)"), split over its ``-np`` slots, and recent builds default to ``--fit on``,
    which lowers the context and then the GPU layers until every device keeps ``--fit-target`` (1 GiB)
    free (common/common.h ``fit_params``, ``fit_params_target``).
    """
    i = workload.infer
    longest = workload.architecture.max_position_embeddings
    if i is not None and i.engine == "llama.cpp" and not context_given and i.context < longest:
        slots = i.concurrency
        return (f"llama.cpp: the plan assumes context {i.context:,} per slot (the planner's default); llama-server "
                f"without -c takes the model's training context, {longest:,} tokens, so start it with -c "
                f"{i.context * slots}" + (f" -np {slots}" if slots > 1 else "") + " (Ollama: num_ctx). Recent "
                "llama.cpp builds default to --fit on, which shrinks the context, then the GPU layers, to leave "
                "1 GiB free per GPU: check the n_ctx and offloaded layers it logs.")
    if i is None or i.engine != "vllm" or context_given or i.context >= longest:
        return None
    note = (f"vLLM: the plan assumes context {i.context:,} (the default); start vllm serve with --max-model-len "
            f"{i.context}: it defaults to the model's maximum, {longest:,} tokens")
    if longest_fit is not None and longest_fit < longest:
        note += (", and refuses to start when one sequence that long does not fit the KV cache ("
                 + (f"at most {longest_fit:,} tokens here)" if longest_fit else "no KV cache is left here)"))
    return note + "."


def gib_text(n: float) -> str:
    """Bytes as GiB (2^30) with two decimals, e.g. '14.59 GiB'."""
    return f"{n / 2**30:,.2f} GiB"


def card_speed(wl: Any, est: Any, card: Any, cat: Any, prompt_tokens: int | None, output_tokens: int | None) -> Any:
    """The speed model on ``card`` (planner.speed): training on the workload's GPUs, inference per replica."""
    from planner.workload.inputs import OptionError

    per_lane = cat.pcie_gen(card.pcie_gen).per_lane_bytes_per_s  # the loader checks every card's generation
    if wl.train is not None and not (prompt_tokens or output_tokens):
        from planner.speed.training import training_speed

        return training_speed(wl, est, card, wl.train.gpus, per_lane=per_lane, lanes=card.pcie_lanes)
    from planner.speed.inference import inference_speed

    if prompt_tokens or output_tokens:
        if wl.train is not None:
            raise OptionError("--prompt-tokens and --output-tokens time a served request; this workload trains",
                              entry="--prompt-tokens" if prompt_tokens else "--output-tokens",
                              hint="Leave them out for training (its speed is per optimizer step), or give --task infer.")
    context = wl.infer.context
    # the workload's tokens_per_request is the request's output, as plan and compare time it
    out = output_tokens or wl.infer.tokens_per_request or max(1, min(256, context // 2))
    if out >= context and not prompt_tokens:
        if output_tokens:
            raise OptionError(f"--output-tokens {out:,} leaves no prompt token in --context {context:,}",
                              entry="--output-tokens", hint=f"Give --prompt-tokens (it sets the context), --context "
                                                            f"{out + 1} or more, or fewer output tokens.")
        if wl.infer.tokens_per_request:  # the workload's own request (a workload file's tokens_per_request)
            raise OptionError(f"tokens_per_request {out:,} leaves no prompt token in the context of {context:,} "
                              "tokens (a request's prompt and its output share the context)", entry="tokens_per_request",
                              hint=f"Give tokens_per_request {context - 1:,} or less, or a context of {out + 1} or more.")
        raise OptionError(f"--context {context:,} leaves no room for a prompt token and an output token to time",
                          entry="--context", hint="Give --context 2 or more.")
    prompt = prompt_tokens or max(1, context - out)
    if prompt + out > context:
        given = [f for f, v in (("--prompt-tokens", prompt_tokens), ("--output-tokens", output_tokens)) if v]
        raise OptionError(f"a request of {prompt:,} prompt + {out:,} output tokens does not fit --context {context:,}"
                          + (f" ({' and '.join(given)} given)" if given else ""), entry=given[0] if given else "--context",
                          hint=f"Give --context {prompt + out} or more, or a shorter request.")
    return inference_speed(wl, est, card, prompt_tokens=prompt, output_tokens=out, per_lane=per_lane,
                           lanes=card.pcie_lanes)
