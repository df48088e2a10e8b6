"""Team memory: a project's team-scope memories replicated through PostgreSQL + pgvector.

Hooks never touch the network and never import this package: they only write the local outbox (SQLite
triggers, memory/store/migrations.py m005) and queue a `team_sync` job (memory/hook/session_start.py);
the worker (job.py) pushes and pulls (sync.py). Standard library only here and in config.py and outbox.py;
psycopg is imported by sync.py and pg_schema.py alone. Cold side: may import base, store, capture and
recall; never hook, worker, present, cli or mcp."""
