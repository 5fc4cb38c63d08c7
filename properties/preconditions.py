"""A scenario's preconditions: what its Trace must show for the run to test what it claims.

A conformance scenario (spec/conformance.toml) names the requirements it `exercises` and, as
data, the observations without which it would not test them (`requires`): a statement that had
to succeed, a commit that had to be waiting when the master shut down, a thread that had to be
running. A run where one does not hold did not happen as written, so a pass on it would be a
pass of something that was never tried: each requirement the scenario exercises is then
`inconclusive`, with the precondition and the trace lines that show it failing. The same holds
for one exercised requirement whose property found nothing to judge (its subject never
occurred), unless the system cannot observe what that property needs: that is the system's
limit, `not_exercised` as everywhere else. A violation stays a violation: what the trace shows
happened, whatever the scenario meant to do.

Each precondition is a table with `kind` and its parameters; `at` is an observation pattern
(field = value, its node that of the precondition unless given), the first match being the
moment the precondition speaks of:

- statement       node, op [, nth, errno]: every `op` statement on node (or the nth, from 1)
                  ended with errno (default: none, it succeeded); there is at least one
- observed        match: some observation has these fields
- waiting_commit  node, at: when `at` happened on node, a transaction already binlogged there
                  had a COMMIT not yet answered successfully (it was waiting, for an ack say)
- thread_running  node, thread ("io" or "sql"), at: the last SHOW SLAVE STATUS sample of node
                  before `at` shows the thread running
"""
from __future__ import annotations

from typing import Callable, Iterable

from .core import INCONCLUSIVE, NOT_EXERCISED, PROPERTIES, VIOLATED, TraceView, Verdict, Witness, seconds

Unmet = Witness  # a failed precondition: what it required, what the trace shows instead, where

PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {  # kind -> (required, optional)
    "statement": (("node", "op"), ("nth", "errno")),
    "observed": (("match",), ()),
    "waiting_commit": (("node", "at"), ()),
    "thread_running": (("node", "thread", "at"), ()),
}
THREAD_COLUMN = {"io": "Slave_IO_Running", "sql": "Slave_SQL_Running"}


def problem(pre: object) -> str | None:
    """Why this is not a precondition (for the scenario file's error), or None."""
    if not isinstance(pre, dict) or pre.get("kind") not in PARAMS:
        return f"{pre!r}: a precondition is a table with kind one of {', '.join(PARAMS)}"
    required, optional = PARAMS[pre["kind"]]
    given = set(pre) - {"kind"}
    if missing := [p for p in required if p not in given]:
        return f"{pre['kind']} needs {', '.join(missing)}"
    if unknown := sorted(given - set(required) - set(optional)):
        return f"{pre['kind']} takes no {', '.join(unknown)}"
    for key in ("match", "at"):
        if key in pre and not (isinstance(pre[key], dict) and (key == "at" or "kind" in pre[key])):
            return f"{key} is an observation pattern (a table{' with kind' if key == 'match' else ''})"
    if pre["kind"] == "thread_running" and pre["thread"] not in THREAD_COLUMN:
        return f"thread {pre['thread']!r} is not io or sql"
    if "nth" in pre and not (isinstance(pre["nth"], int) and pre["nth"] >= 1):
        return f"nth {pre['nth']!r} is not a whole number from 1"
    return None


def _pattern(pre: dict, key: str) -> dict:
    return {"node": pre["node"], **pre[key]} if "node" in pre else dict(pre[key])


def _matches(o: dict, pattern: dict) -> bool:
    return all(o.get(k) == v for k, v in pattern.items())


def _shown(pattern: dict) -> str:
    rest = ", ".join(f"{k}={v}" for k, v in pattern.items() if k not in ("kind", "node"))
    return f"{pattern.get('kind', 'an observation')}" + (f" on {pattern['node']}" if "node" in pattern else "") + \
        (f" ({rest})" if rest else "")


def describe(pre: dict) -> str:
    k = pre["kind"]
    if k == "statement":
        which = f"statement {pre['nth']} of {pre['op']}" if "nth" in pre else f"every {pre['op']}"
        end = f"failed with error {pre['errno']}" if pre.get("errno") is not None else "succeeded"
        return f"{which} on {pre['node']} {end}"
    if k == "observed":
        return f"{_shown(pre['match'])} observed"
    if k == "waiting_commit":
        return f"a commit on {pre['node']} was waiting at {_shown(_pattern(pre, 'at'))}"
    return f"the {pre['thread'].upper()} thread of {pre['node']} was running at {_shown(_pattern(pre, 'at'))}"


