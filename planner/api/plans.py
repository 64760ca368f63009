"""``planner.plan``: the cheapest machine that runs every workload of a scenario, its quote and,
when asked, its reports (``planner plan``)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping, Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.api.inputs import (FILE_PATH, catalog_of, check_keywords, check_plain_values, out_of, path_arg,
                                 plain_text, plain_texts, refuse_directory)
from planner.core.errors import InputError
from planner.core.resolved import resolved_out
from planner.core.escape import json_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from planner.catalog.loader import Catalog
    from planner.solve.scenario import Scenario
    from planner.solve.solver import Plan

#: Report formats plan writes into ``out``: the workbook, the ranked candidates, the plan, the Markdown report.
PLAN_FORMATS = ("xlsx", "csv", "json", "md")
#: The formats written when none are named (``planner plan``'s default ``--format``).
DEFAULT_FORMATS = ("xlsx", "csv", "json")
#: Largest number of alternatives kept (``--top``).
MAX_TOP = 1000


def report_formats(value: str | Iterable[str], *, api: bool = False) -> tuple[str, ...]:
    """'xlsx,csv' (or ['xlsx', 'csv']) -> ('xlsx', 'csv'), in the order given, without repeats.

    ``api``: word the error as the Python API names the keyword (entry ``format``, hint ``format='md,csv'``);
    else as ``planner plan --format`` prints it (entry ``--format``, hint ``--format md,csv``).

    Raises:
        InputError: not a text or a list, an item that is not a text, an empty list, or a name that is not a
            report format (with the close match in the hint); its ``problem`` and ``hint`` are the sentences
            ``planner plan --format`` prints.
    """
    from planner.core.errors import did_you_mean
    from planner.core.names import clip_text

    entry = "format" if api else "--format"

    def write(names: Iterable[str]) -> str:
        """The list as the caller writes it: --format md,csv or format='md,csv'."""
        listed = ",".join(dict.fromkeys(names))
        return f"format={listed!r}" if api else f"--format {listed}"

    if isinstance(value, AbstractSet):  # {'md', 'csv'}: no order to write them in, as a list's (h27b M3)
        texts = sorted(v for v in map(plain_text, value) if isinstance(v, str) and v in PLAN_FORMATS)
        raise InputError(f"must be a text such as 'xlsx,csv' or a list of format names, not a {type(value).__name__} "
                         "(a set has no order; planner reads lists)", entry=entry,
                         hint=f"Write {write(texts or DEFAULT_FORMATS[:2])}.")
    if not isinstance(value, (str, list, tuple, bytes, Mapping)) and isinstance(value, Iterable):
        # a generator, an iterator, a numpy array: told to be a list, as allowed_gpus is (h34b m12)
        raise InputError(f"must be a text such as 'xlsx,csv' or a list of format names, not a "
                         f"{clip_text(type(value).__name__)} (planner reads lists)", entry=entry,
                         hint=f"Write {write(DEFAULT_FORMATS[:2])} (an array's .tolist(), a generator's list(...)).")
    if not isinstance(value, str) and (not isinstance(value, Iterable) or isinstance(value, (bytes, Mapping))):
        raise InputError(f"must be a text such as 'xlsx,csv' or a list of format names, not {type(value).__name__}",
                         entry="format", hint=f"Report formats: {', '.join(PLAN_FORMATS)}.")
    # a str subclass as the text it holds, never through its own split() or strip() (h31b N3)
    value = plain_text(value) if isinstance(value, str) else [plain_text(v) for v in value]
    if not isinstance(value, str):
        odd = next((i for i, v in enumerate(value) if not isinstance(v, str)), None)
        if odd is not None:  # 3, b'md': no format name, and not to be shown as the text str() makes of it
            # the names meant: the texts and the bytes (b'md') that are format names
            meant = [v.decode("ascii", "replace") if isinstance(v, bytes) else v for v in value]
            meant = [v for v in meant if isinstance(v, str) and v in PLAN_FORMATS]
            item = value[odd]  # shown where its repr is short and plain (no object's own __repr__, no 5,000 digits)
            plain = type(item) in (bool, float, type(None)) or (type(item) is int and item.bit_length() < 64) or (
                type(item) is bytes and len(item) <= 40)
            shown = f"{item!r} ({type(item).__name__})" if plain else f"of type {type(item).__name__}"
            raise InputError(f"is {shown}, not a text; format names are texts ({', '.join(PLAN_FORMATS)})",
                             entry=f"{entry}[{odd}]",
                             hint=f"Write {write(meant or DEFAULT_FORMATS[:2])}.")
    names = value.split(",") if isinstance(value, str) else list(value)
    parts = [p.strip().lower() for p in names if p.strip()]
    valid = f"give a comma-separated list of {', '.join(PLAN_FORMATS)}"
    if not parts:
        raise InputError(f"the list of report formats is empty; {valid}, e.g. {write(DEFAULT_FORMATS[:2])}",
                         entry=entry)
    if len(parts) < len(names):  # ',json', 'json,', 'json,,md' or ['json', '']: an empty item, as ',' alone is refused
        raise InputError("has an empty item (a comma with no format name on one side); format names are separated by "
                         "single commas", entry=entry, hint=f"Write {write(parts)}.")
    # one rule with the other choices and numbers (--task TRAIN, --top ' 3' are refused): a format name is written
    # as listed, lower case, with no blank around it
    loose = next((p for p in names if p.strip() and p != p.strip().lower() and p.strip().lower() in PLAN_FORMATS),
                 None)
    if loose is not None:
        why = "has a blank around it" if loose != loose.strip() else "is not written in lower case"
        raise InputError(f"{loose!r} {why}; format names are written as listed ({', '.join(PLAN_FORMATS)})",
                         entry=entry, hint=f"Write {write(parts)}.")
    bad = [p for p in parts if p not in PLAN_FORMATS]
    if bad:
        import re
        import unicodedata

        # 'csv;json', 'csv json' (another separator) and full-width 'ｃｓｖ' (NFKC: 'csv'): the list meant, when
        # every piece is a format, hinted as --format takes it (a close match alone would drop one of them)
        pieces = [unicodedata.normalize("NFKC", q).strip().lower() for p in parts
                  for q in re.split(r"[;|/\s\uff0c\u3001]+", unicodedata.normalize("NFKC", p)) if q.strip()]
        if pieces and all(q in PLAN_FORMATS for q in pieces):
            why = ("formats are separated by commas" if len(pieces) > len(parts) else
                   "format names are written in ASCII letters")
            raise InputError(f"{clip_text(bad[0])!r} is not a report format: {why}", entry=entry,
                             hint=f"Write {write(pieces)}.")
        guess = did_you_mean(bad[0], PLAN_FORMATS) or ""
        # a 30,000-character item echoed as its first 80 (h24b M6)
        what = f"{clip_text(bad[0])!r} is not a report format" if len(bad) == 1 else \
            f"{', '.join(repr(clip_text(b)) for b in bad)} are not report formats"
        # the close match is the hint: a sentence of its own after the problem's stop ('md'?, never 'md'?.)
        raise InputError(f"{what}; {valid}", entry=entry,
                         hint=guess if guess.startswith("Did you mean") else None)
    twice = next((p for p in parts if parts.count(p) > 1), None)
    if twice is not None:  # as a list of GPUs or LoRA targets naming one twice is refused
        raise InputError(f"lists {twice!r} twice; give each format once: {write(parts)}", entry=entry)
    return tuple(parts)


def need_scenario(function: str, scenario: Any) -> None:
    """Refuse a call without a scenario (``plan()``) as an InputError, not Python's TypeError alone.

    Raises:
        UsageError: ``scenario`` is None (an InputError and a TypeError).
    """
    if scenario is None:
        from planner.core.errors import UsageError

        raise UsageError(f"{function}() needs a scenario: a scenario file or a mapping", usage="Missing argument "
                         "'SCENARIO'", hint=f"For example {function}('scenarios/qlora-7b-12gb.yaml').")


def top_of(top: Any, most: int = MAX_TOP, least: int = 0) -> int:
    """``top`` (``--top``) checked: a whole number from ``least`` to ``most``.

    Raises:
        OptionError: not a whole number, or out of range.
    """
    from planner.core.fields import plain_number, shown_number
    from planner.core.units import NotWhole
    from planner.workload.inputs import OptionError

    check_plain_values(top, "top")
    top = plain_number(top, entry="top")  # numpy.int64(3), Decimal('3'): 3
    if isinstance(top, float) and top.is_integer() and not isinstance(top, NotWhole):  # Fraction(1, 10**400): no 0
        top = int(top)
    if isinstance(top, bool) or not isinstance(top, int) or not least <= top <= most:
        raise OptionError(f"must be a whole number from {least} to {most}, not {shown_number(top)}", entry="top")
    return top


def read_scenario(scenario: Any, catalog: Catalog) -> tuple[Scenario, str, Mapping[str, Any]]:
    """The validated scenario of ``scenario`` (a file path or a mapping), the text the reports show
    for it (the file as written; a mapping as YAML), and its mapping as read.

    Raises:
        ScenarioError: as planner.solve.scenario.load_scenario.
        InputError: ``scenario`` is neither a path nor a mapping (YAML text included).
    """
    import hashlib

    from planner.solve.scenario import default_scenario_name, read_scenario_file, scenario_from_mapping

    if isinstance(scenario, Mapping):
        # a str subclass as its text, read first, once: what is checked is what is given, and no method of the
        # caller's text runs (its own __iter__ raising escaped, h31b N3)
        scenario = plain_texts(scenario, entry="scenario")
        check_plain_values(scenario, "scenario")
        sc = scenario_from_mapping(scenario, catalog)
        if sc.costs is not None:  # its keys checked before the copy for the reports is made (a tuple key)
            from planner.cost.tco import read_costs

            read_costs(sc.costs, None, sc.workloads)
        return sc, _mapping_text(scenario), scenario
    scenario = path_arg(scenario, "scenario", FILE_PATH)  # a str or pathlib.Path: read once (a str subclass's text)
    if isinstance(scenario, str) and "\n" in scenario:  # YAML text, not a path: said in one line
        raise InputError("is YAML text, not a file path: plan() reads a scenario file or a mapping", entry="scenario",
                         hint="Pass the mapping, e.g. plan(yaml.safe_load(text)), or write the text to a file.")
    if isinstance(scenario, (str, os.PathLike)) and not str(os.fspath(scenario)).strip():  # '' is Path('.')
        raise InputError("is empty: no scenario file is named", entry="scenario",
                         hint="Give a scenario file, e.g. scenarios/qlora-7b-12gb.yaml.")
    if isinstance(scenario, (str, os.PathLike)):
        from planner.core.errors import ScenarioError

        refuse_directory(scenario, "scenario", "Give a scenario file in it, e.g. 'scenarios/qlora-7b-12gb.yaml', or a "
                         "mapping of scenario keys", ScenarioError)
        shown = str(scenario)
        data, raw = read_scenario_file(Path(scenario), shown)  # read once: the scenario, its hash and its text
        # the text as Path.read_text gives it (newlines made '\n'), for the reports
        text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        result = scenario_from_mapping(data, catalog, file=shown, default_name=default_scenario_name(scenario),
                                       sha256=hashlib.sha256(raw).hexdigest(), base_dir=Path(scenario).parent,
                                       text=text)
        return result, text, data
    raise InputError(f"scenario must be a file path or a mapping, not {type(scenario).__name__}", entry="scenario")


def scenario_arg(scenario: Any) -> Any:
    """``scenario`` with a path in it read once (:func:`planner.api.inputs.path_arg`: a str or pathlib.Path); a
    mapping, or a value of another type, as it is (:func:`read_scenario` reads or refuses it).

    Raises:
        InputError: naming 'scenario', a path object whose ``__fspath__`` raises or gives no text.
    """
    return scenario if isinstance(scenario, Mapping) else path_arg(scenario, "scenario", FILE_PATH)


def need_name(scenario: Any, data: Mapping[str, Any], out: Any) -> None:
    """Refuse writing reports (``out`` given) for a scenario that gives no ``name:`` and has no file name to take
    one from (a mapping; a shell pipe or /dev/stdin: planner.solve.scenario.stemless): every such scenario is
    named 'scenario', so a second, different one would replace the first one's reports in ``out``.

    Raises:
        ScenarioError: such a scenario with ``out`` given.
    """
    from planner.core.errors import ScenarioError
    from planner.solve.scenario import stemless

    if out is None or "name" in data:
        return
    if isinstance(scenario, Mapping):
        file, what = None, "a scenario given as a mapping has no file name"
    elif stemless(os.fspath(scenario)):
        file, what = str(scenario), "a scenario read from a pipe or standard input has no file name"
    else:
        return
    raise ScenarioError(f"is missing, and {what} to name the reports by: they would be named scenario.* in {out}, "
                        "as those of every other scenario without a name, and replace them", file=file,
                        entry="name", hint="Give the scenario a name, e.g. name: ft-7b-workstation (a scenario "
                        "file without one is named by the file's stem).")


def _mapping_text(data: Mapping[str, Any]) -> str:
    """A scenario given as a mapping, as YAML text for the workbook's Assumptions sheet."""
    import yaml

    _refuse_odd_keys(data, "scenario")
    return yaml.safe_dump(json.loads(json_text(data, default=_value_text)), sort_keys=False, allow_unicode=True)


