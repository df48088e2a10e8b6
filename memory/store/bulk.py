"""A bulk import's rows, made by two processes at once: the per-memory rules (privacy filter, trust flags,
hashes; store.rows_of) run in a forked child while this process writes the batch before.

`save --jsonl` checks every line first, then forks: the child has the parsed memories already (nothing is
sent to it) and sends back each batch's rows as plain tuples through a pipe (pickle: ~2.7 us a row to
send, ~1.5 to take back). The pipe's buffer keeps it about one batch ahead; the first batches are small
(memory/cli/memories.py _batches) so writing starts early. The child keeps one memo (store.Screen.bulk()),
as one process would: the rows are the same. Only on Linux with two CPUs or more, no thread running
(fork copies one thread; macOS forbids much after a fork) and a CPU idle by the load average, for imports
of PIPELINE_MIN memories or more.
The fork costs 0.4 ms at 15 MiB of heap, 5 ms at 49, 29 at 162 (docs/benchmarks.md "Bulk save").
"""

from __future__ import annotations

import os
import sys

from memory.store import NewMemory, Screen, _Row, rows_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO, NoReturn

# Below this many memories the import stays in one process, as before: its rules cost ~0.1 s at most, and
# a short import is one batch anyway.
PIPELINE_MIN = 2000


class Stopped(Exception):
    """The child making the rows ended before sending them all (killed, or out of memory)."""


def pipelined(total: int) -> bool:
    """Whether an import of `total` memories gets a second process for its rules: it can fork, and a CPU is
    idle. With the 1-minute load average at or above CPUs - 1 the second process finds no free core: on
    2 cores at load 1.2-5 the pipelined import was 4-21% slower by wall time than one process, and took
    8-15% more CPU (docs/benchmarks.md "Bulk save")."""
    if total < PIPELINE_MIN or not can_fork():
        return False
    try:
        return os.getloadavg()[0] < _cpus() - 1
    except OSError:
        return False


def can_fork() -> bool:
    """Linux, two CPUs or more, no thread running (fork copies one thread; macOS forbids much after one)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return (threading is None or threading.active_count() == 1) and _cpus() >= 2


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def rows(batches: list[tuple[str, list[NewMemory]]], filter_low_value: bool, *, pipeline: bool) -> Rows:
    """Each batch's rows (project key, memories), in order, by next(); with `pipeline`, made in a child
    forked here and now (before the caller starts any thread: a progress bar's) while the caller writes the
    batch before. An exception the rules raise is raised at its batch. close() when done or stopped."""
    screen = Screen.bulk()  # one for the whole import: what its memo learns carries over batches
    if not pipeline:
        return Rows(iter([(p, m, filter_low_value, screen) for p, m in batches]))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns; gone without running any of the parent's cleanup
        os.close(read)
        _child(write, batches, filter_low_value, screen)
    os.close(write)
    return Rows(None, pid, os.fdopen(read, "rb"), len(batches))


class Rows:
    """The batches' rows: made here one by one (`todo`), or taken from the child `pid` through `inp`."""

    def __init__(self, todo: Iterator[tuple[str, list[NewMemory], bool, Screen]] | None, pid: int = 0,
                 inp: BinaryIO | None = None, left: int = 0) -> None:
        self.todo, self.pid, self.inp, self.left = todo, pid, inp, left

    def __iter__(self) -> Rows:
        return self

    def __next__(self) -> list[_Row | None]:
        if self.todo is not None:
            return rows_of(*next(self.todo))
        import pickle

        if not self.left or self.inp is None:
            raise StopIteration
        try:
            got = pickle.load(self.inp)
        except (EOFError, pickle.UnpicklingError):
            self.close()
            raise Stopped("the process making the import's rows stopped") from None
        if isinstance(got, Exception):
            self.close()
            raise got
        self.left -= 1
        if not self.left:
            self.close()
        return [None if s is None else _Row.restored(s) for s in got]

    def close(self) -> None:
        """Wait for the child: done, it is exiting; else (stopped early) it is killed first."""
        if self.inp is None:
            return
        self.inp.close()
        self.inp = None
        _reap(self.pid, self.left == 0)


def _child(write: int, batches: list[tuple[str, list[NewMemory]]], filter_low_value: bool,
           screen: Screen) -> NoReturn:
    import pickle

    status = 0
    try:
        with os.fdopen(write, "wb") as out:
            try:
                for project, memories in batches:
                    made = rows_of(project, memories, filter_low_value, screen)
                    pickle.dump([None if r is None else r.state() for r in made], out, protocol=5)
                    out.flush()
            except Exception as exc:  # the parent raises it at this batch
                pickle.dump(exc, out, protocol=5)
    except BaseException:  # the parent went away (a broken pipe) or an interrupt: nothing left to do
        status = 1
    finally:
        os._exit(status)


def _reap(pid: int, done: bool) -> None:
    """Wait for the child: done, it is exiting; else (a write failed here) it is stopped first."""
    import signal

    try:
        if not done:
            os.kill(pid, signal.SIGKILL)  # it holds no lock and writes no file: nothing to clean up
        os.waitpid(pid, 0)
    except (ChildProcessError, ProcessLookupError):
        pass
