"""Who besides the user can change a file or a folder planner writes into.

A folder in which another user can rename entries is no place for a report set: planner stages its files in a
folder of its own inside ``--out`` and moves them into place, and another user who can rename that staging folder
can swap it for a link to any folder of the user's while the run works in it. Who can rename an entry of a folder
(Linux ``rename(2)``, EACCES/EPERM; POSIX "sticky bit" on directories): whoever can write the folder, except
that in a folder with the sticky bit (``chmod +t``, as /tmp) only the entry's owner, the folder's owner and root
can. So another user can when the folder is not the user's own (nor root's: root can do anything anyway), or when
its group or others can write it and it has no sticky bit (:func:`refuse_shared_folder`); and the same holds for
every folder above it, where the whole branch could be swapped for a link.

Sources: Linux man-pages rename(2) ("EPERM or EACCES: The directory containing oldpath has the sticky bit
(S_ISVTX) set and the process's effective user ID is neither the user ID of the file to be deleted nor that of the
directory containing it"), inode(7) ("The sticky bit"); CWE-367 (time-of-check time-of-use race).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from planner.core.errors import DestinationError
from planner.core.names import escape_unsafe


def private_group(uid: int, gid: int) -> bool:
    """Whether group ``gid`` is user ``uid``'s own private group (the "user private group" scheme of
    Debian, Ubuntu and Fedora, where useradd makes a group of the user's name for each user and the
    default umask is 002, so a git checkout writes 0664 files): the group has the user's name, is the
    user's primary group, no other account has it as primary group (``pwd.getpwall()``: ``useradd -g``
    puts another user in it without listing him), and no group entry with that gid (``grp.getgrall()``:
    two names may share a gid) lists any member but the user. False where that cannot be read (no such
    user or group, or no ``pwd``/``grp`` module)."""
    try:
        import grp
        import pwd

        user = pwd.getpwuid(uid)
        group = grp.getgrgid(gid)
        accounts = pwd.getpwall()
        groups = grp.getgrall()
    except (ImportError, KeyError, OSError):
        return False
    if group.gr_name != user.pw_name or user.pw_gid != gid:
        return False
    if any(a.pw_gid == gid and (a.pw_uid != uid or a.pw_name != user.pw_name) for a in accounts):
        return False
    return all(m == user.pw_name for g in groups if g.gr_gid == gid for m in g.gr_mem)


def writable_by_others(st: os.stat_result, path: Path) -> bool:
    """Whether a file of stat ``st`` can be written by anyone but its owner: others' write bit, or its
    group's unless that group is the owner's private group (:func:`private_group`) and the file has no
    POSIX ACL (whose mask the group bits then show: a named user could write)."""
    from planner.core.atomic import _acl_of

    if st.st_mode & 0o002:
        return True
    if not st.st_mode & 0o020:
        return False
    try:
        acl = _acl_of(path)
    except OSError:
        return True
    return acl is not None or not private_group(st.st_uid, st.st_gid)


#: Why a folder of another user is refused (:func:`rename_risk`), as its phrase begins.
_OTHER_OWNER = "it belongs to another user"
#: What the hint adds where that is the reason: the user cannot chmod it, and its sticky bit would not help (h28a m3).
OWN_WHY = "chmod cannot change another user's folder, and its sticky bit would not keep its owner out."


def _fitting(why: str, hint: str, own: str | None) -> str:
    """``hint`` for a folder the user may change; for another user's (``why`` says so) the hint ``own`` (a sentence
    asking for a folder of the user's own), default: 'Use a folder of your own instead: ...' (:data:`OWN_WHY`)."""
    if not why.startswith(_OTHER_OWNER):
        return hint
    return own if own is not None else f"Use a folder of your own instead: {OWN_WHY}"


def rename_risk(folder: Path | str, st: os.stat_result | None = None) -> str | None:
    """Why another user could rename entries of ``folder`` (a phrase for a message), or None when no one but the
    user (and root) can: see the module docstring.

    Raises:
        OSError: the folder cannot be read (``st`` not given).
    """
    st = os.stat(folder) if st is None else st
    if st.st_uid not in (os.geteuid(), 0):
        return f"{_OTHER_OWNER} (uid {st.st_uid}), who can rename anything in it"
    if st.st_mode & stat.S_ISVTX:
        return None
    if st.st_mode & 0o002:
        return "anyone can write it and it has no sticky bit, so anyone can rename what planner puts there"
    if writable_by_others(st, Path(folder)):
        from planner.core.atomic import _acl_of

        try:
            acl = _acl_of(Path(folder))
        except OSError:
            acl = None
        if acl is not None:  # the group bits show the ACL's mask: named users or groups may write
            return ("its access control list (ACL) lets other users or groups write it and it has no sticky bit, so "
                    "they can rename what planner puts there")
        return "its group can write it and it has no sticky bit, so any member can rename what planner puts there"
    return None


