"""Team memory: a project's team-scope memories replicated through PostgreSQL + pgvector.

Hooks never touch the network: they only write the local outbox (SQLite triggers, memory/store/migrations.py
m005) and queue a `team_sync` job; the worker (job.py) pushes and pulls (sync.py). Standard library only
here and in config.py, outbox.py and scope.py; psycopg is imported by sync.py and pg_schema.py alone."""
