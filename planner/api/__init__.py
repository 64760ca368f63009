"""Stage 10, api: the Python API, the planner's commands as functions for notebooks and scripts.

``estimate``, ``fit``, ``plan`` and ``compare`` take the options of the commands of the same
name as keyword arguments (underscores for dashes: ``micro_batch=``, ``seq_len=``, ``zero=``),
read and check them with the readers the commands use, raise the errors the commands report
(planner.core.errors: InputError and its kinds for bad input, InfeasibleError when nothing fits)
and return frozen results with ``to_dict()`` (the command's ``--json`` document) and
``to_frame()`` (a pandas DataFrame). ``load_catalog`` reads the catalog once for many calls.
Nothing is written unless ``out=`` is given. The ``planner`` command (planner.cli) is a thin layer
over these functions. Importing this package imports no pandas, openpyxl or scipy.

Example::

    from planner import estimate, load_catalog
    catalog = load_catalog()
    r = estimate(model="llama-2-7b", task="train", method="qlora", micro_batch=2, seq_len=1024,
                 catalog=catalog, gpu="rtx-4090")
    r.fits, r.per_gpu_total_bytes / 2**30
    r.to_frame()
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from planner.api.comparisons import CompareResult, compare
    from planner.api.estimates import EstimateResult, GpuCheck, estimate
    from planner.api.fits import FitResult, NoFit, fit
    from planner.api.plans import PlanResult, plan
    from planner.catalog.loader import Catalog

#: Each function and result class by the module that defines it, imported on first use (PEP 562): a
#: plan does not import the estimate, fit and compare modules.
_MODULES = {"compare": "comparisons", "CompareResult": "comparisons", "estimate": "estimates",
            "EstimateResult": "estimates", "GpuCheck": "estimates", "fit": "fits", "FitResult": "fits",
            "NoFit": "fits", "plan": "plans", "PlanResult": "plans"}


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        import importlib

        return getattr(importlib.import_module(f"planner.api.{_MODULES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULES))


def load_catalog(overlay: str | Path | None = None, *extra: Any, base: str | Path | None = None,
                 **unknown: Any) -> Catalog:
    """Read the shipped catalog, merge an overlay directory over it, check everything.

    Pass the result as ``catalog=`` to the other functions to read the catalog once.

    Args:
        overlay: a directory of catalog files (``--catalog DIR``; catalog/README.md), or None.
        base: the catalog directory to start from (default: the shipped one).

    Returns:
        :class:`planner.catalog.loader.Catalog` (GPUs, platforms, RAM, network, cloud instances,
        models; each entry with its source and date).

    Raises:
        CatalogError: a malformed or inconsistent file, named with its line and entry.
        InputError: ``overlay`` or ``base`` not a path (an int), empty, or holding a NUL or a lone surrogate.

    Example:
        >>> from planner import load_catalog
        >>> catalog = load_catalog()
        >>> catalog.gpu("rtx-4090").memory_bytes // 2**30  # GiB
        24
    """
    from planner.api.inputs import check_keywords, check_positional, dir_path_of
    from planner.catalog.loader import load_catalog as read

    check_positional("load_catalog", extra, "the overlay", "load_catalog('my-catalog', base='catalog')")
    check_keywords("load_catalog", unknown, ("overlay", "base"))

    hint = "Give a catalog overlay directory, e.g. load_catalog('my-catalog'), or nothing for the shipped catalog"
    return read(None if overlay is None else dir_path_of(overlay, "overlay", hint),
                None if base is None else dir_path_of(base, "base", hint))


__all__ = ["CompareResult", "EstimateResult", "FitResult", "GpuCheck", "NoFit", "PlanResult", "compare", "estimate",
           "fit", "load_catalog", "plan"]
