"""Messages whose values show exactly as typed: how a page says anything that holds text it did not write.

Streamlit renders every st.error / st.warning / st.info / st.success / st.caption / st.toast /
st.markdown as Markdown. A value echoed into one (a link's `?collection=` or `k=`, an uploaded
question set's key, a document name, an engine error, which names the value that caused it) could
otherwise put a Markdown image in the app's own error box, which the browser fetches from any host,
or a working link that reads like the app's own advice ("Session expired: sign in again"). The
template is the page's own constant Markdown; every value is escaped (ui.render.md_escape) before it
goes in, so no value can add markup, and no bare URL or address in it becomes a link. Raw HTML needs
no extra step: these elements never render it.

    say("error", "The link's settings were not applied: {e}", e=e)
    say("caption", "Collection **{name}** · {where}", name=s.collection, where=where)
"""

from __future__ import annotations

from typing import Literal

import streamlit as st

from ui.render import md_escape

Kind = Literal["error", "warning", "info", "success", "caption", "toast", "markdown"]


def safe_text(template: str, **values: object) -> str:
    """`template` (str.format fields, literal braces doubled) with each value's str() escaped for Markdown."""
    return template.format_map({name: md_escape(str(value)) for name, value in values.items()})


def say(kind: Kind, template: str, **values: object) -> None:
    """Show `template` as a message of this kind, its `{name}` fields filled with the values shown as typed."""
    getattr(st, kind)(safe_text(template, **values))