def refuse_shared_folder(folder: Path | str, what: str, hint: str, *, st: os.stat_result | None = None,
                         own: str | None = None) -> None:
    """Refuse to write into ``folder`` (``what``: 'the output directory', 'the temporary folder (TMPDIR)') when
    another user could rename entries in it (:func:`rename_risk`): one could then swap the folder planner works
    in for a link, and make it remove or overwrite the user's files elsewhere.

    Raises:
        DestinationError: naming the folder, why, and ``hint`` (``own`` where the folder is another user's, which
            no chmod of the user's changes: :func:`_fitting`).
    """
    try:
        why = rename_risk(folder, st)
    except OSError:
        return  # a folder that cannot be read is refused where it is used, as what it is
    if why is not None:
        raise DestinationError(f"{escape_unsafe(str(folder))}: is {what}, but {why}; a folder or link swapped in "
                               f"there could make planner remove or overwrite files elsewhere, so it writes nothing "
                               f"there. {_fitting(why, hint, own)}")
    for link, lst in links_on_path(folder):
        # a link is changed only by replacing it, which takes the right to remove entries of its folder: whoever
        # can rename there (rename_risk), and in a sticky folder also the link's own owner (rename(2), EPERM)
        why, fix = None, hint
        try:
            risk = rename_risk(link.parent)
            sticky = bool(os.stat(link.parent).st_mode & stat.S_ISVTX)
        except OSError:
            risk, sticky = None, False
        if risk is not None:
            fix = _fitting(risk, hint, own)  # another user's folder: one of the user's own
            why = (f"it is a symbolic link in {escape_unsafe(str(link.parent))}, where another user could replace "
                   f"it (that folder: {risk})")
        elif sticky and lst.st_uid not in (os.geteuid(), 0):
            why = (f"it is a symbolic link of another user (uid {lst.st_uid}) in a sticky folder, where its owner can "
                   "point it elsewhere while planner writes")
            fix = ""  # the folder is sticky already: the link's owner is the risk, not the folder (h27a m3)
        if why is not None:
            try:
                real = os.path.realpath(folder)
                target = os.path.realpath(link)
            except (OSError, ValueError):
                real = target = None
            also = f" (it now points to {escape_unsafe(target)})" if target else ""  # the link's target (h34a m10)
            instead = f" (such as {escape_unsafe(real)}, where it points now, if you trust it)" \
                if real and not fix else ""
            where = (f"is {what}" if os.path.abspath(link) == os.path.abspath(folder) else
                     f"is on the way to {what} ({escape_unsafe(str(folder))})")
            raise DestinationError(f"{escape_unsafe(str(link))}: {where}"
                                   f"{also}, but {why}; so planner could be made to write elsewhere, and it writes "
                                   f"nothing there. Give a path without that link{instead}."
                                   + (f" {fix}" if fix else ""))
    refuse_shared_above(folder, what, hint, own=own)


def refuse_shared_above(folder: Path | str, what: str, hint: str, *, own: str | None = None) -> None:
    """Refuse ``folder`` (which need not exist yet: a folder a run will make) when a folder above it that exists
    lets another user rename its entries (:func:`rename_risk`): the whole branch could be swapped for a link.

    Raises:
        DestinationError: naming the folder above, ``what`` and ``folder``, why, and ``hint`` (``own`` where that
            folder is another user's: :func:`_fitting`).
    """
    for above in _folders_above(folder):
        try:
            why = rename_risk(above)
        except OSError:
            continue
        if why is not None:  # whoever can rename an entry of a folder above can swap the whole branch for a link
            raise DestinationError(f"{escape_unsafe(str(above))}: is a folder above {what} "
                                   f"({escape_unsafe(str(folder))}), but {why}; the folder planner writes into could "
                                   "be swapped for a link there and make planner remove or overwrite files elsewhere, "
                                   f"so it writes nothing there. {_fitting(why, hint, own)}")


def _folders_above(folder: Path | str) -> list[Path]:
    """The folders above ``folder``, outermost first: those of its absolute path as written (a link in it is an
    entry of the folder that holds it) and those of the path it resolves to, each once."""
    out: list[Path] = []
    for path in (Path(os.path.abspath(folder)), Path(os.path.realpath(folder))):
        for above in reversed(path.parents):
            if above not in out:
                out.append(above)
    return out


def links_on_path(path: Path | str, most: int = 40) -> list[tuple[Path, os.stat_result]]:
    """The symbolic links the kernel follows to reach ``path`` (each link's own path and ``lstat``), in the order
    it meets them: the path is read one name at a time from the current folder (or '/'), a link's target read in
    its place, '..' after a link taken from where the link led (as path_resolution(7) says the kernel does).
    Names past the first that does not exist yet are not read (planner makes those folders); at most ``most``
    links, the kernel's own limit (40: ELOOP)."""
    pending = list(Path(path).parts)
    if not pending:
        return []
    if os.path.isabs(pending[0]):
        cur = Path(pending.pop(0))
    else:
        try:
            cur = Path(os.getcwd())
        except OSError:
            return []
    found: list[tuple[Path, os.stat_result]] = []
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            cur = cur.parent
            continue
        nxt = cur / part
        try:
            st = os.lstat(nxt)
        except OSError:
            break
        if not stat.S_ISLNK(st.st_mode):
            cur = nxt
            continue
        found.append((nxt, st))
        if len(found) >= most:
            break
        try:
            target = os.readlink(nxt)
        except OSError:
            break
        parts = list(Path(target).parts)
        if parts and os.path.isabs(parts[0]):
            cur = Path(parts.pop(0))
        pending[0:0] = parts
    return found
