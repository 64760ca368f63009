"""Shared option types and option groups: the workload options of estimate, fit and calibrate
(passed on to planner.api as keyword arguments), and the --catalog option's catalog."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import click

from planner.cli.common import FALSE_WORDS, TRUE_WORDS, LineError, SingleValueCommand, refuse_repeats


#: Options whose value is a share, a fraction of at most 1, that the workload reader checks ('90%' gets 0.9).
SHARE_OPTIONS = ("--gpu-memory-utilization", "--lora-dropout")


def refuse_foreign_digits(value: Any, param: click.Parameter | None, ctx: click.Context | None, *,
                          whole: bool = False) -> None:
    """Refuse a number written in digits of another script ('٤٠٩٦', fullwidth '２'), which click's int and
    float (Python's int(), float()) would read: files and the API refuse them, so the command line does too
    (planner.core.fields.ascii_digits), with the ASCII spelling as the hint; so are a number with a control
    character in it or around it (named: a tab, U+001C-U+001F, U+0085, h25b M8), or spaces around it, a
    leading zero, '_' separators and a comma ('0,1': a decimal comma or a thousands separator,
    planner.core.units.separator_problem; ``whole``: the option takes a whole number, so only whole
    readings are hinted), and a number of more digits than any value planner reads
    (planner.core.units.MAX_NUMBER_DIGITS).

    Raises:
        LineError: naming the option.
    """
    from planner.core.fields import ascii_digits_hint

    if not isinstance(value, str) or param is None:
        return
    opt = param.opts[0]
    hint = ascii_digits_hint(value, lambda n: f"{opt} {n}", whole=whole)
    if hint is not None:
        from planner.core.fields import ascii_digits

        hint = _suffix_hint(opt, (ascii_digits(value) or "").strip(), whole) or hint
        raise LineError(f"{opt}: {value!r} is not written in ASCII digits. {hint}", ctx)
    from planner.core.shares import share_hint, share_key

    share_of = share_key(opt)  # a fraction: '0_1' and '01' most likely mean 0.1, never 1 (planner.core.shares)
    if "_" in value:  # Python's int() and float() drop '_' ('1_6' is 16): files refuse it, so this does too
        plain = value.strip().replace("_", "")
        if re.fullmatch(r"[-+]?0[0-9]+", plain):  # '01_024': 01024 would be refused next for its leading zero
            plain = str(int(plain))
        hint = (share_hint(share_of, value, lambda n: f"{opt} {n}") if share_of else _suffix_hint(opt, plain, whole)
                or f"Write the number without separators: {opt} {plain}.")
        raise LineError(f"{opt}: {value!r} is written with '_' separators. {hint}", ctx)
    if "," in value:  # files refuse a comma in a number (either reading may be meant): so does this (first: a
        # hint with spaces trimmed that kept the comma would be refused next)
        from planner.core.units import separator_problem

        separated = separator_problem(value, lambda n: f"{opt} {n}", alone=True, whole=whole)
        if separated is not None:
            raise LineError(f"{opt}: {separated[0]}. {separated[1]}", ctx)
    share = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*", value)
    top = getattr(param.type, "max", None)
    if share and (opt in SHARE_OPTIONS or top is not None and top <= 1):  # '--headroom 10%': a share is a fraction
        from decimal import Decimal

        raise LineError(f"{opt}: {value!r} is a percentage. Write the share as a fraction: "
                        f"{opt} {(Decimal(share.group(1)) / 100).normalize():f}.", ctx)
    digits = sum(c.isdigit() for c in value)
    from planner.core.units import MAX_NUMBER_DIGITS

    if digits > MAX_NUMBER_DIGITS:  # no count, size or rate planner reads has more (files refuse them too)
        raise LineError(f"{opt}: the number {value.strip()[:20]!r}...({digits:,} digits) is too long to read: no "
                        f"value planner reads has more than {MAX_NUMBER_DIGITS} digits. Check the value.", ctx)
    odd = re.search("[\x00-\x1f\x7f-\x9f\u2028\u2029]", value)
    if odd is not None:  # str.strip() reads a tab, U+001C-U+001F, U+0085 as spaces: named as what it is (h25b M8)
        from planner.core.errors import char_name

        blank = "[\\s\x00-\x1f\x7f-\x9f\u2028\u2029]"
        plain = re.sub(f"^{blank}+|{blank}+$", "", value)  # hinted where they were around the number, never inside
        plain = "" if re.search(blank, plain) else plain
        said = ("the control character " if odd.group() < "\u2028" else "") + char_name(odd.group())
        raise LineError(f"{opt}: {value!r} holds {said}, which is not a "
                        "space. Write the number alone" + (f": {opt} {plain}." if plain else "."), ctx)
    if value != value.strip():  # Python's int(' 2') is 2; a file's quoted ' 2' is refused as a text: so is this
        raise LineError(f"{opt}: {value!r} has spaces around the number. Write it without them: "
                        f"{opt} {value.strip()}.", ctx)
    bare = value.strip().lstrip("+-")
    if len(bare) > 1 and bare.isdigit() and bare.startswith("0"):  # files refuse 010 (YAML 1.1 octal): so does this
        hint = (share_hint(share_of, value, lambda n: f"{opt} {n}") if share_of else
                f"Write the number without the leading zero: {opt} {int(bare)}.")
        raise LineError(f"{opt}: {value!r} starts with a zero, which files refuse (YAML 1.1 reads 010 as 8). {hint}",
                        ctx)


def _suffix_hint(opt: str, fixed: str, whole: bool) -> str | None:
    """For a whole-number option, the hint for ``fixed`` (the value with its other problem fixed: ASCII digits,
    no '_') when it still holds a suffix the option refuses ('20Ki': its whole number, 20480), so the value
    hinted is one the option takes; None when it holds no letter."""
    from planner.core.fields import whole_number_hint

    if not whole or not re.search(r"[A-Za-z]", fixed):
        return None
    return whole_number_hint(fixed, lambda n: f"{opt} {n}")


#: A whole number written as a YAML 1.1 float ('4.0', '4.', '+2.0', '1.6e+1'), which a scenario file reads
#: as a float with a whole value and takes (planner.core.fields.Fields.int): the pattern is PyYAML's float
#: resolver's decimal form (https://yaml.org/type/float.html); '5.12e2' (no exponent sign) is text there.
_YAML_DECIMAL = re.compile(r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?")


def whole_decimal(value: Any, param: click.Parameter | None = None, ctx: click.Context | None = None) -> Any:
    """``value`` as a whole-number text where it is a decimal with a whole value ('4.0' -> '4', '+2.' -> '2'),
    as a scenario file or the API takes it; any other value unchanged (click then reads or refuses it).

    Raises:
        LineError: (with ``param``) three digits after the dot ('--seq-len 8.000'): 8, or 8000 with a dot separating
            thousands, as files refuse it (planner.core.units.dotted_thousands, h17b #4).
    """
    if isinstance(value, str) and param is not None:
        from planner.core.units import dotted_thousands

        opt = param.opts[0]
        dotted = dotted_thousands(value, lambda n: f"{opt} {n}", whole=True, only="whole")
        if dotted is not None:
            raise LineError(f"{opt}: {dotted[0]}. {dotted[1]}", ctx)
    if isinstance(value, str) and _YAML_DECIMAL.fullmatch(value):
        from decimal import Decimal

        exact = Decimal(value)  # the text's value: '2.9999999999999999' is no whole number though its float is 3.0
        if exact.is_finite() and exact == exact.to_integral_value() and abs(exact) < 10**15:
            return str(int(exact))
    return value


def refuse_underflow(value: Any, param: click.Parameter | None, ctx: click.Context | None) -> None:
    """Refuse a number text that is not 0 but reads as 0.0 ('--headroom 1e-400': below the smallest float), as
    files refuse it (planner.core.units.underflow_problem, h17b #3); no spelling of it is hinted.

    Raises:
        LineError: naming the option.
    """
    if isinstance(value, str) and param is not None:
        from planner.core.units import UNDERFLOW_HINT, underflow_problem

        underflow = underflow_problem(value)
        if underflow is not None:
            raise LineError(f"{param.opts[0]}: {underflow}. {UNDERFLOW_HINT}", ctx)


def refuse_other_spelling(value: Any, param: click.Parameter | None, ctx: click.Context | None, *,
                          whole: bool) -> None:
    """Refuse a number click would only call invalid, with the hint files give (h18b #4): for a whole-number
    option '1e3' (1000), '0x10' (16), '1.5' (a whole number), '1k' (planner.core.fields.whole_number_hint);
    for any option a hexadecimal, octal or binary number ('0x1': the value in decimal, as files hint it,
    planner.core.yamlrules.refuse_other_bases). Other values are left to click.

    Raises:
        LineError: naming the option.
    """
    if not isinstance(value, str) or param is None:
        return
    opt = param.opts[0]
    based = re.fullmatch(r"\s*([-+]?)0([xXoObB])([0-9A-Fa-f]+)\s*", value)
    if based is not None and not whole:
        base = {"x": 16, "o": 8, "b": 2}[based.group(2).lower()]
        try:
            meant = int(based.group(3), base)
        except ValueError:
            return
        word = {16: "a hexadecimal", 8: "an octal", 2: "a binary"}[base]
        raise LineError(f"{opt}: {value!r} is {word} number. Write the value in decimal: "
                        f"{opt} {based.group(1).replace('+', '')}{meant}.", ctx)
    if not whole or value.strip().lstrip("+-").isdigit():
        return
    from planner.core.fields import whole_number_hint

    if _YAML_DECIMAL.fullmatch(value) and float(value).is_integer():  # more digits than a float holds
        raise LineError(f"{opt}: {value!r} is not a whole number; it has more digits than a float "
                        f"holds, which would read it as {int(float(value))}. Write the whole number meant, "
                        "without decimals.", ctx)
    hint = whole_number_hint(value, lambda n: f"{opt} {n}")
    if hint is not None and not hint.startswith("Write the number without quotes"):
        raise LineError(f"{opt}: {value!r} is not a whole number. {hint}", ctx)


class _AsciiDigits:
    """A click number type that first refuses digits of other scripts (:func:`refuse_foreign_digits`);
    a whole-number type also reads a decimal with a whole value ('4.0') as files do (:func:`whole_decimal`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        refuse_foreign_digits(value, param, ctx, whole=isinstance(self, click.types.IntParamType))
        refuse_underflow(value, param, ctx)
        whole = isinstance(self, click.types.IntParamType)
        if whole:
            value = whole_decimal(value, param, ctx)
        refuse_other_spelling(value, param, ctx, whole=whole)
        if isinstance(self, click.FloatRange) and isinstance(value, str):
            from planner.core.units import outside_exactly

            if outside_exactly(value, self.min, self.max) is not None:  # '0.95000000000000000001': its float is 0.95
                raise_out_of_range(self, value, param, ctx)
        try:
            return super().convert(value, param, ctx)  # type: ignore[misc]
        except click.BadParameter:
            if isinstance(self, click.types._NumberRangeBase):
                raise_out_of_range(self, value, param, ctx)
            refuse_not_a_number(value, param, ctx, whole=whole)
            raise


def param_name(param: click.Parameter | None) -> str:
    """How a line names ``param``: an option by its first spelling ('--seq-len'), the scenario argument as
    'scenario' (as :func:`planner.cli.common.input_file_option` does), another argument by its metavar ('FILE...')."""
    if param is None:
        return "value"
    if isinstance(param, click.Option) and param.opts:
        return param.opts[0]
    return "scenario" if param.name == "scenario_file" else param.human_readable_name.rstrip(".")


def refuse_not_a_number(value: Any, param: click.Parameter | None, ctx: click.Context | None, *,
                        whole: bool) -> None:
    """Refuse, in planner's line, a value click's int() or float() could not read and no earlier check explained
    ('5\\xffff', 'abc'): the option, the value (a byte that was not UTF-8 as '\\xff') and what it takes.

    Raises:
        LineError: always, where ``param`` is known (else nothing: click's own error follows).
    """
    if param is None:
        return
    from planner.core.names import repr_text

    opt = param_name(param)
    what = "a whole number" if whole else "a number"
    raise LineError(f"{opt}: {repr_text(value)} is not {what}. {opt} takes {what} written in ASCII digits"
                    + (", e.g. " + f"{opt} {param.default}" if isinstance(param.default, (int, float))
                       and not isinstance(param.default, bool) else "") + ".", ctx)


def raise_out_of_range(kind: Any, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> None:
    """Refuse a number outside a range option's bounds ('--fsdp-version 3', '--headroom -0.1', '--headroom inf') in
    the words the files use ('must be at most 2, not 3'), with the range as the hint (a share's range in the
    problem, as planner.api.inputs words --headroom's: 'must be a fraction from 0 to 0.95, not 2'). A value click
    could not read at all returns.

    Raises:
        LineError: naming the option.
    """
    if param is None:
        return
    whole = isinstance(kind, click.IntRange)
    try:
        number = int(value) if whole else float(value)
    except (TypeError, ValueError, OverflowError):
        return
    from decimal import Decimal

    from planner.core.units import exact_text, outside_exactly, written_decimal

    opt = param_name(param)
    lo, hi = kind.min, kind.max
    shown = f"{number:g}" if isinstance(number, float) else str(number)
    side = outside_exactly(value, lo, hi) if isinstance(value, str) and not whole else None
    exact = written_decimal(value) if isinstance(value, str) else None
    if exact is not None and Decimal(shown) != exact:  # '0.9500000000000001' is not 0.95: shown as written (M2)
        shown = exact_text(value)
    if side == "below" or side is None and lo is not None and number < lo:
        problem = f"must be at least {lo:g}, not {shown}"
    else:
        problem = f"must be at most {hi:g}, not {shown}" if hi is not None else f"is out of range, not {shown}"
    from planner.core.shares import SHARES, share_key

    key = share_key(opt)
    example = f", e.g. {opt} {param.default:g}" if isinstance(param.default, (int, float)) else ""
    if key is not None:  # as the API words it (planner.api.inputs: 'must be a fraction from 0 to 0.95, not 2')
        s_lo, _, s_hi, _ = SHARES[key]
        problem = f"must be a fraction from {s_lo:g} to {s_hi:g}, not {shown}"
        hint = f"Write the share as a fraction{example}."
    elif lo is not None and hi is not None:
        hint = f"{opt} takes {'a whole number' if whole else 'a number'} from {lo:g} to {hi:g}{example}."
    else:
        hint = f"{opt} takes {'a whole number' if whole else 'a number'} of at least {lo:g}{example}."
    raise LineError(f"{opt}: {problem}. {hint}", ctx)


class Int(_AsciiDigits, click.types.IntParamType):
    """click.INT in ASCII digits."""


class Float(_AsciiDigits, click.types.FloatParamType):
    """click.FLOAT in ASCII digits."""


class IntRange(_AsciiDigits, click.IntRange):
    """click.IntRange in ASCII digits."""


class FloatRange(_AsciiDigits, click.FloatRange):
    """click.FloatRange in ASCII digits."""


INT = Int()
FLOAT = Float()


class Count(click.ParamType):
    """A whole number for --micro-batch, --seq-len, --context, --concurrency; 'max' points to 'planner fit'.

    Args:
        most: the name in planner.workload.options of the most the workload readers take for the option
            ('MAX_SEQ_LEN'), so that a number in another spelling outside that range ('1e9') is hinted the range,
            never digits the reader then refuses (:func:`refuse_outside_range`); None for no such hint.
    """

    name = "integer"

    def __init__(self, most: str | None = None) -> None:
        self.most = most

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.strip().lower() == "max" and param is not None:
            opt = param.opts[0]
            command = ctx.command_path if ctx is not None else "planner"
            raise LineError(f"{opt}: '{command}' takes a whole number, not 'max'. 'planner fit' finds the largest "
                             f"{opt[2:].replace('-', ' ')} that fits a card: planner fit --gpu ID {opt} max (with the "
                             "same other options).", ctx)
        refuse_foreign_digits(value, param, ctx, whole=True)
        refuse_underflow(value, param, ctx)
        value = whole_decimal(value, param, ctx)
        if self.most is not None:
            from planner.workload import options as limits

            refuse_outside_range(value, param, ctx, 1, getattr(limits, self.most))
        refuse_other_spelling(value, param, ctx, whole=True)
        try:
            return click.INT.convert(value, param, ctx)
        except click.BadParameter:
            refuse_not_a_number(value, param, ctx, whole=True)
            raise


def refuse_outside_range(value: Any, param: click.Parameter | None, ctx: click.Context | None, lo: int,
                         hi: int) -> None:
    """Refuse a whole-number option written in another spelling ('1e9', '2.5e7', '1.0e9') whose number lies
    outside ``lo`` to ``hi`` (the workload readers' range) with that range as the hint: the digits of '1e9' would be
    a value the reader then refuses (``--seq-len 1000000000``: at most 16777216). Plain digits are left to the
    reader, which names the range itself.

    Raises:
        LineError: naming the option, the value and the range.
    """
    if not isinstance(value, str) or param is None or value.strip().lstrip("+-").isdigit():
        return
    if not re.fullmatch(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*", value):
        return
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return
    if not math.isfinite(number) or lo <= number <= hi or (number == 0 and re.search(r"[1-9]", value)):
        return  # inside the range: the spelling's own hint; '1e-400' (no float holds it): refuse_underflow's
    opt = param.opts[0]
    side = "more" if number > hi else "less"
    # worded as a file's 'seq_len: 1e9' is (planner.core.fieldhints._outside_range_hint)
    raise LineError(f"{opt}: {value!r} is not a whole number. {value.strip()} is {side} than {opt} takes: give a "
                    f"whole number from {lo} to {hi}.", ctx)


class Choice(click.Choice):
    """click.Choice refusing a value in planner's line with close matches, as --engine's refusal words it
    (planner.core.fieldhints._not_a_choice: "--framework: 'torchtun' is not one of the choices. Did you mean
    'torchtune'?"), a byte that was not UTF-8 shown as '\\xff'. Every choice option of the command line uses it."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            if param is None or not isinstance(value, str):
                raise
        from planner.core.fieldhints import _not_a_choice
        from planner.core.names import byte_escapes

        problem, hint = _not_a_choice(value, [str(c) for c in self.choices], "is not one of the choices")
        raise LineError(f"{param_name(param)}: {byte_escapes(problem)}." + (f" {hint}" if hint else ""), ctx)


class PathType(click.Path):
    """click.Path refusing a directory where a file belongs (--workload, a scenario) or a file where a directory
    belongs (--catalog, --out) in planner's line: the option, the path (planner.core.names.path_text) and what
    to give instead; so is a path that cannot be read, a folder without search permission included
    (planner.core.denied); click's other refusals are left as they are."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from planner.core.denied import denied_problem

        try:
            converted = super().convert(value, param, ctx)
        except click.BadParameter:
            if param is None:
                raise
            import os

            from planner.core.names import path_text

            name, shown = param_name(param), path_text(os.fsdecode(value))
            if denied_problem(value, name):  # click's 'is not readable' with no hint (h21a m1)
                raise LineError(denied_problem(value, name), ctx) from None
            if not self.dir_okay and os.path.isdir(value):
                raise LineError(f"{name}: '{shown}' is a directory; {name} takes a file. Give the path of a file "
                                "in it, not the directory.", ctx) from None
            if not self.file_okay and os.path.exists(value) and not os.path.isdir(value):
                hint = ("Give a directory, or a new name for one (it is made)." if param.name == "out_dir" else
                        "Give the directory that holds the file, e.g. "
                        f"'{path_text(os.path.dirname(os.fsdecode(value)) or '.')}'.")
                raise LineError(f"{name}: '{shown}' is a file; {name} takes a directory. {hint}", ctx) from None
            raise
        problem = denied_problem(value, param_name(param)) if param is not None else None
        if problem:  # a folder without search permission, which click lets through (h21a m1)
            raise LineError(problem, ctx)
        return converted


class GpuLayers(click.ParamType):
    """--gpu-layers: a whole number or 'all' (the workload reader checks the range); 'max' is passed on
    for 'planner fit' and for 'planner estimate --gpu' (the most that fit the card), and the reader
    explains it elsewhere."""

    name = "N|all"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int):
            return value
        if param is None:  # no option to name: click's own words
            try:
                return int(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a layer count: give a whole number, or 'all'", param, ctx)
        refuse_foreign_digits(value, param, ctx, whole=True)
        refuse_underflow(value, param, ctx)
        from planner.workload.options import LAYER_WORDS

        opt = param_name(param)
        value = whole_decimal(value, param, ctx)
        text = str(value).strip().lower()
        if text in LAYER_WORDS and value != text:  # 'ALL', ' all': lower case only, as 'fit --concurrency MAX'
            raise LineError(f"{opt}: {value!r} is not a layer count. Did you mean {text!r}? The words (all, max, "
                            "auto) are written in lower case.", ctx)
        if text in LAYER_WORDS:
            return text
        refuse_other_spelling(value, param, ctx, whole=True)  # '1e3': its digits, as the counts hint (h21b M3)
        try:
            return int(text)
        except ValueError:
            pass
        from planner.core.fieldhints import _not_a_choice
        from planner.core.names import byte_escapes

        problem, hint = _not_a_choice(str(value), LAYER_WORDS, "is not a layer count")
        close = hint if hint is not None and hint.startswith("Did you mean") else None
        raise LineError(f"{opt}: {byte_escapes(problem)}. " + (f"{close} Or give a whole number of layers." if close
                        else f"{opt} takes a whole number of layers, or 'all'."), ctx)


class BoolSpellingCommand(SingleValueCommand):
    """A command whose on/off flags (``--flash-attention/--no-flash-attention``) also take a value,
    as users write them after a scenario's keys: ``--flash-attention false``, ``--flash-attention=off``
    (:data:`TRUE_WORDS`, :data:`FALSE_WORDS`) become ``--no-flash-attention``; a word that is neither
    is left for click (an extra argument, or the workload file)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        refuse_repeats(self, args, ctx)  # as given: '--compile true --compile false', before the rewrite
        args = bool_spellings(self, args)
        if not any(isinstance(p, click.Argument) for p in self.params):
            _refuse_flag_values(self, args, ctx)
        return super().parse_args(ctx, args)


def _refuse_flag_values(command: click.Command, args: list[str], ctx: click.Context) -> None:
    """An on/off flag followed by a word that is no boolean (the command takes no arguments, so the
    word can only be meant as its value): one line with the spellings it takes."""
    flags = {s: (p.opts[0], p.secondary_opts[0]) for p in command.params
             if isinstance(p, click.Option) and p.is_flag and p.secondary_opts and p.opts
             for s in p.opts + p.secondary_opts}
    for arg, following in zip(args, args[1:]):
        if arg == "--":
            return
        if arg in flags and not following.startswith("-"):
            on, off = flags[arg]
            raise LineError(f"{arg}: {following!r} is not on or off. Give {on} or {off} alone, or {on} "
                            "true/false (also yes/no, on/off, 1/0).", ctx)


def bool_spellings(command: click.Command, args: list[str]) -> list[str]:
    """``args`` with each on/off flag of ``command`` followed by a boolean word (or given one with
    '=') rewritten as the flag or its negation: ['--flash-attention', 'false'] ->
    ['--no-flash-attention']. '--' ends the options, as click reads them."""
    flags: dict[str, tuple[str, str]] = {}  # a flag as written -> (its on spelling, its off spelling)
    for p in command.params:
        if isinstance(p, click.Option) and p.is_flag and p.secondary_opts and p.opts:
            for spelling in p.opts + p.secondary_opts:
                flags[spelling] = (p.opts[0], p.secondary_opts[0])
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out += args[i:]
            break
        name, eq, word = arg.partition("=")
        if name in flags:
            on, off = flags[name]
            negated = name == off
            if not eq and i + 1 < len(args) and args[i + 1].lower() in TRUE_WORDS + FALSE_WORDS:
                word, eq = args[i + 1], "="
                i += 1
            if eq and word.lower() in TRUE_WORDS + FALSE_WORDS:
                value = word.lower() in TRUE_WORDS
                out.append(on if value != negated else off)
                i += 1
                continue
        out.append(arg)
        i += 1
    return out


def load_catalog_option(catalog_dir: str | None) -> Any:
    """The catalog of --catalog DIR (the shipped one with DIR merged over it), or the shipped one.

    Every command loads its catalog here (tests replace it with one read once).
    """
    from planner.catalog.loader import load_catalog
    from planner.core.errors import InputError

    if catalog_dir is not None and not str(catalog_dir).strip():  # '' would quietly mean the shipped catalog
        raise InputError("--catalog: " + ("is empty" if not str(catalog_dir) else "is blank (white space alone)"),
                         hint="Give the overlay directory, e.g. --catalog my-catalog, or leave --catalog out for the "
                              "shipped catalog.")
    return load_catalog(Path(catalog_dir) if catalog_dir else None)


ESTIMATE_OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("--model", dict(help="Catalog id, path to a config.json, or a hub id in the local HF cache.")),
    ("--task", dict(type=Choice(["train", "infer"]), help="train or infer.")),
    ("--method", dict(type=Choice(["full", "lora", "qlora", "adapter"]),
                      help="Training method (default full); adapter is LitGPT's LLaMA-Adapter (--framework litgpt).")),
    ("--recipe", dict(help="Precision recipe: fp32, amp-bf16, amp-fp16, mixed-bf16, mixed-bf16-fp32-grads, "
                      "pure-bf16, the fp16 variants, and fp8 (FP8 training on a card with FP8 tensor cores) (default "
                      "mixed-bf16; pure-bf16 for LoRA/QLoRA).")),
    ("--framework", dict(type=Choice(["transformers", "deepspeed", "fsdp", "torchtune", "litgpt", "unsloth"]),
                         help="Training stack; sets the defaults its recipes use for the levers below (default "
                              "transformers).")),
    ("--framework-version", dict(help="The framework's release, as it writes it (for deepspeed and fsdp the "
                                      "Transformers release); default: the newest release modelled. Mechanisms "
                                      "switch where they changed (Unsloth's cut cross-entropy, torchtune's FSDP2).")),
    ("--optimizer", dict(help="adamw, adamw-fused, adamw-8bit, paged-adamw, paged-adamw-8bit, sgd, sgd-momentum, "
                              "adafactor, lion (default adamw; the framework's otherwise).")),
    ("--micro-batch", dict(type=Count("MAX_MICRO_BATCH"), help="Sequences per GPU per forward pass.")),
    ("--seq-len", dict(type=Count("MAX_SEQ_LEN"), help="Tokens per training sequence.")),
    ("--grad-accum", dict(type=INT, help="Micro-batches per optimizer step (no activation memory; gradients stay "
                                                     "allocated between them).")),
    ("--gpus", dict(type=INT, help="GPUs in total. Training: data parallel x tensor parallel. Inference: replicas "
                                   "x --tp (a multiple of --tp; without --tp, one replica on all of them).")),
    ("--gpus-per-node", dict(type=INT, help="GPUs per machine (default: all; estimate --gpu G: the most G one "
                                            "catalog platform carries, e.g. 8 on an HGX baseboard).")),
    ("--tp", dict(type=INT, help="Tensor-parallel degree.")),
    ("--zero", dict(type=INT, help="ZeRO stage 0-3 (with an FSDP framework: 3 FULL_SHARD, 2 SHARD_GRAD_OP).")),
    ("--fsdp-version", dict(type=IntRange(1, 2), help="FSDP1 (flat parameters) or FSDP2 (per-parameter "
                                                                "shards), with fsdp, torchtune or litgpt.")),
    ("--fsdp-wrap", dict(type=Choice(["blocks", "separate"]),
                         help="LoRA under FSDP: whole decoder blocks as units, frozen base and adapters together "
                              "(LitGPT's default; FSDP1 then keeps a gradient for the whole base), or adapters in "
                              "units of their own (peft's policy, the Trainer's).")),
    ("--offload-optimizer/--no-offload-optimizer", dict(default=None, help="Optimizer states in host RAM.")),
    ("--offload-params/--no-offload-params", dict(default=None, help="Parameters in host RAM (ZeRO-3; FSDP's "
                                                                     "CPUOffload).")),
    ("--offload-activations/--no-offload-activations",
     dict(default=None, help="Saved activations in pinned host RAM (torchtune enable_activation_offloading, "
                             "torch save_on_cpu).")),
    ("--optimizer-in-backward/--no-optimizer-in-backward",
     dict(default=None, help="Step each parameter as its gradient completes (torchtune optimizer_in_bwd).")),
    ("--loss-chunks", dict(type=INT, help="Compute the logits and fp32 loss in N chunks (torchtune "
                                         "CEWithChunkedOutputLoss: 8); 0: whole.")),
    ("--fused-linear-loss/--no-fused-linear-loss",
     dict(default=None, help="Fused linear cross-entropy (Liger): the full logits never exist.")),
    ("--bnb-version", dict(help="bitsandbytes release (default 0.50.2); before 0.43.2 4-bit linears keep their "
                                "inputs.")),
    ("--compile/--no-compile", dict(default=None, help="torch.compile (the saved activations AOTAutograd keeps).")),
    ("--checkpointing", dict(type=Choice(["none", "full"]), help="Gradient checkpointing.")),
    ("--use-reentrant/--no-use-reentrant", dict(default=None, help="Checkpointing runs torch's reentrant variant "
                                                                   "(default: Transformers' non-reentrant one).")),
    ("--checkpoint-wrapper/--no-checkpoint-wrapper",
     dict(default=None, help="Checkpointing by torch's checkpoint_wrapper around each layer (FSDP's "
                             "apply_activation_checkpointing), which leaves use_cache on.")),
    ("--use-cache/--no-use-cache", dict(default=None, help="The Transformers model returns its KV cache in training "
                                                           "(default: on, the config's use_cache).")),
    ("--attention", dict(type=Choice(["eager", "sdpa", "flash"]), help="Attention kernel.")),
    ("--document-tokens", dict(type=INT, help="Packed sequences: tokens per document, each attended alone "
                                              "(attention time spans a document).")),
    ("--lora-rank", dict(type=INT, help="LoRA rank r.")),
    ("--lora-targets", dict(help="Comma-separated module names, or all-linear.")),
    ("--lora-dropout", dict(type=FLOAT, help="peft lora_dropout (default 0.0).")),
    ("--use-dora/--no-use-dora", dict(default=None, help="peft DoRA (LoraConfig use_dora): a trainable magnitude "
                                                         "per output feature and the weight norms recomputed "
                                                         "every forward.")),
    ("--adapter-dtype", dict(type=Choice(["fp32", "bf16", "fp16"]),
                             help="LoRA adapters, their gradients and states (default fp32, peft's; the model "
                                  "dtype with torchtune and litgpt).")),
    ("--double-quant/--no-double-quant", dict(default=None, help="QLoRA double quantization; inference with "
                                                                 "--weights nf4: LitGPT bnb.nf4-dq (default on).")),
    ("--quantize-head/--no-quantize-head", dict(default=None, help="Inference, --weights nf4 or int8: the output "
                                                                   "head quantized too (LitGPT generate --quantize "
                                                                   "bnb.*; default off, as Transformers).")),
    ("--load-in-8bit/--no-load-in-8bit", dict(default=None, help="LoRA on an LLM.int8 base (bitsandbytes "
                                                                 "load_in_8bit; default off).")),
    ("--load-in-4bit/--no-load-in-4bit", dict(default=None, help="--method adapter: an NF4 base (LitGPT --quantize "
                                                                 "bnb.nf4; with --double-quant bnb.nf4-dq).")),
    ("--prepare-kbit-training/--no-prepare-kbit-training",
     dict(default=None, help="QLoRA or --load-in-8bit: the script calls peft prepare_model_for_kbit_training "
                              "(fp32 non-quantized weights and activations; default off).")),
    ("--weights", dict(help="Inference weights: fp32, fp16, bf16, fp8, int8, int4-gptq, int4-awq, nf4, "
                                "mxfp4 (MXFP4 checkpoints such as gpt-oss), compressed-tensors (llm-compressor "
                                "checkpoints; the default when the config declares one); with --engine llama.cpp a GGUF preset "
                                "(Q4_K_M, Q5_K_M, Q6_K, Q8_0, Q3_K_M, Q2_K, IQ4_XS, F16, ...; default Q4_K_M).")),
    ("--group-size", dict(type=INT, help="GPTQ/AWQ group size.")),
    ("--kv-dtype", dict(help="KV cache dtype: fp32, fp16, bf16, fp8; llama.cpp: f16, q8_0, q4_0, ... "
                             "(--cache-type-k, and -v unless --kv-dtype-v).")),
    ("--kv-dtype-v", dict(help="llama.cpp: the V cache type when it differs from --kv-dtype (--cache-type-v).")),
    ("--context", dict(type=Count("MAX_SEQ_LEN"), help="Tokens per sequence in the KV cache.")),
    ("--concurrency", dict(type=Count("MAX_MICRO_BATCH"), help="Sequences served at once (per replica).")),
    ("--engine", dict(help="Inference engine: hf, vllm, llama.cpp (GGUF weights; for Ollama, llama.cpp with "
                           "Ollama's settings given: --context, --flash-attention, --kv-dtype, --concurrency).")),
    ("--engine-version", dict(help="The engine's release: vLLM '0.6.5' (before 0.8.0 the V0 engine), llama.cpp "
                                   "build 'b1792' (default: the current release modelled, which the output names).")),
    ("--enable-lora/--no-enable-lora", dict(default=None, help="vLLM LoRA serving (vllm serve --enable-lora): "
                                                               "GPU slots for adapters.")),
    ("--max-loras", dict(type=INT, help="vLLM: adapters in GPU slots at once (default 1).")),
    ("--max-lora-rank", dict(type=INT, help="vLLM: the slots' rank (default 16).")),
    ("--max-cpu-loras", dict(type=INT, help="vLLM: adapters cached in host RAM (default --max-loras).")),
    ("--gpu-layers", dict(type=GpuLayers(), help="llama.cpp n_gpu_layers (-ngl): layers on the GPU counting the "
                                                 "output layer, or 'all' (default); with --gpu, 'max' puts the most "
                                                 "that fit the card.")),
    ("--flash-attention/--no-flash-attention", dict(default=None, help="llama.cpp -fa (default on; off for an "
                                                    "--engine-version before b6327, where -fa became auto).")),
    ("--split-mode", dict(type=Choice(["layer", "row", "none"]),
                          help="llama.cpp --split-mode with --gpus N: layer (default, whole layers per GPU); "
                               "row is not modelled.")),
    ("--imatrix/--no-imatrix", dict(default=None, help="llama.cpp: the GGUF was quantized with an importance "
                                                       "matrix (default: only the presets llama-quantize makes only with one: "
                                                       "IQ1_*, IQ2_*, IQ3_XXS, IQ3_XS, Q2_K_S; --no-imatrix is "
                                                       "refused for them).")),
    ("--gpu-memory-utilization", dict(type=FLOAT, help="vLLM's share of the card.")),
    ("--max-num-batched-tokens", dict(type=INT, help="Tokens prefilled per forward pass (llama.cpp: n_ubatch, "
                                                     "-ub, default 512).")),
    ("--max-num-seqs", dict(type=INT, help="vLLM's cap on sequences per step (default: vllm serve's).")),
    ("--dataloader-workers", dict(type=INT, help="DataLoader num_workers per GPU process.")),
    ("--dataset-size", dict(help="Dataset size with unit, e.g. '20 GiB'.")),
    ("--dataset-format", dict(type=Choice(["arrow", "numpy", "mmap", "python"]), help="Dataset storage.")),
]


def estimate_options(fn):
    """The workload options (:data:`ESTIMATE_OPTIONS`) as click options of ``fn``."""
    for decl, kw in reversed(ESTIMATE_OPTIONS):
        fn = click.option(decl, **kw)(fn)
    return fn
