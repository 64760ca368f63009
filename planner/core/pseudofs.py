"""Output folders on a pseudo file system: one the kernel makes up for its own state, which holds no file planner
can write.

``/proc`` (proc), ``/sys`` (sysfs), the cgroup hierarchies and the like list folders whose entries the kernel
makes: ``mkdir`` or ``open(O_CREAT)`` in them fails, often with a reason that names another problem (``/proc/self``
gives 'No such file or directory' for a new name in a folder that exists). An ``--out`` (or ``out=``) there is
refused before the work, naming the file system, rather than failing when the reports are staged.

The file system of a folder is found as the kernel lists it: the mount whose device (``major:minor``, field 3 of
``/proc/self/mountinfo``) is the folder's ``st_dev``, and the type after the ``-`` separator (Linux man-pages,
``proc_pid_mountinfo(5)``). Where that file cannot be read (not Linux), nothing is refused here.
"""

from __future__ import annotations

import os
from pathlib import Path

from planner.core.errors import DestinationError
from planner.core.names import escape_unsafe

#: File system types that hold only what the kernel makes: proc (proc(5)), sysfs (sysfs(5)), cgroup and cgroup2
#: (cgroups(7)), cpuset (cpuset(7)), devpts (pts(4)), mqueue (mq_overview(7)), hugetlbfs (no write(2): Linux
#: Documentation/admin-guide/mm/hugetlbpage.rst), binfmt_misc, debugfs, tracefs, securityfs, bpf, pstore,
#: efivarfs, configfs, fusectl, selinuxfs, nsfs and rpc_pipefs (Linux Documentation/filesystems/ and
#: Documentation/admin-guide/: each a kernel interface, not storage).
PSEUDO_FILE_SYSTEMS = frozenset({
    "proc", "sysfs", "cgroup", "cgroup2", "cpuset", "devpts", "mqueue", "hugetlbfs", "binfmt_misc", "debugfs",
    "tracefs", "securityfs", "bpf", "pstore", "efivarfs", "configfs", "fusectl", "selinuxfs", "nsfs", "rpc_pipefs",
})

#: Where the kernel lists this process's mounts (proc_pid_mountinfo(5)).
MOUNTINFO = "/proc/self/mountinfo"


def file_system_type(path: str | Path) -> str | None:
    """The type of the file system ``path`` is on ('ext4', 'proc'), links followed; None when ``path`` cannot be
    reached or the mount table cannot be read."""
    try:
        st = os.stat(path)
        with open(MOUNTINFO, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except (OSError, ValueError):
        return None
    device = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 7 and fields[2] == device and "-" in fields[6:]:
            at = fields.index("-", 6)
            if at + 1 < len(fields):
                return fields[at + 1]
    return None


def _nearest_existing(path: Path) -> Path | None:
    """``path`` or the nearest folder above it that exists (relative paths from the current folder)."""
    for p in (path, *path.parents):
        try:
            os.stat(p)
            return p
        except (OSError, ValueError):
            continue
    return None


def refuse_pseudo_fs(out: Path, what: str = "--out", give: str = "a folder on a disk (it is created if missing)") -> None:
    """Refuse an output folder ``out`` (or, when it does not exist yet, the folder it would be made in) on a pseudo
    file system (:data:`PSEUDO_FILE_SYSTEMS`).

    Args:
        what: the option that names it, for the hint ('--out').
        give: what to give it instead, for the hint (a file, for ``calibrate --out``).

    Raises:
        DestinationError: naming the folder, its file system and what to do.
    """
    at = _nearest_existing(Path(out))
    if at is None:
        return
    kind = file_system_type(at)
    if kind not in PSEUDO_FILE_SYSTEMS:
        return
    shown = escape_unsafe(str(out))
    where = "is a folder" if at == Path(out) else f"would be made in {escape_unsafe(str(at))}, a folder"
    raise DestinationError(f"{shown}: {where} of the {kind} file system, a pseudo file system that the kernel makes "
                           f"up for its own state: it holds no file planner can write. Give {what} {give}.")


def _unescape_mountinfo(field: str) -> str:
    """A mount point as ``/proc/self/mountinfo`` writes it, its space, tab, newline and backslash written as
    three octal digits after a backslash (``\\040``; proc_pid_mountinfo(5)), decoded."""
    import re

    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def is_mount_point(path: str | Path, device: int | None = None) -> bool:
    """Whether the folder ``path`` (not followed if a link) is a mount point or on another file system: its
    ``st_dev`` differs from ``device`` (the output folder's, when given) or from its parent's, or
    ``/proc/self/mountinfo`` lists it as a mount point (field 5) -- a bind mount of a folder of the same file
    system keeps the device, so only that list tells it. True also when ``path`` cannot be read (nothing is
    removed there then). Where the mount list cannot be read (not Linux), the devices alone decide."""
    try:
        st = os.lstat(path)
        up = os.stat(os.path.join(os.fspath(path), ".."))
    except (OSError, ValueError):
        return True
    if st.st_dev != up.st_dev or (device is not None and st.st_dev != device) or st.st_ino == up.st_ino:
        return True
    real = os.path.realpath(path)
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except (OSError, ValueError):
        return False
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4 and _unescape_mountinfo(fields[4]) == real:
            return True
    return False
