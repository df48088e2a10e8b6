"""The instruction flag (memory/base/fence.py orders_in) measured: its catch rate per kind on the injection
corpus (tests/support/injection_corpus.py, each variant also disguised six ways), its false-flag rate per
source on ordinary recorded text (tests/support/ordinary_corpus.py: the shared repository histories, real
tool output made from them, real Claude Code transcripts and payloads), and its CPU per item.

    .venv/bin/python -m scripts.bench.flags [--show N] [--json]

--show prints up to N flagged ordinary items with the kind that flagged them, to read by eye.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from memory.base import fence
from scripts.bench.common import machine_line, print_json
from tests.support import injection_corpus, ordinary_corpus


def catch_rates() -> dict[str, dict[str, int]]:
    """{kind: {variants, caught, disguised, disguised_caught}}."""
    out: dict[str, dict[str, int]] = {}
    for kind, text in injection_corpus.every():
        row = out.setdefault(kind, {"variants": 0, "caught": 0, "disguised": 0, "disguised_caught": 0})
        row["variants"] += 1
        row["caught"] += bool(fence.orders_in(text))
        for form in injection_corpus.disguise(text):
            row["disguised"] += 1
            row["disguised_caught"] += bool(fence.orders_in(form))
    return out


def false_flags(show: int = 0) -> tuple[dict[str, dict[str, float]], list[tuple[str, str, str]]]:
    """{source: {items, lines, flagged, cpu_us_per_item}} and the flagged items (source, kind, text)."""
    out: dict[str, dict[str, float]] = {}
    flagged: list[tuple[str, str, str]] = []
    for source, texts in ordinary_corpus.items().items():
        start = time.process_time()
        kinds = [fence.orders_in(t) for t in texts]
        cpu = time.process_time() - start
        hits = [(source, k, t) for k, t in zip(kinds, texts, strict=True) if k]
        flagged += hits
        out[source] = {"items": len(texts), "lines": sum(t.count("\n") + 1 for t in texts), "flagged": len(hits),
                       "cpu_us_per_item": round(cpu / max(1, len(texts)) * 1e6, 1)}
    return out, flagged[:show] if show else flagged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    caught = catch_rates()
    ordinary, flagged = false_flags()
    if args.json:
        print_json({"catch": caught, "ordinary": ordinary,
                    "flagged_kinds": Counter(k for _, k, _ in flagged)})
        return
    print(machine_line())
    print(f"{'kind':<22}{'variants':>9}{'caught':>8}{'disguised':>10}{'caught':>8}")
    for kind, r in caught.items():
        print(f"{kind:<22}{r['variants']:>9}{r['caught']:>8}{r['disguised']:>10}{r['disguised_caught']:>8}")
    total = {k: sum(r[k] for r in caught.values()) for k in ("variants", "caught", "disguised", "disguised_caught")}
    print(f"{'all':<22}{total['variants']:>9}{total['caught']:>8}{total['disguised']:>10}"
          f"{total['disguised_caught']:>8}")
    print(f"\n{'ordinary source':<18}{'items':>7}{'lines':>9}{'flagged':>8}{'rate':>8}{'us/item':>9}")
    for source, r in ordinary.items():
        print(f"{source:<18}{r['items']:>7}{r['lines']:>9}{r['flagged']:>8}{r['flagged'] / r['items']:>8.2%}"
              f"{r['cpu_us_per_item']:>9}")
    items = sum(r["items"] for r in ordinary.values())
    print(f"{'all':<18}{items:>7}{sum(r['lines'] for r in ordinary.values()):>9}{len(flagged):>8}"
          f"{len(flagged) / items:>8.2%}")
    print("flagged by kind:", dict(Counter(k for _, k, _ in flagged)))
    for source, kind, text in flagged[:args.show]:
        print(f"--- {source}: {kind}\n{text[:400]}")


if __name__ == "__main__":
    main()
