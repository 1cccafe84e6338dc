"""One upload limit: RAGSCOPE_MAX_UPLOAD_MB, the number `.streamlit/config.toml` gives the web server too.

Streamlit's server answers a file over `server.maxUploadSize` with HTTP 413, shown only as "AxiosError" on a red
chip, and the app's message never appears (issue 38, item 2). So the two hold one number (50 by default,
tests/test_upload_limit.py checks), and the uploader takes no more than it: the browser refuses a larger file as
it is picked, on its chip, with the limit the page states, before any upload. When a deployment sets the two
apart, the uploader takes the smaller and the page says how to make them one again.

One unit is beyond the app: outside Windows, Streamlit's browser check counts the number in decimal MB (50 is
50,000,000 bytes, the chip says "File must be 50.0MB or smaller"), so a file in the last 5% under 50 MiB is
refused there although the server, the app and the CLI would take it.
"""

from __future__ import annotations

from rag.text.sizes import MIB, mib


def uploader_cap_mb(limit_mb: int, server_mb: int) -> int:
    """What the uploader takes (MiB): the app's limit, never more than the server takes (that would be a 413)."""
    return min(limit_mb, server_mb)


def limit_note(limit_mb: int, server_mb: int) -> str:
    """What the uploader's help says: the one limit, who refuses a larger file, and how to raise it."""
    return (
        f"Up to {mib(uploader_cap_mb(limit_mb, server_mb) * MIB)} a file: the browser refuses a larger one as it is "
        "picked, on its chip. To raise it, set RAGSCOPE_MAX_UPLOAD_MB and server.maxUploadSize "
        "(.streamlit/config.toml) to the same number."
    )


def limit_problem(limit_mb: int, server_mb: int) -> str | None:
    """Why the web server refuses files the app's limit allows, or None when it takes all of them."""
    if server_mb >= limit_mb:
        return None
    return (
        f"The web server takes uploads up to {mib(server_mb * MIB)} (server.maxUploadSize), less than the app's "
        f"limit of {mib(limit_mb * MIB)} (RAGSCOPE_MAX_UPLOAD_MB): the uploader takes the smaller. Set "
        f"server.maxUploadSize in .streamlit/config.toml (or STREAMLIT_SERVER_MAX_UPLOAD_SIZE) to {limit_mb}, "
        f"or lower RAGSCOPE_MAX_UPLOAD_MB to {server_mb}."
    )
