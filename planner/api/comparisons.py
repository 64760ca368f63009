"""``planner.compare``: the plan's purchase against renting cloud instances (``planner compare``)."""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.api.inputs import catalog_of, check_keywords, out_of
from planner.core.resolved import resolved_out
from planner.core.errors import InputError
from planner.core.escape import json_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from planner.cost.compare import Comparison
    from planner.solve.solver import Plan


@dataclass(frozen=True)
class CompareResult:
    """The rent-or-buy comparison of a scenario's plan.

    Attributes:
        comparison: per workload the local job time and cost against every cloud instance, the
            local TCO and the break-even (:class:`planner.cost.compare.Comparison`; money in USD).
        plan: the plan whose machine is priced (:class:`planner.solve.solver.Plan`).
        scenario: the scenario's name.
        outputs: the files written (format -> path: json, xlsx); empty without ``out``.
        top: the cloud instances :meth:`text` shows per workload (``planner compare --top``).
        notes: what writing the reports did beside them, one sentence each, as :attr:`planner.PlanResult.notes`:
            a staging folder a stopped run left, removed (its set may mix new files with older ones: run that
            command again) or left (it holds files planner cannot tell it wrote); a stale report kept because it
            changed since planner wrote it. Empty without ``out``.
    """

    comparison: Comparison
    plan: Plan
    scenario: str
    outputs: dict[str, Path] = field(default_factory=dict)
    top: int = 5
    notes: tuple[str, ...] = ()

    def text(self, *, verbose: bool = False) -> str:
        """The comparison as ``planner compare`` prints it, :attr:`top` cloud instances per workload
        (planner.cost.comparison_report.comparison_text); ``verbose``: with the arithmetic (``-v``)."""
        from planner.cost.comparison_report import comparison_text

        return comparison_text(self.comparison, top=self.top, verbose=verbose)

    def document(self) -> dict[str, Any]:
        """The comparison as the JSON report holds it (planner.cost.compare.comparison_to_dict, with ``scenario``)."""
        from planner.cost.comparison_report import comparison_to_dict
        from planner.report.export import jsonable

        return {**jsonable(comparison_to_dict(self.comparison)), "scenario": self.scenario}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, the document ``planner compare --json`` prints (money in USD, time in the
        units the keys name), with ``outputs`` (the paths written) when ``out`` was given."""
        doc = self.document()
        if self.outputs:
            doc["outputs"] = [str(p) for p in self.outputs.values()]
        return doc

    def to_frame(self) -> pandas.DataFrame:
        """Every cloud instance considered for every workload, one row each: workload, instance_id,
        provider, instance, gpu, gpu_count, region, feasible, why_not, usd_per_hour,
        spot_usd_per_hour, copies, hours_per_local_hour, usd_per_local_hour, cost_per_job_usd,
        usd_per_million_tokens (USD), tokens_per_s, as_of, source, hours_over_deadline (a training
        deadline's miss, h; empty where met or none)."""
        import pandas as pd

        cols = ["workload", "instance_id", "provider", "instance", "gpu", "gpu_count", "region", "feasible", "why_not",
                "usd_per_hour", "spot_usd_per_hour", "copies", "hours_per_local_hour", "usd_per_local_hour",
                "cost_per_job_usd", "usd_per_million_tokens", "tokens_per_s", "as_of", "source", "hours_over_deadline"]
        rows = []
        for w in self.document()["workloads"]:
            for o in w["cloud"]:
                rows.append({"workload": w["name"], **{k: o.get(k) for k in cols[1:] if k != "tokens_per_s"},
                             "tokens_per_s": (o.get("time") or {}).get("tokens_per_s")})
        return pd.DataFrame(rows, columns=cols)


def write_comparison_workbook(comparison: Comparison, plan: Plan, path: Path, *, scenario_text: str = "",
                              references: Any = None) -> Path:
    """The plan's workbook (planner.report.workbook) with the "Cloud vs Local" sheet added, written atomically.

    When a request rate needs several copies of the planned machine, the Quote lists every copy
    (each quantity x the copies) and the Summary's total price is their grand total: the capex
    the break-even rests on (planner.report.copies.workbook_data_for_copies).
    """
    from planner.catalog.loader import SourceRef
    from planner.report.copies import mark_copies, workbook_data_for_copies
    from planner.report.from_plan import workbook_data_from_plan
    from planner.report.sheets.cloud import add_cloud_sheet
    from planner.report.workbook import write_workbook

    data = workbook_data_from_plan(plan, scenario_text=scenario_text, references=references)
    # the cloud prices' sources join the catalog entries' on the Sources sheet
    seen = {s.id for s in data.sources}
    cloud = []
    for wc in comparison.workloads:
        for o in wc.cloud:
            if o.instance_id not in seen:
                seen.add(o.instance_id)
                cloud.append(SourceRef("cloud.yaml", o.instance_id, o.source, o.as_of))
    data = dataclasses.replace(data, sources=tuple(data.sources) + tuple(cloud))
    data = workbook_data_for_copies(data, comparison)

    def add(wb: Any) -> None:
        mark_copies(wb, comparison)
        add_cloud_sheet(wb, comparison, quote_copies=comparison.copies)

    return write_workbook(data, path, extra_sheets=[add])


class VolumeError(InputError):
    """``tokens_per_month`` (``--tokens-per-month``) refused. As an exception it is in the Python API's words: the
    entry is ``tokens_per_month`` and a hint's count is ``tokens_per_month='30T'``; :meth:`cli_line` is the line
    the command prints, naming the option (``--tokens-per-month: ...``, ``--tokens-per-month 30T``)."""

    def __init__(self, problem: str, *, hint: str | None = None, at: str = "", api_hint: str | None = None) -> None:
        """``at``: the item or key refused, after the name (``[0]``, ``['chat']``; the API's list and mapping forms).
        ``api_hint``: the hint in the API's words where the option's cannot be rewritten into them."""
        self.command_line = InputError(problem, entry="--tokens-per-month" + at, hint=hint).one_line()
        super().__init__(problem, entry="tokens_per_month" + at,
                         hint=api_hint or (_keyword_counts(hint) if hint else hint))

    def cli_line(self) -> str:
        """The error as the command line prints it (naming ``--tokens-per-month``), on one line."""
        return self.command_line


def _keyword_counts(text: str) -> str:
    """'--tokens-per-month qlora-7b=200M' as the keyword takes it: ``tokens_per_month='qlora-7b=200M'``."""
    return re.sub(r"--tokens-per-month (\S+?)(?=[.,;:)]*(?:\s|$))", lambda m: f"tokens_per_month={m.group(1)!r}",
                  text)


def _odd_count(item: Any) -> str | None:
    """How ``item`` is shown when it is neither a text nor a number (an array, bytes, an object: h24b M3), which
    the count readers would see as the text ``str()`` makes of it; None for a text or a number."""
    import numbers

    if isinstance(item, (str, numbers.Number)):
        return None
    plain = type(item) is type(None) or (type(item) is bytes and len(item) <= 40)  # no object's own __repr__
    return f"{item!r} ({type(item).__name__})" if plain else f"of type {type(item).__name__}"


def _list_problem(text: str, names: list[str]) -> VolumeError | None:
    """The refusal of ``text`` where it is a list of 'NAME=COUNT' pieces in one value ('a=100M,b=200M',
    'a=100M, b=200M', 'a=100M b=200M'), said before any count in it is judged; None for one piece, or a text that
    names a workload as a whole. Its hint, the repeated options (the API: a mapping), is offered only where it
    would pass: each piece names a workload of the scenario once (planner.core.names.resolve_name) with a count
    that passes, written as planner spells it ('100m' -> '100M'); else the workloads are listed (h37a 2, 3)."""
    import shlex

    from planner.core.names import clip_text, resolve_name

    sep = "commas" if "," in text else "blanks"
    pieces = [p.strip() for p in text.split(",")] if "," in text else text.split()
    if len(pieces) < 2 or not all("=" in p for p in pieces) or resolve_name(text.rpartition("=")[0], names):
        return None
    pairs: list[tuple[str, str]] = []
    for piece in pieces:
        given, _, count = piece.rpartition("=")
        name = resolve_name(given.strip(), names) if given.strip() else None
        if name is None or name in (n for n, _ in pairs):
            pairs = []
            break
        pairs.append((name, _count_that_passes(name, count.strip(), names)))
    problem = f"{clip_text(text)!r} is a list of {len(pieces)} counts in one value, separated by {sep}"
    if pairs and all(c is not None for _, c in pairs):
        return VolumeError(problem, hint="A list is given as one --tokens-per-month per workload: " + " ".join(
            f"--tokens-per-month {shlex.quote(f'{n}={c}')}" for n, c in pairs) + ".",
                           api_hint="Give a mapping, one key per workload: {" +
                                    ", ".join(f"{n!r}: {c!r}" for n, c in pairs) + "}.")
    valid = ", ".join(clip_text(n) for n in names[:12]) + (" ..." if len(names) > 12 else "")
    return VolumeError(problem, hint="A list is given as one --tokens-per-month NAME=COUNT per workload, e.g. "
                                     f"--tokens-per-month {shlex.quote(names[0] + '=200M')}. Valid: {valid}.",
                       api_hint=f"Give a mapping, one key per workload, e.g. {{{names[0]!r}: '200M'}}. Valid: {valid}.")


def _count_that_passes(name: str, count: str, names: list[str]) -> str | None:
    """``count`` for workload ``name`` as planner spells it where it then passes :func:`volume_overrides` ('100M';
    '100m' -> '100M', the fix its refusal gives), or None."""
    from planner.workload.options import token_text_problem

    for cand in (count, None):
        if cand is None:
            fixed: list[str] = []
            token_text_problem(count, lambda t: fixed.append(t) or t)
            if not fixed:
                return None
            cand = fixed[0]
        try:
            volume_overrides([f"{name}={cand}"], names)
            return cand
        except VolumeError:
            continue
    return None


def _digits_hint(raw: object, name: str, names: list[str]) -> str | None:
    """The hint for a token count written in another script's digits ('２００M'): the count in ASCII digits where that
    is a count --tokens-per-month takes and the workload name, if any, names one of ``names``; else the advice alone
    (h40a N3: '２００M,３００M' and 'q=２００M' were hinted as values the next run refuses); None for other texts."""
    from planner.core.fields import ascii_digits, ascii_digits_hint
    from planner.core.names import resolve_name
    from planner.workload.spec import parse_token_count

    fixed = ascii_digits(raw) if isinstance(raw, str) else None
    if fixed is None:
        return _letter_digits_hint(raw, name, names)
    if parse_token_count(fixed.strip()) is None or (name and resolve_name(name, names) is None):
        return "Write the number in ASCII digits, nothing else with it."
    return ascii_digits_hint(raw, lambda n: f"--tokens-per-month {(name + '=') if name else ''}{n}")


#: Letters drawn like a digit in a typed count: Latin and Cyrillic O for 0, l and I for 1 (h41a N12: '1OOM').
_LETTER_DIGITS = str.maketrans("Oo\u041e\u043eIl", "000011")


def _letter_digits_hint(raw: object, name: str, names: list[str]) -> str | None:
    """The hint for a token count with a letter drawn like a digit among its digits ('1OOM', 'l00M', Cyrillic 'О'):
    the count with those letters made digits, where that is a count --tokens-per-month takes and the name, if any,
    is one of ``names``; else None."""
    from planner.workload.spec import parse_token_count

    m = re.fullmatch(r"([0-9Oo\u041e\u043eIl]+(?:\.[0-9Oo\u041e\u043eIl]+)?)([kKMBT]?)", raw.strip()) \
        if isinstance(raw, str) else None
    if m is None or not re.search(r"[0-9]", m.group(1)) or m.group(1) == m.group(1).translate(_LETTER_DIGITS):
        return None
    fixed = m.group(1).translate(_LETTER_DIGITS) + m.group(2)
    if parse_token_count(fixed) is None or (name and name not in names):
        return None
    return (f"It holds a letter drawn like a digit (O for 0, l or I for 1): write --tokens-per-month "
            f"{(name + '=') if name else ''}{fixed}.")


def volume_overrides(value: Any, names: list[str]) -> dict[str, float]:
    """``tokens_per_month`` as :func:`compare` takes it, as workload name -> tokens a month.

    ``value``: None; a count (a number or '200M', planner.workload.spec.parse_token_count) for a
    scenario of one workload; a mapping name -> count; a 'NAME=COUNT' string, or a list of 'NAME=COUNT' /
    'COUNT' strings (``planner compare --tokens-per-month``, repeatable). A name is matched as written, in
    another Unicode spelling (NFKC) or in another case.

    Raises:
        VolumeError: (an InputError naming ``tokens_per_month``; its :meth:`VolumeError.cli_line` names
            ``--tokens-per-month``) a count that is not one or not above 0 or above 31T, an empty name ('=1M'), an unknown workload name (with a
            did-you-mean; a name in another Unicode spelling, NFKC-equal, names its workload), a workload
            named twice, a bare count for a scenario of several workloads, or an empty mapping or list; a
            value, list item or mapping value that is neither a text nor a number (an array, bytes), named at
            its item (``tokens_per_month[0]``) or key (``tokens_per_month['chat']``).
    """
    from planner.core.errors import did_you_mean
    from planner.core.names import clip_text, resolve_name
    from planner.workload.options import token_text_problem
    from planner.workload.spec import MAX_TOKENS_PER_MONTH, TOKENS_PER_MONTH_LIMIT, parse_token_count

    if value is None:
        return {}
    from planner.api.inputs import plain_texts

    value = plain_texts(value, entry="tokens_per_month")  # a str subclass as the text it holds, not its __str__
    if isinstance(value, (dict, list, tuple)) and not value:  # refused as other wrong values are, not "not given"
        raise VolumeError(f"is empty ({type(value).__name__})",
                          hint="Leave tokens_per_month out (or None) to use the scenario's own, or give counts: "
                               "{'NAME': '200M'}, or '200M' for a one-workload scenario.")
    if isinstance(value, str) and "=" in value:  # 'NAME=200M' in one string, as the CLI takes it
        value = [value]
    if isinstance(value, dict):
        for k in value:  # plain_texts made every str subclass plain: anything else is no name, never its str() text
            if type(k) is not str:
                raise VolumeError(f"has a key of type {type(k).__name__}, not a text", at=f"[{clip_text(repr(k))}]",
                                  hint=f"Key each count by the workload's name as a str: {{{names[0]!r}: '200M'}}.")
        items = [(k, v) for k, v in value.items()]
        for k, v in items:
            odd = _odd_count(v)
            if odd is not None:
                raise VolumeError(f"is {odd}, not a count", at=f"[{k!r}]",
                                  hint=f"Give a number of tokens or a text: {{{k!r}: '200M'}} (k, M, B, T).")
            if k != k.strip():  # {'qlora-7b ': ...}: refused as the 'NAME =COUNT' string is (h15b leftover)
                raise VolumeError(f"key {k!r} has a blank at its {'start' if k != k.lstrip() else 'end'}",
                                  hint=f"Write the workload's name without blanks: {{{k.strip()!r}: ...}}.")
    elif isinstance(value, (list, tuple)):
        items = []
        for i, x in enumerate(value):
            odd = _odd_count(x)
            if odd is not None:  # not split at '=' in the text str() makes of it (h24b M3)
                raise VolumeError(f"is {odd}, not a text", at=f"[{i}]",
                                  hint=f"Give each item as a str: '{names[0]}=200M', or the count alone for a "
                                       "one-workload scenario.")
            listed = _list_problem(str(x), names)  # 'a=1M,b=2M': refused as a list before its counts (h37a 2)
            if listed is not None:
                raise listed
            name, sep, count = str(x).rpartition("=")  # the last '=': a workload's name may hold one ('a=b')
            if sep and not name.strip():  # '=1M' names no workload: not taken for a bare count
                shown = count.strip() if re.fullmatch(r"[0-9][0-9_.,]*[kKMBT]?", count.strip()) else "200M"
                raise VolumeError(f"{clip_text(x)!r} names no workload before '='",  # a count, as a count
                                  hint=f"Write NAME={shown} (e.g. --tokens-per-month "  # ('=1+1': 200M, h34b m11)
                                       f"{names[0]}={shown}), or the count alone for a one-workload "
                                       "scenario.")
            if sep and name != name.strip():  # 'qlora-7b =200M': written as no other option's value is
                where = "before the '='" if name != name.rstrip() else "before the workload name"
                raise VolumeError(f"{clip_text(x)!r} has a blank {where}",
                                  hint=f"Write it without blanks: --tokens-per-month {name.strip()}={count.strip()}.")
            items.append((name, count) if sep else ("", x))
    else:
        odd = _odd_count(value)
        if odd is not None:
            raise VolumeError(f"is {odd}, not a count",
                              hint=f"Give a str or a number: '200M' (k, M, B, T), or {{'{names[0]}': '200M'}}.")
        items = [("", value)]
    out: dict[str, float] = {}
    from planner.core.fields import plain_number, shown_number
    from planner.core.units import dotted_thousands, separator_problem

    for name, raw in items:
        # the name judged before the count, so that a count's hint names a known workload, never a lookalike one
        # a pasted hint would be refused for in turn (h41a N12); another Unicode spelling (NFKC), case ('QLORA-7B')
        # or dash names it too: two workloads' names never clash (planner.core.names.resolve_name, as costs.mfu
        # and batch_inference name them)
        given, name = name, ((resolve_name(name, names) or name) if name else name)
        if name and name not in names:
            raise VolumeError(f"no workload {clip_text(name)!r} in the scenario", hint=did_you_mean(name, names))
        try:
            plain = plain_number(raw)
        except InputError as exc:  # its own __float__ raised (h28b N1)
            raise VolumeError(exc.problem, hint=exc.hint, at=f"[{name!r}]" if name else "") from None
        count = parse_token_count(plain)  # numpy.int64, Decimal, Fraction: the number they hold
        bare = isinstance(raw, str) and re.fullmatch(r"\s*[0-9][0-9,]*\s*", raw) is not None  # a whole count
        separated = separator_problem(raw, lambda t: f"--tokens-per-month {(name + '=') if name else ''}{t}",
                                      whole=bare)
        if separated is not None:  # '1,5M': 1.5M or 15M? planner reads neither
            raise VolumeError(separated[0], hint=separated[1])
        dotted = dotted_thousands(raw if isinstance(raw, str) else None,
                                  lambda t: f"--tokens-per-month {(name + '=') if name else ''}{t}", whole=True)
        if dotted is not None:  # '100.000': 100, or 100000 with a dot separating thousands (h17b #4)
            raise VolumeError(dotted[0], hint=dotted[1])
        problem = token_text_problem(raw, lambda t: f"--tokens-per-month {(name + '=') if name else ''}{t}") \
            if count is None else None
        if problem is not None:  # '2e8', '.2B', '+5M': written as no size's number is
            raise VolumeError(problem[0], hint=problem[1])
        if count is None or count != count:
            raise VolumeError(f"{shown_number(raw)} is not a token count",
                              hint=_digits_hint(raw, name, names)
                              or "Write a number of tokens, e.g. --tokens-per-month 200M (k, M, B, T), or NAME=200M.")
        if not 0 < count <= MAX_TOKENS_PER_MONTH:
            shown = shown_number(raw if isinstance(raw, str) else plain)  # Decimal('1E+999999999'), never 10**9 digits
            raise VolumeError(f"must be above 0 and at most {TOKENS_PER_MONTH_LIMIT}, not {shown}",
                              hint="The tokens the workload processes a month: trained (training) or generated "
                                   f"(inference), e.g. --tokens-per-month {(name + '=') if name else ''}200M.")
        if not name:
            if len(names) != 1:
                raise VolumeError(f"a bare count is ambiguous: the scenario has {len(names)} workloads",
                                  hint=f"Name the workload: --tokens-per-month {names[0]}=200M (one per workload).")
            name = given = names[0]
        if name in out:
            raise VolumeError(f"names workload {clip_text(name)!r} twice (as {ascii(clip_text(given))} too)",
                              hint="Give each workload once.")
        out[name] = count
    return out


def compare(scenario: Any = None, *extra: Any, catalog: Any = None, out: Any = None, tokens_per_month: Any = None, top: Any = 5,
            **unknown: Any) -> CompareResult:
    """Compare buying the planned machine with renting cloud instances.

    The Python form of ``planner compare``: plans the scenario as :func:`planner.plan` does, then
    times every workload on the local GPUs and on every cloud instance that fits it (same memory
    model), and prices both: per workload the time and cost per job and per million tokens, the
    local TCO, and the break-even in hours of use and in months at the scenario's utilization,
    on-demand and spot. The scenario's ``costs:`` mapping sets the inputs (planner.cost.tco).
    It writes no file unless ``out`` is given.

    Args:
        scenario: a scenario file (path) or a mapping with the same keys, ``costs`` included.
        catalog: a Catalog (``planner.load_catalog()``), an overlay directory, or None for the shipped one.
        out: a directory for ``<scenario>-compare.json`` and ``<scenario>-compare.xlsx`` (the plan's
            workbook with the "Cloud vs Local" sheet), one report set moved into place together as
            :func:`planner.plan` writes its (planner.core.reportset.ReportSet); default: none written.
        tokens_per_month: the tokens each workload processes a month (training: trained; inference:
            generated), from which its busy hours are derived (:func:`volume_overrides`: a count such
            as '200M' for a one-workload scenario, or {name: count}); it replaces the workloads'
            ``tokens_per_month`` and ``hours_per_month``. Default: as the scenario gives them.
        top: the cloud instances per workload that :meth:`CompareResult.text` shows (``--top``; 1 to
            1000, default 5); the JSON, the frame and the workbook hold them all.

    Returns:
        :class:`CompareResult`.

    Raises:
        NoFeasiblePlan: nothing fits the scenario (an InfeasibleError), as for :func:`planner.plan`.
        ScenarioError: with ``out``, a scenario without ``name`` and no file name (planner.api.plans.need_name);
            an invalid scenario or ``costs`` key (``requests_per_hour`` must be above 0,
            ``tokens_per_request`` below the context).
        CatalogError, OutputError: as for :func:`planner.plan`.
        UnknownKeywordError: a keyword compare does not take (also a TypeError).
        OptionError: ``top`` not a whole number from 1 to 1000.

    Example:
        >>> from planner import compare
        >>> r = compare("scenarios/compare-qlora-7b-12gb.yaml")
        >>> r.comparison.break_even_months.text
        'local breaks even after 19.3 months'
        >>> r.to_frame()[["workload", "instance_id", "usd_per_local_hour"]].head(2)
           workload    instance_id  usd_per_local_hour
        0  qlora-7b  aws-g6-xlarge            0.369550
        1  qlora-7b  aws-g5-xlarge            0.407477
    """
    from planner.api.inputs import check_positional

    check_positional("compare", extra, "the scenario", "compare(scenario, catalog=catalog)")
    from planner.api.plans import (before_writing, need_name, need_scenario, read_scenario, run_inputs,
                                   scenario_arg, top_of)

    need_scenario("compare", scenario)
    from planner.core.errors import ScenarioError
    from planner.solve.solver import NoFeasiblePlan
    from planner.core.fields import Entry
    from planner.core.names import safe_stem
    from planner.cost.compare import compare as run_compare
    from planner.cost.tco import check_request_inputs, read_costs
    from planner.cost.objective import plan as make_plan

    check_keywords("compare", unknown, ("catalog", "out", "tokens_per_month", "top"))
    top = top_of(top, least=1)
    # the overlay as given (a plain str or Path: a PathLike's __fspath__ is read once, by catalog_of) is an input
    # an out= hint never names (h41a N13)
    overlay = (catalog,) if type(catalog) is str or isinstance(catalog, Path) else ()
    out, given = resolved_out(out_of(out, overlay))  # a path (joined to the current folder now, once: every step goes by it)
    cat = catalog_of(catalog)
    scenario = scenario_arg(scenario)  # read once: what need_name names is the file read
    sc, text, data = read_scenario(scenario, cat)  # read once: the scenario and its costs: block
    need_name(scenario, data, given)
    root = Entry(data, file=sc.file or None, path="", error=ScenarioError, line=1)
    check_request_inputs(root, sc.workloads)
    costs = read_costs(root.child("costs", None), cat, sc.workloads)
    if out is not None:
        from planner.core.reportset import check_destinations

        # read-only reports, a file where the folder would be: said before the work (at the call's start, as the
        # path was given; every later step goes by out, resolved: planner.core.resolved)
        check_destinations(given, [f"{safe_stem(sc.name)}-compare.{ext}" for ext in ("json", "xlsx")],
                           set_name=f"compare {sc.name}", inputs=run_inputs(sc, cat))
        # a TMPDIR that is out or an overlay folder: the workbook's temporary files would land there
        before_writing(given, [f"{safe_stem(sc.name)}-compare.{ext}" for ext in ("json", "xlsx")], cat,
                       temp=True)
    try:
        planned = make_plan(sc, cat, costs=costs, explain=False)
    except NoFeasiblePlan as exc:
        if out is not None:
            _write_infeasible(exc, out, sc, cat, shown=given)
        raise
    volumes = volume_overrides(tokens_per_month, [w.name for w in sc.workloads])
    from planner.cost.tco import BusyHoursError

    try:
        comparison = run_compare(planned, sc, cat, costs, tokens_per_month=volumes or None)
    except BusyHoursError as exc:  # counts the caller gave: named as given, --tokens-per-month (h28b M8)
        if not volumes or set(volumes) != {w.name for w in sc.workloads}:
            raise
        raise VolumeError(exc.problem, hint="Below one busy hour a year the cost per busy hour runs to absurd sums: "
                          "give the tokens the workloads process a month (e.g. --tokens-per-month 200M), or the "
                          "scenario's costs.utilization.") from None
    from planner.catalog.check import overlay_source_warnings

    # an overlay's SOURCES.md that cannot be read, REF ids it cites defined nowhere: said, not only in the workbook
    told = overlay_source_warnings(cat)
    if told:
        comparison = dataclasses.replace(comparison, warnings=tuple(comparison.warnings) + told)
    result = CompareResult(comparison, planned, sc.name, top=top)
    if out is None:
        return result
    from planner.api.plans import report_set
    from planner.core.atomic import write_text

    import openpyxl  # noqa: F401  (a large import: loaded before the output folder is locked and staged)

    stem = safe_stem(sc.name) + "-compare"
    before_writing(out, [f"{stem}.{ext}" for ext in ("json", "xlsx")], cat, temp=True, shown=given)  # again: said now
    # the json and the workbook are one report set: staged in out, then moved into place together
    with report_set(out, "compare", sc, cat, given) as rs:
        write_text(rs.path(f"{stem}.json"), json_text(result.document(), indent=2, allow_nan=False) + "\n")
        write_comparison_workbook(comparison, planned, rs.path(f"{stem}.xlsx"), scenario_text=text)
        written = {p.suffix[1:]: p for p in rs.commit()}
    notes = tuple(rs.notes)  # after the with block: its clean-up's notes too (h33a m1)
    return dataclasses.replace(result, outputs=written, notes=notes)


def _write_infeasible(exc: Any, out: Path, sc: Any, cat: Any, *, shown: Path | None = None) -> None:
    """Nothing fits the scenario: the comparison's json says so (the reasons and the candidates, as
    ``planner plan`` writes them) and a workbook of an earlier, feasible comparison goes in the same step,
    so ``out`` never holds a comparison the latest run contradicts. Fills ``exc.outputs``, ``exc.removed``
    and ``exc.notes`` as :func:`planner.plan` does. ``out``: the folder resolved at the call's start (absolute),
    ``shown``: as the user gave it (planner.core.resolved).

    Raises:
        OutputError: as for a comparison's reports.
    """
    from planner.api.plans import report_set
    from planner.core.atomic import write_text
    from planner.core.names import safe_stem
    from planner.report.export import infeasible_to_dict

    stem = safe_stem(sc.name) + "-compare"
    with report_set(out, "compare", sc, cat, shown) as rs:
        write_text(rs.path(f"{stem}.json"), json_text(infeasible_to_dict(exc), indent=2, allow_nan=False) + "\n")
        if os.path.lexists(out / f"{stem}.xlsx"):  # a name that holds no file of planner's is kept, and said
            rs.remove(f"{stem}.xlsx")
        exc.outputs = {p.suffix[1:]: p for p in rs.commit()}
        exc.removed = rs.removed
    exc.notes = tuple(rs.notes)  # after the with block: its clean-up's notes too (h33a m1)
