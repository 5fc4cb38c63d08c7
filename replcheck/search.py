"""The state machines' searches, as verify runs them: every machine on every seed model, and on each
mutant the machines whose steps reach its seam, until one finds it.

A machine judges every requirement after every step (replcheck.properties.machines). Which
machines a mutant's search runs depends on nothing it is labelled with (its feature, its kills):
the first Histories the generator draws from each family (probes) are run on the mutant and on its
base model, and a family reaches the mutant's seam where the two Traces differ, or where the base
model's run asks whether the mutant is on (the model's code asks at the seam). The families that
differ most often search first (a seam few Histories reach is looked for in more probes), then the
composed families' machines (model.steps.composed: several families' steps on one topology): their
Histories reach most seams, and they search the combinations no single family draws; then the
families that only reach the seam. A mutant no probe reaches is searched by every machine. A search stops at the first machine that finds the mutant: one that
fails on a violation its base model holds on the same History (results.search_failures).

In the default (short, unshrunk) search, some machines lead, in as many examples as the second
pass gives, before the others' short examples (leading): the first family's and the first composed
machine whose Traces differ from the base model's on a probe, and the machines of the features
whose requirements caught the mutant on verify's embedded Histories (machines_of): evidence of this
run, not a label, and a hint only (a search still has to find the mutant). A search that finds the
mutant early costs the same in any budget; one that needs many examples no longer runs every other
machine's short pass first.
"""
from __future__ import annotations

import hashlib
import json
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

from replcheck import systems
from replcheck.model.sim import simulate
from replcheck.model.steps import composed
from replcheck.properties import core
from replcheck.properties.judge import asking

STEPS = 20  # a machine's steps per example
# The default verify's steps per example on a mutant (unshrunk, a catch is at most this long). A
# shrunk catch longer than this is searched for again with this many steps per example:
# Hypothesis's shrinking does not always reach a short example that a search of short examples
# finds (mts-gaps-not-filled: 11 steps at 20 per example, 1 step at 8, for a fifth of the CPU).
SHORT = 8
# A mutant no machine finds in the default's short examples is searched again in this many times
# as many: as much CPU as the same examples at STEPS, and each catch still SHORT steps or fewer
# (the four registry mutants that needed STEPS and shrinking: 2-7 steps, 2-5 CPU-s each).
AGAIN = 4
PROBES = 6  # generated Histories per family that look for a mutant's seam
MORE_PROBES = 40  # where those showed too few differences to rank by (a seam that few Histories reach)
# The fewest probes of one family whose Traces differ that rank the families: one in PROBES is
# chance (no-reack-on-reconnect: one parallel and one mixed probe differ, no semi-sync one; in
# MORE_PROBES, twelve semi-sync ones do, and the semi-sync family was not searched at all).
CLEAR = 2
# Where none of MORE_PROBES differs in any family, this many: a
# seam only a rare History reaches (send-before-sync: no family's Trace differs in 40 probes, the
# groupid family's in 8 of 160, about 7 CPU-s, and its machine is the one that finds it; unranked,
# every other machine's search ran first, twice, for some 60 CPU-s).
FAR_PROBES = 160
PROBE_SEED = 0


@dataclass(frozen=True)
class Budget:
    """How hard the searches look: examples per machine on a model, and on a mutant; steps per
    example on a model, and on a mutant; whether a mutant's catch is shrunk; the machines whose
    searches on a model take fewer examples, and how many."""
    model_examples: int
    mutant_examples: int
    steps: int = STEPS
    mutant_steps: int = STEPS
    shrink: bool = True
    fewer: tuple[tuple[str, int], ...] = ()

    def with_examples(self, n: int) -> "Budget":
        """The same searches with n examples per machine on models and mutants alike."""
        return replace(self, model_examples=n, mutant_examples=n, fewer=())

    def on_model(self, machine: str) -> int:
        """The examples of this machine's search on a model."""
        return dict(self.fewer).get(machine, self.model_examples)


