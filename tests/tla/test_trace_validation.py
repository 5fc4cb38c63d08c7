"""Trace validation (replcheck.tla): the Python model's Traces are behaviours of the TLA+ specs,
and a mutant's is not, with the first step the spec rejects named."""
from __future__ import annotations

import os
import shutil

import pytest

from replcheck import generate, io, systems
from replcheck.tla import OutOfScope, delay, incident, semisync, validate, value
from replcheck.verify import embedded_histories

pytestmark = [pytest.mark.tlc, pytest.mark.skipif(not (shutil.which("java") or os.environ.get("JAVA_HOME")),
                                                  reason="TLC needs Java (ci/setup installs it)")]
HISTORIES = {p.stem: p for p in embedded_histories()}
# In the fast tier, the Histories each feature is about; all of them in the slow one.
FAST = [(semisync, "model:wl7318", h) for h in ("ss-shutdown", "ss-counters", "ss-switch-back-n", "ss-phantom-failover")] + \
       [(semisync, "model:after-commit", "ss-after-sync-visibility")] + \
       [(delay, s, h) for s in ("model:wl344", "model:wl7318") for h in ("d1-stop-start-dml", "chain-hop-lag")] + \
       [(incident, "model:wl7318", h) for h in ("inc-gaps", "inc-cache-overflow", "inc-rpl-incident")]
ALL = [(f, s, h) for f in (semisync, delay, incident) for s in ("model:wl344", "model:wl7318", "model:after-commit")
       for h in HISTORIES if (f, s, h) not in FAST]


def _validate(feature, system: str, history):
    h = history if isinstance(history, dict) else io.load_history(HISTORIES[history])
    try:
        a = feature.abstract(systems.get(system).run(h), h)
    except OutOfScope:
        return None
    return validate(a)


@pytest.mark.parametrize("feature,system,history", FAST, ids=lambda x: getattr(x, "SPEC", x))
def test_model_trace_is_a_behaviour_of_the_spec(feature, system, history):
    v = _validate(feature, system, history)
    assert v.ok and v.steps > 3, v.describe()


@pytest.mark.slow
@pytest.mark.parametrize("feature,system,history", ALL, ids=lambda x: getattr(x, "SPEC", x))
def test_every_embedded_history_in_scope_is_accepted(feature, system, history):
    v = _validate(feature, system, history)
    assert v is None or v.ok, v.describe()


@pytest.mark.slow
@pytest.mark.parametrize("family", ["semisync", "delay"])
def test_generated_histories_in_scope_are_accepted(family):
    feature = {"semisync": semisync, "delay": delay}[family]
    for index in range(6):
        h = generate.generate(0, index, (family,))
        for system in ("model:wl344", "model:wl7318"):
            v = _validate(feature, system, h)
            assert v is None or v.ok, f"generated History {index} on {system}: {v.describe()}"


def test_shutdown_acking_waiters_is_rejected_at_the_release():
    v = _validate(semisync, "mutant:shutdown-acks-waiters", "ss-shutdown")
    assert not v.ok and v.rejected.action == "Release" and v.rejected.args == {"t": 2, "outcome": "ok"}
    assert v.accepted == 6 and f"step 7 rejected: Release at trace line {v.rejected.line}" in v.describe()


def test_stop_applying_the_waited_event_is_rejected_at_the_apply():
    v = _validate(delay, "mutant:stop-applies-waited-event", "d1-stop-start-dml")
    assert not v.ok and v.rejected.action == "Apply" and v.rejected.args == {"n": 2, "t": 1}
    assert "B began executing t7 at 11000000" in v.rejected.what and v.accepted == 13


def test_incident_mutants_are_rejected_naming_the_step():
    ignored = _validate(incident, "mutant:incident-ignored", "inc-rpl-incident")
    assert not ignored.ok and ignored.rejected.action == "Apply" and "B applied replace4" in ignored.rejected.what
    unmarked = _validate(incident, "mutant:no-incident", "inc-gaps")  # the lost changes are visible on A, unbinlogged
    assert not unmarked.ok and unmarked.rejected.action == "Binlog" and "t2 binlogged on A" in unmarked.rejected.what
    h = io.load_history(HISTORIES["inc-cache-overflow"])
    a = incident.abstract(systems.get("mutant:incident-on-rollback").run(h), h)
    false = validate(a)
    assert [s.action for s in a.steps[:false.accepted]] == ["Binlog", "Apply", "RollBack"]
    assert false.rejected.action == "WriteIncident"  # no change was lost: nothing to mark


def test_a_topology_outside_the_spec_is_out_of_scope():
    h = io.load_history(HISTORIES["fan-out"])
    with pytest.raises(OutOfScope):
        delay.abstract(systems.get("model:wl344").run(h), h)


def test_tla_values():
    assert value({"a": "Ack", "r": "B", "upto": 2, "e": {1, 3}, "s": (True, "x\"y")}) == \
        '[a |-> "Ack", r |-> "B", upto |-> 2, e |-> {1, 3}, s |-> <<TRUE, "x\\"y">>]'
