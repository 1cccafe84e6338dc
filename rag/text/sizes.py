"""File sizes in one unit for every message: the page's upload limit, the CLI's and the loaders' say the same number.

MiB with one decimal, because Streamlit's `server.maxUploadSize` and RAGSCOPE_MAX_UPLOAD_MB count MiB
(50 means 50 × 1,048,576 bytes): in decimal MB the same limit read "52 MB" in the CLI and "50.0 MB" on the page.
"""

from __future__ import annotations

MIB = 1024 * 1024


def mib(n_bytes: int | float) -> str:
    """`n_bytes` as "50.0 MiB"."""
    return f"{n_bytes / MIB:,.1f} MiB"
