"""Release versions of frameworks and engines, and the releases at which a modelled mechanism changed.

A memory or speed mechanism can change between releases of the code that runs it (Unsloth's fused loss,
vLLM's V0 and V1 engines, llama.cpp's quantisation layouts). A :class:`ReleaseLine` names the releases
planner models for one framework or engine: the current one (the default), the oldest it models (older
ones are refused, naming it), and each :class:`Change` with the release it landed in and its source (a
release note or commit). Version strings are read as their projects write them:

- dotted numbers, with an optional ``v`` prefix and PEP 440 suffixes dropped (``4.36.0``, ``v0.8.5``,
  ``0.6.3.post1``, ``2024.12.4``, ``2.5.0rc1``): compared number by number, missing parts as 0;
- llama.cpp build tags ``b<build>`` (``b4567``): compared by build number, and only with other build tags.

Nothing here knows a framework; the tables live with the workload stage that uses them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Change", "ReleaseLine", "long_release_problem", "parse_release", "release_key"]

# ASCII digits only: Python's \d and int() read other scripts' digits ('０.10.0', 'b０1792')
_DOTTED = re.compile(r"^v?([0-9]+(?:\.[0-9]+)*)(?:[._-]?(?:post|dev|rc|a|b|alpha|beta)[0-9]*)*(?:\+[0-9A-Za-z.]+)?$")
_BUILD = re.compile(r"^b([0-9]+)$")


def long_release_problem(text: object) -> str | None:
    """The problem with a release whose numbers have more digits than any value planner reads, or None.

    Python refuses to read an int of over 4,300 digits (sys.get_int_max_str_digits, CVE-2020-10735) with
    its own hint (set_int_max_str_digits), which is no help to a user: a release of more digits than
    planner.core.units.MAX_NUMBER_DIGITS (40; no project numbers its releases past a date such as
    2024.12.4 or a build such as b11312) is refused first, shown cut short.
    """
    from planner.core.units import MAX_NUMBER_DIGITS

    s = str(text).strip() if isinstance(text, (str, int, float)) and not isinstance(text, bool) else ""
    digits = sum(c.isdigit() for c in s)
    if digits <= MAX_NUMBER_DIGITS:
        return None
    return (f"the release {s[:20] + '...'!r} ({digits:,} digits) is too long to read: no release planner reads has "
            f"more than {MAX_NUMBER_DIGITS} digits")


def parse_release(text: object) -> tuple[str, tuple[int, ...]]:
    """Read a release string into ``(scheme, numbers)``.

    Args:
        text: ``"4.36.0"``, ``"v0.8.5"``, ``"2024.12"``, ``"0.6.3.post1"`` (scheme ``"dotted"``, numbers
            with trailing zeros stripped so ``4.36`` equals ``4.36.0``) or ``"b4567"`` (scheme ``"build"``).
            A YAML float such as ``2024.12`` or ``0.8`` is read from its text as written (``str(value)``).

    Raises:
        ValueError: the text is neither form (the message quotes it and gives both forms), or its numbers
            have more digits than any release (:func:`long_release_problem`).
    """
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ValueError(f"a release is text such as '4.36.0' or 'b4567', not {text!r}")
    s = str(text).strip()
    if (long := long_release_problem(s)) is not None:
        raise ValueError(long)
    if m := _BUILD.match(s):
        return "build", (int(m.group(1)),)
    if m := _DOTTED.match(s):
        parts = [int(p) for p in m.group(1).split(".")]
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        return "dotted", tuple(parts)
    raise ValueError(f"{s!r} is not a release: write it as its project does, e.g. '4.36.0', '2024.12' or "
                     "'b4567' (a llama.cpp build)")


def release_key(text: object) -> tuple[int, ...]:
    """The comparable numbers of ``text`` (see :func:`parse_release`); raises ValueError like it."""
    return parse_release(text)[1]


@dataclass(frozen=True)
class Change:
    """A mechanism that changed at ``release``: runs of ``release`` and later have it.

    Attributes:
        release: the first release with the change, as its project writes it.
        what: one line saying what changed, for the output and the docs.
        source: the release note, pull request or commit (URL) where it changed.
    """

    release: str
    what: str
    source: str


@dataclass(frozen=True)
class ReleaseLine:
    """The releases planner models for one framework or engine.

    Attributes:
        name: the framework or engine, as the workload key names it (``"unsloth"``, ``"vllm"``).
        current: the release modelled when none is given (the default, stated in the output).
        oldest: the oldest release modelled; older ones are refused with a message naming it.
        changes: the mechanism changes between ``oldest`` and ``current``, each with its source.
    """

    name: str
    current: str
    oldest: str
    changes: tuple[Change, ...] = ()

    def resolve(self, given: object | None) -> str:
        """The release to model: ``given`` as text, or :attr:`current` when ``given`` is None.

        Raises:
            ValueError: ``given`` is not a release string, uses another scheme than this line's releases,
                or is older than :attr:`oldest` (the message names the oldest supported).
        """
        if given is None:
            return self.current
        scheme, key = parse_release(given)
        own_scheme, oldest = parse_release(self.oldest)
        if scheme != own_scheme:
            form = "a build tag such as 'b4567'" if own_scheme == "build" else "a dotted release such as " \
                   f"'{self.current}'"
            raise ValueError(f"{self.name} releases are written as {form}, not {str(given).strip()!r}")
        if key < oldest:
            raise ValueError(f"{self.name} {str(given).strip()} is older than the oldest release planner "
                             f"models ({self.oldest}); give {self.oldest} or later")
        return str(given).strip()

    def has(self, release: str, change_release: str) -> bool:
        """Whether runs of ``release`` include the change that landed in ``change_release``.

        Raises:
            ValueError: either string is not a release (see :func:`parse_release`).
        """
        return release_key(release) >= release_key(change_release)
