"""Cross-check: two systems' Traces of the same History, compared observation by observation.

Each Trace is reduced to what a client and an operator see, per node: when each transaction
began to be applied (and by which named connection), when each commit returned and how its semi-sync wait ended, when each
transaction became visible, what each read saw, what each administrative statement answered,
and how many copies of each change the node holds at the end. (Status samples are not
compared: they follow from these.) Times agree within the coarser of the two Traces'
`resolution_us` (0 for a model, the sampling gap of a real server); an aspect a Trace does not
observe is not compared. For each (aspect, node) only the first divergence is a difference;
what follows it on that node is its knock-on (a replica's SQL thread is serial) and is counted,
not classified. The same comparison serves model against model (campaigns) and a real server
against its reference model (conform).

Every difference is classified by the rules of spec/crosscheck.toml: *expected* when the two
systems differ in a setting the rule names (the delay rule, the semi-sync wait point, commit
timestamps) and the rule's condition holds for this transaction, with the seed's reason;
otherwise *unexpected*, a finding. Systems that differ in nothing must not differ at all.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from replcheck import io
from replcheck.crosscheck_conditions import CONDITIONS
from replcheck.crosscheck_facts import ASPECTS, SETTINGS, Difference, Facts, agree, facts, tolerance  # noqa: F401 (the cross-check's interface)
from replcheck.spec import ROOT as SPEC
from replcheck.spec.formats import US

@dataclass(frozen=True)
class Rule:
    id: str
    aspects: tuple[str, ...]
    differs: str  # the setting the two systems must differ in
    when: str  # a condition of CONDITIONS
    source: str
    reason: str


@lru_cache(maxsize=None)
def rules(path: str | None = None) -> tuple[Rule, ...]:
    """The rules of `path`, by default replcheck's own, whose faults are replcheck's (SpecError)."""
    if path is None:  # read as package data: replcheck may run from a zip (a campaign's executors)
        try:
            return _rules(SPEC.joinpath("crosscheck.toml").read_text(encoding="utf-8"), "spec/crosscheck.toml")
        except io.InputError as e:
            raise io.SpecError(str(e)) from None
    return _rules(io.read_text(path), path)


def _rules(text: str, where: str) -> tuple[Rule, ...]:
    data = io.parse_toml(text, where)
    out = []
    for i, r in enumerate(data.get("rule", [])):
        for key in ("id", "aspects", "differs", "when", "source", "reason"):
            if key not in r:
                raise io.InputError(where, None, f"rule[{i}].{key}", "missing")
        if r["differs"] not in SETTINGS:
            raise io.InputError(where, None, f"rule[{i}].differs", f"unknown setting {r['differs']!r}; known: {', '.join(SETTINGS)}")
        if r["when"] not in CONDITIONS:
            raise io.InputError(where, None, f"rule[{i}].when", f"unknown condition {r['when']!r}; known: {', '.join(CONDITIONS)}")
        bad = set(r["aspects"]) - set(ASPECTS)
        if bad:
            raise io.InputError(where, None, f"rule[{i}].aspects", f"unknown aspects {sorted(bad)}; known: {', '.join(ASPECTS)}")
        out.append(Rule(r["id"], tuple(r["aspects"]), r["differs"], r["when"], r["source"], r["reason"]))
    return tuple(out)


def _show(aspect: str, value) -> str:
    if value is None:
        return "absent"
    if aspect == "read":
        return "saw [" + ", ".join(value) + "]"
    if aspect == "stmt":
        errno, warning = value
        return f"errno {errno}" + (f" warning {warning}" if warning else "") if errno or warning else "ok"
    if aspect == "data":
        return f"{value} cop{'y' if value == 1 else 'ies'}"
    if aspect == "commit":
        t, semisync, errno = value
        return f"returned at {t / US:.6f} s" + (f" semisync={semisync}" if semisync else "") + (f" errno={errno}" if errno else "")
    if aspect == "apply":
        begin, connection = value
        return f"at {begin / US:.6f} s" + (f" by connection '{connection}'" if connection else "")
    return f"at {value / US:.6f} s"


def compare(left: Facts, right: Facts) -> list[Difference]:
    differs = {k for k in left.settings if left.settings[k] != right.settings[k]}
    tol = tolerance(left, right)
    out = []
    both = left.observed & right.observed
    apply_rules: dict[str, Rule | None] = {}  # per node, what explained its apply divergence
    for key in sorted(k for k in set(left.seqs) | set(right.seqs) if k[0] in both):
        aspect, node = key
        a, b = left.seqs.get(key, ()), right.seqs.get(key, ())
        if a == b:
            continue
        if aspect == "data":
            # copies listed by name, not in time: aligned by name, a transaction one side lacks
            # is that transaction absent there, not the next name "first"
            copies = dict(a), dict(b)
            names = [n for n in sorted(copies[0].keys() | copies[1].keys()) if copies[0].get(n) != copies[1].get(n)]
            x, y = ((names[0], c[names[0]]) if names[0] in c else None for c in copies)
            later = len(names) - 1
        else:
            same = [agree(left, right, aspect, node, x, y, tol) for x, y in zip(a, b)]
            if all(same) and len(a) == len(b):
                continue
            first = next((i for i, ok in enumerate(same) if not ok), min(len(a), len(b)))
            later = sum(1 for ok in same[first + 1:] if not ok) + abs(len(a) - len(b))
            x = a[first] if first < len(a) else None
            y = b[first] if first < len(b) else None
        if x is not None and y is not None and x[0] != y[0] and aspect != "read":
            # another order: either transaction may be the one that came at another time
            subject, lv, rv = str(x[0]), f"{x[0]} first", f"{y[0]} first"
            subjects = (subject, str(y[0]))
        else:
            subject = str((x or y)[0])
            subjects = (subject,)
            lv, rv = _show(aspect, x and x[1]), _show(aspect, y and y[1])
        rule = next((r for r in rules() if aspect in r.aspects and r.differs in differs
                     and any(CONDITIONS[r.when]((left, right, aspect, node, s)) for s in subjects)), None)
        if aspect == "apply":
            apply_rules[node] = rule
        elif rule is not None and rule.when == "applied_differently" and apply_rules.get(node):
            # visible (or not there) because applied at another time (sorted keys put a node's apply
            # first): the cause is what explained its apply divergence (a flavour's applier, say),
            # not the first rule that fits
            rule = replace(apply_rules[node], reason=f"visible when applied ({rule.id}); applied at another time: {apply_rules[node].reason}")
        out.append(Difference(aspect, node, subject, lv, rv, later, rule is not None, rule.id if rule else "",
                              rule.reason if rule else f"no rule explains it (the systems differ in: {', '.join(sorted(differs)) or 'nothing'})"))
    return out
