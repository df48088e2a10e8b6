"""What pause, exclude and "why recalled" add to a hook, in-process CPU time per call.

- the pause/exclude check every hook runs before its handler (memory/base/quiet.py `reason`): with nothing
  paused or excluded, with an exclusion list of two folders, and with MEMORY_EXCLUDE globs as well;
- recording an injection (memory/store log_access) of 5 memories as before (access rows only) and with the
  score parts and a 3,000-character injected text (an injections row).

    .venv/bin/python -m scripts.bench.steer [--calls 2000] [--json]
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable

from scripts.bench.common import arguments, machine, machine_line, print_json


def per_call_us(fn: Callable[[], object], calls: int) -> float:
    """CPU microseconds per call, the best of three runs (the neighbours' load only adds)."""
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t0) / calls * 1e6)
    return round(best, 1)


def quiet_check(home: str, calls: int) -> dict[str, float]:
    from memory.base import quiet

    os.environ["MEMORY_HOME"] = home
    os.environ.pop("MEMORY_EXCLUDE", None)
    event = {"session_id": "3f1c2a9e-0b4d-4c8e-9f6a-1d2e3f4a5b6c", "cwd": os.getcwd()}
    out = {"nothing_paused_or_excluded": per_call_us(lambda: quiet.reason(event), calls)}
    with open(os.path.join(home, quiet.EXCLUDED_FILE), "w", encoding="utf-8") as fh:
        fh.write("/home/someone/clients/acme\n/srv/secret\n")
    out["exclusion_list"] = per_call_us(lambda: quiet.reason(event), calls)
    os.environ["MEMORY_EXCLUDE"] = "~/clients/*:/tmp/**"
    out["exclusion_list_and_globs"] = per_call_us(lambda: quiet.reason(event), calls)
    os.environ.pop("MEMORY_EXCLUDE")
    return out


def injection_record(home: str, calls: int) -> dict[str, float]:
    from memory import store
    from memory.store.db import connect

    db = connect(os.path.join(home, "bench.db"))
    ids = [s.id for s in store.save_many(db, "p", [store.NewMemory(f"title {i} about the deploy", f"content {i} of "
                                                                   "the deploy notes") for i in range(20)])][:5]
    parts = {i: {"keyword": 0.8312, "vector": 0.4123, "session": 0.1, "importance": 0.5, "score": 0.7712}
             for i in ids}
    text = "- [decision] a recalled memory line (user, 2026-11-24, #12)\n" * 50
    rounds = max(calls // 10, 50)
    return {"access_rows_only": per_call_us(lambda: store.log_access(db, ids, "inject-prompt", "s", "q"), rounds),
            "with_parts_and_text": per_call_us(lambda: store.log_access(db, ids, "inject-prompt", "s", "q",
                                                                        parts=parts, text=text, mode="hybrid"),
                                               rounds)}


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as home:
        results = {"quiet_check_us": quiet_check(home, args.calls),
                   "log_access_us": injection_record(home, args.calls)}
    if args.json:
        print_json(results)
        return
    print(machine_line(machine()))
    for group, values in results.items():
        print(group + ": " + ", ".join(f"{k} {v} us" for k, v in values.items()))


if __name__ == "__main__":
    main()
