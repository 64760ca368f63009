"""The bits, the POSIX access ACL and the user's extended attributes a file passes on to the file that replaces it:
:data:`KEPT_MODE_BITS`, the ``system.posix_acl_access`` extended attribute read by :func:`_acl_of` (acl(5); Linux
xattr(7), "system" namespace), and the ``user.*`` ones copied by :func:`keep_user_xattrs` (xattr(7), "user"
namespace). Shared by planner.core.atomic (which copies them) and planner.core.access (which compares and narrows
them)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

#: The mode bits a replaced file passes on to its new content (:func:`kept_mode`): the permission bits and the sticky
#: bit, never set-user-ID or set-group-ID (S_ISUID 0o4000, S_ISGID 0o2000: POSIX ``sys/stat.h``): a report that
#: someone made setuid must not hand that to bytes planner wrote.
KEPT_MODE_BITS = 0o1777


#: The extended attribute that holds a file's POSIX access ACL (acl(5); Linux xattr(7), "system" namespace).
ACL_XATTR = "system.posix_acl_access"


def _acl_of(target: int | str | Path) -> bytes | None:
    """The POSIX access ACL of ``target`` (an fd or a path, not followed), or None: none, or a file
    system / platform without extended attributes."""
    getxattr = getattr(os, "getxattr", None)
    if getxattr is None:
        return None
    try:
        if isinstance(target, int):
            return getxattr(target, ACL_XATTR)
        return getxattr(target, ACL_XATTR, follow_symlinks=False)
    except OSError as exc:
        if exc.errno in (errno.ENODATA, getattr(errno, "ENOATTR", errno.ENODATA), errno.ENOTSUP,
                         errno.EOPNOTSUPP, errno.ENOENT):
            return None
        raise


#: The extended attributes a user sets on a file of their own (xattr(7), "user" namespace: desktop tags and
#: comments, ``user.xdg.origin.url``), copied onto the file that replaces it (:func:`keep_user_xattrs`).
USER_XATTR_PREFIX = "user."

#: The most attribute names a note lists (a file may hold hundreds; the note names the first and counts the rest).
_NAMES_SHOWN = 5

#: errno values that say the attribute or the file system's support for attributes is not there.
_ABSENT = (errno.ENODATA, getattr(errno, "ENOATTR", errno.ENODATA), errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOENT)


def keep_user_xattrs(fd: int, old: str | Path, shown: str | Path) -> str | None:
    """Copy the ``user.*`` extended attributes of ``old`` (a path, links not followed) onto the open file ``fd``
    that will replace it, so a report replaced keeps the tags and comments a user set on it. Done on the open
    file before it is renamed into place, as its ACL is (planner.core.atomic.keep_access).

    Returns:
        None when every one was copied (or ``old`` has none, or its file system or platform has no extended
        attributes); else one note line naming ``shown`` and the attributes not copied (escaped:
        :func:`planner.core.names.escape_unsafe`) with the system's reason. A failure never stops the
        replacement: the attributes are the user's marks, not who can read the file.
    """
    listxattr = getattr(os, "listxattr", None)
    if listxattr is None:
        return None
    try:
        names = [n for n in listxattr(old, follow_symlinks=False) if n.startswith(USER_XATTR_PREFIX)]
    except OSError as exc:
        if exc.errno in _ABSENT:
            return None
        return _not_kept(shown, None, exc)
    failed: list[str] = []
    why: OSError | None = None
    for name in names:
        try:
            os.setxattr(fd, name, os.getxattr(old, name, follow_symlinks=False))
        except OSError as exc:
            if exc.errno in (errno.ENODATA, getattr(errno, "ENOATTR", errno.ENODATA)):
                continue  # removed from the old file meanwhile: nothing to keep
            failed.append(name)
            why = why or exc
    return _not_kept(shown, failed, why) if failed else None


def _not_kept(shown: str | Path, names: list[str] | None, exc: OSError | None) -> str:
    """The note of :func:`keep_user_xattrs`: ``names`` None when the old file's attributes could not be listed."""
    from planner.core.names import escape_unsafe

    reason = (exc.strerror or str(exc)) if exc is not None else "unknown error"
    if names is None:
        what = "its user extended attributes (user.*) could not be read"
    else:
        listed = ", ".join(escape_unsafe(n) for n in names[:_NAMES_SHOWN])
        more = f" and {len(names) - _NAMES_SHOWN} more" if len(names) > _NAMES_SHOWN else ""
        what = f"its extended attribute{'s' if len(names) > 1 else ''} {listed}{more} could not be copied"
    return (f"{escape_unsafe(str(shown))}: {what} ({reason}), so the new file replaced it without them (tags or "
            "comments set on the old file); set them again if they are needed.")
