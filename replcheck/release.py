"""What a release manager reads first: the report's verdicts summed up per kind of evidence, its
violations split into new and known (with the reason a system declares or a gate pins them), its
findings counted once per (requirement, scenario), and the gate's verdict when a gate is given.

`summary(report, gate)` takes a report document (replcheck.report) and, optionally, a gate file
(name and loaded table, replcheck.report.load_gate) and returns plain data; replcheck/html.py
draws it at the top of the page (its tiles are the `all` row: each requirement once over every
kind of evidence), and it is kept in report.json as `release`.
"""
from __future__ import annotations

from collections import Counter

from replcheck import report as rp
from replcheck.properties import core

__all__ = ["summary", "reasons", "why_tables", "KIND_LABELS", "COLUMNS"]

KIND_LABELS = {"model": "models", "proof": "z3 proofs", "machine": "state machines", "tlc": "TLC", "server": "real server"}
# the columns of the per-kind table, each a requirement's verdict on that kind's sources
COLUMNS = ("passed", "violated_new", "violated_known", "inconclusive", "not_exercised")
INCONCLUSIVE_KINDS = ("scenario inconclusive",)  # findings that say a run did not test its claim


def reasons(gate: dict, path) -> dict[tuple[str, str], str]:
    """A pinned gate's `[why."<source>"]` tables: requirement = why it is pinned as it is, for a
    known divergence no system declares (a scenario's deliberate condition). Bad input names the field."""
    from replcheck import io

    out = {}
    for src, table in (gate.get("why") or {}).items():
        for rid, text in (table.items() if isinstance(table, dict) else [("", table)]):
            if not isinstance(text, str) or not rid:
                raise io.InputError(path, None, f"why.{src}" + (f".{rid}" if rid else ""), "a reason is a string per requirement")
            out[(rid, src)] = text
    return out


def why_tables(kept: dict[tuple[str, str], str]) -> str:
    """The `[why."<source>"]` tables of a gate file, for `gate --write` to keep what it had."""
    import json

    out = []
    for src in sorted({s for _, s in kept}):
        out += ["", f"[why.{json.dumps(src)}]"] + [f"{json.dumps(r)} = {json.dumps(t)}" for (r, s), t in sorted(kept.items()) if s == src]
    return "\n".join(out) + "\n" if out else ""


def summary(report: dict, gate: tuple[str, dict] | None = None) -> dict:
    reqs, sources = report.get("requirements", []), report.get("sources", [])
    pinned = _pinned_violations(gate[1]) if gate else set()
    why = reasons(gate[1], gate[0]) if gate else {}
    violations = [_violation(r, s, v, pinned, report, why) for r in reqs for s, v in r["verdicts"].items()
                  if v["status"] == core.VIOLATED and rp.evidence_kind(s)]
    new = {(x["requirement"], x["source"]) for x in violations if not x["known"]}
    kinds = {}
    for kind in rp.EVIDENCE_KINDS:
        srcs = [s for s in sources if rp.evidence_kind(s) == kind]
        if srcs:
            kinds[kind] = {"label": KIND_LABELS[kind], "sources": srcs, **_column_counts(reqs, srcs, new)}
    every = [s for s in sources if rp.evidence_kind(s)]
    return {"requirements": len(reqs), "all": _column_counts(reqs, every, new), "kinds": kinds, "violations": violations,
            "new": sum(not x["known"] for x in violations), "known": sum(x["known"] for x in violations),
            "findings": _distinct_findings(report.get("findings", [])),
            "gate": _gate(gate, report) if gate else None}


def _column_counts(reqs: list[dict], srcs: list[str], new: set) -> dict:
    """Each requirement once: its worst verdict on these sources (none: not exercised)."""
    counts = Counter({c: 0 for c in COLUMNS})
    for r in reqs:
        cells = [(s, r["verdicts"][s]["status"]) for s in srcs if s in r["verdicts"]]
        worst = min((st for _, st in cells), key=rp.ORDER.__getitem__, default=core.NOT_EXERCISED)
        if worst == core.VIOLATED:
            is_new = any((r["id"], s) in new for s, st in cells if st == core.VIOLATED)
            counts["violated_new" if is_new else "violated_known"] += 1
        else:
            counts[{core.PASS: "passed", core.INCONCLUSIVE: "inconclusive"}.get(worst, "not_exercised")] += 1
    return dict(counts)


def _violation(r: dict, source: str, v: dict, pinned: set, report: dict, why: dict) -> dict:
    declared = _declared_reason(r["id"], source, report) or why.get((r["id"], source), "")
    is_pinned = (r["id"], source) in pinned
    return {"requirement": r["id"], "feature": r.get("feature", ""), "source": source,
            "kind": rp.evidence_kind(source), "known": bool(v.get("expected")) or is_pinned,
            "declared": bool(v.get("expected")), "pinned": is_pinned, "why": declared,
            "scenarios": sorted({w.get("history", "") for w in v.get("witnesses", []) if w.get("history")})}


def _declared_reason(rid: str, source: str, report: dict) -> str:
    """Why a system is expected to violate the requirement: what its run predicted (a conformance
    finding's `predicted`), else what its model declares in spec/systems.toml."""
    kind, _, system = source.partition(":")
    for f in report.get("findings", []) if kind == "conformance" else ():
        if f.get("requirement") == rid and f.get("predicted"):
            return f["predicted"]
    from replcheck import systems

    if kind == "conformance":
        from replcheck.scenarios import REFERENCE
        system = REFERENCE  # a real server's verdicts are predicted by its reference model
    known = systems.systems().get(system)
    return known.declares.expected_violations.get(rid, "") if known else ""


def _pinned_violations(gate: dict) -> set[tuple[str, str]]:
    """(requirement, source) a pinned gate accepts as violated: a known divergence."""
    return {(rid, src) for src, pins in gate.get("verdicts", {}).items() for rid, status in pins.items()
            if core.VIOLATED in (status if isinstance(status, list) else [status])}


def _distinct_findings(findings: list[dict]) -> dict:
    """Findings once per (requirement, scenario), a scenario that did not test its claim apart."""
    seen: dict[tuple[str, str], dict] = {}
    for f in findings:
        key = (f.get("requirement", ""), f.get("history", ""))
        if key not in seen:
            seen[key] = {"requirement": key[0], "scenario": key[1], "kind": f.get("kind", ""), "reports": 0}
        seen[key]["reports"] += 1
    items = list(seen.values())
    inconclusive = [f for f in items if f["kind"] in INCONCLUSIVE_KINDS]
    return {"distinct": len(items) - len(inconclusive), "inconclusive_scenarios": len(inconclusive),
            "reports": len(findings), "items": items}


def _gate(gate: tuple[str, dict], report: dict) -> dict:
    name, table = gate
    diffs = rp.gate_differences(table, report)
    return {"name": name, "passed": not diffs, "differences": diffs}
