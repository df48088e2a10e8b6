"""How many user messages become decisions (memory/capture decisions_in), on the real prompts of the
evaluation data (read from ../shared at run time, never shipped): the Claude Code transcripts and hook
payloads, LongMemEval's user turns (people writing to an assistant) and LoCoMo's turns (people chatting).
Every hit is a candidate false positive to read: `--show N` prints N of them per corpus.

    .venv/bin/python -m scripts.bench.decisions [--show 40] [--json]
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import random
from pathlib import Path

from scripts.bench import common

SHARED = common.SHARED / "data"


def claude_code_prompts() -> list[str]:
    from memory.capture.transcript import read

    out = [p.text for f in sorted(glob.glob(str(SHARED / "claude-code" / "transcripts" / "*.jsonl")))
           for p in read(f, 0).prompts]
    for f in sorted(glob.glob(str(SHARED / "claude-code" / "hook-payloads*" / "UserPromptSubmit.json"))):
        out.append(json.loads(Path(f).read_text())["prompt"])
    return out


def longmemeval_user_turns() -> list[str]:
    seen: dict[str, None] = {}
    with gzip.open(SHARED / "longmemeval" / "longmemeval_s_dev120.jsonl.gz", "rt") as f:
        for line in f:
            for session in json.loads(line)["haystack_sessions"]:
                for turn in session:
                    if turn["role"] == "user":
                        seen.setdefault(turn["content"], None)
    return list(seen)


def locomo_turns() -> list[str]:
    with open(SHARED / "locomo" / "locomo10_corpus_turns.jsonl") as f:
        return [json.loads(line)["text"] for line in f]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", type=int, default=0, help="print this many hits per corpus (a seeded sample)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from memory.capture import decisions_in

    if not args.json:
        print(common.machine_line())
    rows = []
    for name, load in (("claude-code prompts", claude_code_prompts), ("longmemeval user turns", longmemeval_user_turns),
                       ("locomo turns", locomo_turns)):
        texts = load()
        hits = [(t, d) for t in texts if (d := decisions_in(t))]
        rows.append({"corpus": name, "messages": len(texts), "with_decisions": len(hits),
                     "decisions": sum(len(d) for _, d in hits)})
        if not args.json:
            print(f"{name}: {len(hits)}/{len(texts)} messages give decisions ({sum(len(d) for _, d in hits)} "
                  "decisions)")
            random.seed(1)
            for _, found in random.sample(hits, min(args.show, len(hits))):
                for sentence in found:
                    print(f"    {sentence[:160]!r}")
    if args.json:
        common.print_json(rows)


if __name__ == "__main__":
    main()
