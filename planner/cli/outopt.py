"""The ``--out`` option's checks (plan, compare, catalog import-skypilot, calibrate): an empty or blank path, and a
path a shell, an editor or a config file left otherwise than meant (quotes, '~' or '$VAR' unexpanded, invisible
characters, blanks at a folder's edge, a URL, a file descriptor), each refused in one line with the path meant as
a hint only where that path passes every rule a run applies (planner.core.outhint.settled) and is no input of the
run. Importing this module does no work."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import click

from planner.cli.common import LineError
from planner.core.names import escape_unsafe, shell_word
from planner.core.outpath import UNEXPANDED


def out_dir_option(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Refuse an empty --out ('' would mean the current directory without a word), and a path a shell or an editor
    left otherwise than meant (:func:`_out_checks`); ``calibrate --out`` names a file, and its lines say so (h33a m7:
    they spoke of "the folder's name")."""
    text = str(value) if value is not None else ""
    if param.name == "calibration_file" and text.strip() and (text.endswith("/") or text.rsplit("/", 1)[-1] in (".", "..")):
        raise LineError(f"--out: {escape_unsafe(repr(text))} names a folder (it ends with "  # h33a m7: 'cal/new/'
                        f"{repr('/') if text.endswith('/') else repr(text.rsplit('/', 1)[-1])}); --out takes a file. Give "
                        f"the path of a file in it, e.g. --out {shell_word(text.rstrip('/') + '/calibration.yaml')}.", ctx)
    try:
        return _out_checks(ctx, param, value)
    except LineError as exc:
        if param.name != "calibration_file":
            raise
        first_is_folder = "/" in text.rstrip("/") and " begins with " in exc.line  # "'cal'/x.yaml": a folder's
        line = exc.line.replace("the folder's name", "a folder's name" if first_is_folder else "the file's name")
        line = line.replace("part of a folder's name", "part of the file's or a folder's name") \
            if not first_is_folder else line
        if "/" not in text.rstrip("/"):  # '$HOME.yaml', '~x.yaml': the word the shell left is the file (h35a m1)
            line = line.replace("would name a folder", "would name a file").replace(
                "every command given the folder later", "every command given the file later")  # '-c.yaml' (h36a 9)
        last = text.rsplit("/", 1)[-1]
        named = f"has a folder {escape_unsafe(repr(last))} on its path"
        if last and named in line:  # 'cal/"x".yaml': the quoted name is the file's (h34a m3)
            line = line.replace(named, f"has the file name {escape_unsafe(repr(last))}").replace(
                "that folder's name", "the file's name")
        raise LineError(line, ctx) from None


