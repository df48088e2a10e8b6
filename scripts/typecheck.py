"""The type checker's gate: mypy over the plugin, against a committed baseline that can only shrink.

    python -m scripts.typecheck            # fails on any error the baseline does not hold
    python -m scripts.typecheck --update   # writes the baseline (after fixing errors: it may only shrink)

An error is keyed by file, code and message, without its line number (an edit above it moves it), so the
baseline holds each known error once per occurrence; scripts/test runs the check, and tests/test_layout.py checks
that the baseline is smaller than the 133 errors mypy first reported (issue 30).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scripts" / "mypy-baseline.txt"
TARGETS = ["memory", "parser", "hooks"]
_ERROR = re.compile(r"^(?P<path>[^:]+):\d+: error: (?P<message>.*?)(?:  \[(?P<code>[a-z-]+)\])?$")


def run_mypy() -> list[str]:
    """mypy's errors as baseline keys, sorted (its configuration is [tool.mypy] in pyproject.toml)."""
    out = subprocess.run([sys.executable, "-m", "mypy", *TARGETS], cwd=ROOT, capture_output=True, text=True)
    # mypy ends every run with "Success: ..." or "Found N errors ..."; exit 1 without it is Python's own (no
    # mypy installed: "No module named mypy"), which once passed this gate as "0 errors".
    summary = out.stdout.rstrip().rpartition("\n")[2]
    if out.returncode not in (0, 1) or not summary.startswith(("Success:", "Found ")):
        raise SystemExit(f"typecheck: mypy failed to run:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    keys = []
    for line in out.stdout.splitlines():
        m = _ERROR.match(line)
        if m:
            keys.append(f"{m['path']}: [{m['code'] or 'error'}] {m['message']}")
    return sorted(keys)


def baseline() -> list[str]:
    return [ln for ln in BASELINE.read_text().splitlines() if ln.strip()] if BASELINE.exists() else []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update", action="store_true", help="write the baseline from this run")
    args = ap.parse_args()
    now = Counter(run_mypy())
    known = Counter(baseline())
    if args.update:
        if sum(now.values()) > sum(known.values()) and known:
            print(f"typecheck: {sum(now.values())} errors, more than the baseline's {sum(known.values())}: fix them "
                  "instead (the baseline may only shrink)", file=sys.stderr)
            return 1
        BASELINE.write_text("".join(f"{k}\n" for k in sorted(now.elements())))
        print(f"typecheck: baseline written, {sum(now.values())} errors")
        return 0
    new = now - known
    if new:
        print(f"typecheck: {sum(new.values())} new type errors (not in {BASELINE.relative_to(ROOT)}):", file=sys.stderr)
        for k in sorted(new.elements()):
            print(f"  {k}", file=sys.stderr)
        return 1
    fixed = sum((known - now).values())
    print(f"typecheck: {sum(now.values())} known errors, none new"
          + (f"; {fixed} fixed: `python -m scripts.typecheck --update` shrinks the baseline" if fixed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