def _value_text(value: Any) -> str:
    """str() of a value JSON has no type for (a Decimal, a Fraction), or, where str() refuses (a Fraction of
    more than 4,300 digits: Python's limit for an int's text), the number as messages show it."""
    try:
        return str(value)
    except ValueError:
        from planner.core.fields import plain_number, shown_number

        return shown_number(plain_number(value))


def _refuse_odd_keys(value: Any, entry: str) -> None:
    """Refuse a key that is not a text anywhere in ``value`` (a tuple key where no section's check caught it): the
    reports' copy of the scenario cannot hold it.

    Raises:
        InputError: naming the entry that holds the key.
    """
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InputError(f"key {k!r} is not a name", entry=entry, hint="Keys are names (texts).")
            _refuse_odd_keys(v, f"{entry}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _refuse_odd_keys(v, f"{entry}[{i}]")


def with_undefined_sources(result: Plan, index: Any, cat: Any = None) -> Plan:
    """The plan with a warning naming the REF ids its quote lines cite that ``index`` (the
    :class:`planner.catalog.sources.SourceIndex` of the catalog's SOURCES.md, :func:`planner.report.from_plan.plan_references`)
    does not define (the workbook's Sources sheet marks them too; the console and JSON say it here), one per
    problem reading a SOURCES.md (a file that cannot be read at all or is not UTF-8, a row without a usable id),
    and with ``cat`` (the catalog) one naming the other ids its entries cite that no SOURCES.md defines (an
    overlay's entries the plan does not buy: :func:`planner.catalog.check.undefined_ref_warning`)."""
    from planner.catalog.check import source_problem_warnings, undefined_ref_warning
    from planner.catalog.sources import ref_ids, shown_catalog_path

    missing: dict[str, list[str]] = {}
    for item in result.items:
        for ref in ref_ids(item.source):
            if ref not in index:
                missing.setdefault(ref, []).append(item.catalog_id or item.description)
    # a SOURCES.md that could not be read as written (not UTF-8, a row without an id): said here too
    problems = source_problem_warnings(index)
    quoted = ()
    if missing:
        text = "; ".join(f"REF:{ref} ({', '.join(dict.fromkeys(ids))})" for ref, ids in missing.items())
        quoted = (f"price sources cited but defined in no SOURCES.md beside the catalog: {text}; add them to the "
                "overlay's SOURCES.md so the quote can be traced",)
    rest = undefined_ref_warning(cat, index, told=missing, show=shown_catalog_path) if cat is not None else None
    added = problems + quoted + ((rest,) if rest else ())
    return dataclasses.replace(result, warnings=tuple(result.warnings) + added) if added else result


def with_unknown_architectures(result: Plan, cat: Any) -> Plan:
    """The plan with a warning naming its GPUs whose catalog ``architecture`` is none the speed model has figures
    for (planner.catalog.gpus.KNOWN_ARCHITECTURES: an overlay's new generation, or a typo that loaded): their
    time and cost per job use the speed model's assumed figures for an unknown architecture."""
    from planner.catalog.gpus import KNOWN_ARCHITECTURES

    unknown = {}
    for item in result.items:
        if item.category == "gpu" and item.catalog_id:
            arch = str(getattr(cat.gpu(item.catalog_id), "architecture", "") or "")
            if arch.lower() not in KNOWN_ARCHITECTURES:
                unknown[item.catalog_id] = arch
    if not unknown:
        return result
    text = ", ".join(f"{gpu} ({arch!r})" for gpu, arch in unknown.items())
    return dataclasses.replace(result, warnings=tuple(result.warnings) + (
        f"GPU of an architecture the speed model has no figures for (it has {', '.join(KNOWN_ARCHITECTURES)}): "
        f"{text}; its speed uses the assumed figures for an unknown architecture, and no per-architecture rule "
        "applies",))


@dataclass(frozen=True)
class PlanResult:
    """A scenario's plan and the reports written for it.

    Attributes:
        plan: the solver's recommendation (:class:`planner.solve.solver.Plan`): the choice, the
            quote's line items and total (USD), each workload's estimate on the chosen machine,
            the alternatives, the ranked candidate table, assumptions and warnings.
        outputs: the reports written (format -> path); empty without ``out``.
        removed: the reports of an earlier plan of the same scenario, of formats not written this
            time, removed with the new set (they would describe another plan beside it).
        notes: what writing the reports left alone and why, one sentence each (a stale report kept because
            it changed since planner wrote it; a staging folder holding files planner did not write).
    """

    plan: Plan
    outputs: dict[str, Path] = field(default_factory=dict)
    removed: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def scenario(self) -> str:
        """The scenario's name."""
        return self.plan.scenario

    @property
    def total_usd(self) -> float:
        """The quote's total, USD (capex)."""
        return self.plan.total_usd

    @property
    def choice(self) -> dict[str, Any]:
        """The chosen candidate row (column -> value; planner.solve.candidates.COLUMNS)."""
        return self.plan.choice

    @property
    def warnings(self) -> tuple[str, ...]:
        """Things to check before buying."""
        return tuple(self.plan.warnings)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, the document ``planner plan --json`` prints (planner.report.export.plan_to_dict;
        sizes in bytes, money in USD) with ``outputs`` (format -> path written) and ``removed`` (the
        stale reports of an earlier plan removed with them)."""
        from planner.report.export import plan_to_dict

        return {**plan_to_dict(self.plan), "outputs": {k: str(p) for k, p in self.outputs.items()},
                "removed": [str(p) for p in self.removed]}

    def to_frame(self, table: str = "candidates") -> pandas.DataFrame:
        """A table of the plan as a pandas DataFrame (column names carry their units: ``_bytes``, ``_usd``).

        Args:
            table: 'candidates' (every configuration, ranked, feasible first, with why_not: the
                csv report), 'alternatives' (the runners-up and why each lost), 'line_items' (the
                quote) or 'infeasible' (per binding rule, the candidates it excluded and the closest miss).

        Raises:
            InputError: another table name.
        """
        import pandas as pd

        if table == "candidates":
            return self.plan.candidates.to_frame()
        if table == "alternatives":
            return self.plan.alternatives.to_frame()
        if table == "infeasible":
            return self.plan.infeasible.to_frame()
        if table == "line_items":
            return pd.DataFrame([{**dataclasses.asdict(i), "total_usd": i.total_usd} for i in self.plan.items])
        from planner.core.errors import did_you_mean

        tables = ("candidates", "alternatives", "line_items", "infeasible")
        raise InputError(f"no table {table!r} in a plan", entry="table", hint=did_you_mean(str(table), tables))


def plan(scenario: Any = None, *extra: Any, catalog: Any = None, out: Any = None, format: str | Iterable[str] | None = None,
         top: int = 5, **unknown: Any) -> PlanResult:
    """Recommend the cheapest machine that runs every workload of a scenario.

    The Python form of ``planner plan``; it writes no file unless ``out`` is given.

    Args:
        scenario: a scenario file (path) or a mapping with the same keys (``name``, ``workloads``,
            ``constraints``, ...; scenarios/README.md).
        catalog: a Catalog (``planner.load_catalog()``), an overlay directory, or None for the shipped one.
        out: a directory to write the reports into, ``<out>/<scenario>.<format>`` (``--out``;
            default: none written). The set is written into a staging folder inside ``out`` and moved
            into place together, under the folder's lock (planner.core.reportset.ReportSet): ``out``
            holds the previous set or the new one, whole, even when the run is stopped.
        format: the reports to write into ``out`` ('xlsx,csv' or a list; default xlsx, csv and
            json): xlsx (the workbook with a live quote), csv (every candidate, ranked), json (the
            plan), md (the recommendation and memory breakdowns).
        top: how many alternatives to keep (0 to 1000; default 5).

    Returns:
        :class:`PlanResult`.

    Raises:
        NoFeasiblePlan: nothing fits (an InfeasibleError): the message gives the reasons per rule and
            what would fit; with ``out``, the csv and json asked for are written (``outputs``) and
            the workbook and Markdown report of an earlier plan of the scenario removed (``removed``).
        ScenarioError: an invalid scenario (file, line and key named); with ``out``, a scenario without
            ``name`` that has no file name to be named by (a mapping, a pipe: :func:`need_name`).
        CatalogError: an invalid catalog overlay.
        OutputError: ``out`` cannot be written, another run holds its lock, or a report there is
            read-only.
        InputError: ``format`` without ``out``, an empty ``out``, or an unknown format; OptionError:
            ``top`` out of range.
        UnknownKeywordError: a keyword plan does not take (with close matches; also a TypeError).

    Example:
        >>> from planner import plan
        >>> r = plan("scenarios/qlora-7b-12gb.yaml")
        >>> r.choice["gpu_id"], r.total_usd
        ('rtx-3060-12gb', 2169.0)
        >>> r.to_frame("alternatives")[["gpu_id", "capex_usd", "why_lost"]].head(3)
                     gpu_id  capex_usd              why_lost
        0  rtx-4060-ti-16gb     2339.0    costs $170.00 more
        1          rtx-4080     2889.0    costs $720.00 more
        2          rtx-4090     4009.0  costs $1,840.00 more
    """
    from planner.api.inputs import check_positional

    check_positional("plan", extra, "the scenario", "plan(scenario, catalog=catalog)")
    need_scenario("plan", scenario)
    from planner.core.atomic import write_text, write_text_chunks
    from planner.core.names import safe_stem
    from planner.cost.objective import plan as make_plan
    from planner.core.errors import ScenarioError
    from planner.core.fields import Entry
    from planner.cost.tco import check_request_inputs, read_costs
    from planner.solve.solver import NoFeasiblePlan
    from planner.report.export import candidates_csv_chunks, infeasible_to_dict, plan_to_dict

    check_keywords("plan", unknown, ("catalog", "out", "format", "top"))
    if out is None and format is not None:
        raise InputError("format= names the reports to write into out=, and no out= is given", entry="format",
                         hint="Give out=DIR as well, or leave format= out (plan() writes nothing by default).")
    # out joined to the current folder now, once; the overlay given (str, Path) is an input no hint names (h41a N13)
    out, given = resolved_out(out_of(out, (catalog,) if type(catalog) is str or isinstance(catalog, Path) else ()))
    formats = report_formats(format, api=True) if format is not None else DEFAULT_FORMATS
    top = top_of(top)
    cat = catalog_of(catalog)
    scenario = scenario_arg(scenario)  # read once: what need_name names is the file read
    sc, text, data = read_scenario(scenario, cat)
    need_name(scenario, data, given)
    # a request the time model cannot shape (tokens_per_request >= context): said at its key, as compare says it
    check_request_inputs(Entry(data, file=sc.file or None, path="", error=ScenarioError, line=1), sc.workloads)
    # the ownership inputs price time per job, cost per job and TCO beside the capex (planner.cost.objective)
    costs = read_costs(sc.costs, cat, sc.workloads)
    refused = None
    if out is not None:
        # read-only reports, a file where the folder would be, a file planner did not write or an input of this run
        # where a report would go (every format: an earlier plan's is removed): said now, by the path as given (later
        # steps go by out: planner.core.resolved); one only a feasible plan writes, once it is (_destinations_refused)
        refused = _destinations_refused(given, safe_stem(sc.name), formats, set_name=f"plan {sc.name}",
                                        inputs=run_inputs(sc, cat))
        before_writing(given, [f"{safe_stem(sc.name)}.{ext}" for ext in formats], cat, temp="xlsx" in formats)

    try:
        result = make_plan(sc, cat, top_k=top, costs=costs)
        if refused is not None:  # feasible: the xlsx or md it would write cannot replace that
            raise refused
    except NoFeasiblePlan as exc:
        exc.outputs, exc.removed, exc.notes = {}, [], ()
        if out is not None:
            stem = safe_stem(exc.scenario)
            # A quote or report from an earlier, feasible run of this scenario would now be stale: it is
            # removed in the same step as the csv and json come (one report set).
            # so is a csv or json of it that this run does not write (--format md): the folder then
            # holds only this run's reasons, never an earlier plan's "feasible: true"
            written = [ext for ext in ("csv", "json") if ext in formats]
            stale = [f"{stem}.{ext}" for ext in PLAN_FORMATS
                     if ext not in written and os.path.lexists(Path(out) / f"{stem}.{ext}")]
            if "csv" in formats or "json" in formats or stale:  # else: do not even create the directory
                with report_set(out, "plan", sc, cat, given) as rs:
                    if "csv" in formats:
                        write_text_chunks(rs.path(f"{stem}.csv"), candidates_csv_chunks(exc.candidates))
                    if "json" in formats:
                        write_text(rs.path(f"{stem}.json"),
                                   json_text(infeasible_to_dict(exc), indent=2, allow_nan=False) + "\n")
                    for name in stale:
                        rs.remove(name)
                    exc.outputs = {p.suffix[1:]: p for p in rs.commit()}
                    exc.removed = rs.removed
                exc.notes = tuple(rs.notes)  # after the with block: its clean-up's notes too (h33a m1)
        raise
    from planner.report.from_plan import plan_references

    # the catalog's SOURCES.md, read once: for the undefined-REF warning and the workbook's Sources sheet
    references = plan_references((result.assumptions or {}).get("catalog_files") or ())
    result = with_unknown_architectures(with_undefined_sources(result, references, cat), cat)
    if out is None:
        return PlanResult(result)
    stem = safe_stem(result.scenario)
    # every file of the set is written into a staging folder in out, then all are moved into place together
    # (planner.core.reportset): a failed or interrupted run leaves the previous set whole
    if "xlsx" in formats:  # openpyxl (a large import) loaded before the output folder is locked and staged
        import openpyxl  # noqa: F401
    before_writing(out, [f"{stem}.{ext}" for ext in formats], cat, temp="xlsx" in formats, shown=given)  # again
    with report_set(out, "plan", sc, cat, given) as rs:
        if "csv" in formats:
            write_text_chunks(rs.path(f"{stem}.csv"), candidates_csv_chunks(result.candidates))
        if "json" in formats:
            write_text(rs.path(f"{stem}.json"), json_text(plan_to_dict(result), indent=2, allow_nan=False) + "\n")
        if "xlsx" in formats:
            from planner.report.from_plan import workbook_data_from_plan
            from planner.report.workbook import write_workbook

            data = workbook_data_from_plan(result, scenario_text=text, references=references)
            write_workbook(data, rs.path(f"{stem}.xlsx"))
        if "md" in formats:
            from planner.report.render import plan_markdown, plan_text

            md = plan_markdown(plan_text(result), result.estimates)
            write_text(rs.path(f"{stem}.md"), md)
        # a report of an earlier plan that this set does not replace would now sit beside it, describing
        # another plan: it goes in the same step (the directory then holds one plan's reports, whole)
        for ext in PLAN_FORMATS:
            if ext not in formats and os.path.lexists(Path(out) / f"{stem}.{ext}"):
                rs.remove(f"{stem}.{ext}")
        paths = {p.suffix[1:]: p for p in rs.commit()}
        removed = tuple(rs.removed)
    notes = tuple(rs.notes)  # after the with block: its clean-up's notes too (h33a m1)
    return PlanResult(result, paths, removed, notes)


def _destinations_refused(out: Path, stem: str, formats: Iterable[str], *, set_name: str,
                          inputs: list[Path]) -> Exception | None:
    """Check the report set's destinations before the planning (planner.core.reportset.check_destinations): raise
    what refuses the folder or a csv or json report; return (not raise) what refuses only a report that a feasible
    plan alone writes (xlsx, md: an edited ``<stem>.md``), else None. An infeasible plan writes no xlsx or md and
    keeps such a file as a stale report, said (``Kept ...``), with its reasons and exit 1; a feasible one raises the
    returned error before it writes anything (h19a M6).

    Raises:
        DestinationError: as check_destinations (its first refusal), where the folder or a csv or json report is
            refused too.
    """
    from planner.core.destinations import refuse_input
    from planner.core.errors import DestinationError
    from planner.core.reportset import check_destinations

    names = [f"{stem}.{ext}" for ext in PLAN_FORMATS]
    writes = [f"{stem}.{ext}" for ext in formats]
    try:
        check_destinations(out, names, writes=writes, set_name=set_name, inputs=inputs)
        return None
    except DestinationError as exc:
        always = [n for n in writes if n.endswith((".csv", ".json"))]  # what an infeasible plan writes too
        if always == writes:
            raise
        try:
            for name in writes:
                if name not in always:  # an input of the run is never a stale report to keep
                    refuse_input(out / name, inputs)
            check_destinations(out, names, writes=always, set_name=set_name, inputs=inputs)
        except (DestinationError, ValueError):  # the folder, a csv or json report, an input, a name no file can
            # have (a UnicodeEncodeError of its path): said as before
            raise exc from None
        return exc


def before_writing(out: Path, names: Iterable[str], cat: Any, *, temp: bool, shown: Path | None = None) -> None:
    """Refuse, before the work, a report set whose reports or temporary files would land where a later run reads
    them: a report named as a catalog's source list (SOURCES.md) in a folder of overlay files
    (planner.catalog.report_sources); with ``temp`` (a workbook: openpyxl's temporary files), a temporary folder
    (TMPDIR) that is, or is inside, ``out`` or a ``--catalog`` overlay folder of ``cat``, or inside the shipped
    catalog or the package (planner.core.tempdir). ``shown``: ``out`` as the user gave it, for the lines
    (planner.core.resolved); default ``out``.

    Raises:
        DestinationError: naming the file or the variable, and what to do.
    """
    from planner.catalog.report_sources import refuse_report_as_sources
    from planner.core.resolved import shown_as

    with shown_as(out, shown or out):
        refuse_report_as_sources(out, names)
        if temp:
            from planner.core.tempdir import refuse_temp_in

            refuse_temp_in(out, overlay_folders(cat))


def overlay_folders(cat: Any) -> list[Path]:
    """The ``--catalog`` overlay folders of ``cat``: the folders of its files other than the shipped catalog's."""
    from planner.catalog.loader import default_catalog_dir

    shipped = os.path.realpath(default_catalog_dir())
    folders = dict.fromkeys(Path(f).parent for f in getattr(cat, "files", ()) or ())
    return [f for f in folders if os.path.realpath(f) != shipped]


def report_set(out: Path, command: str, sc: Any, cat: Any, shown: Any) -> Any:
    """The :class:`planner.core.reportset.ReportSet` of ``command`` ('plan', 'compare') for scenario ``sc`` in
    ``out``: its set named by the command and the scenario's name, the run's inputs never outputs, the scenario
    file recorded as the set's origin."""
    from planner.core.reportset import ReportSet

    return ReportSet(out, set_name=f"{command} {sc.name}", inputs=run_inputs(sc, cat), shown=shown,
                     origin=getattr(sc, "file", None) or None)


def run_inputs(sc: Any, cat: Any) -> list[Path]:
    """The files a run read: the scenario file, the catalog's files (overlays included), the
    ``SOURCES.md`` beside each of them (planner.catalog.sources reads it for the REF ids) and each
    workload's model config.json; none of them is ever replaced or removed by a report
    (planner.core.reportset.ReportSet ``inputs``)."""
    from planner.catalog.sources import SOURCES_FILE

    found: list[Path] = []
    base = Path(sc.file).parent if getattr(sc, "file", "") else Path(".")
    if getattr(sc, "file", ""):
        found.append(Path(sc.file))
    files = [Path(f) for f in getattr(cat, "files", ()) or ()]
    found.extend(files)
    found.extend(dict.fromkeys(f.parent / SOURCES_FILE for f in files))
    for w in getattr(sc, "workloads", ()) or ():
        variants = getattr(w, "variants", ()) or ()
        source = str(getattr(variants[0].workload, "model_source", "") or "") if variants else ""
        if not source or source.startswith("catalog:"):
            continue
        found.extend(model_files(source.removeprefix("hf-cache: "), base, hub=False))
    return found


def model_files(value: str, base: Path, *, hub: bool = True) -> list[Path]:
    """The paths a workload's ``model`` value may read: the value as a path from the current directory and
    from ``base`` (the scenario's or workload file's folder), each with the ``config.json`` inside it, and
    with ``hub``, the cached ``config.json`` of a Hugging Face id (planner.model.models.resolve_model's
    places) and the ``refs/main`` file that names its revision (read to find that config.json: every file the
    hub lookup reads). Paths that do not exist are listed too (whoever compares them stats them)."""
    found: list[Path] = []
    for candidate in (Path(value), base / value):
        found.extend([candidate, candidate / "config.json"])
    if hub:
        from planner.model.models import cached_config_path, hf_cache_dir

        from planner.core.errors import ModelConfigError

        try:
            cache = hf_cache_dir()
            found.append(cache / ("models--" + value.replace("/", "--")) / "refs" / "main")
            cached = cached_config_path(value, cache)
        except (OSError, ValueError, ModelConfigError):
            cached = None
        if cached is not None:
            found.append(cached)
    return found


def named_files(path: Any) -> list[Path]:
    """The files a scenario or workload file reaches through its keys, read from the file's YAML alone (no
    catalog, no checks, so that it can be known before a run starts): each ``model`` (the top-level one of a
    workload file, each of ``workloads:``), as :func:`model_files`. Empty for a file that is not a regular
    file (a pipe is read once, by the run) or not a YAML mapping: the run then says why.

    Used by planner.cli.streams to keep standard output and error off the files a run reads."""
    import stat

    from planner.core.yamlio import parse_yaml, read_text

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return []
        data = parse_yaml(read_text(Path(path)))  # the run's own reader: bounded, no alias bombs
    except Exception:  # noqa: BLE001 - any file the run itself will refuse, with its reason
        return []
    if not isinstance(data, Mapping):
        return []
    entries = [data] + [w for w in (data.get("workloads") or []) if isinstance(w, Mapping)] \
        if isinstance(data.get("workloads") or [], list) else [data]
    base = Path(path).parent
    return [f for e in entries if isinstance(e.get("model"), str) and e["model"].strip()
            for f in model_files(e["model"].strip(), base)]
