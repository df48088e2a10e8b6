"""The hot side's ground floor: configuration, logs, notices, the privacy filter, words.

Standard library only, and of `memory` only fastpath (the hot path's copies of json and hashlib: JSON and hashing
come from there). Every hook imports these modules, so each one is cheap to import (no re, json, hashlib or typing
at module level where it costs a hook milliseconds).
Must not import: any other memory package, lancedb, anthropic, ollama, mcp, psycopg, numpy, pyarrow, click."""
