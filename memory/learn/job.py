"""The worker's `extract` job: payload {session_id, trigger, transcript_path} from SessionEnd, PreCompact
or `memory import`. Raising makes the worker retry the job later, so a job is never lost to a crash."""

from __future__ import annotations

from typing import Any

from memory.learn.run import extract_session
from memory.store.workspace import Workspace


def handle_job(ws: Workspace, payload: dict[str, Any]) -> dict[str, Any]:
    sid = str(payload.get("session_id") or "")
    if not sid:
        return {"status": "skipped", "reason": "no session id"}
    outcome = extract_session(ws, sid, trigger=str(payload.get("trigger") or "end"),
                              transcript_path=str(payload.get("transcript_path") or "") or None)
    return outcome.to_json()
