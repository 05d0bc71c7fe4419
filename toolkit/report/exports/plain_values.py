"""pandas' and numpy's values as plain Python, for every output that writes findings.

>>> import pandas as pd
>>> frame_records(pd.DataFrame({"n": [1, None]}))
[{'n': 1.0}, {'n': None}]
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["frame_records", "parsed_evidence", "plain_value"]

_SCALARS = (float, int, str, datetime, date, type(pd.NaT), type(pd.NA))


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A DataFrame's rows as dicts of plain Python values (missing values are None)."""
    return [{str(k): plain_value(v) for k, v in row.items()} for row in frame.to_dict("records")]


def plain_value(value: Any) -> Any:
    """pandas' and numpy's values as plain Python: NaN/NaT/None -> None, times -> ISO text."""
    if value is None or (isinstance(value, _SCALARS) and pd.isna(value)):
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, np.ndarray):  # list columns
        return [plain_value(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return plain_value(value.item())
    return value


def parsed_evidence(value: Any) -> Any:
    """A check's evidence JSON text as the value it holds (the text itself if not JSON)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value
