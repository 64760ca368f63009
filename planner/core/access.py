"""Who can read a report a set gains, and a permission change made while a report is replaced.

A report the set gains (a new ``--format``, or the format that takes the place of the set's removed ones) gets
the group and the narrowest POSIX access ACL of the set's reports already there (:func:`give_set_access`), so a set
the user hid from a user or a group, in any of its reports, stays hidden. A report being replaced got the old file's mode and ACL when it was
staged; a ``chmod``/``setfacl`` the user makes on the old file after that would be lost by the swap, so what came
out of the swap is compared with what was copied, and the new file gets the narrower of the two
(:func:`narrower`, :func:`recheck_after_swap`), and the group the old file has now (a ``chgrp`` in that window).

The ACL is read and written as Linux stores it in the ``system.posix_acl_access`` extended attribute: a 4-byte
header (version 2, little-endian) then 8-byte entries (tag u16, permissions u16, id u32). Tags: ACL_USER_OBJ 0x01,
ACL_USER 0x02, ACL_GROUP_OBJ 0x04, ACL_GROUP 0x08, ACL_MASK 0x10, ACL_OTHER 0x20. Sources: Linux
``include/uapi/linux/posix_acl_xattr.h`` and ``include/uapi/linux/posix_acl.h`` (torvalds/linux); the access
check algorithm of acl(7), "ACCESS CHECK ALGORITHM" (a named user or group entry is limited by the mask; a
user matched by no entry gets the ACL_OTHER permissions).
"""

from __future__ import annotations

import errno
import os
import stat
import struct
from collections.abc import Callable, Sequence
from pathlib import Path

from planner.core.aclxattr import ACL_XATTR, KEPT_MODE_BITS, _acl_of
from planner.core.errors import OutputError

#: posix_acl_xattr.h: POSIX_ACL_XATTR_VERSION; posix_acl.h: the tags (see the module docstring).
_VERSION = 0x0002
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
#: posix_acl_xattr.h: ACL_UNDEFINED_ID, the id of the entries that name no one.
_NO_ID = 0xFFFFFFFF


def parse_acl(raw: bytes | None, mode: int) -> dict[tuple[int, int], int]:
    """``{(tag, id): permission bits 0-7}`` of an ACL xattr ``raw``; None (no ACL) gives the three entries the
    permission bits of ``mode`` stand for (acl(7): a minimal ACL).

    Raises:
        ValueError: ``raw`` is not an ACL of version 2.
    """
    if raw is None:
        return {(USER_OBJ, _NO_ID): (mode >> 6) & 7, (GROUP_OBJ, _NO_ID): (mode >> 3) & 7, (OTHER, _NO_ID): mode & 7}
    if len(raw) < 4 or (len(raw) - 4) % 8 or struct.unpack_from("<I", raw)[0] != _VERSION:
        raise ValueError("not a version 2 POSIX ACL")
    out = {}
    for off in range(4, len(raw), 8):
        tag, perm, ident = struct.unpack_from("<HHI", raw, off)
        out[(tag, ident if tag in (USER, GROUP) else _NO_ID)] = perm & 7
    return out


def build_acl(entries: dict[tuple[int, int], int]) -> bytes:
    """The xattr bytes of ``entries`` (as :func:`parse_acl` gives), sorted by tag then id as the kernel wants
    them (posix_acl_valid: entries in that order)."""
    body = b"".join(struct.pack("<HHI", tag, perm, ident) for (tag, ident), perm in sorted(entries.items()))
    return struct.pack("<I", _VERSION) + body


def _floor(acl: dict[tuple[int, int], int]) -> int:
    """The least a user who is not the owner gets from ``acl`` (acl(7)): the other entry, or a group entry (the
    owning group or a named one) limited by the mask; a named user entry limited by the mask is counted too."""
    mask = acl.get((MASK, _NO_ID), 7)
    least = acl.get((OTHER, _NO_ID), 0)
    for (tag, _), perm in acl.items():
        if tag in (USER, GROUP, GROUP_OBJ):
            least &= perm & mask
    return least


