"""The worker process's heap: its resident size, how many malloc arenas it keeps, and trimming them."""

from __future__ import annotations


def rss_bytes() -> int:
    """This process's resident set (VmRSS), 0 where /proc is not there."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def few_arenas(n: int = 1) -> None:
    """At most `n` glibc malloc arenas (default: 8 per core), before any thread starts: the query and vector
    threads and LanceDB's runtime each took one, and freed memory stays in them (10,000 memories with
    MiniLM: 370 MiB warm after malloc_trim, 330 MiB with two arenas). One: a forward pass in the embedding
    thread left 49 MiB after malloc_trim in a second arena, 28 in the main one (the threads' allocations
    are numpy's large arrays and Python's over 512 bytes, under the GIL: little to contend for). Not glibc:
    nothing to do."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-8, n)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


def trim_heap() -> None:
    """Hand freed heap back to the system: glibc keeps it in its arenas otherwise (a freed MiniLM on numpy:
    RSS 346 MiB loaded, 264 MiB after del and gc, 193 MiB after malloc_trim). Not glibc: nothing to do."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass

