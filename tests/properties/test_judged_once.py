"""A History's systems that write the same run share it: two model systems of one Config
(model:groupid and model:wl344) are run and judged once, in a campaign (replcheck/campaign.py) and
in verify (replcheck/verify.py Judged), the second being the first's Judgement renamed
(properties/judge.py Judgement.of). Sharing may not change a row; verify's noting of the mutants
a run asks about still sees every run."""
from __future__ import annotations

import pytest

from replcheck import campaign, systems, verify
from replcheck.generate import FAMILIES, generate
from replcheck.properties import judge

SEED = 11
SYSTEMS = ("model:wl344", "model:wl7318", "model:groupid", "mutant:stop-event")


def _rows(index: int, family: str) -> list[tuple]:
    return campaign.run_history(SEED, index, SYSTEMS, 0, (family,))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_history_gives_the_same_rows_with_runs_shared(family, monkeypatch):
    shared = [_rows(i, family) for i in range(3)]
    monkeypatch.setattr(systems, "same_runs", lambda a, b: False)  # every system runs and is judged
    assert [_rows(i, family) for i in range(3)] == shared


def test_only_models_of_one_config_share_a_run():
    wl344, groupid, wl7318 = (systems.get(n) for n in ("model:wl344", "model:groupid", "model:wl7318"))
    assert systems.same_runs(wl344, groupid) and not systems.same_runs(wl344, wl7318)
    assert not systems.same_runs(wl344, systems.get("mutant:stop-event"))


def test_a_shared_run_is_named_for_the_system_it_is_given_to():
    history = generate(SEED, 2, ("groupid",))
    a = judge.judge(systems.get("model:wl344"), history)
    b = a.of(systems.get("model:groupid"))
    assert (b.system, b.trace.header["system"], b.same_as) == ("model:groupid", "model:groupid", "model:wl344")
    assert b.trace.observations == systems.get("model:groupid").run(history).observations
    assert b.verdicts == judge.judge(systems.get("model:groupid"), history).verdicts
    assert b.declares == systems.get("model:groupid").declares and a.trace.header["system"] == "model:wl344"


def test_verify_judges_a_model_of_a_judged_config_as_that_run():
    judged = verify.Judged(generate(SEED, 3, ("delay",)))
    a, b = judged["model:wl344"], judged["model:groupid"]
    assert b.same_as == "model:wl344" and b.verdicts == a.verdicts and judged.asked["model:groupid"] == judged.asked["model:wl344"]
    assert judged["model:wl7318"].same_as == ""


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