def _out_checks(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """:func:`out_dir_option`'s checks, in the words of an --out folder."""
    if value is not None and not str(value).strip():
        what = "a directory for the reports" if param.name != "calibration_file" else "a file for the calibration"
        shown = _example(param.name == "calibration_file")
        example = "" if shown is None else f", e.g. --out {shown}" + (
            " (or --out . for the current directory)" if param.name != "calibration_file" and shown == "reports"
            else "")
        said = "is empty" if not str(value) else "is blank (white space alone)"
        raise LineError(f"--out: {said}; give {what}{example}.", ctx)
    text = str(value) if value is not None else ""
    shown = _example(param.name == "calibration_file")
    local_example = ("a local file's path" if param.name == "calibration_file" else "a local folder's path") + (
        f", e.g. --out {shown}." if shown is not None else ".")
    as_file = param.name == "calibration_file"  # a hint is checked as calibrate's file, else as a folder (h37a 7)
    if text == "-":  # by convention standard output, which --out never is: a folder (or file) named '-' (h16b 13h)
        kind = "file" if param.name == "calibration_file" else "folder"
        json_flag = any(p.name == "as_json" for p in ctx.command.params)
        raise LineError(f"--out: '-' would name a {kind} called '-': --out never means standard output. "
                        + ("Give --json to print the measurements on standard output (the calibration file is "
                           "still written), or w" if kind == "file" and json_flag else
                           "Give --json to print the result on standard output, or w" if json_flag else "W")
                        + f"rite --out ./- for a {kind} named '-'.", ctx)
    if text.startswith("~") or re.match(r"\$\{?[A-Za-z_]", text):
        # a quoted '~/rep' or '$HOME/rep' reaches planner unexpanded: the folder would be named '~' or '$HOME' here;
        # PowerShell's '$env:TEMP' is one variable too (h31a m1)
        said = text.split("/", 1)[0] if text.startswith("~") else \
            re.match(r"\$\{?[A-Za-z_][A-Za-z_0-9]*\}?(?::[A-Za-z_][A-Za-z_0-9]*)?", text).group()
        folder = text.split("/", 1)[0]
        if _no_such_user(folder):  # '~nosuchuser/x': the shell leaves it as written too, quoted or not (h31b M3)
            raise LineError(f"--out: {text!r} begins with {folder!r}, but no user {folder[1:]!r} is known here, so it "
                            f"would name a folder {folder!r} in the current directory. Give the path itself.", ctx)
        # shell-safe: "~/'x y'", not "~/x y" (h35a); PowerShell's variable, which bash does not read, as written
        unquoted = text if re.fullmatch(r"\$env:[A-Za-z_][A-Za-z0-9_]*[\\/A-Za-z0-9._-]*", text) \
            else _hint(ctx, text, as_file)
        raise LineError(f"--out: {text!r} begins with {said!r}, which the shell did not expand (it was quoted), so "
                        f"it would name a folder {folder!r} in the current directory. " +
                        (f"Write it unquoted (--out {unquoted}), or give the path itself." if unquoted else
                         "Give the path itself."), ctx)
    if (m := UNEXPANDED.search(text)) is not None:  # 'x/$HOME', '$(pwd)/x', '`pwd`': literal folders
        # a command substitution's result cannot be known here and running it is the risk: never "unquote" it (h41a N19)
        command = m.group().startswith(("$(", "`"))
        raise LineError(f"--out: {text!r} holds {m.group()!r}, which the shell did not expand (it was quoted), so it "
                        "would be part of a folder's name. "
                        + ("Give the path itself." if command else "Write it unquoted, or give the path itself."), ctx)
    from planner.core.outpath import unsafe_path_char, utf8_reading, without_piece, without_unsafe

    found = unsafe_path_char(text)
    if found is not None:  # a ZWSP, a bidi control, a control character (a C1 byte too): names refuse them
        bad, named = found
        utf = utf8_reading(text)  # bytes of UTF-8 read in a Latin-1 locale: the locale is the remedy (h25a m3)
        fixed = _hint(ctx, without_unsafe(text), as_file)
        hint = (f"Its bytes are UTF-8 for {utf!a}: run again under a UTF-8 locale (LC_ALL=C.UTF-8) or with "
                "PYTHONUTF8=1." if utf is not None else
                f"Write --out {fixed} without it"
                + (" (and the others of its kind)." if unsafe_path_char(without_piece(text, bad)) else ".")
                if fixed else f"Give --out {local_example}")
        raise LineError(f"--out: '{escape_unsafe(text)}' holds {named}, which no listing shows, so the "
                        f"folder's name would look like another. {hint}", ctx)
    if text != text.rstrip():  # 'o ': a folder whose name ends in a space, which no listing shows
        fixed = _hint(ctx, text.rstrip(), as_file)
        raise LineError(f"--out: {text!r} ends with a space, which would be part of the folder's name. " +
                        (f"Write --out {fixed}." if fixed else f"Give --out {local_example}"), ctx)
    parts = re.split(r"[/\\]" if os.sep == "\\" else "/", text)
    edged = next((p for p in parts if p != p.strip()), None)
    if edged is not None:  # ' o', 'a /b', 'a/ b': a folder whose name begins or ends in a space
        fixed = _hint(ctx, "/".join(p.strip() for p in parts), as_file)  # 'a/ "b"/c': never refused in turn (h34a m2)
        where = "begins" if edged[0].isspace() else "ends"
        raise LineError(f"--out: {text!r} has the folder name {edged!r}, which {where} with a space that no listing "
                        "shows. " + (f"Write --out {fixed}." if fixed else f"Give --out {local_example}"), ctx)
    from planner.core.outpath import out_path_problem  # what names refuse too: 'o' + U+2800, U+1D159

    problem = out_path_problem(text) if text else None
    if problem is not None:
        fixed = _hint(ctx, problem[1], as_file)  # checked again until it passes (h35a: "$'-'" was hinted as '-')
        hint = f"Write --out {fixed}." if fixed else f"Give --out {local_example}"  # a URL: none meant
        raise LineError(f"--out: {escape_unsafe(repr(text))} {problem[0]}. {hint}", ctx)
    return value




def _hint(ctx: click.Context, meant: str | None, as_file: bool) -> str | None:
    """The --out a refusal hints at for ``meant`` (planner.core.outhint.settled: checked by the destination rules until
    it passes), or None where it names an input of this run, which the pasted command would refuse in turn (h40a N4:
    ``calibrate --workload w.yaml --out "$'w.yaml'"`` was hinted as --out 'w.yaml'): a file or folder a word of the
    command line names (the root context's ``argv``, as planner.cli.main keeps it), compared by device and inode, a
    folder with what lies inside it for a calibration file."""
    from planner.core.outhint import settled, settled_path

    fixed = settled(meant, file=as_file)
    plain = settled_path(meant, file=as_file) if fixed is not None else None
    if plain is None and fixed is not None and isinstance(meant, str) and "$" in meant:
        # a hint that keeps a variable ('--out "$V"'): judged as the path it expands to here (h41a N13)
        expanded = os.path.expandvars(meant)
        plain = expanded if "$" not in expanded else None
    if fixed is None or plain is None:
        return fixed
    root = ctx.find_root()
    argv = root.obj.get("argv") if isinstance(root.obj, dict) else None
    target = Path(os.path.expanduser(plain))
    words = list(argv or ())
    for i, word in enumerate(words):
        if word == "--out" or (isinstance(word, str) and word.startswith("--out=")) or \
                (i > 0 and words[i - 1] == "--out"):
            continue  # --out's own value is what is refused, no input ('/dev/fd/3' of a folder: h41a N5)
        value = word.split("=", 1)[1] if isinstance(word, str) and word.startswith("--") and "=" in word else word
        if not isinstance(value, str) or not value or value.startswith("-"):
            continue
        try:
            if not os.path.exists(value):
                continue
            if os.path.exists(target) and os.path.samefile(value, target):
                return None
            if as_file and os.path.isdir(value) and os.path.samefile(value, target.parent):
                return None  # a file in an input folder (the --catalog overlay): refused as that when pasted
        except (OSError, ValueError):
            continue
    return fixed


def _example(as_file: bool) -> str | None:
    """An --out for a generic hint that the destination rules accept (planner.core.outhint.refused_destination):
    ``reports`` (``./calibration.yaml`` for calibrate's file) in the current folder, else in the home folder, else
    None (no example): never one refused when pasted, as in site-packages or the shipped catalog (h41a N10)."""
    from planner.core.names import shell_word
    from planner.core.outhint import refused_destination

    name = "calibration.yaml" if as_file else "reports"
    try:
        here = os.getcwd()
    except OSError:
        here = None
    if here is not None and not refused_destination(os.path.join(here, name), file=as_file):
        return f"./{name}" if as_file else name
    home = os.path.expanduser("~")
    if home != "~" and os.path.isabs(home) and not refused_destination(os.path.join(home, name), file=as_file):
        return shell_word(os.path.join(home, name))
    return None


def _no_such_user(word: str) -> bool:
    """True for a '~name' word (not '~', '~+', '~-') naming no user of this system (``pwd.getpwnam``): a shell
    leaves such a word as written. False where users cannot be looked up (no ``pwd`` module)."""
    name = word[1:]
    if not word.startswith("~") or name in ("", "+", "-") or name.lstrip("+-").isdigit():
        return False
    try:
        import pwd
    except ImportError:  # pragma: no cover - not on POSIX
        return False
    try:
        pwd.getpwnam(name)
    except (KeyError, ValueError, OSError):
        return True
    return False
