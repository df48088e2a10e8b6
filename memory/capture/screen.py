"""Filter first, then cut: an event's texts through the privacy filter before capture reads them.

Capture keeps the start of many texts (a command's first 120 characters in a title, a prompt's first 150,
500 of it in the state, a page's first 1,500, a todo's 300, a failure line's 300) and flattens some onto one
line; a cut made before the filter can split a secret so that no rule recognises what is left (half a token,
a base64 run that no longer decodes), and a flattened one loses the line break a rule starts at. So every
text of an event is filtered whole here, once, and capture cuts what is clean already; store.save filters
again what it writes (a title or text made of several pieces). Standard library only: hooks run it."""

from __future__ import annotations

from memory.base.event import Event
from memory.base.privacy import clean_obj

# What nobody typed: ids, names and the paths the hook finds the project by (each cleaned where it is stored).
_AS_IS = frozenset(("host", "kind", "session", "cwd", "transcript", "tool", "tool_kind", "host_tool", "agent_id",
                    "agent_type", "failed"))


def screened(event: Event) -> Event:
    """The event with every text it carries through the privacy filter. A Read's result (the file) is left
    as it is: capture keeps only its path, and the outline filters what it shows and caches."""
    out = Event(event.host, event.kind)
    read = event.tool == "Read"
    for name in Event.__slots__:
        value = getattr(event, name)
        setattr(out, name, value if name in _AS_IS or (read and name == "tool_response") else clean_obj(value))
    return out
