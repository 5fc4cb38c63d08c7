"""An incident in a relay log thrown away before the SQL thread got to it is never reached
(WL3464.R3.1): what the replica applies from the relay log fetched again says nothing of it."""
from __future__ import annotations

from conftest import REPO, assert_witness

from replcheck import io
from replcheck.properties.core import PASS


def test_an_incident_left_behind_by_a_change_master_is_never_reached(kit):
    # A, restored as B's replica, relays B's two incidents and stops at the first; STOP SLAVE,
    # CHANGE MASTER TO CONNECT_USING_GROUP_ID, START SLAVE purge its relay logs, and A stops at the
    # first again, copied into a new relay log. The second one of the old relay log was never read
    # (corpus/finding-incident-left-behind-by-a-change-master: seed 100018's History 12).
    tr = kit.run("model:wl7318", io.load_history(REPO / "corpus" / "finding-incident-left-behind-by-a-change-master.jsonl"))
    stop = tr.first("sql_stop", node="A", errno=1590)
    left = [r for r in tr.all("relay", node="A", type="INCIDENT_EVENT", file=stop["relay_file"]) if r["pos"] != stop["relay_pos"]]
    assert len(left) == 1 and [s["relay_file"] for s in tr.all("sql_stop", node="A", errno=1590)] == ["relay.000002", "relay.000003"]
    assert kit.verdict("WL3464.R3.1", tr).status == PASS
    # had the relay log been kept, the events A applied after the CHANGE MASTER came past that
    # incident: A should have stopped at it
    tr.drop(tr.first("stmt", node="A", op="change_master"))
    assert_witness(kit.verdict("WL3464.R3.1", tr), tr, left[0], "A did not stop at incident 1 ('error writing to the binary log')")