def narrower(a: dict[tuple[int, int], int], b: dict[tuple[int, int], int]) -> dict[tuple[int, int], int]:
    """An ACL that lets no one do more than ``a`` or ``b`` lets them: each entry's permissions ANDed; an entry
    (a named user or group) that only one has is limited by the least the other gives anyone but the owner
    (:func:`_floor`); a mask where there are named entries, no wider than either's group class.

    Args / returns: ACLs as :func:`parse_acl` gives them; each must hold the owner, owning group and other entries.
    """
    out: dict[tuple[int, int], int] = {}
    fa, fb = _floor(a), _floor(b)
    for key in set(a) | set(b):
        if key[0] == MASK:
            continue
        if key in a and key in b:
            out[key] = a[key] & b[key]
        else:
            out[key] = a[key] & fb if key in a else b[key] & fa
    if any(tag in (USER, GROUP) for tag, _ in out) or (MASK, _NO_ID) in a or (MASK, _NO_ID) in b:
        # an ACL without a mask caps its group class by the owning group's entry (acl(7)): the mode's group bits
        cap_a = a.get((MASK, _NO_ID), a[(GROUP_OBJ, _NO_ID)])
        out[(MASK, _NO_ID)] = cap_a & b.get((MASK, _NO_ID), b[(GROUP_OBJ, _NO_ID)])
        if not any(tag in (USER, GROUP) for tag, _ in out):  # the mask then stands for the owning group
            out[(GROUP_OBJ, _NO_ID)] &= out.pop((MASK, _NO_ID))
    return out


def _minimal(acl: dict[tuple[int, int], int]) -> bool:
    return set(acl) == {(USER_OBJ, _NO_ID), (GROUP_OBJ, _NO_ID), (OTHER, _NO_ID)}


def apply(fd: int, acl: dict[tuple[int, int], int], extra: int) -> None:
    """Give the open file ``fd`` the ACL ``acl`` (its permission bits: the ACL's owner, group or mask, and other
    entries) and the mode bits ``extra`` beyond them (sticky). A minimal ACL is written as the mode alone.

    Raises:
        OSError: fchmod or fsetxattr failed (a file system without ACLs).
    """
    mask = acl.get((MASK, _NO_ID), acl[(GROUP_OBJ, _NO_ID)])
    bits = (acl[(USER_OBJ, _NO_ID)] << 6) | (mask << 3) | acl[(OTHER, _NO_ID)]
    if _minimal(acl):
        if _acl_of(fd) is not None:
            os.removexattr(fd, ACL_XATTR)
        os.fchmod(fd, bits | extra)
        return
    os.fchmod(fd, bits | extra)
    os.setxattr(fd, ACL_XATTR, build_acl(acl))


def give_set_access(fd: int, templates: Sequence[Path], narrow: int, shown: Path) -> None:
    """Give the staged report ``fd``, a name the set gains, the group and POSIX ACL of the set's reports now in the
    folder (``templates``, at least one) and no permission bit outside ``narrow`` (every report of the set ANDed):
    :func:`_narrow_to_set`. Where they hold several ACLs, the new report gets their narrowest (:func:`narrower`: no
    one may do more than any of them lets); where they are in different groups, the new report keeps its own group
    and gives its owning group nothing (no group may read it that one of them keeps out). An ACL the new file
    inherited from its folder's default ACL is narrowed to the set's too.

    Raises:
        OutputError: the group or the ACL cannot be given (not a member of the group; no ACLs here): nothing
            is written.
    """
    theirs = [(t, os.lstat(t)) for t in templates]
    template = templates[0]

    def no_group(exc: OSError, gid: int) -> OutputError:
        return OutputError(f"{shown}: cannot be given the group of the set's other reports (gid {gid}, as "
                           f"{template.name} has: {exc.strerror or exc}), and without it other users could read "
                           "it; nothing was written. Give another --out, or change the set's group to one of "
                           "yours (chgrp).")

    try:
        _narrow_to_set(fd, theirs, narrow, no_group)
    except (OSError, ValueError) as exc:
        with_acl = next((t for t in templates if _acl_of(t) is not None), template)
        raise OutputError(f"{shown}: cannot be given the access control list (POSIX ACL) of the set's other "
                          f"reports ({getattr(exc, 'strerror', None) or exc}), and without it other users could read "
                          "it; nothing was written. Give another --out, or remove the ACL (setfacl -b) from "
                          f"{with_acl.name} if it is not needed.") from None


