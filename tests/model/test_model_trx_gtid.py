"""A transaction's own GTID parts in the model: SET SESSION gtid_seq_no / server_id before it
(MariaDB sql/log.cc MYSQL_BIN_LOG::write_gtid_event takes the session's gtid_domain_id, server_id and
gtid_seq_no; rpl_gtid.cc rpl_binlog_state::update_nolock keeps the domain's counter at the highest
seq_no, and check_strict_sequence refuses one not above the domain's last under gtid_strict_mode)."""
from __future__ import annotations

import pytest

MARIADB = "model:mariadb-10.11"


def _run(kit, strict: bool):
    ops = [{"at": 500_000, "op": "set_global", "node": "M", "variable": "gtid_strict_mode", "value": int(strict)},
           {"at": 1_000_000, "op": "trx", "node": "M", "trx": "own", "gtid_seq_no": 10, "server_id": 5},
           {"at": 2_000_000, "op": "trx", "node": "M", "trx": "next"},
           {"at": 3_000_000, "op": "trx", "node": "M", "trx": "back", "gtid_seq_no": 3},
           {"at": 4_000_000, "op": "trx", "node": "M", "trx": "after"}]
    h = kit.make_history([{"id": "M", "server_id": 1}, {"id": "R", "server_id": 2}], [("M", "R", 0)], ops,
                         end_us=6_000_000)
    return kit.run(MARIADB, h)


@pytest.mark.parametrize("strict", [False, True])
def test_a_transactions_own_seq_no_and_server_id_number_its_gtid(kit, strict):
    tr = _run(kit, strict)
    commits = {c["trx"]: c for c in tr.all("commit", node="M")}
    # its own seq_no and server_id; the next one numbers on from it, with the server's server_id
    assert commits["own"]["gtid"] == "0-5-10" and commits["next"]["gtid"] == "0-1-11"
    if strict:  # going back in the domain is refused, and numbers nothing
        assert commits["back"]["gtid"] is None and commits["back"]["errno"] == 1950
        assert commits["after"]["gtid"] == "0-1-12"
    else:  # taken as given; the counter stays at the highest
        assert commits["back"]["gtid"] == "0-1-3" and commits["after"]["gtid"] == "0-1-12"
    applied = [v["trx"] for v in tr.all("visible", node="R")]
    assert applied == ["own", "next", "after"] if strict else ["own", "next", "back", "after"]
    events = [r for r in tr.all("relay", node="R") if r.get("gtid") == "0-5-10"]
    assert events and {r["server_id"] for r in events} == {5}  # its events carry the session's server_id


@pytest.mark.parametrize("system", ["model:mysql-8.0", "model:mysql-5.7", "model:google-5.0"])
@pytest.mark.parametrize("field, errno, message", [
    ("domain", 1193, "Unknown system variable 'gtid_domain_id'"),
    ("gtid_seq_no", 1193, "Unknown system variable 'gtid_seq_no'"),
    ("server_id", 1229, "Variable 'server_id' is a GLOBAL variable and should be set with SET GLOBAL")])
def test_mysql_refuses_the_mariadb_session_variables(kit, system, field, errno, message):
    """MySQL has no gtid_domain_id or gtid_seq_no (ER_UNKNOWN_SYSTEM_VARIABLE) and server_id is global
    only (sys_vars.cc Sys_server_id, ER_GLOBAL_VARIABLE): the SET SESSION fails, the transaction never runs."""
    ops = [{"at": 1_000_000, "op": "trx", "node": "M", "trx": "own", field: 5},
           {"at": 2_000_000, "op": "trx", "node": "M", "trx": "next"}]
    h = kit.make_history([{"id": "M", "server_id": 1}, {"id": "R", "server_id": 2}], [("M", "R", 0)], ops,
                         end_us=4_000_000)
    tr = kit.run(system, h)
    commits = {c["trx"]: c for c in tr.all("commit", node="M")}
    assert commits["own"]["gtid"] is None and (commits["own"]["errno"], commits["own"]["message"]) == (errno, message)
    assert commits["next"]["gtid"] is not None and not commits["next"].get("errno")
    assert [v["trx"] for v in tr.all("visible", node="R")] == ["next"]
