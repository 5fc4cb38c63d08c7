"""Flavour models (spec/systems.toml `seed`, model/mechanics.py): each starts from its seed model and
declares where its server departs from the seed. Every declaration a flavour adds shows on a History
where its seed model holds, and a `holds` withdrawal the other way round; MySQL 8.0's delay is
sql_delay_event's (rounded up, on the replica's clock); a flavour is a systems.toml entry, checked
as one."""
from __future__ import annotations

import pytest
from conftest import US

from replcheck import systems
from replcheck.io import InputError
from replcheck.model.mechanics import Mechanics
from replcheck.properties.core import PASS, VIOLATED
from replcheck.spec import ROOT as SPEC

MDB, MY80, MY57 = "model:mariadb-10.11", "model:mysql-8.0", "model:mysql-5.7"


@pytest.mark.parametrize("flavour,requirement,history", [
    (MDB, "WL3464.ROTATE", "inc-cache-overflow"),
    (MDB, "WL3464.R4.ONCE", "inc-skip-then-reconnect"),
    (MDB, "WL3464.R4", "inc-skip-after-rotation"),
    # the seed's mechanics never get this incident to the replica's reconnect (not exercised there)
    (MDB, "WL3464.REACH", ("inc-lost-on-gtid-reconnect", "inc-rpl-incident")),
    (MDB, "WL344.CM.INVALID", "d1-invalid-values"),
    (MDB, "WL1720.LIVE.RELEASE", "ss-lost-ack-reconnect"),
    (MY80, "WL7318.F2", "lag-stop-start-during-delay"),
    (MY80, "WL344.SSS.REMAINING", "d7-delay-change-relay-log-purged"),
    (MY80, "WL344.STATE.WAITING", "lag-stop-start-during-delay"),
    (MY80, "WL344.CLOCK.COMPENSATE", "d7-delay-change-relay-log-purged"),
    (MY80, "WL7318.F1", "clock-offsets"),
    (MY80, "WL7318.F5", "clock-offsets"),
    (MY80, "WL7318.NF1", "clock-offsets"),
])
def test_a_flavour_departs_from_its_seed_where_it_declares(kit, flavour, requirement, history):
    shown_on, held_on = history if isinstance(history, tuple) else (history, history)
    flavour_system = systems.get(flavour)
    seed = flavour_system.seed
    assert requirement in flavour_system.own_declarations(systems.get(seed))
    held = kit.verdict(requirement, kit.run(seed, held_on))
    assert held.status == PASS and held.checked > 0, held
    assert kit.verdict(requirement, kit.run(flavour, shown_on)).status == VIOLATED


@pytest.mark.parametrize("requirement", ["WL6355.FAILOVER.NO_LOSS", "WL6355.AFTER_SYNC.INVISIBLE"])
def test_a_flavour_default_makes_a_seed_declaration_hold_where_the_history_keeps_it(kit, requirement):
    # MySQL 5.7 waits AFTER_SYNC by default: what WL#1720's AFTER_COMMIT (model:wl344) violates holds.
    # The declaration stays inherited: a History may set AFTER_COMMIT, which 5.7 still offers.
    assert requirement in systems.get(MY57).declares.expected_violations
    assert kit.verdict(requirement, kit.run("model:wl344", "ss-phantom-failover")).status == VIOLATED
    held = kit.verdict(requirement, kit.run(MY57, "ss-phantom-failover"))
    assert held.status == PASS and held.checked > 0, held


def _applied_at(kit, system: str, offset_us: int = 0) -> int:
    """When B began t1, committed on A at 1.4 s, with MASTER_DELAY = 5 and B's clock `offset_us` ahead."""
    h = kit.make_history(["A", {"id": "B", "clock_offset_us": offset_us}], [("A", "B", 5)],
                         [{"at": 1_400_000, "op": "trx", "node": "A", "trx": "t1"}], end_us=12 * US)
    tr = kit.run(system, h)
    return tr.first("apply", node="B", trx="t1", idx=0)["begin"]


