"""Claude Code's own auto memory as memories (`memory import-auto-memory`).

Claude Code keeps notes it writes itself in `<config dir>/projects/<project folder, non-alphanumerics made
->/memory/`: an index, MEMORY.md (the first 200 lines load at every session start; entries like
`- [Title](file.md) — one-line hook`), and topic files with a YAML front matter (`name`, `description`,
`type`: user, feedback, project or reference) above their text. Each topic file becomes one `fact`, and
each line of MEMORY.md that points to no topic file another. They are recorded data, never decisions:
origin `file` with the file's path, tags `claude-auto-memory` and `auto-memory:<type>`; text that reads as
instructions is flagged as any other and never injected automatically.
"""

from __future__ import annotations

import os
import re

from memory.capture.transcript import project_transcript_dir
from memory.store import NewMemory

INDEX = "MEMORY.md"
_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")


def default_folder(root: str) -> str:
    """The auto-memory folder of a project (its git root, as Claude Code names it)."""
    return os.path.join(project_transcript_dir(root), "memory")


def _shown(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if path.startswith(home + os.sep) else path


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """(the `key: value` lines of a leading `---` block, the text after it)."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text
    fields: dict[str, str] = {}
    for line in text[3:end].splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            fields[key.strip().lower()] = value.strip().strip("\"'")
    return fields, text[end + 4:].lstrip("-").lstrip("\n")


def _memory(path: str, title: str, content: str, kind: str | None) -> NewMemory:
    tags = ["claude-auto-memory", *([f"auto-memory:{kind.lower()}"] if kind else [])]
    return NewMemory(title=title[:200], content=content, type="fact", tags=tags, source="auto-memory",
                     origin="file", origin_detail=_shown(path), created_at=os.path.getmtime(path))


def topic_file(path: str) -> NewMemory | None:
    with open(path, encoding="utf-8", errors="replace") as fh:
        fields, body = front_matter(fh.read())
    body, description = body.strip(), fields.get("description", "")
    content = "\n\n".join(x for x in (description, body) if x)
    if not content:
        return None
    heading = next((ln.lstrip("# ").strip() for ln in body.splitlines() if ln.startswith("#")), "")
    title = fields.get("name") or description or heading or os.path.splitext(os.path.basename(path))[0]
    return _memory(path, title, content, fields.get("type"))


def index_entries(path: str) -> list[NewMemory]:
    """The lines of MEMORY.md that point to no topic file of its folder, one memory each, with the heading
    they are under."""
    folder = os.path.dirname(path)
    out: list[NewMemory] = []
    section = ""
    with open(path, encoding="utf-8", errors="replace") as fh:
        _, text = front_matter(fh.read())
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            section = line.lstrip("# ").strip()
            continue
        entry = line.lstrip("-*+ ").strip()
        if not entry or any(os.path.isfile(os.path.join(folder, t)) for t in _LINK.findall(line)):
            continue
        out.append(_memory(path, entry[:120], f"{section}: {entry}" if section else entry, None))
    return out


def read(source: str) -> list[NewMemory]:
    """The memories of an auto-memory folder (MEMORY.md and every other .md file in it), or of one file."""
    if os.path.isfile(source):
        files = [source]
    else:
        files = sorted(os.path.join(source, n) for n in os.listdir(source) if n.endswith(".md"))
    out: list[NewMemory] = []
    for path in files:
        if os.path.basename(path) == INDEX:
            out += index_entries(path)
        elif (m := topic_file(path)) is not None:
            out.append(m)
    return out

