"""Credentials inside URLs, hidden before a URL (or a message holding one) is shown or stored.

QDRANT_URL may carry a user and password (`http://admin:secret@host:6333`) or a key in its query
(`?api_key=...`). The URL is echoed by connection errors, `ragscope doctor` and the app's sidebar,
which reach terminals, screenshots and bug reports: every one of them goes through `redact_url`.
"""

from __future__ import annotations

import re

MASK = "***"
_PIECE = 4  # shorter pieces of a password are left: hiding every "ab" in a message would garble it

# `scheme://user:pass@`: the authority's user info, up to its last `@` (a password may hold a raw one).
_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)[^/\s?#@]*(?:@[^/\s?#@]*)*@", re.I)
# Query and fragment parameters that hold a secret: `?api_key=`, `&token=`, `access_token=`, `password=`.
_SECRET_PARAM = re.compile(
    r"(?P<key>[?&#;](?:api[_-]?key|apikey|(?:access[_-]|auth[_-]|refresh[_-])?token|password|passwd|secret)=)[^&#\s]*",
    re.I,
)


def redact_url(text: str, raw: str = "") -> str:
    """`text` with the user info of every URL in it and the values of secret query parameters replaced by `***`.

    `raw` is the URL as configured (QDRANT_URL), when the caller has it: its credentials are found in the raw
    string, everything between `scheme://` and its last `@`, and hidden wherever they appear. A password
    holding `#`, `/` or `?` ends the user info for a URL parser and for the pattern below, so only the raw
    string knows where it ends (a configured URL with `@` in its path loses that part of it to `***`: a
    message says too little rather than a password).

    Example:
        redact_url("could not connect to http://admin:secret@db:6333/?api_key=k1")
        -> "could not connect to http://***@db:6333/?api_key=***"
    """
    for secret in _raw_credentials(raw):
        text = text.replace(secret, MASK)
    text = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    return _SECRET_PARAM.sub(lambda m: f"{m.group('key')}{MASK}", text)


def _raw_credentials(url: str) -> list[str]:
    """The user info of `url` as written, its password, and the password's pieces between `#`, `/`, `?` and
    `@` (what a parser that cut the URL there may print on its own), longest first."""
    _, sep, rest = url.partition("://")
    userinfo = rest.rpartition("@")[0] if sep else ""
    password = userinfo.partition(":")[2]
    pieces = {p for p in re.split(r"[#/?@]", password) if len(p) >= _PIECE}
    return sorted({userinfo, password, *pieces} - {""}, key=len, reverse=True)
