"""A model's followed run (replcheck.spec.contract.Extensible) gives after every step the Trace its
run of the whole History gives, as a state machine grows it: ops added at the end and the end
moved later; a History that is not the last one grown (shrinking replays another, a step that
goes back in time) is run afresh, never judged on a stale run."""
from __future__ import annotations

import pytest

from replcheck import io, systems
from replcheck.generate import FAMILIES, generate
from replcheck.model.steps import TAIL_US


def _grown(history: dict, k: int) -> dict:
    """The History's first k ops, ending a tail after its last, as a machine's Builder writes it."""
    ops = history["ops"][:k]
    return {"header": {**history["header"], "end_us": (ops[-1]["at"] if ops else 0) + TAIL_US}, "ops": ops}


def _same(a, b) -> bool:
    return io.dumps_lines(*a) == io.dumps_lines(*b)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_followed_run_gives_the_whole_runs_trace_after_every_step(family):
    system = systems.get("model:mariadb-10.11")
    for index in range(3):
        history = generate(7, index, (family,))
        run = system.follow()
        for k in range(len(history["ops"]) + 1):
            grown = _grown(history, k)
            assert _same(run.trace(grown), system.run(grown)), f"{family} {index}: after {k} ops"


def test_a_history_that_is_not_the_last_one_grown_is_run_afresh():
    system = systems.get("mutant:origin-timestamp")
    history = generate(7, 1, ("delay",))
    n = len(history["ops"])
    run = system.follow()
    run.trace(_grown(history, n - 1))
    shorter = _grown(history, n // 2)  # fewer ops than the run holds
    assert _same(run.trace(shorter), system.run(shorter))
    other = {**shorter, "ops": [dict(op) for op in shorter["ops"]] + history["ops"][n // 2:]}  # equal ops, not the same
    assert _same(run.trace(other), system.run(other))
    back = {**other, "ops": other["ops"] + [{**other["ops"][0], "at": 0}]}  # an op before the last one run
    assert _same(run.trace(back), system.run(back))



def test_a_history_whose_end_moved_back_is_run_afresh():
    """A sample queued for the old end must not run past the new one."""
    system = systems.get("model:mariadb-10.11")
    for index in range(6):
        history = _grown(generate(7, index, ("semisync",)), 6)
        run = system.follow()
        run.trace(history)
        earlier = {"header": {**history["header"], "end_us": history["ops"][-1]["at"]}, "ops": history["ops"]}
        assert _same(run.trace(earlier), system.run(earlier)), index
