"""What every property shares: verdicts, the registries, and a read-only view of one Trace.

A property is a function of a Trace alone, so the same check judges a reference model, a
mutant and a real server. It is registered for exactly one requirement and reports, for every
instance it judged, whether the instance held; the verdict is `violated` with the witnessing
observations as soon as one did not, `not_exercised` when the trace gave it nothing to judge
(`inconclusive` is given by a scenario whose run did not test what it claims, never by a property).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import chain
import bisect
from operator import itemgetter
from typing import Any, Callable, Hashable, Iterable, Iterator

from replcheck.spec.formats import US

PASS, VIOLATED, NOT_EXERCISED = "pass", "violated", "not_exercised"
# A scenario's run that did not show its preconditions (properties/preconditions.py): what it
# claims to test was not tested, so its requirements are neither passed nor unexercised by design.
INCONCLUSIVE = "inconclusive"
PROVED, COUNTEREXAMPLE = "proved", "counterexample"

STMT = "stmt:"  # a statement of one op, among a property's `kinds`

# Witnesses kept per violated verdict: enough to explain, small enough to store millions.
MAX_WITNESSES = 5
# Verdicts without a witness a property keeps to give again (Property.run): a campaign's counts repeat.
HELD = 512


@lru_cache(maxsize=4096)  # a Trace's witnesses and messages name the same few hundred times again and again
def seconds(t_us: int) -> str:
    """A time of the History's clock (µs since its start), or a span of it, as a witness shows it:
    seconds, exact to the µs so that two different times never read the same ("2 s", "2.5 s",
    "2.000001 s")."""
    sign, t = ("-", -t_us) if t_us < 0 else ("", t_us)
    whole, us = divmod(round(t), US)
    return f"{sign}{whole}{f'.{us:06d}'.rstrip('0') if us else ''} s"


@dataclass(frozen=True)
class Witness:
    message: str
    lines: tuple[int, ...] = ()  # line numbers of the observations in the trace file


@dataclass(frozen=True)
class Verdict:
    requirement: str
    status: str
    checked: int = 0
    witnesses: tuple[Witness, ...] = ()
    evidence: str = ""  # the property or proof that produced it
    # The distinct conditions of its check the Trace reached (the catalogue's `conditions`): what
    # requirement coverage counts (replcheck/coverage.py), never part of the verdict.
    conditions: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "requirement": self.requirement,
            "status": self.status,
            "checked": self.checked,
            "evidence": self.evidence,
            "witnesses": [{"message": w.message, "lines": list(w.lines)} for w in self.witnesses],
        }


class Check:
    """Accumulates the instances one property judged."""

    __slots__ = ("requirement", "evidence", "checked", "failed", "undecided", "witnesses", "doubts", "met")

    def __init__(self, requirement: str, evidence: str):
        self.requirement = requirement
        self.evidence = evidence
        self.checked = 0
        self.failed = 0
        self.undecided = 0
        self.witnesses: list[Witness] = []
        self.doubts: list[Witness] = []
        self.met: set[str] = set()

    def reached(self, condition: str) -> None:
        """The Trace reached one of the check's distinct conditions (named in the catalogue)."""
        self.met.add(condition)

    def judge(self, ok: bool, message: str | Callable[[], str] = "", *obs: dict) -> bool:
        """One instance; a property judging every sample passes its message as a function, made
        only for a witness (most instances pass)."""
        self.checked += 1
        if not ok:
            self.failed += 1
            if len(self.witnesses) < MAX_WITNESSES:
                self.witnesses.append(Witness(message() if callable(message) else message,
                                              tuple(o["_line"] for o in obs if "_line" in o)))
        return ok

    def passed(self, n: int) -> None:
        """n instances that held, counted at once by a property that finds the failing ones apart."""
        self.checked += n

    def undecidable(self, message: str, *obs: dict) -> None:
        """An instance the Trace cannot decide: a real server's sampling resolution is too coarse
        for the comparison the property makes. No pass can be claimed over it (inconclusive)."""
        self.undecided += 1
        if len(self.doubts) < MAX_WITNESSES:
            self.doubts.append(Witness(message, tuple(o["_line"] for o in obs if "_line" in o)))

    def verdict(self) -> Verdict:
        if self.failed:
            status = VIOLATED
        elif self.undecided:
            return Verdict(self.requirement, INCONCLUSIVE, self.checked, tuple(self.doubts), self.evidence, tuple(sorted(self.met)))
        elif self.checked:
            status = PASS
        else:
            status = NOT_EXERCISED
        return Verdict(self.requirement, status, self.checked, tuple(self.witnesses), self.evidence, tuple(sorted(self.met)))


