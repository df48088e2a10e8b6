"""What the CLI and MCP fuzzers share: a sandbox (data dir, project, a folder outside it, symlinks that
lead out), hostile values, and the after-checks (nothing written outside the data dir, no private text on
disk)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

SECRET = "PRIVATE-FUZZ-MARKER"  # only ever sent inside <private> tags

FTS = ['"', '""', "*", "a*", "NEAR(", "NEAR(a b, 3)", "AND OR", "a AND", "OR", "NOT x", "-x", "^x", "col:term",
       "(", ")", "{a b}", "a:b:c", "'", "\\", "%", "_", "a OR b NOT c AND", "memories_fts MATCH 'x'"]
PRIVATE = [f"<private>{SECRET}</private> tail", f"ok </private> <private>{SECRET}", f"<private>{SECRET}",
           f"<PRIVATE >{SECRET}</private >", f"<private>x</private<{SECRET}", f"< private>{SECRET}</private>",
           f"<private><private>{SECRET}</private>{SECRET}</private>"]
NUMBERS = ["-1", "0", "1", "1.5", "1e309", "nan", "inf", "-0", "99999999999999999999", "0x10", "", " "]
DATES = ["7d", "12h", "2w", "6mo", "1y", "0d", "-5d", "999999999d", "2026-13-45", "2026-11-01", "tomorrow",
         "1970-01-01", "9999-12-31", "10000-01-01", "2026-11-01T25:00"]
BINARY = ["\udcff\udcfe", "caf\udce9", "\x00", "a\x00b", "\x1b[31mred", "\u202e\u0645", "🙂" * 50, "\ufeff"]


@dataclass
class Sandbox:
    root: Path
    home: Path
    project: Path
    outside: Path
    tmp: Path

    def paths(self) -> list[str]:
        p, o = self.project, self.outside
        return [str(p), str(p / "src"), "src", "./src", "app.py", "src/../../outside", "../outside", "..",
                str(p / ".."), str(o), str(o / "secret.txt"), str(p / "link-out"), "link-out", "link-out/secret.txt",
                str(p / "link-file"), "~", "~/x", "/", "/etc/passwd", "/nonexistent/dir", str(p / "notes.jsonl"),
                str(p / "binary.bin"), str(p / "app.py"), "", "."]

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """Every path under the sandbox but the data dir and the temp dir, with size and mtime."""
        out = {}
        for path in self.root.rglob("*"):
            if path.is_relative_to(self.home) or path.is_relative_to(self.tmp):
                continue
            st_ = path.lstat()
            out[str(path)] = (st_.st_size, st_.st_mtime_ns)
        return out

    def leaks(self) -> list[str]:
        return [str(p) for p in self.home.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


def make_sandbox(root: Path) -> Sandbox:
    sb = Sandbox(root, root / "data", root / "project", root / "outside", root / "tmp")
    for d in (sb.project / "src", sb.outside, sb.tmp, root / "userhome"):
        d.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(sb.project)], check=True)
    (sb.project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    (sb.project / "README.md").write_text("# App\n\n## Deploy\nDeploys use the blue-green switch.\n")
    (sb.project / "notes.jsonl").write_text('{"content": "a note"}\nnot json\n{"type": 3}\n')
    (sb.project / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (sb.outside / "secret.txt").write_text("outside the project\n")
    (sb.project / "link-out").symlink_to(sb.outside)
    (sb.project / "link-file").symlink_to(sb.outside / "secret.txt")
    return sb


def sandbox_env(sb: Sandbox) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR",
                                                             "MEMORY_PROJECT_DIR", "ANTHROPIC_API_KEY",
                                                             "ANTHROPIC_AUTH_TOKEN")}
    env.update({"MEMORY_HOME": str(sb.home), "TMPDIR": str(sb.tmp), "MEMORY_WORKER": "off",
                "MEMORY_EXTRACTOR": "heuristic", "MEMORY_EMBEDDER": "hashing", "OLLAMA_HOST": "http://127.0.0.1:9",
                "CLAUDE_CONFIG_DIR": str(sb.root / "tmp" / "claude"),
                # The user's home is outside the data dir too: watched like the project.
                "HOME": str(sb.root / "userhome")})
    return env


def hostile_text(sb: Sandbox | None = None, huge: int = 50_000) -> st.SearchStrategy[str]:
    fixed = FTS + PRIVATE + NUMBERS + DATES + BINARY + ["x" * huge, "word " * 2000, "DROP TABLE memories; --"]
    return st.one_of(st.text(max_size=40), st.sampled_from(fixed + (sb.paths() if sb else [])),
                     st.builds(lambda a, b: f"{a} {b}", st.sampled_from(FTS + PRIVATE), st.text(max_size=20)))