# verify's default, which a user runs often: a mutant's search stops when it finds it, so its
# budget is what a search that finds nothing costs; a model's searches find nothing and run whole.
# A mutant's machines search examples of SHORT steps, unshrunk: a catch is then SHORT steps or
# fewer as it was found, and shrinking it was nearly all of a search's CPU. A mutant none of them
# catches is searched again in more examples (search).
# These machines judge every requirement on some Trace of every seed model in 10 examples that
# they do in 15 (bench/verify_model_budget.py, seed 0); the others lose some in 10, and every machine
# loses some in 15 of 12 steps.
DEFAULT = Budget(model_examples=15, mutant_examples=60, mutant_steps=SHORT, shrink=False,
                 fewer=(("DelayMachine", 10), ("GroupIdMachine", 10), ("SemiSyncMachine", 10)))
THOROUGH = Budget(model_examples=60, mutant_examples=60)  # verify --thorough: every search at full depth, shrunk


def run_machine(m: core.Machine, system, examples: int, seed: int, steps: int = STEPS,
                shrink: bool = True) -> tuple[type, core.Witness | None]:
    """One state machine driving one system; the failure it found (shrunk, with `shrink`), if any."""
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.stateful import run_state_machine_as_test

    from replcheck.properties.machines.base import SEARCH_PHASES, machine_for

    base = systems.get(system.declares.base) if system.declares.base else None
    machine = hypothesis_seed(seed)(machine_for(m.cls, system, base))
    machine.examples = examples
    try:
        # From the registered default, not the current profile: a caller's profile must not
        # change verify's results (the gate checks them).
        run_state_machine_as_test(machine, settings=settings(
            settings.get_profile("default"), max_examples=examples, stateful_step_count=steps, deadline=None,
            database=None, phases=SEARCH_PHASES if shrink else tuple(p for p in SEARCH_PHASES if p != Phase.shrink),
            # one failure is all a search wants; and looking on for more stops on a wall clock
            # (10 s after the first), so the example shrunk depended on the machine's load
            report_multiple_bugs=False, suppress_health_check=list(HealthCheck), print_blob=False))
    except AssertionError as e:
        return machine, core.Witness(str(e).splitlines()[0])
    finally:
        machine.judged.clear()  # the run's memo, of no use once it ended
    return machine, None


@lru_cache(maxsize=None)
def _probe(family: str, index: int) -> dict:
    from replcheck.generate import generate

    return generate(PROBE_SEED, index, (family,))


_OBSERVED: dict[tuple[str, str, int], str] = {}


def _key(system, family: str, index: int) -> tuple[str, str, int]:
    """A probe run's key: the system's Config, what its run depends on (a system of another name and
    the same Config, a mutant without its labels, observes the same)."""
    return json.dumps(system.config.as_dict(), sort_keys=True), family, index


def _digest(obs: list[dict]) -> str:
    return hashlib.sha256(json.dumps(obs, sort_keys=True).encode()).hexdigest()


def _observed(system, family: str, index: int) -> str:
    """What the system observes on a probe History, as a digest (a base's serves all its mutants).
    A mutant whose seam its base model's run of the probe never asked about observes what the base
    does, without a run of its own (as verify.Judged): most mutants on most probes."""
    key = _key(system, family, index)
    if key not in _OBSERVED:
        base = systems.get(system.declares.base) if system.kind == "mutant" and system.declares.base else None
        if (base is not None and base.kind == "model" and _runs_as(system, base)
                and not _changes(system, base) & _asked_on(base.name, family, index)):
            _OBSERVED[key] = _observed(base, family, index)
        else:
            _OBSERVED[key] = _digest(system.run(_probe(family, index)).observations)
    return _OBSERVED[key]


def _runs_as(mutant, base) -> bool:
    """The mutant's Config is its base's but for the mutants it carries."""
    return replace(mutant.config, mutants=base.config.mutants) == base.config


def _changes(mutant, base) -> frozenset[str]:
    """The mutants the system carries beyond its base's, by name, whatever the system is labelled."""
    return frozenset(m.name for m in mutant.config.mutants - base.config.mutants)


