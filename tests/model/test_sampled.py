"""A run may take only some kinds of status sample (kernel `simulate(sampled=)`): a sample changes
nothing in the run, so such a run's Trace is the full run's without the other samples; and the
generator's runs, which take only what its steps read (steps.STEPS_READ), draw the same Histories
as runs taking every sample."""
from __future__ import annotations

import pytest

from replcheck import io, systems
from replcheck.generate import FAMILIES, generate
from replcheck.model import steps
from replcheck.model.sim import kernel

SYSTEMS = ("model:wl344", "model:wl7318", "model:mariadb-10.11", "mutant:rotate-mid-group")


@pytest.mark.parametrize("family", FAMILIES)
def test_a_run_taking_fewer_samples_is_the_full_run_without_the_others(family):
    for i in range(3):
        history = generate(11, i, (family,))
        for name in SYSTEMS:
            config = systems.get(name).config
            header, full = kernel.Simulator(history, config, name).run()
            for sampled in (frozenset(), frozenset({"master_status"}), frozenset({"status", "server_status"})):
                dropped = kernel.SAMPLED - sampled
                got_header, got = kernel.Simulator(history, config, name, sampled).run()
                assert got_header == header
                assert [o for o in got if o["kind"] not in dropped] == [o for o in full if o["kind"] not in dropped]
                # what it lacks is samples only (a statement's SHOW SLAVE STATUS stays, as the last sample's kinds taken)
                rest = iter(full)
                assert all(any(o == f for f in rest) for o in got), "not the full run's observations in its order"


def test_the_generators_runs_take_only_the_samples_its_steps_read(monkeypatch):
    drawn = [io.dumps_history(generate(3, i, (family,))) for family in FAMILIES for i in range(6)]
    monkeypatch.setattr(steps, "STEPS_READ", kernel.SAMPLED)
    assert drawn == [io.dumps_history(generate(3, i, (family,))) for family in FAMILIES for i in range(6)]
