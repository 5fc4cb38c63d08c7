"""The servers' clock difference (clock_diff_with_master): measured in whole seconds when the IO
thread connects and kept until the next connect (get_master_version_and_clock, MariaDB sql/slave.cc),
where the seed models compensate the exact difference. Measured on MariaDB 10.11: conformance
clock-reply-late (an answer held into the next second: estimate 1, the delay a second long) and
clock-offsets (fractional offsets and steps)."""
from __future__ import annotations

import pytest

from replcheck import systems
from replcheck.spec.formats import US

MDB, SEED = "model:mariadb-10.11", "model:wl344"


def trace(system: str, history: dict) -> list[dict]:
    return systems.get(system).run(history).observations


def applied(obs: list[dict], trx: str, node: str = "B") -> int:
    return next(o["t"] for o in obs if o["kind"] == "apply" and o["node"] == node and o.get("trx") == trx and o["type"] == "GTID_LOG_EVENT")


def two_nodes(offset_b_us: int = 0, ops: tuple = (), clock_reply: str = "") -> dict:
    channel = {"source": "A", "replica": "B", "delay": 3, **({"clock_reply": clock_reply} if clock_reply else {})}
    return {"header": {"schema": "replcheck.history/1", "name": "t", "topology": {
        "nodes": [{"id": "A"}, {"id": "B", "clock_offset_us": offset_b_us}], "channels": [channel]},
        "sample_every_us": 500_000, "end_us": 12_000_000},
        "ops": [{"at": 1_000_000, "op": "trx", "node": "A", "trx": "t1"}, *ops]}


def test_an_answer_held_into_the_next_second_makes_the_delay_a_second_long(kit):
    h = kit.history("clock-reply-late")
    mdb, seed = trace(MDB, h), trace(SEED, h)
    q = [o for o in mdb if o["kind"] == "clock_query"]
    assert q and q[0]["clock_diff_with_master"] == 1 and q[0]["held"] and q[0]["source"] == "A"
    assert not any(o["kind"] == "clock_query" for o in seed)  # the seed compensates exactly, asks nothing
    assert applied(seed, "t1") == 4 * US and applied(mdb, "t1") == 5 * US


@pytest.mark.parametrize("offset_us, diff", [(0, 0), (2 * US, 2), (-3 * US, -3), (800_000, 0), (-300_000, -1)])
def test_the_estimate_is_the_difference_of_the_two_clocks_seconds_at_the_connect(offset_us, diff):
    # the set-up connects at 0, on A's whole second: B 0.8 s ahead still reads that second, B 0.3 s behind the one before
    obs = trace(MDB, two_nodes(offset_us))
    assert [o["clock_diff_with_master"] for o in obs if o["kind"] == "clock_query"] == [diff]
    # t1 written at 1 s on A's clock is due at when + estimate + 3 on B's: true 4 s, less what the estimate is off
    assert applied(obs, "t1") == 4 * US + diff * US - offset_us
    assert applied(trace(SEED, two_nodes(offset_us)), "t1") == 4 * US


def test_a_clock_step_after_the_connect_keeps_the_old_estimate_until_the_next_connect():
    step = {"at": 500_000, "op": "clock_step", "node": "B", "delta_us": 2 * US}
    obs = trace(MDB, two_nodes(ops=(step,)))
    assert applied(obs, "t1") == 2 * US  # B's clock 2 s ahead, the estimate still 0: due 2 s early
    reconnect = ({"at": 600_000, "op": "stop_slave", "node": "B"}, {"at": 700_000, "op": "start_slave", "node": "B"})
    again = trace(MDB, two_nodes(ops=(step, *reconnect)))
    assert [o["clock_diff_with_master"] for o in again if o["kind"] == "clock_query"] == [0, 2]
    assert applied(again, "t1") == 4 * US


def test_seconds_behind_master_is_judged_less_the_measured_estimate(kit):
    # B waits for t1 with an estimate of 1: the lag it shows is a second less than the exact one,
    # which SBM.VALUE accepts as the server's arithmetic; a sample off by more is still caught
    tr = kit.run(MDB, "clock-reply-late")
    assert kit.verdict("SBM.VALUE", tr).status == "pass" and kit.verdict("SBM.VALUE", tr).checked
    s = tr.first("status", node="B", t=2_500_000)
    s["Seconds_Behind_Master"] += 2
    v = kit.verdict("SBM.VALUE", tr)
    assert v.status == "violated" and "by the clock difference its IO thread measured (1 s)" in v.witnesses[0].message, v


def test_a_clock_step_during_the_wait_moves_the_remaining_delay_shown_not_the_wake_up(kit):
    # B waits for t1 (due 4 s); its clock steps 1 s ahead at 2.2 s. A server shows its deadline less
    # time(0): a second less from then on, while the timed wait it began ends when it would have.
    step = {"at": 2_200_000, "op": "clock_step", "node": "B", "delta_us": US}
    h = two_nodes(ops=(step,))
    obs = trace(MDB, h)
    shown = {o["t"]: o["SQL_Remaining_Delay"] for o in obs if o["kind"] == "status" and o["node"] == "B"
             and o["SQL_Remaining_Delay"] is not None}
    assert (shown[2_000_000], shown[2_500_000], shown[3_000_000]) == (2, 1, 0)
    assert applied(obs, "t1") == 4 * US
    assert {(o["t"], o["SQL_Remaining_Delay"]) for o in trace(SEED, h) if o["kind"] == "status" and o["node"] == "B"} >= {(2_500_000, 2)}
    tr = kit.run(MDB, h)
    assert kit.verdict("SBM.DELAY", tr).status == "pass" and kit.verdict("SBM.DELAY", tr).checked


def test_the_delay_rule_is_judged_by_the_server_s_own_count_its_estimate_s_error_by_compensation_alone(kit):
    # clock-offsets on MariaDB's model: B's clock 1800.25 s ahead, estimate 1800 s, so t1 runs 0.25 s
    # early by true time. WL344.CLOCK.COMPENSATE shows that (declared: get_master_version_and_clock);
    # the other delay requirements judge the count the server made with its estimate, and still
    # catch a wait that does not follow it.
    tr = kit.run(MDB, "clock-offsets")
    got = {r: kit.verdict(r, tr) for r in ("WL344.CLOCK.COMPENSATE", "WL344.WAIT.RULE", "WL344.SSS.REMAINING", "SBM.DELAY")}
    assert got["WL344.CLOCK.COMPENSATE"].status == "violated"
    assert all(got[r].status == "pass" and got[r].checked for r in ("WL344.WAIT.RULE", "WL344.SSS.REMAINING", "SBM.DELAY")), got
    for q in tr.all("clock_query", node="B"):
        q["clock_diff_with_master"] += 2  # a count two seconds later than the one B made
    v = kit.verdict("WL344.WAIT.RULE", tr)
    assert v.status == "violated" and v.witnesses[0].message.startswith("B began"), v
