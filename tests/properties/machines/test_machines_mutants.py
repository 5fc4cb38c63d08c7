"""A mutant's search picks its machines by where its seam is, not by what it is labelled with
(replcheck.search.machines_for): the same machines for a mutant stripped of its kills and bug, and
its own family's machine first where the seam is its family's alone. That every registry mutant
is found by verify's own search, and how short it shrinks, the gate test on the default verify
asserts (tests/engine/test_report.py): the searches run once."""
from __future__ import annotations

from dataclasses import replace

import pytest

from replcheck import search
from replcheck.model.mutants import REGISTRY
from replcheck.spec.contract import Declarations
from replcheck.systems import get

pytestmark = pytest.mark.slow  # the seam probes of every mutant


@pytest.mark.parametrize("mutant", sorted(REGISTRY))
def test_a_mutants_machines_do_not_depend_on_its_labels(mutant):
    system = get(f"mutant:{mutant}")
    unlabelled = replace(system, name=f"{system.name}-unlabelled",
                         declares=Declarations(system.declares.expected_violations, base=system.declares.base))
    chosen = [m.name for m in search.machines_for(system)]
    assert chosen and chosen == [m.name for m in search.machines_for(unlabelled)]


@pytest.mark.parametrize("mutant,machine", [("stop-event", "GroupIdMachine"), ("commit-order-lost", "ParallelMachine"),
                                            ("no-reack-on-reconnect", "SemiSyncMachine"), ("no-incident", "IncidentMachine"),
                                            ("min-ack-last-slot", "SemiSyncMachine"),
                                            # no family's Trace differs in 40 probes; the groupid family's does in 160
                                            ("send-before-sync", "GroupIdMachine")])
def test_the_family_that_reaches_the_seam_searches_first(mutant, machine):
    assert search.machines_for(get(f"mutant:{mutant}"))[0].name == machine
