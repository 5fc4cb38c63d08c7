"""Trace validation: a Trace of a Python system checked as a behaviour of a TLA+ spec,
in the style of Cirstea, Kuppe, Merz et al., "Validating Traces of Distributed Programs Against
TLA+ Specifications" (2024).

Each feature's module here (named after the feature, one per spec; replcheck.features finds them) maps a
Trace's observations to the sequence of the spec's actions they witness (an `Abstraction`: the
spec's constants, and one `Step` per action, with the values observed after it). `validate_all`
writes such sequences as a TLA+ module `TraceLog` (`Traces == <<<<...>>, ...>>`), one batch per
spec and constants, beside the spec and its trace module spec/tla/<Spec>Trace.tla, whose
`TraceInit` picks a trace k and whose `TraceNext` takes its step i+1 only as the action
`Trace[i+1]` names, with the observed values. TLC explores every behaviour breadth-first and
dumps the distinct states; a trace's longest accepted prefix is the greatest i of a state with
its k. The trace is accepted when that is the whole of it; otherwise the next step is the first
the spec does not allow, a finding. As with the manifest's checks, TLC runs with one worker, a
fixed seed and no time limit deciding anything.

The features' modules also go the other way: a TLC counterexample as a History (`history`), to
replay on the Python model.
"""
from __future__ import annotations

import importlib
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from replcheck import tlc
from replcheck.properties.core import seconds
from replcheck.spec import vocabulary as V


@dataclass(frozen=True)
class Step:
    action: str   # the name the spec's trace module gives the action (its CASE arm)
    args: dict    # the action's parameters and the values observed after it
    line: int     # the Trace line that witnesses it (1 is the header)
    what: str     # for a reader: the observation


@dataclass
class Abstraction:
    spec: str                         # the TLA+ module: SemiSync, Delay, Incident
    constants: dict[str, object]      # the spec's CONSTANTS for this trace
    given: dict[str, object]          # the initial values the spec's Init leaves open, as configured
    steps: list[Step] = field(default_factory=list)
    scope: str = "the whole trace"    # how much of the Trace the mapping covers, and why not more
    beyond: str | None = None         # where the scope ends: None (the whole trace), SUBJECT or VOCABULARY


@dataclass(frozen=True)
class Validation:
    spec: str
    steps: int           # abstract steps in the trace
    accepted: int        # the longest prefix the spec allows
    distinct: int | None
    scope: str
    rejected: Step | None  # the first step the spec does not allow
    beyond: str | None = None  # as the abstraction's

    @property
    def whole(self) -> bool:
        return self.ok and self.beyond is None

    @property
    def ok(self) -> bool:
        return self.rejected is None

    def describe(self) -> str:
        head = f"{self.spec}: {self.accepted} of {self.steps} steps accepted ({self.distinct} distinct states; {self.scope})"
        if self.rejected is None:
            return head
        r = self.rejected
        return f"{head}; step {self.accepted + 1} rejected: {r.action} at trace line {r.line}: {r.what}"


class OutOfScope(Exception):
    """The Trace's topology or configuration is not one the spec's vocabulary covers at all."""


# Where a spec's scope ends: at an operation its subject leaves out on purpose (a crash for the
# delay rule: recovery is GroupIds'), or at one it should express and does not yet.
SUBJECT, VOCABULARY = "subject", "vocabulary"
# Operations that change no spec's state: a client's read, SHOW statements, a suite's expectation,
# and a BINLOG statement (the model judges only whether it is accepted: it applies and binlogs none
# of its events, model/sim/admin.py op_binlog_statement).
INERT = {"read", "expect", "show_slave_status", "show_master_status", "show_binlog_info", "flush_status",
         "binlog_statement"}
# A node's clock step: only Delay has clocks (its offsets are constants); the other specs have no time.
CLOCK = "clock_step"
# Operations that take a server down or move a replica elsewhere: crash recovery, failover and
# repositioning are GroupIds' subject (and SemiSync's up to the failover), no other spec's.
TOPOLOGY = {"crash", "shutdown", "restart", "failover", "restore", "reset_slave", "set_binlog_group_id"}
REPOSITION = ("master_host", "master_log_file", "relay_log_file", "connect_using_group_id", "master_use_gtid")
# CHANGE MASTER options that neither move a replica nor change what it applies
SETTINGS = {"at", "op", "node", "delay", "delay_sql", "master_user"}


