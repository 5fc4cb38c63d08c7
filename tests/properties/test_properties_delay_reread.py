"""WL344.STATE.WAITING and WL344.SSS.REMAINING after a rewinding stop: a parallel MariaDB replica
reads again the groups it executed and waits for each before it passes it over by GTID
(rpl_parallel::do_event: sql_delay_event before process_gtid_for_restart_pos). With nothing new to
execute, such a wait is not judged; without the rewind, the same wait is one for nothing."""
from __future__ import annotations

from test_model_parallel_restart import reread_history

from replcheck.properties.core import PASS, VIOLATED


def test_a_wait_while_reading_again_is_not_one_for_nothing(kit):
    tr = kit.run("model:mariadb-10.11", reread_history(kit))
    assert kit.verdict("WL344.STATE.WAITING", tr).status == PASS
    assert kit.verdict("WL344.SSS.REMAINING", tr).status == PASS
    # the stop's place edited to one it did not rewind from: the waits are for nothing
    stop = tr.first("sql_stop", node="B")
    tr.next_of("status", stop, node="B")["Relay_Log_Pos"] = 478
    assert kit.verdict("WL344.STATE.WAITING", tr).status == VIOLATED
