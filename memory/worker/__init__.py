"""The background worker: `python -m memory.worker`. Cold side: may import base, store, capture, recall,
hook, outline, learn and team (their handle_job functions), never present, cli or mcp.

Started detached by a hook when there is queued work and no worker is alive (memory/base/worker_client.py);
one per data dir, through an exclusive flock on <home>/worker.lock. It drains every project's queue
(vector jobs: embed, upsert into LanceDB, index with neighbours in memories_ctx; other kinds through
their modules' handle_job), keeps the ANN index fresh, answers hybrid-search queries from hooks on a
unix socket (owner-only, in the data dir; no TCP port), and exits after MEMORY_WORKER_IDLE_SECONDS with
no jobs and no queries.

Idle footprint: after MEMORY_WORKER_RELEASE_SECONDS with nothing to do, the worker lets go of the model, the
projects' in-memory lists and LanceDB: it re-executes itself (same pid, same lock) as a light process that
only holds the lock and the socket (~20 MiB against 190-230 MiB warm with MiniLM on numpy at 10,000
memories; torch ~400 MiB more, and a freed model leaves its libraries mapped), and loads them again when a job
or a query comes. A worker run in another process's interpreter (tests, `memory worker run`) frees them in place.
LanceDB is never imported here: its reads and writes run in a child process that exits once they stop
(memory/recall/vector_host.py; lancedb and pyarrow held ~160 MiB of the worker's 352 MiB), and the writes
wait in a stage until the worker goes light (memory/worker/stage.py), so that child is down while it serves.

Crash safety: a batch is embedded, written to the stage in one commit (idempotent upserts and deletes), then
its memories_ctx rows, its ledger rows (memory_index) and the jobs' `done` commit in one SQLite
transaction. A worker killed anywhere leaves jobs `running`; the next worker holds the lock, so it knows
their owner is dead and puts them back to pending, and redoing them gives the same state. A sweep at
start compares the ledger with the memories table, so even a job that never got queued is not lost.

Modules: index (one project's derived indexes: ProjectIndex), jobs (the queue's jobs and their handlers),
server (the socket and its answers), priority (searches before indexing steps), stage (vector writes held
in SQLite until the worker goes light), process (the lock, the main loop, the idle re-exec, main()), heap
(resident size, malloc arenas), log (the worker's log line).
"""

from memory.worker.index import META_PROVIDER, ProjectIndex
from memory.worker.jobs import HANDLERS
from memory.worker.process import Worker, main
from memory.worker.server import filters_from

__all__ = ["HANDLERS", "META_PROVIDER", "ProjectIndex", "Worker", "filters_from", "main"]
