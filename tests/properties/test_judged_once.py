"""A History's systems that write the same run, or the same Trace, share it: the simulator runs a
(History, Config) once (model/sim/kernel.py `simulate`), the judge judges a Trace once whatever the
system's name (properties/judge.py `judge_trace`). Neither may change a row: a campaign History's
rows are the same with both as without; a History or a Trace changed since is run or judged again;
verify's noting of the mutants a run asks about still sees every run."""
from __future__ import annotations

from collections import deque

import pytest

from replcheck import campaign, systems
from replcheck.generate import FAMILIES, generate
from replcheck.model.sim import kernel
from replcheck.properties import judge
from replcheck.properties.core import TraceView, run_properties
from replcheck.spec.contract import Trace

SEED = 11
SYSTEMS = ("model:wl344", "model:wl7318", "model:groupid", "mutant:stop-event")


def _rows(index: int, family: str) -> list[tuple]:
    return campaign.run_history(SEED, index, SYSTEMS, 0, (family,))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_history_gives_the_same_rows_with_runs_and_trace_verdicts_shared(family, monkeypatch):
    shared = [_rows(i, family) for i in range(3)]
    monkeypatch.setattr(kernel, "_runs", deque(maxlen=0))  # nothing remembered: every system runs and is judged
    monkeypatch.setattr(judge, "_judged", deque(maxlen=0))
    assert [_rows(i, family) for i in range(3)] == shared


def test_a_changed_history_is_run_again():
    history = generate(SEED, 1, ("delay",))
    config = systems.get("model:wl344").config
    kernel.simulate(history, config)
    history["ops"] = history["ops"][: len(history["ops"]) // 2]
    assert kernel.simulate(history, config)[1] == kernel.Simulator(history, config).run()[1]


def test_a_run_is_named_for_the_system_it_is_given_to():
    history = generate(SEED, 2, ("groupid",))
    a, b = systems.get("model:wl344").run(history), systems.get("model:groupid").run(history)
    assert (a.header["system"], b.header["system"]) == ("model:wl344", "model:groupid") and a.observations == b.observations


def test_a_trace_changed_after_judging_is_judged_again():
    trace = Trace(*systems.get("model:wl344").run(generate(SEED, 3, ("delay",))))
    judge.judge_trace(trace)
    status = next(o for o in trace.observations if o["kind"] == "status")
    status["SQL_Delay"] = -1
    assert list(judge.judge_trace(trace).verdicts) == run_properties(TraceView(*trace))


def test_an_edit_inside_an_observation_reaches_neither_the_next_run_nor_the_next_judging():
    # a nested value (a data sample's counts) edited in place by a reader of one run: the next
    # system's run of the History is the simulator's own, and the edited Trace is judged anew
    history = generate(SEED, 5, ("groupid",))
    a = systems.get("model:wl344").run(history)
    judge.judge_trace(Trace(*a))
    data = next(o for o in a.observations if o["kind"] == "data" and o["counts"])
    trx = next(iter(data["counts"]))
    data["counts"][trx] = 2
    b = systems.get("model:groupid").run(history)
    assert b.observations == kernel.Simulator(history, systems.get("model:groupid").config).run()[1]
    assert list(judge.judge_trace(Trace(*a)).verdicts) == run_properties(TraceView(*a))


def test_verify_sees_what_every_run_asks_about():
    history = generate(SEED, 4, ("delay",))
    system = judge.asking(systems.get("mutant:per-event-wait"))
    system.run(history)
    again = judge.asking(systems.get("mutant:per-event-wait"))
    again.run(history)
    assert again.config.mutants.asked and again.config.mutants.asked == system.config.mutants.asked


def test_a_history_leaves_almost_no_cyclic_garbage():
    """The simulator is dismantled once its Trace is out and a judged Trace's indexes dropped: what a
    History allocated is freed as it goes, not by the garbage collector (it took a fifth of the CPU)."""
    import gc

    campaign.run_history(SEED, 0, SYSTEMS)
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        for index in range(1, 4):
            campaign.run_history(SEED, index, SYSTEMS)
        assert gc.collect() < 50  # a few of the generator's (its Builder), against thousands a History before
    finally:
        if was:
            gc.enable()


def test_a_trace_judged_again_names_the_system_it_was_judged_for():
    # the campaign takes that system's facts and trace lines for it (replcheck/campaign.py)
    history = generate(SEED, 2, ("groupid",))
    a, b = judge.judge(systems.get("model:wl344"), history), judge.judge(systems.get("model:groupid"), history)
    assert (a.same_as, b.same_as) == ("", "model:wl344") and b.verdicts == a.verdicts
    c = judge.judge(systems.get("model:wl7318"), history)
    assert c.same_as == ""