def test_mysql_80_delays_from_the_next_whole_second_of_the_commit(kit):
    # the seed: immediate_commit_timestamp / 1000000 = 1 s, due at 6 s; MySQL 8.0's sql_delay_event:
    # ceil(1.4) = 2 s, due at 7 s
    assert _applied_at(kit, "model:wl7318") == 6 * US
    assert _applied_at(kit, MY80) == 7 * US


def test_mysql_80_counts_the_delay_on_the_replicas_clock(kit):
    # B's clock 2 s ahead: the seed model compensates the difference (due at 6 s true time); MySQL 8.0
    # compares with its own time(nullptr), no clock_diff_with_master: due when B's clock reads 7 s
    assert _applied_at(kit, "model:wl7318", 2 * US) == 6 * US
    assert _applied_at(kit, MY80, 2 * US) == 5 * US


@pytest.mark.parametrize("system,warned", [(MY80, True), ("model:mysql-5.7", False), (MDB, False)])
def test_mysql_80_warns_that_the_slave_spelling_is_deprecated(kit, system, warned):
    # 8.0.22+ rpl_delayed_slave.result: RESET SLAVE, then "Warning 1287 'RESET SLAVE' is deprecated
    # ..."; the first warning a client reads, before any the statement's run adds (STOP SLAVE of a
    # stopped slave); an error is still the answer.
    h = kit.make_history(["A", "B"], [("A", "B", 0)], [
        {"at": 1 * US, "op": "stop_slave", "node": "B"}, {"at": 1 * US, "op": "expect", "node": "B", "show": "result", "result": {}},
        {"at": 2 * US, "op": "stop_slave", "node": "B"}, {"at": 2 * US, "op": "expect", "node": "B", "show": "result", "result": {}},
        {"at": 3 * US, "op": "reset_slave", "node": "B"}, {"at": 3 * US, "op": "expect", "node": "B", "show": "result", "result": {}},
        {"at": 4 * US, "op": "start_slave", "node": "B"}, {"at": 5 * US, "op": "reset_slave", "node": "B"},
        {"at": 5 * US, "op": "expect", "node": "B", "show": "result", "result": {}}], end_us=6 * US)
    shown = [o["value"] for o in kit.run(system, h).all("observed", node="B")]
    assert [s["warning"] for s in shown[:3]] == ([1287] * 3 if warned else [None, 1255, None])
    assert shown[2]["message"] == ("'RESET SLAVE' is deprecated and will be removed in a future release. Please use RESET REPLICA "
                                   "instead" if warned else "")
    assert (shown[3]["errno"], shown[3]["warning"]) == (1198, None)


@pytest.mark.parametrize("system,warned", [(MY80, True), ("model:mysql-5.7", False), (MDB, False)])
def test_mysql_80_warns_that_change_master_and_show_slave_status_are_deprecated(kit, system, warned):
    # 8.0.22+ sql_yacc.yy: push_deprecated_warn(YYTHD, "SHOW SLAVE STATUS", "SHOW REPLICA STATUS") in
    # show_replica_status_stmt, and "CHANGE MASTER", "CHANGE REPLICATION SOURCE" as CHANGE MASTER parses
    h = kit.make_history(["A", "B"], [("A", "B", 0)], [
        {"at": 1 * US, "op": "stop_slave", "node": "B"}, {"at": 2 * US, "op": "change_master", "node": "B", "delay": 3},
        {"at": 2 * US, "op": "expect", "node": "B", "show": "result", "result": {}},
        {"at": 3 * US, "op": "show_slave_status", "node": "B"},
        {"at": 3 * US, "op": "expect", "node": "B", "show": "result", "result": {}}], end_us=4 * US)
    shown = [o["value"] for o in kit.run(system, h).all("observed", node="B")]
    assert [s["warning"] for s in shown] == ([1287, 1287] if warned else [None, None])
    if warned:
        assert [s["message"].split(" is deprecated")[0] for s in shown] == ["'CHANGE MASTER'", "'SHOW SLAVE STATUS'"]


