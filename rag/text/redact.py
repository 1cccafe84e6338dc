"""Credentials inside URLs, hidden before a URL (or a message holding one) is shown or stored.

QDRANT_URL may carry a user and password (`http://admin:secret@host:6333`) or a key in its query
(`?api_key=...`). The URL is echoed by connection errors, `ragscope doctor` and the app's sidebar,
which reach terminals, screenshots and bug reports: every one of them goes through `redact_url`.
"""

from __future__ import annotations

import re

MASK = "***"

# `scheme://user:pass@`: the authority's user info, up to its last `@` (a password may hold a raw one).
_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)[^/\s?#@]*(?:@[^/\s?#@]*)*@", re.I)
# Query and fragment parameters that hold a secret: `?api_key=`, `&token=`, `access_token=`, `password=`.
_SECRET_PARAM = re.compile(
    r"(?P<key>[?&#;](?:api[_-]?key|apikey|(?:access[_-]|auth[_-]|refresh[_-])?token|password|passwd|secret)=)[^&#\s]*",
    re.I,
)


def redact_url(text: str) -> str:
    """`text` with the user info of every URL in it and the values of secret query parameters replaced by `***`.

    Example:
        redact_url("could not connect to http://admin:secret@db:6333/?api_key=k1")
        -> "could not connect to http://***@db:6333/?api_key=***"
    """
    text = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    return _SECRET_PARAM.sub(lambda m: f"{m.group('key')}{MASK}", text)