def _narrow_to_set(fd: int, theirs: Sequence[tuple[Path, os.stat_result]], bits: int,
                   group_error: Callable[[OSError, int], Exception] | None = None) -> None:
    """Narrow the open report ``fd`` to the set's reports ``theirs`` (paths with their stat): no group, other or
    ACL permission outside ``bits`` and theirs (the owner's own bits stay the new file's: a report the owner made
    read-only narrows no other, h26a N1), no POSIX ACL grant that any of them (or its own, inherited one) lacks
    (:func:`narrower`), and their group where they share one; where they do not, or the group cannot be given
    and ``group_error`` is None, no group bits. One rule for a gained report at staging
    (:func:`give_set_access`) and after the moves (:func:`recheck_gained`).

    Raises:
        OSError, ValueError: an ACL cannot be read or the permissions set; ``group_error(exc, gid)`` when the
            group cannot be given and it is set.
    """
    own = os.fstat(fd)
    bits &= stat.S_IMODE(own.st_mode) & KEPT_MODE_BITS
    for _, st in theirs:
        bits &= stat.S_IMODE(st.st_mode) | 0o700  # who else may read: the owner's bits on theirs are theirs alone
    gids = {st.st_gid for _, st in theirs}
    grouped = len(gids) == 1
    if grouped and own.st_gid not in gids:
        try:
            os.fchown(fd, -1, next(iter(gids)))
        except OSError as exc:
            if group_error is not None:
                raise group_error(exc, next(iter(gids))) from None
            grouped = False  # a group planner cannot give: no group may read it
    if not grouped:
        bits &= ~0o070
    acl = parse_acl(_acl_of(fd), stat.S_IMODE(own.st_mode))
    for path, st in theirs:
        acl = narrower(acl, parse_acl(_acl_of(path), stat.S_IMODE(st.st_mode)))
    acl = narrower(acl, parse_acl(None, bits))
    acl[(USER_OBJ, _NO_ID)] = (stat.S_IMODE(own.st_mode) >> 6) & 7  # the new file's owner keeps its own (h26a N1)
    if not grouped:
        acl[(GROUP_OBJ, _NO_ID)] = 0
    apply(fd, acl, bits & ~0o777)


def recheck_after_swap(came_out: Path, new: Path, copied: tuple[int, bytes | None], ino: int,
                       gid: int | None = None, what: str = "report") -> str | None:
    """After a swap, compare the mode, ACL and group of what came out of ``new``'s name (``came_out``) with
    ``copied`` (the mode and ACL given to the new file when it was staged) and ``gid`` (the group it was given;
    None: not compared); where they differ, give the new file (opened by name, checked to be inode ``ino``:
    planner's) the narrower of the two modes and ACLs (:func:`narrower`) and the group the old file has now (a
    ``chgrp`` made in the window is the user's latest word on who may read it). A note line saying so (naming
    the new file ``the new <what>``), or None when nothing changed.

    Raises:
        OSError: the files cannot be read or the new file's permissions cannot be set.
    """
    st = os.lstat(came_out)
    now = (stat.S_IMODE(st.st_mode) & KEPT_MODE_BITS, _acl_of(came_out))
    regrouped = gid is not None and st.st_gid != gid
    if now == copied and not regrouped:
        return None
    fd = _open_own(new, ino)
    if fd is None:  # the name holds another file already: it is not planner's to change
        return None
    try:
        group_note, group_failed = "", ""
        if regrouped:
            try:
                os.fchown(fd, -1, st.st_gid)
                group_note = f" and its new group (gid {st.st_gid})"
            except OSError as exc:
                group_failed = (f"; its group was changed to gid {st.st_gid}, which planner cannot give the new {what} "
                                f"({exc.strerror or exc}): run chgrp on it again")
        acl = narrower(parse_acl(copied[1], copied[0]), parse_acl(now[1], now[0]))
        before = (stat.S_IMODE(os.fstat(fd).st_mode), _acl_of(fd))
        apply(fd, acl, copied[0] & now[0] & ~0o777)
        after = (stat.S_IMODE(os.fstat(fd).st_mode), _acl_of(fd))
    finally:
        os.close(fd)
    if now == copied:
        return (f"{new}: its group was changed while planner replaced it; the new {what} has the new group "
                f"(gid {st.st_gid})." if not group_failed else f"{new}: {group_failed[2:]}.")
    if before == after:  # the change would let more users read it: not carried over
        return (f"{new}: its permissions or ACL were changed while planner replaced it, to let more users read it; "
                f"the new {what} keeps the previous setting (mode {after[0]:04o}){group_note}{group_failed}. Change "
                "it again if that was meant.")
    return (f"{new}: its permissions or ACL were changed while planner replaced it; the new {what} has the "
            f"narrower of the two settings (mode {after[0]:04o}{', with an ACL' if after[1] is not None else ''})"
            f"{group_note}{group_failed}.")