@lru_cache(maxsize=None)
def _asked_on(base: str, family: str, index: int) -> frozenset[str]:
    """The mutants the base model's run of a probe History asks about (its code asks at a mutant's
    seam). The run that notes them observes what the base does (noting changes no answer): its
    digest is kept, and the base's own run of the probe saved."""
    noting = asking(systems.get(base))
    _, obs = simulate(_probe(family, index), noting.config)
    _OBSERVED.setdefault(_key(systems.get(base), family, index), _digest(obs))
    return frozenset(m.name for m in noting.config.mutants.asked)


def seam_reached(mutant, family: str, probes: int = PROBES) -> tuple[int, int]:
    """How many of the family's first probe Histories give the mutant another Trace than its base
    model, and how many of the first PROBES reach its seam on the base model."""
    base = systems.get(mutant.declares.base)
    changes = _changes(mutant, base)
    asked = max((sum(m in _asked_on(base.name, family, i) for i in range(PROBES)) for m in changes), default=0)
    differ = sum(_observed(mutant, family, i) != _observed(base, family, i) for i in range(probes))
    return differ, asked


def is_composed(m: core.Machine) -> bool:
    return m.cls.FAMILY.name in composed()


def model_machines() -> list[core.Machine]:
    """The machines a model's searches run: the families'. A composed family's Histories are the
    families' steps together, whose combinations the campaigns judge on the models (the mixed
    family's findings on them are the open item); verify runs its machine only for mutants."""
    return [m for m in core.MACHINES if not is_composed(m)]


def machines_for(system) -> list[core.Machine]:
    """A model: the families' machines. A mutant: the machines whose family reaches its seam: the
    families' whose Traces differ (looking further when few differ in the first probes), then the
    composed ones', then the families' that only reach the seam (their probes ask the mutant's code
    and never change a Trace: weaker evidence than Histories combining every family's steps;
    master-fde-lag, which MixedMachine finds, waited behind six of them); in each, those whose Traces
    differ most often first, then those that reach it most often (ties in the machines' order);
    none reaching it, every machine."""
    if system.kind != "mutant":
        return model_machines()
    reached = {m.name: seam_reached(system, m.cls.FAMILY.name, ranking_probes(system)) for m in core.MACHINES}

    def tier(m: core.Machine) -> int:
        return 1 if is_composed(m) else 0 if reached[m.name][0] else 2
    ranked = sorted((m for m in core.MACHINES if any(reached[m.name])),
                    key=lambda m: (tier(m), *(-n for n in reached[m.name])))
    return ranked or list(core.MACHINES)


def ranking_probes(system) -> int:
    """How many probes per family rank a mutant's machines: PROBES; MORE_PROBES where in no family
    CLEAR of those differ from the base model's; FAR_PROBES where none of those differs at all."""
    most = max(seam_reached(system, m.cls.FAMILY.name)[0] for m in core.MACHINES)
    if most >= CLEAR:
        return PROBES
    further = max(seam_reached(system, m.cls.FAMILY.name, MORE_PROBES)[0] for m in core.MACHINES)
    return MORE_PROBES if further else FAR_PROBES


def differ_often(system) -> int:
    """The probes per family that say whether a family's Traces differ at all: at least MORE_PROBES."""
    return max(MORE_PROBES, ranking_probes(system))


def machines_again(system) -> list[core.Machine]:
    """A mutant's machines when none found it in its first short examples, for more: first those whose
    Traces differ on any of MORE_PROBES probes, the most often first, composed or not (the short
    search put the composed last), then the others in machines_for's order."""
    differ = {m.name: seam_reached(system, m.cls.FAMILY.name, differ_often(system))[0] for m in core.MACHINES}
    first = sorted((m for m in core.MACHINES if differ[m.name]), key=lambda m: -differ[m.name])
    return first + [m for m in machines_for(system) if m not in first]


def machines_of(requirements) -> tuple[str, ...]:
    """The machines of the features these requirements belong to, in the machines' order (a feature
    without a History family has none)."""
    from replcheck import catalogue
    from replcheck.features import features

    known, feature = catalogue.by_id(), features()
    wanted = {feature[known[r].feature].machine for r in requirements if r in known}
    return tuple(m.name for m in core.MACHINES if m.name in wanted)


