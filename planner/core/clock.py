"""Today's date, one for every machine: the UTC date.

Every date planner compares with today (a price's ``as_of`` "after today", the importer's default
``--as-of``, a quote's expiry, the catalog check's ages, a calibration's ``measured_on``) is the date in
UTC, not the machine's local date: an overlay imported east of UTC (Auckland, UTC+13) on the evening of
the 6th is dated the 6th, and it loads on a machine west of UTC the same hour; a shipped entry dated
the day it was written loads under any ``TZ``. Source: Python's ``datetime.datetime.now(timezone.utc)``
(docs.python.org/3/library/datetime.html#datetime.datetime.now), the current UTC time whatever ``TZ`` says.
"""

from __future__ import annotations

import datetime as _dt


def utc_today() -> _dt.date:
    """Today's date in UTC (whatever the machine's time zone)."""
    return _dt.datetime.now(_dt.timezone.utc).date()