def _first(v: TraceView, pattern: dict) -> dict | None:
    return next((o for o in v.kind(pattern["kind"]) if _matches(o, pattern)), None) if "kind" in pattern else \
        next((o for o in v.obs if _matches(o, pattern)), None)


def _statement(v: TraceView, pre: dict) -> tuple[str, tuple[int, ...]] | None:
    stmts = [o for o in v.kind("stmt") if o["node"] == pre["node"] and o["op"] == pre["op"]]
    if "nth" in pre:
        stmts = stmts[pre["nth"] - 1:pre["nth"]]
    if not stmts:
        return "no such statement ran", ()
    want = pre.get("errno")
    for o in stmts:
        if o.get("errno") != want:
            got = f"error {o['errno']}: {o.get('message', '')}" if o.get("errno") is not None else "it succeeded"
            return f"{o['op']} at {seconds(o['t'])}: {got}", (o["_line"],)
    return None


def _observed(v: TraceView, pre: dict) -> tuple[str, tuple[int, ...]] | None:
    return None if _first(v, pre["match"]) else ("no such observation", ())


def _waiting_commit(v: TraceView, pre: dict) -> tuple[str, tuple[int, ...]] | None:
    at = _first(v, _pattern(pre, "at"))
    if at is None:
        return "it never happened", ()
    answered = {c["trx"]: c for c in v.kind("commit") if c["node"] == pre["node"]}
    for o in v.kind("binlog"):  # binlogged, not visible: AFTER_SYNC hides a waiting commit from readers
        if o["node"] != pre["node"] or o["trx"] is None or (o["t"], o["_line"]) > (at["t"], at["_line"]):
            continue
        c = answered.get(o["trx"])
        if c is None or c.get("errno") is not None or (c["t"], c["_line"]) >= (at["t"], at["_line"]):
            return None
    # The server said so: a polled trace's binlogs are read at the end, after a replica-role
    # recovery may have truncated the waiting commit (MDEV-21117); its last status sample before
    # `at` still shows the session waiting for its ack.
    samples = [o for o in v.kind("server_status") if o["node"] == pre["node"] and (o["t"], o["_line"]) < (at["t"], at["_line"])]
    if samples and (samples[-1]["variables"].get("Rpl_semi_sync_master_wait_sessions") or 0) > 0:
        return None
    return f"every transaction binlogged on {pre['node']} before it had its COMMIT answered", (at["_line"],)


def _thread_running(v: TraceView, pre: dict) -> tuple[str, tuple[int, ...]] | None:
    at = _first(v, _pattern(pre, "at"))
    if at is None:
        return "it never happened", ()
    samples = [s for s in v.kind("status") if s["node"] == pre["node"] and (s["t"], s["_line"]) < (at["t"], at["_line"])]
    if not samples:
        return "no SHOW SLAVE STATUS sample before it", (at["_line"],)
    last, column = samples[-1], THREAD_COLUMN[pre["thread"]]
    return None if last[column] == "Yes" else (f"{column} {last[column]!r} at {seconds(last['t'])}", (last["_line"], at["_line"]))


HOLDS: dict[str, Callable[[TraceView, dict], tuple[str, tuple[int, ...]] | None]] = {
    "statement": _statement, "observed": _observed, "waiting_commit": _waiting_commit, "thread_running": _thread_running,
}


def unmet(v: TraceView, requires: Iterable[dict]) -> list[Unmet]:
    """The preconditions the trace does not show, each with what it shows instead."""
    out = []
    for pre in requires:
        if failed := HOLDS[pre["kind"]](v, pre):
            why, lines = failed
            out.append(Unmet(f"precondition not observed: {describe(pre)}; {why}", lines))
    return out


def conclude(v: TraceView, verdicts: Iterable[Verdict], exercises: Iterable[str], requires: Iterable[dict]) \
        -> tuple[tuple[Verdict, ...], list[Unmet]]:
    """The verdicts of one scenario's run with its claims checked: each exercised requirement is
    inconclusive where a precondition failed, or where its property found nothing to judge and
    the system could have seen it; the unmet preconditions of the whole run."""
    failed = unmet(v, requires)
    wanted = frozenset(exercises)
    unseen = {p.requirement for p in PROPERTIES if set(p.needs) & v.unobserved}
    out = []
    for verdict in verdicts:
        why = list(failed) if verdict.requirement in wanted else []
        if verdict.requirement in wanted and verdict.status == NOT_EXERCISED and verdict.requirement not in unseen:
            why.append(Unmet(f"the scenario exercises {verdict.requirement}, but its property found nothing to judge"))
        if why and verdict.status != VIOLATED:
            verdict = Verdict(verdict.requirement, INCONCLUSIVE, verdict.checked, tuple(why), verdict.evidence)
        out.append(verdict)
    return tuple(out), failed
