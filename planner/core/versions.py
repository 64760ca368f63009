"""Release versions of frameworks and engines, and the releases at which a modelled mechanism changed.

A memory or speed mechanism can change between releases of the code that runs it (Unsloth's fused loss,
vLLM's V0 and V1 engines, llama.cpp's quantisation layouts). A :class:`ReleaseLine` names the releases
planner models for one framework or engine: the current one (the default), the oldest it models (older
ones are refused, naming it), and each :class:`Change` with the release it landed in and its source (a
release note or commit). Version strings are read as their projects write them:

- dotted numbers, with an optional ``v`` prefix and PEP 440 suffixes (``4.36.0``, ``v0.8.5``,
  ``0.6.3.post1``, ``2024.12.4``, ``2.5.0rc1``): compared number by number, missing parts as 0, then by
  the suffix as PEP 440 orders them (peps.python.org/pep-0440/#summary-of-permitted-suffixes-and-relative-
  ordering: ``X.devN`` < ``XaN`` < ``XbN`` < ``XrcN`` < ``X`` < ``X.postN``), so ``4.36.0rc1`` and
  ``4.36.0.dev0`` come before ``4.36.0`` and lack what landed in it;
- llama.cpp build tags ``b<build>`` (``b4567``): compared by build number, and only with other build tags.

A :class:`ReleaseLine` also refuses a release past any its project can have published
(:meth:`ReleaseLine.implausible`): for a calendar-versioned line (Unsloth's ``YYYY.M.patch``) a year after
today's (UTC) or a month outside 1-12; for another dotted line a major number more than one past the newest
release modelled (each of these projects has moved its major number one step at a time: Transformers 4 to 5,
and vLLM, torchtune and LitGPT are still at 0), which catches another project's release given by mistake
(``torchtune 4.46.0``, ``transformers 2024.11``). A release newer than the newest modelled but plausible is
modelled as the newest, and the outputs say so.

Nothing here knows a framework; the tables live with the workload stage that uses them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Change", "ReleaseLine", "is_prerelease", "long_release_problem", "parse_release", "prerelease_words",
           "release_key"]

# ASCII digits only: Python's \d and int() read other scripts' digits ('０.10.0', 'b０1792')
_DOTTED = re.compile(r"^v?([0-9]+(?:\.[0-9]+)*)((?:[._-]?(?:post|dev|rc|a|b|alpha|beta)[0-9]*)*)(?:\+[0-9A-Za-z.]+)?$")
_SUFFIX = re.compile(r"[._-]?(post|dev|rc|alpha|beta|a|b)([0-9]*)")
#: PEP 440's pre-release phases in order (alpha, beta, release candidate), below the final release (0).
_PRE_RANK = {"a": -3, "alpha": -3, "b": -2, "beta": -2, "rc": -1}
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


def _suffix_key(suffix: str) -> tuple[tuple[int, int], int, tuple[int, int]]:
    """PEP 440's order of a release's suffixes (pre-release, post-release, development release), as
    packaging.version's sort key builds it: a development release of a final release sorts before its
    pre-releases, a release without a pre-release after them; no post-release before any; no development
    release after any."""
    pre: tuple[int, int] | None = None
    post, dev = -1, None
    for name, n in _SUFFIX.findall(suffix):
        num = int(n) if n else 0
        if name in _PRE_RANK:
            pre = (_PRE_RANK[name], num)
        elif name == "post":
            post = num
        else:
            dev = num
    if pre is None:
        pre = (-4, 0) if dev is not None and post == -1 else (0, 0)
    return pre, post, (0, dev) if dev is not None else (1, 0)


def release_key(text: object) -> tuple:
    """A key that orders releases of one scheme as their projects do: the numbers of ``text`` (see
    :func:`parse_release`), then its suffixes in PEP 440's order (``4.36.0.dev0`` < ``4.36.0rc1`` <
    ``4.36.0`` < ``4.36.0.post1``); raises ValueError like :func:`parse_release`."""
    scheme, numbers = parse_release(text)
    if scheme == "build":
        return numbers, ((0, 0), -1, (1, 0))
    m = _DOTTED.match(str(text).strip())
    return numbers, _suffix_key(m.group(2) if m else "")


def prerelease_words(release: str) -> str:
    """' (a pre-release, read as older than ...)' for a PEP 440 pre- or development release, which
    :func:`release_key` orders before the final release of its numbers, else ''."""
    if not is_prerelease(release):
        return ""
    return " (a pre-release, read as older than the final release of its numbers, as PEP 440 orders them)"


def is_prerelease(text: object) -> bool:
    """Whether ``text`` is a PEP 440 pre- or development release (``4.36.0rc1``, ``0.7.3.dev233``), which
    sorts before the final release of its numbers; raises ValueError like :func:`parse_release`."""
    pre, _, dev = release_key(text)[1]
    return pre < (0, 0) or dev < (1, 0)


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
        calendar: the releases are dated ``YYYY.M[.patch]`` (Unsloth's ``__version__``): a year after
            today's or a month outside 1-12 is no release (:meth:`implausible`).
    """

    name: str
    current: str
    oldest: str
    changes: tuple[Change, ...] = ()
    calendar: bool = False

    def implausible(self, given: object, today: object = None) -> str | None:
        """Why ``given`` (a release of this line's scheme) cannot be a release of this project, or None.

        A calendar line's year after ``today``'s (default: today in UTC, planner.core.clock) or a month
        outside 1-12; another dotted line's major number more than one past :attr:`current`'s. Build tags
        (llama.cpp) have no such bound.
        """
        scheme, key = parse_release(given)
        if scheme != "dotted":
            return None
        shown = str(given).strip()
        if self.calendar:
            if today is None:
                from planner.core.clock import utc_today

                today = utc_today()
            year = getattr(today, "year", 0)
            if key[0] > year:
                return (f"{self.name} {shown} is no {self.name} release: {self.name}'s releases are dated "
                        f"YYYY.M (the newest modelled is {self.current}), and {key[0]} is after this year ({year})")
            if len(key) > 1 and not 1 <= key[1] <= 12:
                return (f"{self.name} {shown} is no {self.name} release: {self.name}'s releases are dated "
                        f"YYYY.M (the newest modelled is {self.current}), and {key[1]} is no month")
            return None
        major = parse_release(self.current)[1][0]
        if key[0] > major + 1:
            return (f"{self.name} {shown} is past any {self.name} release: the newest modelled is {self.current}, "
                    f"and a major number of {key[0]} is more than one past it")
        return None

    def resolve(self, given: object | None) -> str:
        """The release to model: ``given`` as text, or :attr:`current` when ``given`` is None.

        Raises:
            ValueError: ``given`` is not a release string, uses another scheme than this line's releases,
                is older than :attr:`oldest` (the message names the oldest supported), or is past any
                release of the project (:meth:`implausible`, naming the newest modelled).
        """
        if given is None:
            return self.current
        if (long := long_release_problem(given)) is not None:
            raise ValueError(long)
        try:
            scheme, _ = parse_release(given)
        except ValueError:
            shown = str(given).strip() if isinstance(given, (str, int, float)) else given
            raise ValueError(f"{shown!r} is not a release of {self.name}") from None
        own_scheme, _ = parse_release(self.oldest)
        if scheme != own_scheme:
            form = "a build tag such as 'b4567'" if own_scheme == "build" else "a dotted release such as " \
                   f"'{self.current}'"
            raise ValueError(f"{self.name} releases are written as {form}, not {str(given).strip()!r}")
        if release_key(given) < release_key(self.oldest):
            raise ValueError(f"{self.name} {str(given).strip()} is older than the oldest release planner "
                             f"models ({self.oldest}); give {self.oldest} or later")
        if (why := self.implausible(given)) is not None:
            raise ValueError(why)
        return str(given).strip()

    def has(self, release: str, change_release: str) -> bool:
        """Whether runs of ``release`` include the change that landed in ``change_release``.

        Raises:
            ValueError: either string is not a release (see :func:`parse_release`).
        """
        return release_key(release) >= release_key(change_release)
