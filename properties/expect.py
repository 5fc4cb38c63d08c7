"""Expectations: what a History says a client checking a node sees at a point (its `expect` ops,
as a mysql-test .result file records it), against what the system showed there (the Trace's
`observed` lines, which every system writes for every `expect` op).

Expectations are not requirements: each is judged on its own, its verdict named
`EXPECT <file>:<line>` after the History line that holds it, and kept apart from the catalogue
while flowing through the same results, reports and gates. Only what an expectation names is
compared: the fields it lists, the rows it gives (binlogs by sequence number, since the base name
is the server's --log-bin), the parts of a statement's outcome it states.
"""
from __future__ import annotations

import re
from typing import Any

from replcheck.spec.formats import binlog_number, expect_where

from .core import NOT_EXERCISED, Check, Verdict, Witness, seconds

PREFIX = "EXPECT "
EVIDENCE = "expectation"
SHOWN = {"slave_status": "SHOW SLAVE STATUS", "master_status": "SHOW MASTER STATUS", "status": "SHOW GLOBAL STATUS", "variables": "@@GLOBAL",
         "binary_logs": "SHOW BINARY LOGS", "binlog_events": "SHOW BINLOG EVENTS", "result": "the last statement",
         "rows": "the rows held"}


def is_expectation(verdict_id: str) -> bool:
    return verdict_id.startswith(PREFIX)


def expectations(history: dict) -> list[tuple[str, dict]]:
    """(verdict id, op) of each expectation, in History order."""
    return [(PREFIX + expect_where(history, op), op) for op in history["ops"] if op["op"] == "expect"]


def declared(history: dict, system: str) -> dict[str, str]:
    """The expectations this system is documented to differ on (the op's `differs`): id -> why."""
    return {eid: op["differs"][system] for eid, op in expectations(history) if system in op.get("differs", {})}


def _place(op: dict) -> str:
    return f"{SHOWN[op['show']]}{' IN ' + op['in'] if 'in' in op else ''} on {op['node']} at {seconds(op['at'])}"


def describe(op: dict) -> str:
    """One line: what is read where and when, and what it should show."""
    where = _place(op)
    if "fields" in op:
        wanted = ", ".join(f"{k} {_shown(v)}" for k, v in op["fields"].items())
    elif "result" in op:
        wanted = ", ".join(f"{k} = {v!r}" for k, v in op["result"].items())
    else:
        wanted = f"rows {[r if isinstance(r, str) else ' '.join(r.values()) for r in op['rows']]}"
    origin = f" ({op['origin']})" if "origin" in op else ""
    return f"{where}: {wanted}{origin}"


def _shown(expected: Any) -> str:
    if isinstance(expected, dict) and ("like" in expected or "not_like" in expected):
        return f"{'LIKE' if 'like' in expected else 'NOT LIKE'} {expected.get('like', expected.get('not_like'))!r}"
    if isinstance(expected, dict):
        return " and ".join(f"{'>=' if k == 'min' else '<='} {v}" for k, v in expected.items())
    return f"= {expected!r}"


