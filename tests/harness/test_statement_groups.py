"""A MyISAM-only transaction of several statements on a real MariaDB: each statement is binlogged
at its end as a GTID group of its own (the statement cache, sql/log.cc), and the harness names every
group by the row it holds, gives each its commit, and follows each statement's row to the replica.
The History is corpus/server/myisam-statements-are-groups-of-their-own."""
from __future__ import annotations

import pytest

from replcheck import io
from replcheck.features import load_features
from replcheck.harness import collect as CO
from replcheck.harness import runner as R
from replcheck.properties import core
from conftest import REPO
from test_harness_mariadb import require_server

HISTORY = REPO / "corpus" / "server" / "myisam-statements-are-groups-of-their-own.jsonl"


def test_a_statement_s_row_names_its_group():
    m = CO.OWN_TEXT.search("INSERT INTO rc.m (k, part, pad) VALUES (7, 2, '')")
    assert m and (m.group(1), m.group(2)) == ("7", "2")
    assert CO.OWN_TEXT.search("CREATE TABLE rc.d9 (i INT) ENGINE=InnoDB").group(3) == "9"


@pytest.fixture(scope="module")
def server():
    return require_server()


def test_each_myisam_statement_is_a_group_with_its_commit(server, short_tmp):
    load_features()
    header, obs = R.Runner(io.load_history(HISTORY), scale=1.0, tmpdir=short_tmp).run()
    groups = list(dict.fromkeys(o["gtid"] for o in obs if o["kind"] == "binlog" and o["node"] == "A" and o.get("trx") == "t1"))
    assert len(groups) == 3  # one per statement, every one named t1
    commits = [o for o in obs if o["kind"] == "commit" and o["trx"] == "t1"]
    assert sorted(c["gtid"] for c in commits) == sorted(groups)
    # the COMMIT's answer is the last group's; the statements' own groups did not wait (AFTER_COMMIT)
    assert {c["gtid"]: c["semisync"] for c in commits} == {groups[0]: "statement", groups[1]: "statement", groups[2]: "yes"}
    for node in ("A", "B"):
        assert [o["gtid"] for o in obs if o["kind"] == "visible" and o["node"] == node and o["trx"] == "t1"] == groups
    assert {o["node"]: o["counts"]["t1"] for o in obs if o["kind"] == "data"} == {"A": 1, "B": 1}
    verdicts = {v.requirement: v.status for v in core.run_properties(core.TraceView(header, obs))}
    assert verdicts["WL1720.LIVE.RELEASE"] == core.PASS and verdicts["WL1720.COUNT.TX"] == core.PASS
    assert verdicts["WL1720.ACK.LAST_EVENT"] != core.VIOLATED and verdicts["SBM.PENDING"] != core.VIOLATED
