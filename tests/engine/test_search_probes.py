"""A mutant's probe runs (replcheck.search.seam_reached): where its base model's run of a probe never
asked about the mutant's seam, the mutant observes what the base does and is not run; where it
asked, the mutant runs. Either way the digest is the one of the mutant's own run."""
from __future__ import annotations

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
