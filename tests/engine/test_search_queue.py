"""How verify's searches are prepared and handed out. A mutant's probe runs
(replcheck.search.seam_reached): where its base model's run of a probe never asked about the
mutant's seam, the mutant observes what the base does and is not run; where it asked, the mutant
runs, and either way the digest is the one of the mutant's own run. The searches' queue
(replcheck.search.Queue): the models' short ones fill the workers' tail, behind the mutants'. The
searches' pool (replcheck.search.pool): a stop the pool sends a worker is never lost."""
from __future__ import annotations

import multiprocessing
import os
import signal
from dataclasses import replace

import pytest

from replcheck import search, systems

# a delay mutant: the delay family's probes reach its seam, the incident family's never do
MUTANT, FAMILIES = "mutant:per-event-wait", ("delay", "incident")


@pytest.fixture
def fresh(monkeypatch):
    """Probe digests and asked seams as a new worker has them, and the mutant's own runs counted."""
    monkeypatch.setattr(search, "_OBSERVED", {})
    search._asked_on.cache_clear()
    runs: list = []
    yield _Counted(systems.get(MUTANT), runs), runs
    search._asked_on.cache_clear()


class _Counted:
    """The mutant, its runs noted."""

    def __init__(self, system, runs: list):
        self.system, self.runs = system, runs

    def __getattr__(self, name):
        return getattr(self.system, name)

    def run(self, history):
        self.runs.append(history)
        return self.system.run(history)


def test_a_mutant_runs_only_the_probes_that_ask_about_its_seam(fresh):
    mutant, runs = fresh
    base = systems.get(mutant.declares.base)
    for family in FAMILIES:
        asking = [i for i in range(search.PROBES) if search._changes(mutant, base) & search._asked_on(base.name, family, i)]
        before = len(runs)
        digests = [search._observed(mutant, family, i) for i in range(search.PROBES)]
        assert len(runs) - before == len(asking)
        own = [search._digest(mutant.system.run(search._probe(family, i)).observations) for i in range(search.PROBES)]
        assert digests == own
    assert runs, "the delay family's probes reach a delay mutant's seam"
    assert len(runs) < 2 * search.PROBES, "the incident family's probes never do"


class _Pool:
    """A pool that runs nothing: what was handed to it, in order, and each task's callback."""

    def __init__(self):
        self.handed, self.callbacks = [], {}

    def apply_async(self, fn, args, callback):
        self.handed.append(args[0])
        self.callbacks[args[0]] = callback
        return _Answer(args[0])


class _Answer:
    def __init__(self, task):
        self.task = task

    def get(self):
        return [self.task.system]


def test_the_models_searches_queue_behind_the_mutants_once_those_come():
    models = [search.Task(f"model:{i}", "DelayMachine", 15, 0) for i in range(5)]
    mutants = [search.Task(f"mutant:{i}", None, 60, 0) for i in range(3)]
    pool, done = _Pool(), []
    queue = search.Queue(pool, 2, lambda: done.append(1))
    queue.models(models)
    assert pool.handed == models[:2]  # one per worker
    pool.callbacks[models[0]](None)
    assert pool.handed == models[:3] and done == [1]  # a worker freed takes the next
    queue.mutants(mutants)
    assert pool.handed == models[:3] + mutants + models[3:]
    pool.callbacks[mutants[0]](None)
    assert len(pool.handed) == len(models + mutants)
    assert [queue.answer(t) for t in models + mutants] == [[t.system] for t in models + mutants]


def test_a_search_that_another_models_search_is_runs_once():
    """model:groupid is model:wl344 under another name (its Config and declarations): verify runs
    its searches once and gives each model the answers; two models that run differently keep theirs."""
    tasks = search.tasks(["model:wl344", "model:groupid", "model:wl7318", "mutant:per-event-wait"], search.DEFAULT, 0)
    run_as = search.shared(tasks)
    by = {(t.system, t.machine): run_as[t] for t in tasks}
    machines = [m.name for m in search.model_machines()]
    assert all(by[("model:groupid", m)].system == "model:wl344" for m in machines)
    assert all(by[(s, m)].system == s for s in ("model:wl344", "model:wl7318") for m in machines)
    assert by[("mutant:per-event-wait", None)].system == "mutant:per-event-wait"
    # what the sharing rests on: the same search on both gives the same answers
    one = next(t for t in tasks if t.system == "model:wl344" and t.machine == "DelayMachine")
    small = [replace(one, examples=3), replace(one, system="model:groupid", examples=3)]
    assert search.run_task(small[0]) == search.run_task(small[1])


def test_a_worker_sent_sigterm_before_its_initializer_ran_ends(monkeypatch, tmp_path):
    # terminate() may signal a worker just forked: it must end, not wait for ever on the task
    # queue's lock a terminated worker held (which left a stopped verify hanging)
    first, worker_signals = tmp_path / "first", search.worker_signals

    def initializer():
        if not first.exists():
            first.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGTERM)
        worker_signals()

    monkeypatch.setattr(search, "worker_signals", initializer)
    with search.pool(1) as workers:
        answered_by = workers.apply(os.getpid)  # the pool replaces the worker that ended
    assert answered_by != int(first.read_text())


def test_a_stop_whose_handler_runs_while_the_pool_is_made_ends_the_pool(monkeypatch):
    # Python runs a pending signal's handler between any two steps, the pool's constructor's too
    context, before = multiprocessing.get_context("fork"), set(multiprocessing.active_children())
    make, handler = context.Pool, signal.signal(signal.SIGINT, signal.default_int_handler)  # as in verify

    pools = []  # held here: a pool let go is terminated by its finalizer, which hid the leak

    def made_then_stopped(*args, **kwargs):
        pools.append(make(*args, **kwargs))
        signal.getsignal(signal.SIGINT)(signal.SIGINT, None)
        return pools[-1]

    monkeypatch.setattr(context, "Pool", made_then_stopped)
    try:
        with pytest.raises(KeyboardInterrupt):
            with search.pool(1):
                pytest.fail("the stop is raised as the pool is handed over")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert set(multiprocessing.active_children()) <= before  # its workers ended, none left forking
        assert not signal.pthread_sigmask(signal.SIG_BLOCK, []) & search.STOPS
    finally:
        signal.signal(signal.SIGINT, handler)
        for p in pools:
            p.terminate()