@dataclass(frozen=True)
class Property:
    requirement: str
    name: str
    feature: str
    doc: str
    fn: Callable[["TraceView", Check], None]
    needs: tuple[str, ...] = ()  # observation kinds it cannot judge without
    kinds: frozenset[str] = frozenset()  # what its instances come from (`checks`); empty: anything

    @cached_property
    def evidence(self) -> str:
        return f"property:{self.name}"

    @cached_property
    def _not_exercised(self) -> Verdict:
        # one for every Trace a verdict is not_exercised on (a Verdict is immutable): made once
        return Verdict(self.requirement, NOT_EXERCISED, 0, (), self.evidence)

    @cached_property
    def _held(self) -> dict:
        return {}

    def run(self, view: "TraceView") -> Verdict:
        if self.needs and (blind := self._blind(view.unobserved)):  # most need nothing: no call for them
            return blind
        check = Check(self.requirement, self.evidence)
        self.fn(view, check)
        if check.failed or check.undecided:
            return check.verdict()
        # a verdict with no witness is its count and conditions alone: made once for each (a Verdict is
        # immutable), as most of a campaign's are, up to HELD of them
        key = (check.checked, frozenset(check.met)) if check.met else check.checked
        try:
            return self._held[key]
        except KeyError:
            verdict = check.verdict()
            if len(self._held) < HELD:
                self._held[key] = verdict
            return verdict

    def unexercised(self, view: "TraceView") -> Verdict:
        """Its verdict on a Trace with none of its `kinds`, without running it: what `run` gives."""
        return self.unexercised_unseen(view.unobserved)

    def unexercised_unseen(self, unobserved: frozenset[str]) -> Verdict:
        """`unexercised` on a Trace whose system cannot observe `unobserved`: all it depends on."""
        return self._blind(unobserved) or self._not_exercised

    def _blind(self, unobserved: frozenset[str]) -> Verdict | None:
        if self.needs and not unobserved.isdisjoint(self.needs):
            # the system cannot see them: judging their absence would be a false verdict
            missing = [k for k in self.needs if k in unobserved]
            return Verdict(self.requirement, NOT_EXERCISED, 0, (Witness(f"the trace does not observe {', '.join(missing)}"),),
                           self.evidence)
        return None


PROPERTIES: list[Property] = []


def checks(requirement: str, needs: tuple[str, ...] = (), kinds: tuple[str, ...] = ()):
    """Register a trace property for one requirement; `needs`: the observation kinds it reads
    whose absence it would misjudge (a trace header lists what its system cannot observe).
    `kinds`: the observation kinds (or `stmt:<op>`, a statement of that op) every instance it judges
    or cannot decide comes from; on a Trace with none of them its verdict is not_exercised, and the
    judge gives that without running it (properties/judge.py). None given: it runs on every Trace."""

    def register(fn):
        # properties/<feature>.py, or one of its parts, properties/<feature>_<part>.py
        feature = fn.__module__.removeprefix(f"{__package__}.").partition("_")[0]
        PROPERTIES.append(Property(requirement, fn.__name__, feature, (fn.__doc__ or "").strip(), fn, tuple(needs),
                                   frozenset(kinds)))
        return fn

    return register


@dataclass(frozen=True)
class ProofResult:
    name: str
    requirements: tuple[str, ...]
    claim: str
    expected: str  # PROVED, or COUNTEREXAMPLE where the seed's promise is shown not to hold
    outcome: str  # PROVED, COUNTEREXAMPLE, or "unknown"
    detail: dict = field(default_factory=dict)

    def verdicts(self) -> list[Verdict]:
        """A proof passes its requirement when proved; a counterexample is a violation of it."""
        if self.outcome == PROVED:
            status, witnesses = PASS, ()
        elif self.outcome == COUNTEREXAMPLE:
            status, witnesses = VIOLATED, (Witness(f"z3 counterexample: {self.detail}"),)
        else:
            status, witnesses = NOT_EXERCISED, (Witness(f"z3 answered {self.outcome}"),)
        return [Verdict(r, status, 1, witnesses, f"proof:{self.name}") for r in self.requirements]


