"""The bits and the POSIX access ACL a file passes on to the file that replaces it: :data:`KEPT_MODE_BITS`, and the
``system.posix_acl_access`` extended attribute read by :func:`_acl_of` (acl(5); Linux xattr(7), "system" namespace).
Shared by planner.core.atomic (which copies them) and planner.core.access (which compares and narrows them)."""

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
