"""The one way a page shows rows of ranks and scores: whole-number columns that may be empty stay whole
(pandas would make them floats, "3.0"), and an empty cell reads "–" (st.dataframe would print "None")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

ABSENT = "–"  # what a table shows where a stage did not rank a chunk


def show_rows(
    rows: Sequence[Mapping[str, Any]], key: str, column_config: Mapping[str, Any], whole: Sequence[str] = ()
) -> None:
    """`rows` as a table without its index; `whole`: the columns of whole numbers that may be empty."""
    frame = pd.DataFrame(rows).astype({c: "Int64" for c in whole})
    st.dataframe(frame, hide_index=True, key=key, column_config=dict(column_config), placeholder=ABSENT)