@dataclass(frozen=True)
class Proof:
    name: str
    requirements: tuple[str, ...]
    claim: str
    expected: str
    fn: Callable[[], tuple[str, dict]]

    def run(self) -> ProofResult:
        outcome, detail = self.fn()
        return ProofResult(self.name, self.requirements, self.claim, self.expected, outcome, detail)


PROOFS: list[Proof] = []


def proof(*requirements: str, claim: str, expected: str = PROVED):
    """Register a z3 proof; fn returns (outcome, detail) with detail JSON-serialisable."""

    def register(fn):
        PROOFS.append(Proof(fn.__name__, requirements, claim, expected, fn))
        return fn

    return register


@dataclass(frozen=True)
class Machine:
    """A Hypothesis state machine whose invariants are these requirements' properties."""

    name: str
    requirements: tuple[str, ...]
    doc: str
    cls: type


MACHINES: list[Machine] = []


def machine(*requirements: str):
    def register(cls):
        MACHINES.append(Machine(cls.__name__, requirements, (cls.__doc__ or "").strip(), cls))
        return cls

    return register


# an observation's line, and its (t, line): keys of Seq, read by C rather than a function per item
_line: Callable[[dict], int] = itemgetter("_line")
_key: Callable[[dict], tuple[int, int]] = itemgetter("t", "_line")


def _seq() -> "Seq":
    """An empty Seq in trace order."""
    return Seq((), _line)


class Seq(list):
    """Observations in one order (trace order, or time then line) with their keys beside them: a
    bisect finds where a line or instant falls, so no property copies or scans a node's events
    once per event it judges."""

    def __init__(self, items: Iterable[dict], key: Callable[[dict], Any]):
        super().__init__(items)
        self.key = key

    @cached_property
    def keys(self) -> list:
        # made at the first bisect: many of a Trace's Seqs are only iterated (a key is a function of
        # its observation alone, so it is the same whenever it is read)
        return list(map(self.key, self))

    def after(self, k: Any) -> Iterator[dict]:
        """Those with a key above k, in order (an iterator: a `next` reads only what it needs)."""
        return map(self.__getitem__, range(bisect.bisect_right(self.keys, k), len(self)))

    def between(self, lo: Any, hi: Any) -> list[dict]:
        """Those with lo < key < hi."""
        return self[bisect.bisect_right(self.keys, lo):bisect.bisect_left(self.keys, hi)]

    def before(self, k: Any) -> list[dict]:
        return self[:bisect.bisect_left(self.keys, k)]

    def last_before(self, k: Any) -> dict | None:
        i = bisect.bisect_left(self.keys, k)
        return self[i - 1] if i else None

    def count_before(self, k: Any) -> int:
        return bisect.bisect_left(self.keys, k)


class Fold:
    """A state carried along a sequence of observations, kept after each: the state before a line
    (forward) or over everything after it (backward) is then a bisect, not a scan per question."""

    def __init__(self, seq: Seq, step: Callable[[Any, dict], Any], start: Any, backward: bool):
        self.keys, self.start, self.states = seq.keys, start, []
        state = start
        for o in reversed(seq) if backward else seq:
            state = step(state, o)
            self.states.append(state)
        if backward:
            self.states.reverse()

    def before(self, k: Any) -> Any:
        """A forward fold's state over the observations with a key below k."""
        i = bisect.bisect_left(self.keys, k)
        return self.states[i - 1] if i else self.start

    def after(self, k: Any) -> Any:
        """A backward fold's state over the observations with a key above k."""
        i = bisect.bisect_right(self.keys, k)
        return self.states[i] if i < len(self.states) else self.start