@dataclass(frozen=True)
class Task:
    """Searches a worker process runs: on a model, one machine; on a mutant, its whole search."""
    system: str
    machine: str | None  # None: the machines machines_for gives, until one finds the mutant
    examples: int
    seed: int
    steps: int = STEPS
    shrink: bool = True
    first: tuple[str, ...] = ()  # machines that search a mutant first (search's `first`)


def tasks(names: list[str], budget: Budget, seed: int, caught: dict[str, list] | None = None) -> list[Task]:
    """verify's searches: every machine on every seed model, one search per mutant (a flavour model
    runs on the Histories that concern it only: the machines' steps are its seed's). `caught`: per
    mutant, the (History, requirement) pairs that caught it on the embedded Histories."""
    out = []
    for name in names:
        system = systems.get(name)
        if system.seed:
            continue
        if system.kind == "mutant":
            first = machines_of(r for _, r in (caught or {}).get(name, ()))
            out.append(Task(name, None, budget.mutant_examples, seed, budget.mutant_steps, budget.shrink, first))
        else:
            out += [Task(name, m.name, budget.on_model(m.name), seed, budget.steps) for m in model_machines()]
    return out


def shared(tasks: list[Task]) -> dict[Task, Task]:
    """Each task and the first of those whose searches are the same: a model's searches depend on
    its Config and what it declares (which violations fail them), not its name (model:groupid and
    model:wl344 differ by name alone), so each is run once."""
    def same(a: Task, b: Task) -> bool:
        x, y = systems.get(a.system), systems.get(b.system)
        return (replace(a, system="") == replace(b, system="") and systems.same_runs(x, y)
                and x.declares.expected_violations.keys() == y.declares.expected_violations.keys())

    firsts: list[Task] = []
    out = {}
    for t in tasks:
        if systems.get(t.system).kind != "model":
            out[t] = t
        elif (first := next((f for f in firsts if same(f, t)), None)) is not None:
            out[t] = first
        else:
            out[t] = t
            firsts.append(t)
    return out


