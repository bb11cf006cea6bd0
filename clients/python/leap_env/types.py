"""Typed results of `leap serve` (docs/serve.md, schema v1).

Every result is a dataclass with the fields the server documents, plus `raw`, the JSON object as
the server sent it. They also read like that object (`verdict["status"]`, `group.get("rewards")`,
`"dcp" in group`), so code written against the dicts of leap_env 0.1 keeps working.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

__all__ = ["Health", "TaskSummary", "Task", "Verdict", "Turn", "Attempt", "Group"]


class _Raw:
    """Dict-style reads of the server's JSON object (the `raw` field)."""

    raw: Dict[str, Any]

    def __getitem__(self, key):
        return self.raw[key]

    def get(self, key, default=None):
        return self.raw.get(key, default)

    def __contains__(self, key):
        return key in self.raw

    def keys(self):
        return self.raw.keys()

    @classmethod
    def from_json(cls, d: Dict[str, Any]):
        kw = {}
        for f in dataclasses.fields(cls):
            if f.name != "raw" and f.name in d:
                kw[f.name] = d[f.name]
        obj = cls(**kw)
        obj.raw = d
        return obj


@dataclass
class Health(_Raw):
    status: str = ""
    backend: str = ""
    version: str = ""
    tasks: int = 0
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class TaskSummary(_Raw):
    name: str = ""
    level: int = 0
    split: str = ""
    category: str = ""
    signature: str = ""
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Task(_Raw):
    name: str = ""
    level: int = 0
    split: str = ""
    category: str = ""
    signature: str = ""
    description: str = ""
    allowed_libraries: List[str] = field(default_factory=list)
    prompt: str = ""
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Verdict(_Raw):
    """One candidate's verdict: the object `leap check --json` prints."""

    task: str = ""
    status: str = ""  # correct, wrong_answer, runtime_error, timeout, compile_error, rejected
    reason: str = ""
    feedback: str = ""
    backend: str = ""
    max_abs_error: Optional[float] = None
    max_rel_error: Optional[float] = None
    mismatches: int = 0
    trials_run: int = 0
    trials_passed: int = 0
    diagnostics: str = ""
    timed: bool = False
    candidate_ms: Optional[float] = None
    reference_ms: Optional[float] = None
    speedup: Optional[float] = None
    compile_seconds: float = 0.0
    run_seconds: float = 0.0
    cached: bool = False
    emulation_unsupported: bool = False
    flags: str = ""
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def correct(self) -> bool:
        return self.status == "correct"


@dataclass
class Turn(_Raw):
    turn: int = 0
    verdict: Optional[Verdict] = None  # None: lost to the infrastructure (or not judged yet)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d):
        t = super().from_json(d)
        if isinstance(t.verdict, dict):
            t.verdict = Verdict.from_json(t.verdict)
        return t


@dataclass
class Attempt(_Raw):
    attempt: int = 0
    state: str = ""  # running, awaiting_turn, ended
    end: str = ""  # none, solved, out_of_turns, not_expanded, no_room, cancelled, dropped, unsupported
    solved_turn: int = 0
    turns: List[Turn] = field(default_factory=list)
    next_turn: Optional[int] = None  # when awaiting_turn
    next_prompt: Optional[str] = None  # when awaiting_turn: the next turn in leap's template
    end_reason: Optional[str] = None
    reward: Optional[float] = None  # once the group is finished
    advantages: Optional[List[float]] = None  # once finished: one per turn
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d):
        a = super().from_json(d)
        a.turns = [Turn.from_json(t) for t in a.turns]
        return a

    @property
    def awaiting_turn(self) -> bool:
        return self.state == "awaiting_turn"

    @property
    def last_verdict(self) -> Optional[Verdict]:
        return self.turns[-1].verdict if self.turns else None


@dataclass
class Group(_Raw):
    group: str = ""  # the id (32 hex digits)
    task: str = ""
    finished: bool = False
    dcp: str = ""
    activated: bool = False
    turn1: Dict[str, int] = field(default_factory=dict)
    estimator: str = ""
    expires_in_seconds: float = 0.0
    attempts: List[Attempt] = field(default_factory=list)
    rewards: Optional[List[float]] = None  # once finished: one per attempt
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d):
        g = super().from_json(d)
        g.attempts = [Attempt.from_json(a) for a in g.attempts]
        return g

    @property
    def id(self) -> str:
        return self.group

    def awaiting(self) -> List[Attempt]:
        """The attempts DCP expanded that wait for their next turn."""
        return [a for a in self.attempts if a.state == "awaiting_turn"]
