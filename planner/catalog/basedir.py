"""The ``base=`` folder of :func:`planner.load_catalog`: refused, when it is none, at its path."""

from __future__ import annotations

import errno
from pathlib import Path

from planner.core.errors import CatalogError

#: The hint of a ``base=`` folder that cannot be one.
_BASE_HINT = ("base= is a catalog directory holding the catalog files (gpus.yaml, platforms.yaml, ...; "
              "catalog/README.md); leave it out for the shipped catalog.")


def check_base(base_dir: Path) -> None:
    """Refuse a ``base=`` that is no folder; its path goes in ``file=``, which every output escapes, as for
    ``overlay=`` (h24b N2: in the problem text it reached the terminal raw).

    Raises:
        CatalogError: a missing folder, a file, or a path that cannot be read (too long, a loop of links,
            no access), named at the path.
    """
    try:
        base_dir.stat()
    except OSError as exc:  # a name past the system's limits (ENAMETOOLONG), a loop of links, no access
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            raise CatalogError(f"cannot be read ({exc.strerror})", file=str(base_dir), hint=_BASE_HINT) from None
        raise CatalogError("no such catalog directory (base=)", file=str(base_dir), hint=_BASE_HINT) from None
    if not base_dir.is_dir():  # base='dir/gpus.yaml': not "missing"
        raise CatalogError("is a file, not a directory (base=)", file=str(base_dir),
                           hint=f"Give the folder that holds it: base={str(base_dir.parent)!r}.")
