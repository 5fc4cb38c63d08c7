"""Regression investigation: replay a campaign's row, shrink its History, explain its failure.

A failing row names (seed, index, system): `replay` regenerates the History and the Trace byte
for byte (their digests are in the row). `shrink` removes operations (delta debugging, Zeller's
ddmin) and then closes the gaps between them while the History still fails the same way: the
same requirement violated on the same system, or the same kind of unexpected cross-check
difference with the other system. `explain` prints the requirement's text and the observations
that witness its violation, or for a cross-check difference its classification and the two
Traces side by side around it.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Callable

from replcheck import catalogue, crosscheck, io, systems
from replcheck.generate import TAIL_US, generate
from replcheck.harness.errors import NodeDown
from replcheck.properties.judge import Judgement, judge, judge_trace
from replcheck.spec.contract import Trace
from replcheck.spec.formats import US



@dataclass(frozen=True)
class Target:
    history: dict
    label: str  # how to name it: "seed 7 index 12" or the file


def target(args: list[str], families: tuple[str, ...] | None = None, server: str | None = None) -> Target:
    """SEED INDEX (of a campaign drawing from `families`, for the `server` it generated for), or a History file."""
    if len(args) == 2 and all(a.isascii() and a.isdigit() for a in args):  # isdigit() alone takes '²', which int() refuses
        if any(len(a) > 19 or int(a) >= 2**63 for a in args):  # what a campaign records; and int() takes
            raise io.InputError(" ".join(a[:20] for a in args), None, "", f"SEED and INDEX are integers in 0..{2**63 - 1}")
        seed, index = map(int, args)
        return Target(generate(seed, index, families, server), f"seed {seed} index {index}")
    if len(args) == 1:
        return Target(io.load_history(args[0]), args[0])
    shown = " ".join(a if a.strip() else repr(a) for a in args)  # an empty or blank argument quoted, so it shows
    raise io.InputError(shown, None, "", "expected SEED INDEX (two non-negative integers) or one History file")


def trace_of(history: dict, system: str) -> tuple[dict, list[dict], str]:
    header, obs = systems.get(system).run(history)
    return header, obs, io.dumps_lines(header, obs)


def _judge(history: dict, system: str, requirement: str | None = None) -> Judgement:
    return judge(systems.get(system), history, None if requirement is None else (requirement,))


def findings(history: dict, system: str, trace: Trace | None = None) -> tuple:
    """The violations the system does not declare (for a mutant: its bug); on `trace`, the system's
    Trace of the History already made (a real server's run is not made again the same)."""
    if trace is None:
        return _judge(history, system).findings
    s = systems.get(system)
    return judge_trace(trace, s.declares, s.name).findings


def unexpected_differences(history: dict, system: str, other: str,
                           traces: list[Trace] | None = None) -> list[crosscheck.Difference]:
    """`traces`: where the two Traces compared are put."""
    pair = systems.traces_to_compare(history, system, other)
    if traces is not None:
        traces[:] = pair
    left, right = (crosscheck.facts(*t) for t in pair)
    return [d for d in crosscheck.compare(left, right) if not d.expected]


@dataclass
class Failing:
    """Whether a History fails as the one being shrunk does; it keeps the last one that did with the
    system's Trace of it (a real server's Trace is not made again byte for byte: it is kept)."""
    what: str
    test: Callable[[dict], tuple[bool, Trace]]
    last: tuple[dict, Trace] | None = field(default=None)

    def __call__(self, history: dict) -> bool:
        try:
            failed, trace = self.test(history)
        except NodeDown:  # a smaller History left a node down that an op needs: a real server cannot run it
            return False
        if failed:
            self.last = (history, trace)
        return failed

    def trace_of(self, history: dict) -> Trace | None:
        return self.last[1] if self.last and self.last[0] == history else None


def failure(history: dict, system: str, requirement: str | None, other: str | None, label: str = "") -> Failing:
    """What the History (named `label` in an error) fails, described, and a test that a smaller History fails the same way."""
    if other:
        traces: list[Trace] = []
        diffs = unexpected_differences(history, system, other, traces)
        if not diffs:
            raise io.InputError(label, None, "--other", f"{system} and {other} differ in nothing unexpected on this History")
        aspect = diffs[0].aspect

        def differs(h: dict) -> tuple[bool, Trace]:
            found = unexpected_differences(h, system, other, traces)
            return any(d.aspect == aspect for d in found), traces[0]
        failing = Failing(f"unexpected {aspect} difference between {system} and {other}", differs)
        failing.last = (history, traces[0])
        return failing
    first = None
    if requirement is None:
        first = _judge(history, system)
        if not first.findings:
            raise io.InputError(label, None, "--system", f"{system} violates nothing unexpected on this History; name --requirement or --other")
        requirement = first.findings[0].requirement
    if requirement not in {r.id for r in catalogue.load()}:
        raise io.InputError("", None, "--requirement", f"unknown requirement {requirement!r}")

    def violates(h: dict) -> tuple[bool, Trace]:
        j = _judge(h, system, requirement)
        return j.violated(requirement), j.trace
    failing = Failing(f"{requirement} violated on {system}", violates)
    if first is not None:
        failing.last = (history, first.trace)
    elif not failing(history):  # nothing to shrink (and, run, its Trace kept for an answer that is the History itself)
        raise io.InputError(label, None, "--requirement", f"{system} does not violate {requirement} on this History")
    return failing


def ddmin(items: list, fails: Callable[[list], bool]) -> list:
    """Zeller and Hildebrandt's ddmin: a 1-minimal sublist that still fails."""
    n = 2
    while len(items) >= 2:
        size = -(-len(items) // n)
        parts = [items[i:i + size] for i in range(0, len(items), size)]
        for i, part in enumerate(parts):
            if fails(part):
                items, n = part, 2
                break
            rest = [x for j, p in enumerate(parts) if j != i for x in p]
            if len(parts) > 2 and fails(rest):
                items, n = rest, max(n - 1, 2)
                break
        else:
            if n >= len(items):
                break
            n = min(2 * n, len(items))
    if len(items) == 1 and fails([]):
        return []
    return items


def drop_pairs(items: list, fails: Callable[[list], bool]) -> list:
    """Remove two items at a time while the rest still fails: ddmin stops at 1-minimal, and a
    History's steps come in pairs that only go together (a crash and its restart)."""
    i = 0
    while i < len(items):
        for j in range(i + 1, len(items)):
            rest = items[:i] + items[i + 1:j] + items[j + 1:]
            if fails(rest):
                items = rest
                break
        else:
            i += 1
    return items


def shrink(history: dict, fails: Callable[[dict], bool], seconds: float | None = None) -> tuple[dict, int]:
    """A smaller History that still fails: fewer operations (one, then two at a time), then shorter
    pauses between them. `seconds`: no attempt starts after that long (a real server's attempt is a
    real run of the History), what was shrunk by then is the answer."""
    runs = 0
    header = history["header"]
    deadline = None if seconds is None else time.monotonic() + seconds

    def with_ops(ops: list[dict], end_us: int) -> dict:
        return {"header": {**header, "end_us": end_us}, "ops": ops}

    def test(h: dict) -> bool:
        nonlocal runs
        if deadline is not None and time.monotonic() >= deadline:
            return False  # out of time: kept as it is
        runs += 1
        return fails(h)

    end = header.get("end_us", 0)
    ops = ddmin(list(history["ops"]), lambda ops: test(with_ops(ops, end)))
    while len(fewer := drop_pairs(ops, lambda ops: test(with_ops(ops, end)))) < len(ops):
        ops = ddmin(fewer, lambda ops: test(with_ops(ops, end)))  # 1-minimal again
    for i in range(len(ops)):
        gap = ops[i]["at"] - (ops[i - 1]["at"] if i else 0)
        for shift in (gap, gap // 2):
            if shift <= 0:
                continue
            moved = ops[:i] + [{**o, "at": o["at"] - shift} for o in ops[i:]]
            if test(with_ops(moved, end - shift)):
                ops, end = moved, end - shift
                break
    last = ops[-1]["at"] if ops else 0
    if end > last + TAIL_US and test(with_ops(ops, last + TAIL_US)):
        end = last + TAIL_US
    return with_ops(ops, end), runs


def describe(history: dict) -> str:
    """The History as a short readable list: its topology, then one step per line with its time."""
    topo = history["header"]["topology"]
    lines = [f"History {history['header'].get('name', '')}:"]
    for n in topo["nodes"]:
        extra = {k: v for k, v in n.items() if k != "id"}
        lines.append(f"  node {n['id']}" + (f": {json.dumps(extra, separators=(',', ':'))}" if extra else ""))
    for c in topo.get("channels", []):
        extra = {k: v for k, v in c.items() if k not in ("source", "replica")}
        lines.append(f"  {c['source']} -> {c['replica']}" + (f": {json.dumps(extra, separators=(',', ':'))}" if extra else ""))
    for i, op in enumerate(history["ops"], 1):
        rest = " ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in op.items() if k not in ("at", "op", "node"))
        lines.append(f"  {i:3}. {op['at'] / US:12.6f} s  {op['node']}  {op['op']} {rest}".rstrip())
    lines.append(f"  (run until {history['header'].get('end_us', 0) / US:.6f} s)")
    return "\n".join(lines)


def _short(o: dict) -> str:
    skip = {"t", "kind", "node", "_line", "server_id", "gtid", "relay_file", "relay_pos", "file", "pos", "end", "master_file",
            "master_end", "idx", "last", "variables", "slave_hosts", "read"}
    rest = " ".join(f"{k}={v}" for k, v in o.items() if k not in skip and v not in (None, "", False))
    return f"{o['kind']} {rest}"


SIDE_KINDS = {"apply", "commit", "visible", "read", "stmt", "crash", "restart", "shutdown", "failover", "promoted", "ack"}


def side_by_side(left: list[dict], right: list[dict], node: str, around_us: int, window_us: int = 3 * US,
                 width: int = 58) -> list[str]:
    """The two traces' observations on one node near a time, in two columns aligned by time."""
    def pick(obs):
        out: dict[int, list[str]] = {}
        for o in obs:
            if o.get("node") == node and o["kind"] in SIDE_KINDS and abs(o["t"] - around_us) <= window_us \
                    and not (o["kind"] == "apply" and o.get("idx", 0) != 0):
                out.setdefault(o["t"], []).append(_short(o))
        return out
    a, b = pick(left), pick(right)
    lines = []
    for t in sorted(set(a) | set(b)):
        for x, y in zip_longest(a.get(t, []), b.get(t, []), fillvalue=""):
            mark = " " if x == y else "|"
            lines.append(f"  {t / US:12.6f} s  {x[:width]:<{width}} {mark} {y[:width]}")
    return lines


def explain(history: dict, system: str, requirement: str | None = None, other: str | None = None) -> str:
    out = []
    if other:
        (header, obs), (other_header, other_obs) = systems.traces_to_compare(history, system, other)
        diffs = crosscheck.compare(crosscheck.facts(header, obs), crosscheck.facts(other_header, other_obs))
        if not diffs:
            return f"{system} and {other} do not differ on this History."
        for d in diffs:
            out.append(f"{'expected' if d.expected else 'UNEXPECTED'} {d.aspect} difference on {d.node}, {d.subject}: "
                       f"{system} {d.left}; {other} {d.right}" + (f" (+{d.knock_on} later)" if d.knock_on else ""))
            out.append(f"  {'rule ' + d.rule + ': ' if d.rule else ''}{d.reason}")
            around = _time_of(obs, other_obs, d)
            out.append(f"  {'time':>14}    {system:<58}   {other}")
            out += side_by_side(obs, other_obs, d.node, around)
            out.append("")
        return "\n".join(out)
    reqs = {r.id: r for r in catalogue.load()}
    j = _judge(history, system, requirement)
    header, obs = j.trace
    verdicts = j.violations if requirement else j.findings
    if not verdicts:
        return (f"{system} does not violate {requirement} on this History." if requirement
                else f"{system} violates nothing unexpected on this History.")
    lines = io.dumps_lines(header, obs).splitlines()
    for v in verdicts:
        r = reqs[v.requirement]
        out.append(f"{r.id} ({r.kind}; {r.seed}, {r.section}) violated on {system}:")
        out.append(f"  {r.text}")
        for w in v.witnesses:
            out.append(f"  witness: {w.message}")
            out += [f"    trace:{n}: {lines[n - 1]}" for n in w.lines if 0 < n <= len(lines)]
        out.append("")
    return "\n".join(out)


def _time_of(left: list[dict], right: list[dict], d: crosscheck.Difference) -> int:
    """When the difference shows: the subject's first observation on the node in either trace."""
    if d.aspect == "read":
        return int(d.subject)
    times = [o["t"] for o in left + right if o.get("node") == d.node and o.get("trx") == d.subject and o["kind"] == d.aspect]
    return min(times) if times else 0
