"""One upload limit: RAGSCOPE_MAX_UPLOAD_MB, which the web server's own cap (`server.maxUploadSize`) must cover.

Streamlit's server answers a file over `server.maxUploadSize` with HTTP 413, shown only as "AxiosError" on a red
chip, and the app's message never appears (issue 38, item 2). So the uploader offers twice the app's limit,
never more than the server takes: a file over the app's limit then reaches the app, which refuses it in MiB as
the CLI does; and when the server's cap does not cover the app's limit, the page says so and how to fix it.
"""

from __future__ import annotations

from rag.text.sizes import MIB, mib


def uploader_cap_mb(limit_mb: int, server_mb: int) -> int:
    """What the uploader takes (MiB): room above the app's limit for its own message, within the server's cap."""
    return min(2 * limit_mb, server_mb)


def limit_problem(limit_mb: int, server_mb: int) -> str | None:
    """Why the two limits disagree (the server refuses files the app would take or refuse itself), or None."""
    if server_mb > limit_mb:
        return None
    return (
        f"The web server takes uploads up to {mib(server_mb * MIB)} (server.maxUploadSize), not more than the "
        f"app's limit of {mib(limit_mb * MIB)} (RAGSCOPE_MAX_UPLOAD_MB): a larger file gets only the browser's "
        f"refusal. Set server.maxUploadSize in .streamlit/config.toml (or STREAMLIT_SERVER_MAX_UPLOAD_SIZE) to "
        f"{2 * limit_mb}, or lower RAGSCOPE_MAX_UPLOAD_MB."
    )
