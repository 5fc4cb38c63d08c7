"""CHANGE MASTER TO DO_DOMAIN_IDS / IGNORE_DOMAIN_IDS in the model (model/sim/domainfilter.py;
MariaDB rpl_mi.cc Domain_id_filter, slave.cc queue_event; rpl_domain_id_filter.result) and the
properties' view of what they keep out."""
from __future__ import annotations

import pytest

from conftest import Trace
from replcheck.properties.core import VIOLATED

MARIADB = "model:mariadb-10.11"
NODES = [{"id": "M", "server_id": 1}, {"id": "R", "server_id": 2}]
E1201 = "Could not initialize master info structure for ''; more error messages can be found in the MariaDB error log"


def _run(kit, lists: dict, system: str = MARIADB):
    h = kit.make_history(NODES, [("M", "R", 0)], [
        {"at": 100_000, "op": "stop_slave", "node": "R"},
        {"at": 200_000, "op": "change_master", "node": "R", **lists},
        {"at": 300_000, "op": "start_slave", "node": "R"},
        {"at": 1_000_000, "op": "trx", "node": "M", "trx": "a", "domain": 1},
        {"at": 1_100_000, "op": "trx", "node": "M", "trx": "b", "domain": 2},
        {"at": 2_000_000, "op": "stop_slave", "node": "R"}, {"at": 2_100_000, "op": "start_slave", "node": "R"}],
        end_us=3_000_000)
    return kit.run(system, h)


@pytest.mark.parametrize("lists, arrived", [
    ({"ignore_domain_ids": [2]}, ["a"]), ({"do_domain_ids": [2]}, ["b"]), ({"do_domain_ids": []}, ["a", "b"])])
def test_the_io_thread_drops_the_groups_of_filtered_domains_and_records_their_gtids(kit, lists, arrived):
    tr = _run(kit, lists)
    # a START SLAVE after the drop does not ask for the dropped group again: its GTID was recorded
    assert [v["trx"] for v in tr.all("visible", node="R")] == arrived
    assert {o["trx"] for o in tr.all("filtered", node="R")} == {"a", "b"} - set(arrived)


@pytest.mark.parametrize("lists", [{"do_domain_ids": [1], "ignore_domain_ids": [2]},
                                   {"ignore_domain_ids": [1], "master_use_gtid": "no"}])
def test_both_lists_or_a_list_without_gtid_fail_with_1201_and_change_nothing(kit, lists):
    tr = _run(kit, lists)
    [cm] = tr.all("stmt", node="R", op="change_master")
    assert (cm["errno"], cm["message"]) == (1201, E1201)
    assert [v["trx"] for v in tr.all("visible", node="R")] == ["a", "b"]


def test_mysql_has_no_domain_lists(kit):
    [cm] = _run(kit, {"ignore_domain_ids": [2]}, "model:mysql-5.7").all("stmt", node="R", op="change_master")
    assert cm["errno"] == 1064


def test_a_dropped_domain_is_no_loss_only_while_its_list_says_so(kit):
    # the properties take the group as kept out by the node's lists; without the CHANGE MASTER that
    # set them, the group the slave lacks is a loss
    tr = _run(kit, {"ignore_domain_ids": [2]})
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status != VIOLATED
    without = Trace(tr.header, [o for o in tr.obs if not (o["kind"] == "stmt" and o.get("op") == "change_master")])
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", without).status == VIOLATED


def test_gtid_slave_pos_may_name_a_dropped_domain_where_the_trace_cannot_see_drops(kit):
    # a real server's trace shows no "filtered": gtid_slave_pos naming the dropped group of domain 2
    # (measured on 10.11.19: 0-1-3,2-1-3 in mdb-rpl_gtid_mdev9033) is what the lists explain; a
    # GTID they do not explain is not
    tr = _run(kit, {"ignore_domain_ids": [2]})
    blind = Trace({**tr.header, "unobserved": sorted({*tr.header.get("unobserved", ()), "filtered"})},
                  [o for o in tr.obs if o["kind"] != "filtered"])
    shown = [o for o in blind.obs if o["kind"] == "server_status" and o["node"] == "R"
             and o["variables"].get("gtid_slave_pos") == "1-1-1,2-1-1"]
    assert shown and kit.verdict("MARIADB.GTID.SLAVE_POS", blind).status != VIOLATED
    for o in shown:
        o["variables"]["gtid_slave_pos"] = "1-1-1,2-1-9"
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", blind).status == VIOLATED


def test_a_group_arriving_after_a_dropped_one_of_its_domain_is_no_loss(kit):
    # DOMAIN.CONNECT.NO_LOSS on a trace that cannot see the drops (a real server's): 2-1-2 arrives
    # after the lists stopped dropping domain 2, 2-1-1 never does; the lists explain it
    h = kit.make_history(NODES, [("M", "R", 0)], [
        {"at": 100_000, "op": "stop_slave", "node": "R"},
        {"at": 200_000, "op": "change_master", "node": "R", "ignore_domain_ids": [2]},
        {"at": 300_000, "op": "start_slave", "node": "R"},
        {"at": 1_000_000, "op": "trx", "node": "M", "trx": "b", "domain": 2},
        {"at": 2_000_000, "op": "stop_slave", "node": "R"},
        {"at": 2_100_000, "op": "change_master", "node": "R", "ignore_domain_ids": []},
        {"at": 2_200_000, "op": "start_slave", "node": "R"},
        {"at": 3_000_000, "op": "trx", "node": "M", "trx": "c", "domain": 2}], end_us=4_000_000)
    tr = kit.run(MARIADB, h)
    assert [v["trx"] for v in tr.all("visible", node="R")] == ["c"]
    blind = Trace(tr.header, [o for o in tr.obs if o["kind"] != "filtered"])
    assert kit.verdict("DOMAIN.CONNECT.NO_LOSS", blind).status != VIOLATED
    unexplained = Trace(tr.header, [o for o in blind.obs if not (o["kind"] == "stmt" and o.get("op") == "change_master")])
    assert kit.verdict("DOMAIN.CONNECT.NO_LOSS", unexplained).status == VIOLATED
