"""The generator drawing for a real server (generate(..., target=...)): only what it can run, the same
History from the same (seed, index, target) every time, and with no target the models' Histories."""
from __future__ import annotations

import pytest

from replcheck import targets
from replcheck.generate import FAMILIES, generate
from replcheck.io import dumps_history

TARGET = "server:mariadb-10.11"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_history_for_a_server_is_one_it_can_run(family):
    t = targets.get(TARGET)
    for i in range(12):
        h = generate(5, i, (family,), TARGET)
        assert t.refusal(h) is None, (family, i)
        assert h["header"]["name"] == f"gen-{family}-5-{i}-mariadb-10.11"
        assert dumps_history(h) == dumps_history(generate(5, i, (family,), TARGET))
        # a step undone for the target leaves the family's later steps drawing at the History's time
        # (a copy of the Builder in groupid's state drew on at an earlier one: ops on a crashed node)
        assert [o["at"] for o in h["ops"]] == sorted(o["at"] for o in h["ops"]), (family, i)


def test_without_a_target_some_histories_are_refused_that_the_target_redraws():
    t = targets.get(TARGET)
    refused = [i for i in range(40) if t.refusal(generate(5, i, ("semisync",))) is not None]
    assert refused  # the models' semisync Histories ask for wait_for_slave_count, which 10.11 lacks
    assert all(t.refusal(generate(5, i, ("semisync",), TARGET)) is None for i in refused)


def test_an_unknown_target_names_those_there_are():
    with pytest.raises(ValueError, match="no target 'server:mysql-8.0' \\(targets: server:mariadb-10.11\\)"):
        generate(0, 0, None, "server:mysql-8.0")


def test_a_restart_with_another_configuration_is_refused_and_redrawn():
    t = targets.get(TARGET)
    h = generate(0, 0, ("delay",), TARGET)
    assert t.refusal(h) is None
    h["ops"].append({"at": h["ops"][-1]["at"], "op": "restart", "node": "B", "variables": {"gtid_strict_mode": True}})
    assert "restart with another configuration" in t.refusal(h)
    drawn = [generate(0, i, ("incident",), TARGET) for i in range(60)]
    assert not any(o["op"] == "restart" and "variables" in o for h in drawn for o in h["ops"])
