"""The hot side's ground floor: configuration, JSON, logs, notices, the privacy filter, hashing, words.

Standard library only, and nothing else of `memory` below it: every hook imports these modules, so each
one is cheap to import (no re, json, hashlib or typing at module level where it costs a hook milliseconds).
Must not import: any other memory package, lancedb, anthropic, ollama, mcp, psycopg, numpy, pyarrow, click."""
