"""WL344.STATE.WAITING and WL344.SSS.REMAINING after a rewinding stop with groups still to execute:
the thread reads again the groups before them and waits for each not yet due (rpl_parallel::do_event:
sql_delay_event before process_gtid_for_restart_pos), here t1, written with a timestamp 50 s ahead."""
from __future__ import annotations

from conftest import REPO

from replcheck.io import load_history
from replcheck.properties.core import PASS, VIOLATED

HISTORY = REPO / "corpus" / "finding-reread-wait-future-timestamp.jsonl"


def test_a_wait_for_a_group_read_again_before_a_pending_one_is_not_judged(kit):
    tr = kit.run("model:mariadb-10.11", load_history(HISTORY))
    assert kit.verdict("WL344.STATE.WAITING", tr).status == PASS
    assert kit.verdict("WL344.SSS.REMAINING", tr).status == PASS


def test_a_wait_for_a_group_read_again_once_it_is_due_is_one_for_nothing(kit):
    tr = kit.run("model:mariadb-10.11", load_history(HISTORY))
    # t1's timestamp edited to its commit's second: read again, it is long due, and the waits are for nothing
    for o in tr.obs:
        if o["kind"] == "relay" and o.get("trx") == "t1":
            o["when"] = 1700000000
    assert kit.verdict("WL344.STATE.WAITING", tr).status == VIOLATED