def test_mariadb_1011_does_not_warn_for_master_use_gtid_current_pos(kit):
    # Later releases deprecate it with warning 1681 (rpl_gtid_excess_initial_delay.result); MariaDB
    # 10.11.19 gives none (measured: CHANGE MASTER TO ..., MASTER_USE_GTID=current_pos, then
    # @@warning_count is 0), so the suite scenarios expecting it are marked as differing.
    h = kit.make_history(["A", "B"], [("A", "B", 0)], [{"at": 1 * US, "op": "stop_slave", "node": "B"},
                                                      {"at": 2 * US, "op": "change_master", "node": "B", "master_use_gtid": "current_pos"}],
                         end_us=3 * US)
    stmt = kit.run(MDB, h).first("stmt", node="B", op="change_master")
    assert (stmt["errno"], stmt["warning"], stmt["message"]) == (None, None, "")


def test_a_flavour_inherits_its_seed_and_sets_its_servers_mechanics():
    mdb, seed = systems.get(MDB), systems.get("model:wl344")
    assert (mdb.seed, mdb.config.rule, mdb.config.defaults) == ("model:wl344", seed.config.rule, seed.config.defaults)
    assert seed.config.mechanics == Mechanics()  # the seed models' neutral choice
    assert not mdb.config.mechanics.incident_rotates and mdb.config.mechanics.gtid_connect == "every"
    # the seed's own declarations are inherited; where the server departs is the flavour's own
    assert set(seed.declares.expected_violations) <= set(mdb.declares.expected_violations)
    assert "WL344.CHAIN.IMMEDIATE" not in mdb.own_declarations(seed)


SEED = '[[system]]\nname = "model:s"\nrule = "wl344"\n[system.expected_violations]\n"WL344.R1" = "the seed says so"\n'


def test_a_new_flavour_is_a_systems_toml_entry():
    text = SPEC.joinpath("systems.toml").read_text() + SEED + ('[[system]]\nname = "model:x-1.0"\nseed = "model:s"\n[system.mechanics]\ntexts = "mariadb"\n'
                   '[system.defaults]\nrpl_semi_sync_master_wait_point = "AFTER_SYNC"\n[system.holds]\n"WL344.R1" = "not here"\n')
    x = systems.load(text)["model:x-1.0"]
    assert x.config.mechanics == Mechanics(texts="mariadb") and x.config.rule == "wl344"
    assert x.config.defaults == {"rpl_semi_sync_master_wait_point": "AFTER_SYNC"} and not x.declares.expected_violations


@pytest.mark.parametrize("entry,line,field,problem", [
    ('seed = "model:nope"\n', 8, "system[1].seed", "not a seed model declared above"),
    ('seed = "model:s"\nrule = "wl7318"\n', 7, "system[1].rule", "takes its seed model's rule"),
    ('seed = "model:s"\n[system.mechanics]\ncolour = true\n', 10, "system[1].mechanics.colour", "unknown mechanic 'colour'"),
    ('seed = "model:s"\n[system.mechanics]\nincident_rotates = "no"\n', 10, "system[1].mechanics.incident_rotates",
     "'no' is not one of True, False"),
    ('seed = "model:s"\n[system.holds]\n"WL344.R2" = "x"\n', 10, "system[1].holds", "not declared violated by its seed"),
    ('rule = "wl344"\n[system.holds]\n"WL344.R1" = "x"\n', None, "system[1].holds", "only a flavour model"),
])
def test_a_bad_flavour_entry_is_one_clear_error(entry, line, field, problem):
    with pytest.raises(InputError) as e:
        systems.load(SEED + f'[[system]]\nname = "model:x"\n{entry}')
    assert (e.value.field, problem in str(e.value)) == (field, True), str(e.value)
    if line:
        assert e.value.line == line, str(e.value)