class TraceView:
    """Indexes over one trace, built once and shared by all properties that judge it."""

    def __init__(self, header: dict, observations: Iterable[dict], numbered: list[dict] | None = None):
        self.header = header
        # Line 1 of a trace file is its header. An observation without its line is copied to number
        # it, so that the Trace stays as the system wrote it; one with it (a loaded Trace file) is used
        # as it is: no property changes an observation. Given `numbered`, each is numbered in place
        # instead and put there for the caller to un-number (judge_trace): a copy of every observation
        # was as much memory again as the Trace.
        # A statement a real server did not answer (returned false, header cut_short) said nothing: no
        # property reads it as done; MULTISOURCE.INDEPENDENT judges it by the evidence after it.
        # A named connection's observations (multi-source) are judged by properties/multisource.py
        # alone: every other property follows a replica's one channel, which such a replica has not.
        # One pass sorts them all, and indexes each node's (of_node's answers): this is paid on every
        # Trace judged, and every Trace judged asks of_node.
        self.unanswered: list[dict] = []
        self.obs: list[dict] = []
        self.connected: list[dict] = []
        self.by_kind: dict[str, list[dict]] = defaultdict(list)
        self._every: dict[str, Seq] = defaultdict(_seq)  # each node's observations, in trace order
        self._mine: dict[tuple[str, str], Seq] = defaultdict(_seq)  # each node's of each kind
        by_kind, keep, every, mine = self.by_kind, self.obs.append, self._every, self._mine
        for i, o in enumerate(observations, 2):
            if "_line" not in o:
                if numbered is None:
                    o = dict(o, _line=i)
                else:
                    o["_line"] = i
                    numbered.append(o)
            kind = o["kind"]
            if kind == "stmt" and o.get("returned") is False:
                self.unanswered.append(o)
            elif "connection" in o:
                self.connected.append(o)
            else:
                keep(o)
                by_kind[kind].append(o)
                node = o["node"]
                every[node].append(o)
                mine[node, kind].append(o)
        self.cut_short: dict | None = header.get("cut_short")
        # what the Trace holds, in the terms of a property's `kinds`: a named connection's too
        self.present = frozenset(by_kind).union({o["kind"] for o in self.connected},
                                                {STMT + o["op"] for o in by_kind.get("stmt", ())},
                                                {STMT + o["op"] for o in self.connected if o["kind"] == "stmt"})
        topo = header.get("topology", {})
        self.nodes = {n["id"]: n for n in topo.get("nodes", [])}
        self.channels = {c["replica"]: c for c in topo.get("channels", []) if "connection" not in c}
        self.connections = {(c["replica"], c["connection"]): c for c in topo.get("channels", []) if "connection" in c}
        self.resolution_us = header.get("resolution_us", 0)
        # How far behind true time a real server's whole-second clock reads may be: time() reads the
        # kernel's coarse clock, updated once a tick (0 for a model, whose clocks are exact)
        self.clock_read_lag_us = header.get("clock_read_lag_us", 0)
        self.unobserved = frozenset(header.get("unobserved", ()))  # kinds the system cannot see
        self._memo: dict[Hashable, Any] = {}
        # of_node's answers, apart from the memo: a property asks for them per event it judges
        self._of_node: dict[tuple[str, tuple[str, ...]], Seq] = {}

    def kind(self, kind: str) -> list[dict]:
        try:  # by_kind is a defaultdict: a kind the Trace has not is given its own empty list once
            return self.by_kind[kind]
        except KeyError:  # one replaced by a plain dict
            return []

    def of_node(self, node: str, *kinds: str) -> Seq:
        """The node's observations (of these kinds, or all), in trace order: indexes built once,
        so a property that looks up a node's events per event stays linear in the trace."""
        try:
            return self._of_node[node, kinds]
        except KeyError:
            pass
        if not kinds:
            found = self._every.get(node) or _seq()
        elif len(kinds) == 1:
            found = self._mine.get((node, kinds[0])) or _seq()
        else:  # merged in trace order: each kind's list is in it already
            mine = self._mine
            found = Seq(sorted(chain.from_iterable(mine.get((node, k), ()) for k in kinds), key=_line), _line)
        self._of_node[node, kinds] = found
        return found

    def timed(self, node: str | None, *kinds: str) -> Seq:
        """The node's (every node's, for None) observations of these kinds in (t, line) order, for
        the properties that compare observations by (t, line). A Trace's stamps never go back along
        its lines (a Trace file's are checked when it is loaded), so bisecting stamps is sound."""
        return self.memo(("timed", node, kinds), lambda: Seq(sorted(
            self.of_node(node, *kinds) if node is not None else (o for k in kinds for o in self.kind(k)), key=_key), _key))

    def fold(self, name: str, node: str, kinds: tuple[str, ...], step: Callable[[Any, dict], Any], start: Any,
             backward: bool = False) -> Fold:
        """`step` folded over the node's observations of these kinds (all, for none), once per trace;
        the state it returns is kept, so it must not be changed in place."""
        return self.memo(("fold", name, node), lambda: Fold(self.of_node(node, *kinds), step, start, backward))

    def release(self) -> None:
        """Drops what was built over the Trace: an index keeps the view it was built from, so it
        would otherwise wait for the garbage collector, with every Seq it made."""
        self._memo.clear()
        self._of_node.clear()

    def memo(self, key: Hashable, build: Callable[[], Any]) -> Any:
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = build()
            return value

    def sample_slack_us(self, sample: dict) -> int:
        """How much later than its stamp a sample's values may have been read: a polled server's
        sample says how long its read took (sampled_until); one that does not, the resolution."""
        return sample["sampled_until"] - sample["t"] if "sampled_until" in sample else self.resolution_us

    def whole_second_slack_us(self, sample: dict) -> int:
        """How far a sample's whole-second value (now minus a timestamp, read by the server's time())
        may be from the exact difference at its stamp, beyond the second itself: the read's duration,
        and the coarse clock's lag behind true time at a second's turn."""
        return self.sample_slack_us(sample) + self.clock_read_lag_us

    def relay_held_us(self, replica: str, lo: int, hi: int) -> int:
        """How long replcheck's own relay on the replica's channel held its stream or an ack within
        [lo, hi] (a real server's Trace header, `relay_held`): time neither server spent. Holds of
        the two directions may overlap (one stall of the harness): their union counts."""
        held, end = 0, lo
        for fr, to in sorted(self.header.get("relay_held", {}).get(replica, ())):
            fr, to = max(fr, end), min(to, hi)
            if to > fr:
                held, end = held + to - fr, to
        return held

    def offset_at(self, node: str, t: int, line: int | None = None) -> int:
        """The node's clock offset (local minus true time, µs) in force at true time t; with the
        line of an observation at t, only the steps the trace shows before it (a clock step in
        the same µs after a binlog write did not change that write's time)."""
        try:  # asked per sample by the timing properties: no memo call, no closure
            keys, offsets = self._memo["clock_offsets", node]
        except KeyError:
            keys, offsets = self._memo["clock_offsets", node] = self._clock_offsets(node)
        return offsets[bisect.bisect_right(keys, (t, 2**62 if line is None else line))] if keys else offsets[0]

    def _clock_offsets(self, node: str) -> tuple[list[tuple[int, int]], list[int]]:
        """The node's clock steps as (t, line), and its offset before the first and after each."""
        off = self.nodes.get(node, {}).get("clock_offset_us", 0)
        keys, offsets = [], [off]
        for o in self.of_node(node, "clock_step"):
            off += o["delta_us"]
            keys.append((o["t"], o["_line"]))
            offsets.append(off)
        return keys, offsets

    def skip_starts(self, node: str) -> list[tuple[int, int]]:
        """(t, line) of the node's START SLAVEs (SQL thread) that ran with SQL_SLAVE_SKIP_COUNTER
        set before them: statements only, which a real server's trace has too."""
        return self.memo("skip_starts", self._skip_starts).get(node, [])

    def _skip_starts(self) -> dict[str, list[tuple[int, int]]]:
        out: dict[str, list[tuple[int, int]]] = {}
        armed: set[str] = set()
        # the counter is a global in memory (MariaDB sys_vars.cc, sql_slave_skip_counter): a crash or
        # shutdown before the START loses it, and the server starts again at 0
        downs = [*self.kind("crash"), *self.kind("shutdown")]
        for o in sorted([*self.kind("stmt"), *downs], key=lambda o: o["_line"]):
            if o["kind"] != "stmt":
                armed.discard(o["node"])
                continue
            if o.get("errno") is not None:
                continue
            if o["op"] == "set_global" and o.get("variable") == "sql_slave_skip_counter":
                if isinstance(o.get("value"), int) and o["value"] > 0:
                    armed.add(o["node"])
            elif o["op"] == "start_slave" and o.get("thread") in (None, "sql") and o["node"] in armed:
                armed.discard(o["node"])
                out.setdefault(o["node"], []).append((o["t"], o["_line"]))
        return out


def run_properties(view: TraceView, feature: str | None = None) -> list[Verdict]:
    return [p.run(view) for p in PROPERTIES if feature is None or p.feature == feature]