# A pair's operations in those specs' vocabulary, or that change none of their state: the IO
# thread's (the specs' replicas read the master's binlog itself), FLUSH LOGS, semi-sync's acks
PAIR_OPS = {"trx", "cluster_gap", "record_incident", "start_slave", "stop_slave", "flush_logs", "purge_binary_logs",
            "lose_acks", "cut_io"}


def outside_pair(op: dict, master: str, nodes, timed: bool = True) -> str | None:
    """Where an op stands for a spec that judges what the replicas of `master` among `nodes`
    (Delay's chain, Incident's pair) apply: recovery and repositioning of any server outside its
    subject (a failover moves the replicas); what another server does acts on none of them; on
    theirs, MASTER_DELAY alone, semi-sync's settings, the skip counter (what it skips, the
    abstraction judges), a replica's own transactions (Delay's master_2's are LocalCommit) and
    PAIR_OPS (gaps on `master` only) in its vocabulary; a clock
    step changes nothing of a spec that is not `timed`."""
    kind = op["op"]
    if (op["node"] not in nodes and kind not in TOPOLOGY) or (kind == CLOCK and not timed):
        return None
    if kind in TOPOLOGY or (kind == "change_master" and any(k in op for k in REPOSITION)):
        return SUBJECT
    if kind == "change_master":
        return None if set(op) <= SETTINGS else VOCABULARY
    if kind == "set_global":
        return None if op["variable"].startswith("rpl_semi_sync_") or op["variable"] == "sql_slave_skip_counter" else VOCABULARY
    if kind == "trx" and op["node"] != master:
        return None  # a replica's own write: Delay's master_2's is LocalCommit, the last one's no other applies
    # START SLAVE UNTIL: a start, then a stop between groups (the specs' Start and Stop)
    if kind not in PAIR_OPS or (kind in ("trx", "record_incident", "cluster_gap") and op["node"] != master):
        return VOCABULARY
    return None


def scope_end(history: dict | None, outside) -> tuple[int | None, str, str | None]:
    """The time of the History's first operation outside the spec (`outside(op)`: SUBJECT,
    VOCABULARY or None), the scope in words, and which of the two ended it."""
    for op in (history or {}).get("ops", []):
        why = None if op["op"] in INERT else outside(op)
        if why:
            return op["at"], f"up to {op['op']} on {op['node']} at {seconds(op['at'])}, outside the spec's {why}", why
    return None, "the whole trace", None


