"""planner: hardware sizing and procurement planner for deep-learning work.

Data flows one way: model -> catalog -> workload -> memory and speed -> solve -> cost ->
report -> api -> cli. Importing this package does no work.

The Python API (planner.api) is reached from here: ``from planner import estimate, fit, plan,
compare, load_catalog``. It is imported on first use (PEP 562), so ``import planner`` stays light
(no pandas, click or openpyxl).

``planner.plan`` is the API function (planner.api.plan) and nothing else; the stage that chooses
a machine is the package planner.solve.
"""

from __future__ import annotations

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
