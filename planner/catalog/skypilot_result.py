"""The records ``planner catalog import-skypilot`` builds (planner.catalog.skypilot, which re-exports them): one
instance row as ``cloud.yaml`` writes it, and the result of reading a ``vms.csv`` (its rows and what was left out).

Kept apart so that the row readers (planner.catalog.skypilot_rows) and the importer share them without importing
each other. Importing this module does no work.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Imported:
    """One instance row, as ``cloud.yaml`` writes it."""

    id: str
    provider: str
    instance: str
    gpu: str
    gpu_count: int
    vcpus: int
    memory_gib: float
    usd_per_hour: float
    region: str
    spot_usd_per_hour: float | None = None
    spot_usd_per_hour_range: tuple[float, float] | None = None
    verification: str = "V"
    notes: str = ""


@dataclass
class ImportResult:
    """The rows and what was left out (instance type -> reason; 'the row on line N' for a row without an instance
    type, 'the row on line N of X' for a row of X left out beside rows of X that price it)."""

    rows: list[Imported] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    #: CSV lines whose SpotPrice was 0 (or below the smallest float): read as no spot offer
    no_spot_lines: list[str] = field(default_factory=list)
    #: CSV lines whose spot price was below the catalog's floor (0.001 USD/h, by its digits): no spot offer
    spot_floor_lines: list[str] = field(default_factory=list)
    #: CSV lines whose spot price was at or above their on-demand price: read as no spot offer (module docstring)
    spot_above_lines: list[str] = field(default_factory=list)
    #: GCP VM rows of a machine type imported from other zones, in a zone with no GPU row to add (the GPU is not
    #: offered there): not priced there, counted in a line (h35b: left out without a word)
    no_gpu_row_lines: list[str] = field(default_factory=list)
    #: CSV lines whose region had upper-case letters, for a cloud that names its regions in lower case
    #: (planner.catalog.cloud.LOWER_CASE_REGIONS): written in lower case
    region_case_lines: list[str] = field(default_factory=list)
    #: CSV lines whose region had lower-case letters, for a cloud whose regions are upper-case country codes
    #: (planner.catalog.cloud.UPPER_CASE_REGIONS): written in upper case
    region_upper_lines: list[str] = field(default_factory=list)
    #: CSV lines whose instance type had upper-case letters, for a cloud that names its instance types in lower
    #: case (:data:`LOWER_CASE_INSTANCES`): written in lower case (h18b #9)
    instance_case_lines: list[str] = field(default_factory=list)
    #: the UTF-8 bytes the rows take in an overlay at the least (:func:`entry_bytes`)
    entry_bytes: int = 0
    #: why the ``region`` given names no region of the file, with what to give instead (h19b M4); None when it
    #: names one, or none was given (planner.catalog.import_summary.region_note)
    region_note: str | None = None
    #: the columns read for nothing that the summary names (planner.catalog.skypilot_layout.unread_columns_note,
    #: h39b 7); None when there are none to name
    unread_note: str | None = None
    #: the rows the file holds below its header (blank lines not counted): 0 for a file of a header alone (h22b M3)
    rows_read: int = 0