def _like(pattern: str) -> re.Pattern:
    """SQL LIKE: % any run of characters, _ any one, the rest literal."""
    return re.compile("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern), re.DOTALL)


def _is_log_file(field: str) -> bool:
    """A field naming a binlog or relay log (Relay_Master_Log_File, Master_Log_File, Relay_Log_File,
    SHOW MASTER STATUS's File): compared by sequence number, as the base names are the servers'
    --log-bin and --relay-log."""
    return field.endswith("Log_File") or field == "File"


def _matches(expected: Any, actual: Any, log_file: bool = False) -> bool:
    if log_file and isinstance(expected, str) and isinstance(actual, str):
        return binlog_number(expected) == binlog_number(actual)
    if isinstance(expected, dict) and "like" in expected:
        return isinstance(actual, str) and _like(expected["like"]).fullmatch(actual) is not None
    if isinstance(expected, dict) and "not_like" in expected:
        return isinstance(actual, str) and _like(expected["not_like"]).fullmatch(actual) is None
    if isinstance(expected, dict):  # a range of integers
        return (isinstance(actual, int) and not isinstance(actual, bool)
                and expected.get("min", actual) <= actual <= expected.get("max", actual))
    return expected == actual and isinstance(expected, bool) == isinstance(actual, bool)


def differences(op: dict, value: Any) -> list[str]:
    """What the observed value shows other than the expectation says; empty when it agrees."""
    if value is None:
        return ["nothing shown (no such row, no statement, or the node down)"]
    show = op["show"]
    if "fields" in op:
        return [f"{k} not shown" if k not in value else f"{k} = {value[k]!r}, expected {_shown(v)}"
                for k, v in op["fields"].items() if k not in value or not _matches(v, value[k], _is_log_file(k))]
    if show == "result":
        # a list of errnos: any one of them (a .test's `--error A, B`)
        return [f"{k} = {value.get(k)!r}, expected {'one of ' if isinstance(v, list) else ''}{v!r}"
                for k, v in op["result"].items() if not (value.get(k) in v if isinstance(v, list) else value.get(k) == v)]
    if show == "binary_logs":
        got, want = [binlog_number(f) for f in value], [binlog_number(f) for f in op["rows"]]
        return [] if got == want else [f"binlogs {value}, expected {op['rows']}"]
    if show == "rows":
        return [] if sorted(op["rows"]) == sorted(value) else [f"rows {sorted(value)}, expected {sorted(op['rows'])}"]
    value = [e for e in value if e["Event_type"] not in op.get("without", ())]  # as the .result's include filters
    shown = [{k: v for k, v in got.items() if k in want} for got, want in zip(value, op["rows"])]
    if len(value) != len(op["rows"]) or shown != op["rows"]:
        return [f"events {[' '.join(e.values()).strip() for e in value]}, expected "
                f"{[' '.join(e.values()) for e in op['rows']]}"]
    return []


def judge_expectations(history: dict, observations: list[dict], polled: bool = False) -> tuple[Verdict, ...]:
    """A verdict per expectation of the History: pass, violated with what was observed as the
    witness, or not exercised when the system wrote no observation for it. On a `polled` Trace (a
    real server's, read when its client could), rows read before the rest of those expected
    arrived, which the node then shows arriving, are inconclusive: the read came early on a loaded
    machine, as a .test's sync would have waited for them (conform runs it again, slower)."""
    expected = expectations(history)
    if not expected:  # a generated History's: its Trace is not read for them
        return ()
    observed = {o["expect"]: (i, o) for i, o in enumerate(observations) if o["kind"] == "observed"}
    out = []
    for eid, op in expected:
        i, o = observed.get(eid.removeprefix(PREFIX), (None, None))
        if o is None:
            out.append(Verdict(eid, NOT_EXERCISED, 0, (Witness("the system showed nothing here"),), EVIDENCE))
            continue
        check = Check(eid, EVIDENCE)
        problems = differences(op, o["value"])
        if problems and polled and (late := _arriving_after(op, o["value"], observations[i + 1:])):
            check.undecidable(f"{_place(op)}: read before {', '.join(late)} arrived there", o)
        else:
            check.judge(not problems, f"{_place(op)}: " + "; ".join(problems), o)
        out.append(check.verdict())
    return tuple(out)


def polled(header: dict) -> bool:
    """A Trace read by polling (a real server's): what it shows is known only to its resolution."""
    return header.get("resolution_us", 0) > 0


def _arriving_after(op: dict, value, later: list[dict]) -> list[str]:
    """The rows of a rows expectation missing from what was read, if nothing else differs and the
    node shows each of them arriving later; else none."""
    if op["show"] != "rows" or value is None:
        return []
    missing = sorted(set(op["rows"]) - set(value))
    if not missing or sorted(value) != sorted(r for r in op["rows"] if r not in missing):
        return []
    arrived = {o.get("trx") for o in later if o["kind"] == "visible" and o["node"] == op["node"]}
    return missing if set(missing) <= arrived else []