def worker_signals() -> None:
    """A search worker's signals: the parent owns SIGINT (the terminal sends it to the whole group),
    and SIGTERM, which the pool sends when the parent stops, ends the worker at once. Inherited
    from the parent, SIGTERM raised an exception inside the search instead, and a worker dying
    in the middle of sending its answer left the pool's terminate() waiting for it for ever. The
    worker is forked with both blocked (`pool`): one sent before this ran is taken now."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)


STOPS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def pool(processes: int):
    """The search workers' pool, terminated on leaving. A stop signal that comes while it forks
    them is held, and raised once the pool is made, inside its `with`. Python runs a signal's
    handler in the main thread between any two steps: one that raised inside the pool's
    constructor left its threads forking workers while the process exited, and their last one
    waiting for ever on the task queue's lock a terminated worker held (and on the terminal's
    pipe the caller waited on). The signals are blocked, not only noted, while the workers are
    forked: a worker forked with the noting handler outlived the SIGTERM the pool's terminate()
    sent it before its initializer ran, and terminate() waited for it."""
    import multiprocessing

    came: list[int] = []
    before: dict = {}
    held: list[set] = []

    def restored() -> None:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        for mask in held:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # one that came meanwhile is raised here

    try:
        for sig in STOPS:  # noted first, then blocked: a handler Python runs late only notes
            before[sig] = signal.signal(sig, lambda signum, _: came.append(signum))
        held.append(signal.pthread_sigmask(signal.SIG_BLOCK, STOPS))
        made = multiprocessing.get_context("fork").Pool(processes, initializer=worker_signals)
    except BaseException:
        restored()
        raise
    with made:
        restored()
        for signum in came[:1]:
            signal.raise_signal(signum)
        yield made


class Queue:
    """Searches handed to a pool so that short ones end the run: the models' (a second or two each)
    go to it one per free worker until the mutants' (up to fifteen CPU-s each) are handed over,
    and the models' left then queue behind those, filling the workers' tail. Which process runs
    what, and when, changes no result: each search is derandomised by its seed."""

    def __init__(self, pool, processes: int, done: Callable[[], None]):
        self.pool, self.processes, self.done = pool, processes, done
        self.lock = threading.Lock()
        self.held: list[Task] = []
        self.answers: dict[Task, object] = {}

    def models(self, tasks: list[Task]) -> None:
        with self.lock:
            self.held = list(tasks)
            for _ in range(self.processes):
                self._next()

    def mutants(self, tasks: list[Task]) -> None:
        with self.lock:
            for t in tasks:
                self._submit(t)
            while self.held:
                self._next()

    def answer(self, task: Task) -> list[dict]:
        return self.answers[task].get()

    def _finished(self, _) -> None:
        self.done()
        with self.lock:
            self._next()

    def _next(self) -> None:
        if self.held:
            self._submit(self.held.pop(0))

    def _submit(self, task: Task) -> None:
        self.answers[task] = self.pool.apply_async(run_task, (task,), callback=self._finished)


def run_task(task: Task) -> list[dict]:
    """A task's searches as plain data (what a worker process sends back), in the order they ran:
    the machine, its examples, what it failed on (None: nothing), the steps of that example, and per
    requirement how many Traces it judged."""
    system = systems.get(task.system)
    chosen = None if task.machine is None else [m for m in core.MACHINES if m.name == task.machine]
    return [{"machine": m.name, "examples": machine.examples, "failure": failure.message if failure else None,
             "shrunk_steps": machine.last_steps if failure else None, "exercised": dict(machine.exercised)}
            for m, machine, failure in search(system, task.examples, task.seed, task.steps, chosen, task.shrink,
                                              task.first)]


def search(system, examples: int, seed: int, steps: int = STEPS, machines: list[core.Machine] | None = None,
           shrink: bool = True, first: tuple[str, ...] = ()):
    """Each machine's search on the system, as (machine, the class it ran as, its failure or None),
    in the order they ran: on a mutant, up to the first that finds it. Unshrunk, the leading machines
    search a mutant before the others, in AGAIN times as many examples; a mutant that none
    finds is searched again by the others in AGAIN times as many examples (machines_again's order),
    and if none finds it then, by all at STEPS per example and shrunk."""
    order = machines_for(system) if machines is None else machines
    lead = leading(system, order, first) if system.kind == "mutant" and not shrink else []
    if (yield from _searches(system, lead, examples * AGAIN, seed, steps, False)):
        return
    found = yield from _searches(system, [m for m in order if m not in lead], examples, seed, steps, shrink)
    if found or shrink or system.kind != "mutant":
        return
    again = machines_again(system) if machines is None else machines
    found = yield from _searches(system, [m for m in again if m not in lead], examples * AGAIN, seed, steps, False)
    if not found:  # the first pass at `steps` ran what a search at SHORT would
        yield from _searches(system, again, examples, seed, STEPS, True, searched_short=steps == SHORT)


def leading(system, order: list[core.Machine], first: tuple[str, ...]) -> list[core.Machine]:
    """The machines that search a mutant first, in more examples: the first family's machine of
    `order` whose Traces differ from the base model's on a probe (the seam is surely its family's),
    those named `first`, then the first composed machine whose Traces differ (its Histories combine
    the families' steps, which a seam may need)."""
    family = next((m for m in order if not is_composed(m)), None)
    top = [family] if family is not None and differs(system, family) else []
    named = [m for m in core.MACHINES if m.name in first and m not in top]
    combined = next((m for m in order if is_composed(m) and differs(system, m)), None)
    return top + named + ([combined] if combined is not None else [])


def differs(system, m: core.Machine) -> bool:
    family = m.cls.FAMILY.name
    return bool(seam_reached(system, family)[0] or seam_reached(system, family, differ_often(system))[0])


def _searches(system, machines: list[core.Machine], examples: int, seed: int, steps: int, shrink: bool,
              searched_short: bool = False):
    """search's machines in order, on a mutant up to the first that finds it; whether one did."""
    for m in machines:
        machine, failure = run_machine(m, system, examples, seed, steps, shrink)
        if failure is not None and shrink and machine.last_steps > SHORT and steps > SHORT and not searched_short:
            shorter, again = run_machine(m, system, examples, seed, SHORT)
            if again is not None:  # any catch at SHORT steps per example shrinks to SHORT or fewer
                machine, failure = shorter, again
        yield m, machine, failure
        if failure is not None and system.kind == "mutant":
            return True
    return False