def value(v) -> str:
    """A Python value as a TLA+ expression: str, int, bool, set/frozenset, tuple/list, dict (a record)."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (set, frozenset)):
        return "{" + ", ".join(sorted(value(x) for x in v)) + "}"
    if isinstance(v, (list, tuple)):
        return "<<" + ", ".join(value(x) for x in v) + ">>"
    if isinstance(v, dict):
        return "[" + ", ".join(f"{k} |-> {value(x)}" for k, x in v.items()) + "]"
    raise TypeError(f"no TLA+ value for {v!r}")


def parse_value(text: str):
    """A value as TLC prints it in a counterexample, as Python: an int, a str (a string or a model
    value), a bool, a frozenset, a tuple (<<...>>), a dict (a function (k :> v @@ ...) or a record)."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|<<|>>|:>|@@|\|->|[-\w]+|[{}()\[\],]', text)
    pos = 0

    def take(expect: str | None = None) -> str:
        nonlocal pos
        tok = tokens[pos]
        if expect and tok != expect:
            raise ValueError(f"TLC value {text!r}: expected {expect!r} at {tok!r}")
        pos += 1
        return tok

    def items(close: str) -> list:
        out = []
        while tokens[pos] != close:
            out.append(one())
            if tokens[pos] == ",":
                take(",")
        take(close)
        return out

    def one():
        tok = take()
        if tok == "<<":
            return tuple(items(">>"))
        if tok == "{":
            return frozenset(items("}"))
        if tok == "(":  # k :> v @@ k :> v
            out = {}
            while True:
                k = one()
                take(":>")
                out[k] = one()
                if take() == ")":
                    return out
        if tok == "[":  # a |-> v, b |-> v
            out = {}
            while tokens[pos] != "]":
                k = take()
                take("|->")
                out[k] = one()
                if tokens[pos] == ",":
                    take(",")
            take("]")
            return out
        if tok.startswith('"'):
            return tok[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        if tok in ("TRUE", "FALSE"):
            return tok == "TRUE"
        return int(tok) if re.fullmatch(r"-?\d+", tok) else tok

    v = one()
    if pos != len(tokens):
        raise ValueError(f"TLC value {text!r}: trailing {tokens[pos]!r}")
    return v


def states(trace: list[tlc.Step]) -> list[tuple[str, dict]]:
    """A counterexample as (action, every variable's value after it), stuttering and loops left out."""
    return [(s.action, {k: parse_value(v) for k, v in s.state.items()}) for s in trace if s.state]


def trace_log(batch: list[Abstraction], constants: dict | None = None) -> str:
    """The module TraceLog: the batch's constants (config() assigns them from here: a .cfg takes
    no negative number), and one trace per abstraction (the trace module's variable k picks one)."""
    def trace(a: Abstraction) -> str:
        return "<<" + ",\n      ".join(value({"a": s.action, **s.args}) for s in a.steps) + ">>"
    consts = "".join(f"Const_{k} == {value(v)}\n" for k, v in (constants or batch[0].constants).items())
    givens = ", ".join(value(a.given or {"none": 0}) for a in batch)
    return (f"---- MODULE TraceLog ----\nEXTENDS Integers\n{consts}Givens == <<{givens}>>\n"
            f"Traces == <<\n    {(',' + chr(10) + '    ').join(trace(a) for a in batch)}\n    >>\n====\n")


def config(constants: dict) -> str:
    consts = "\n".join(f"    {k} <- Const_{k}" for k in constants)
    return f"CONSTANTS\n{consts}\nINIT TraceInit\nNEXT TraceNext\n"


_DUMPED = re.compile(r"^/\\ ([ik]) = (\d+)$", re.M)


def validate(a: Abstraction) -> Validation:
    """Run TLC on the abstraction's steps; TLC's own failure raises TLCFailed (never a verdict)."""
    return validate_all([a])[0]


def _merged(batch: list[Abstraction]) -> dict:
    """The batch's constants: of its feature's BOUNDS (upper bounds, or values an action may
    choose), the greatest or the union: a trace that keeps within its own keeps within those."""
    bounds = FEATURES[batch[0].spec].BOUNDS
    out = dict(batch[0].constants)
    for k in bounds:
        values = [a.constants[k] for a in batch]
        out[k] = frozenset().union(*values) if isinstance(values[0], (set, frozenset)) else max(values)
    return out


def validate_all(abstractions: list[Abstraction]) -> list[Validation]:
    """Validate many traces with one TLC run per spec and constants other than its BOUNDS: the
    trace module's variable k picks the trace, and the longest accepted prefix of trace k is the
    greatest i of a state with that k among the distinct states TLC dumps. Identical traces are
    checked once."""
    groups: dict[tuple[str, str], list[Abstraction]] = {}
    for a in abstractions:
        bounds = FEATURES[a.spec].BOUNDS
        groups.setdefault((a.spec, value({k: v for k, v in a.constants.items() if k not in bounds})), []).append(a)
    accepted: dict[int, int] = {}  # id(abstraction) -> its longest accepted prefix
    distinct: dict[int, int | None] = {}
    for (spec, _), batch in groups.items():
        unique = list({trace_log([a]): a for a in batch}.values())
        constants = _merged(unique)
        with tempfile.TemporaryDirectory(prefix="replcheck-trace-") as tmp:
            for name in (spec, f"{spec}Trace"):
                shutil.copy(tlc.TLA / f"{name}.tla", tmp)
            Path(tmp, "TraceLog.tla").write_text(trace_log(unique, constants))
            r = tlc.run(Path(tmp, f"{spec}Trace.tla"), config(constants), dump=Path(tmp, "states"))
            dumped = Path(tmp, "states.dump").read_text() if r.status == "holds" else ""
        if r.status != "holds":
            raise TLCFailed(f"{spec}Trace: TLC {r.status}: {'; '.join(r.errors)[:500]}")
        reached: dict[int, int] = {}
        for state in dumped.split("\nState ")[1:]:
            found = dict(_DUMPED.findall(state))
            k, i = int(found["k"]), int(found["i"])
            reached[k] = max(reached.get(k, 0), i)
        by_log = {trace_log([u]): reached.get(n, 0) for n, u in enumerate(unique, 1)}
        for a in batch:
            accepted[id(a)], distinct[id(a)] = by_log[trace_log([a])], r.distinct
    out = []
    for a in abstractions:
        n = accepted[id(a)]
        out.append(Validation(a.spec, len(a.steps), n, distinct[id(a)], a.scope, a.steps[n] if n < len(a.steps) else None,
                              a.beyond))
    return out


class TLCFailed(Exception):
    """TLC itself failed on a trace module: replcheck's or the installation's fault, never a verdict."""


def abstractions(trace, history: dict | None = None) -> list[Abstraction]:
    """The Trace as each spec whose vocabulary covers its topology sees it (Delay: each chain)."""
    out = []
    for feature in FEATURES.values():
        try:
            out += feature.each(trace, history) if hasattr(feature, "each") else [feature.abstract(trace, history)]
        except OutOfScope:
            continue
    return out


def check(trace, history: dict | None = None) -> list[Validation]:
    """The Trace validated against every spec whose vocabulary covers its topology (one TLC run each)."""
    return validate_all(abstractions(trace, history))


@dataclass
class Sweep:
    """Trace validation of many Histories, each on the model systems that run it."""
    validations: list[tuple[str, str, Validation]] = field(default_factory=list)  # (History, system, ...)
    uncovered: list[tuple[str, str]] = field(default_factory=list)  # (History, system): no spec's vocabulary

    @property
    def rejected(self) -> list[tuple[str, str, Validation]]:
        return [v for v in self.validations if not v[2].ok]


def filters(trace) -> bool:
    """Replication filters are in no spec's vocabulary (a commit that waits for no ack, a group
    relayed and never applied): a Trace whose topology filters, or with a @@skip_replication
    commit, is left to the properties."""
    header, obs = trace
    return any(V.configured(n.get("variables") or {}) for n in header["topology"]["nodes"]) or any(
        o["kind"] == "commit" and o.get("skip_replication") for o in obs)


def sweep(histories: list[tuple[str, dict, list[str]]]) -> Sweep:
    """Every (name, History, systems): the History run on each system, and its Trace validated
    against every spec whose vocabulary covers it; one TLC run per spec and constants in all."""
    from replcheck import systems

    out, pending = Sweep(), []
    for name, history, names in histories:
        for system in names:
            trace = systems.get(system).run(history)
            if filters(trace):
                out.uncovered.append((name, system))
                continue
            found = abstractions(trace, history)
            pending += [(name, system, a) for a in found]
            if not found:
                out.uncovered.append((name, system))
    out.validations = [(n, s, v) for (n, s, _), v in zip(pending, validate_all([a for _, _, a in pending]))]
    return out


def constants(check: tlc.Check) -> dict:
    """The CONSTANTS a manifest check's configuration assigns (MUTANTS as the check sets it)."""
    out, section = {}, False
    for line in check.config_text().splitlines():
        words = line.split("\\*", 1)[0].strip()
        if words.split(" ", 1)[0] in ("CONSTANT", "CONSTANTS"):
            section, words = True, words.partition(" ")[2].strip()
        elif words and words.split()[0].isupper() and "=" not in words:
            section = False
        if section and "=" in words:
            k, _, v = words.partition("=")
            out[k.strip()] = parse_value(v.strip())
    return out


def counterexample_history(check: tlc.Check, result: tlc.Result) -> tuple[str, dict]:
    """A violated check's counterexample as a History, and the system to replay it on: the
    check's mutant, or the model the configuration describes."""
    feature, c = COUNTEREXAMPLES[check.module], constants(check)
    system = f"mutant:{check.mutants[0]}" if check.mutants else feature.system(c)
    return system, feature.history(c, states(result.trace), f"tlc-{check.name}")


from replcheck.features import features  # noqa: E402  (the modules it finds import the classes above)

# trace validation (abstract), by the spec's name
FEATURES = {m.SPEC: m for m in (importlib.import_module(f.tla) for f in features().values() if f.tla)}
COUNTEREXAMPLES = FEATURES  # counterexamples as Histories (history, system)