def _open_own(path: Path, ino: int) -> int | None:
    """``path`` opened for reading by name (a link not followed), when it is still inode ``ino`` (planner's file);
    None when the name holds another file now, which is not planner's to change.

    Raises:
        OSError: the name cannot be opened (gone, a link).
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP and os.path.islink(path):  # O_NOFOLLOW's ELOOP: 'Too many levels of symbolic
            raise OSError(exc.errno, "it is now a symbolic link, not the file planner put there: another "  # links'
                          "program replaced it") from None  # was the wording (h32a m4)
        raise
    try:
        if os.fstat(fd).st_ino == ino:
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


def _owned_regular(paths: Sequence[Path]) -> list[tuple[Path, os.stat_result]]:
    """Those of ``paths`` that are now regular files of this user, with their stat (not followed)."""
    out = []
    for p in paths:
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
            out.append((p, st))
    return out


def _state(fd: int) -> tuple[int, bytes | None, int]:
    st = os.fstat(fd)
    return stat.S_IMODE(st.st_mode), _acl_of(fd), st.st_gid


def _said(state: tuple[int, bytes | None, int], group: bool) -> str:
    """'mode 0600, with an ACL, group gid 5' as a note shows what a file was given."""
    return (f"mode {state[0]:04o}{', with an ACL' if state[1] is not None else ''}"
            f"{f', group gid {state[2]}' if group else ''}")


def recheck_gained(new: Path, ino: int, templates: Sequence[Path], what: str = "report") -> str | None:
    """After the moves, narrow a report the set gained (``new``, opened by name and checked to be inode ``ino``:
    planner's) to the set's other reports as they are now (``templates``: those still in the folder, the replaced
    ones holding their new files): no permission bit or POSIX ACL grant that any of them lacks (:func:`narrower`),
    and their group where they share one (else no group bits). A set made private (``chmod 600``, ``setfacl``,
    ``chgrp``) while planner moved it stays private in the report it gained, which got the set's access before
    the moves (:func:`give_set_access`). Never widens. A note line, or None when nothing changed.

    Raises:
        OSError: the new file cannot be opened or its permissions set.
    """
    theirs = _owned_regular(templates)
    if not theirs:
        return None
    fd = _open_own(new, ino)
    if fd is None:  # the name holds another file already: it is not planner's to change
        return None
    try:
        before = _state(fd)
        _narrow_to_set(fd, theirs, 0o7777)
        after = _state(fd)
    finally:
        os.close(fd)
    if after == before:
        return None
    return (f"{new}: the set's other reports were made more private (permissions, ACL or group) while planner moved "
            f"them into place; the new {what}, which the set gained, has the narrowest of their settings "
            f"({_said(after, after[2] != before[2])}).")


def carry_back(came_out: Path, put_back: Path, left: tuple[int, bytes | None, int], ino: int) -> str | None:
    """The previous set is being put back: ``came_out`` is planner's new report, swapped back out of ``put_back``'s
    name, which planner left as ``left`` (mode, ACL, group); a ``chmod``/``setfacl``/``chgrp`` the user made on it
    meanwhile was made on that name, so it is carried onto the previous file put back (opened by name, checked to
    be inode ``ino``): the narrower of its own mode and ACL and the user's (:func:`narrower`), and the group the
    user gave. A change that would let more users read it is not carried, and said. A note line, or None when
    the user changed nothing.

    Raises:
        OSError: the files cannot be read or the permissions set.
    """
    st = os.lstat(came_out)
    now = (stat.S_IMODE(st.st_mode) & KEPT_MODE_BITS, _acl_of(came_out), st.st_gid)
    if now == left:
        return None
    fd = _open_own(put_back, ino)
    if fd is None:  # the name holds another file already: it is not planner's to change
        return None
    try:
        before = _state(fd)
        group_failed = ""
        if now[2] != left[2] and before[2] != now[2]:
            try:
                os.fchown(fd, -1, now[2])
            except OSError as exc:
                group_failed = (f"; its group was changed to gid {now[2]}, which planner cannot give it "
                                f"({exc.strerror or exc}): run chgrp on it again")
        apply(fd, narrower(parse_acl(before[1], before[0]), parse_acl(now[1], now[0])), before[0] & now[0] & ~0o777)
        after = _state(fd)
    finally:
        os.close(fd)
    if after == before and now[:2] != left[:2]:
        return (f"{put_back}: its permissions or ACL were changed while planner was replacing it, to let more users "
                f"read it; the previous report put back keeps its own setting ({_said(after, False)}){group_failed}. "
                "Change it again if that was meant.")
    if after == before:
        return f"{put_back}: {group_failed[2:]}." if group_failed else None
    return (f"{put_back}: its permissions, ACL or group were changed while planner was replacing it; the previous "
            f"report put back has that change too ({_said(after, after[2] != before[2])}){group_failed}.")
