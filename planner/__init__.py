"""planner: hardware sizing and procurement planner for deep-learning work.

Data flows one way: catalog -> workload -> memory model -> candidates -> solver ->
reports -> CLI. Importing this package does no work.

The Python API (planner.api) is reached from here: ``from planner import estimate, fit, plan,
compare, load_catalog``. It is imported on first use (PEP 562), so ``import planner`` stays light
(no pandas, click or openpyxl).

``planner.plan`` is both the API function and the name of the plan stage's package
(planner/plan/): calling it plans a scenario (planner.api.plan); its attributes are the stage's
modules (``planner.plan.solver`` once imported), so both ``from planner import plan`` and
``from planner.plan.solver import ...`` work, whichever is imported first.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__version__ = "0.1.0"

#: The names planner.api gives this package.
_API = ("estimate", "fit", "plan", "compare", "load_catalog", "EstimateResult", "FitResult", "PlanResult",
        "CompareResult", "GpuCheck", "NoFit")

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        import planner.api

        return getattr(planner.api, name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))


class _Plan:
    """``planner.plan``: call it to plan a scenario (:func:`planner.api.plan`); its other attributes
    are those of the plan stage's package, planner/plan/ (``planner.plan.solver``, ...)."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import planner.api

        return planner.api.plan(*args, **kwargs)

    @property
    def __wrapped__(self) -> Any:  # inspect.signature and help() read the function's
        import planner.api

        return planner.api.plan

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return (f"planner.plan: plans a scenario (planner.api.plan, below); its other attributes are the plan "
                f"stage's modules (planner/plan/).\n\n{self.__wrapped__.__doc__}")

    def __getattr__(self, name: str) -> Any:
        stage = sys.modules.get(__name__ + ".plan")
        if stage is None or name.startswith("__"):
            raise AttributeError(f"'planner.plan' has no attribute {name!r}")
        return getattr(stage, name)

    def __repr__(self) -> str:
        return "<function planner.plan (planner.api.plan; attributes: the plan stage, planner/plan/)>"


class _Package(types.ModuleType):
    """The planner package's module type: ``plan`` is :class:`_Plan`, although the import system
    binds the plan stage's package to that name when it is first imported (it stays in sys.modules)."""

    @property
    def plan(self) -> Any:
        return _PLAN

    @plan.setter
    def plan(self, value: Any) -> None:
        pass  # the plan stage package (planner/plan/): reachable as sys.modules['planner.plan'] and through _Plan


_PLAN = _Plan()
sys.modules[__name__].__class__ = _Package
