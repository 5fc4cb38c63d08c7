"""The semi-sync proofs reach their expected outcomes, and every counterexample they report is
re-checked in plain Python: the Bug #109829 ack sequence through a buggy and a correct ack table,
the MDEV-37116 switch-on through both rules, and the AFTER_COMMIT step through a plain-Python
twin of the WL#6355 transition system (reachable, invariant before, broken after)."""
from __future__ import annotations

import itertools
import json
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import replcheck.properties.proofs.semisync as semisync
from replcheck.properties.core import PROOFS, PROVED

from conftest import proved

NAMES = {
    "ack_counting_releases_exactly_at_n_distinct": ("WL7169.N_DISTINCT",),
    "switch_back_needs_n_distinct": ("WL7169.SWITCH_BACK_N",),
    "after_sync_invisible_inductive": ("WL6355.AFTER_SYNC.INVISIBLE", "WL6355.FAILOVER.NO_LOSS"),
}


def proof(name):
    [p] = [p for p in PROOFS if p.name == name and p.fn.__module__ == semisync.__name__]
    return p


def run(name):
    return proved(proof(name))  # once per worker process, verify's runs in the suite included


# The ack-counting proof takes z3 10-25 s: it belongs to the slow tier, with the tests reading it.
SLOW = {"ack_counting_releases_exactly_at_n_distinct"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(NAMES)])
def test_outcome_as_expected(name):
    result = run(name)
    assert result.requirements == NAMES[name]
    assert result.expected == PROVED
    assert result.outcome == result.expected, result.detail
    assert json.loads(json.dumps(result.detail)) == result.detail
    assert "mutant_counterexample" in result.detail or "after_commit_counterexample" in result.detail
    assert proof(name).run().detail == result.detail  # deterministic: run again


# ---- WL#7169: the ack table ---------------------------------------------------------------------

def ack_table(acks, n, buggy=False):
    """Released position after each ack: N-1 slots [server, pos]; stale acks ignored; when full,
    release the victim and evict every slot at it (correct: the minimum of the slots and the new
    ack; Bug #109829: the last slot below the new ack)."""
    slots, released, out = [None] * (n - 1), 0, []
    for a, p in acks:
        mine = [s for s in slots if s is not None and s[0] == a]
        if p <= released:
            pass
        elif mine:
            mine[0][1] = max(mine[0][1], p)
        elif None in slots:
            slots[slots.index(None)] = [a, p]
        else:
            below = [s[1] for s in slots if s[1] < p]
            victim = (below[-1] if below else p) if buggy else min([p] + [s[1] for s in slots])
            released = victim
            slots = [None if s[1] == victim else s for s in slots]
            if p > victim:
                slots[slots.index(None)] = [a, p]
        out.append(released)
    return out


def oracle(acks, m, n):
    """Greatest p with N distinct replicas at max ack >= p: the N-th largest max ack."""
    best, out = [0] * m, []
    for a, p in acks:
        best[a] = max(best[a], p)
        out.append(sorted(best, reverse=True)[n - 1])
    return out


@pytest.mark.slow
def test_ack_bounds_and_per_m_results():
    d = run("ack_counting_releases_exactly_at_n_distinct").detail
    assert d["bounded_max_replicas"] >= 5 and d["ack_sequence_length"] >= 6
    assert d["inductive_max_replicas"] >= d["bounded_max_replicas"]
    for m in range(1, d["inductive_max_replicas"] + 1):
        row = d["per_M"][str(m)]
        assert set(row["all_lengths_by_N"].values()) == {PROVED}
        if m <= d["bounded_max_replicas"]:
            assert list(row["bounded_by_N"]) == [str(n) for n in range(1, m + 1)]
            assert set(row["bounded_by_N"].values()) == {PROVED}
            assert row["mutant_by_N"] == {str(n): "counterexample" for n in range(3, m + 1)}


@pytest.mark.slow
def test_bug_109829_sequence_replays():
    c = run("ack_counting_releases_exactly_at_n_distinct").detail["mutant_counterexample"]
    m, n, acks = c["M"], c["N"], [tuple(a) for a in c["acks"]]
    assert m >= 3 and 1 <= n <= m and all(0 <= a < m and p >= 1 for a, p in acks)
    bug, good, want = ack_table(acks, n, buggy=True), ack_table(acks, n), oracle(acks, m, n)
    assert good == want  # the correct table agrees at every step
    assert bug[-1] == c["mutant_released"] != want[-1] == c["correct_released"]
    assert bug[:-1] == want[:-1]  # the first disagreement is the last ack
    # Shortest: no sequence of fewer acks (positions 1..k suffice) breaks the buggy table.
    k = len(acks) - 1
    for mm in range(3, m + 1):
        for nn in range(1, mm + 1):
            for seq in itertools.product(itertools.product(range(mm), range(1, k + 1)), repeat=k):
                assert ack_table(seq, nn, buggy=True) == oracle(seq, mm, nn)


def test_bug_109829_reporters_trace():
    # bugs.mysql.com 109829: N=4, 3 slots; 1:120 2:120 1:150 1:170 3:150 4:170.
    acks = [(1, 120), (2, 120), (1, 150), (1, 170), (3, 150), (4, 170)]
    assert ack_table(acks, 4, buggy=True)[-1] == 150  # evicts 3:150 instead of 2:120
    assert ack_table(acks, 4)[-1] == oracle(acks, 5, 4)[-1] == 120


@settings(max_examples=300, deadline=None, database=None)
@given(st.integers(1, 7).flatmap(lambda m: st.tuples(
    st.just(m), st.integers(1, m), st.lists(st.tuples(st.integers(0, m - 1), st.integers(1, 40)), max_size=25))))
def test_ack_table_matches_oracle_beyond_the_bound(case):
    m, n, acks = case
    assert ack_table(acks, n) == oracle(acks, m, n)


# ---- WL#7169 / MDEV-37116: switching back ON ---------------------------------------------------

def test_switch_back_mutant_replays():
    d = run("switch_back_needs_n_distinct").detail
    assert d["max_replicas"] >= 2 and d["ack_sequence_length"] >= 1
    assert all(set(row.values()) == {PROVED} for row in d["per_M_by_N"].values())
    c = d["mutant_counterexample"]
    m, n, q, best = c["M"], c["N"], c["q"], list(c["initial_max_ack"])
    assert 1 < n <= m == len(best)
    mutant_on = correct_on = False
    for i, (a, p) in enumerate(c["acks"]):
        best[a] = max(best[a], p)
        distinct = sum(b >= q for b in best)
        mutant_on |= p >= q
        correct_on |= distinct >= n
        if i < len(c["acks"]) - 1:
            assert not mutant_on
    assert mutant_on and not correct_on and distinct == c["distinct_at_or_above_q"] < n


# ---- WL#6355: a plain-Python twin of the AFTER_SYNC / AFTER_COMMIT system -------------------------
# A state is (on, trxs); a trx is (b, v, ret, ron, von, rl, ack), the last two per-replica tuples.
FIELDS = ("b", "v", "ret", "ron", "von", "rl", "ack")

def from_json(s):
    return (s["on"], tuple((t["binlogged"], t["visible"], t["returned"], t["returned_while_on"],
                            t["visible_while_on"], tuple(t["relay_log"]), tuple(t["acked"])) for t in s["trx"]))


def initial(m, x):
    return (True, tuple((False,) * 5 + ((False,) * m, (False,) * m) for _ in range(x)))


def successors(state, n, wait_point):
    on, trxs = state
    m = len(trxs[0][5])

    def with_trx(i, **kw):
        t = dict(zip(FIELDS, trxs[i])) | kw
        return (on, trxs[:i] + (tuple(t[f] for f in FIELDS),) + trxs[i + 1:])

    out = []
    for i, (b, v, ret, ron, von, rl, ack) in enumerate(trxs):
        acked = sum(ack) >= n
        if not b and (i == 0 or trxs[i - 1][0]):
            out.append((f"binlog({i})", with_trx(i, b=True)))
        for r in range(m):
            if b and not rl[r] and (i == 0 or trxs[i - 1][5][r]):
                out.append((f"relay({i},{r})", with_trx(i, rl=rl[:r] + (True,) + rl[r + 1:])))
            if rl[r] and not ack[r]:
                out.append((f"ack({i},{r})", with_trx(i, ack=ack[:r] + (True,) + ack[r + 1:])))
        if b and not v and (wait_point == "AFTER_COMMIT" or acked or not on):
            out.append((f"commit({i})", with_trx(i, v=True, von=von or on)))
        if v and not ret and (acked or not on):
            out.append((f"return({i})", with_trx(i, ret=True, ron=on)))
    if on:
        out.append(("timeout", (False, trxs)))
    elif all(sum(t[6]) >= n for t in trxs if t[0]):
        out.append(("switch_on", (True, tuple(t[:4] + (t[4] or t[1],) + t[5:] for t in trxs))))
    return out


def invariant(state, n):
    on, trxs = state
    return all(sum(rl) >= n for b, v, ret, ron, von, rl, ack in trxs if (v and on) or von or ron)


def reachable(m, x, n, wait_point):
    start = initial(m, x)
    seen, todo = {start: 0}, deque([start])
    while todo:
        s = todo.popleft()
        for _, t in successors(s, n, wait_point):
            if t not in seen:
                seen[t] = seen[s] + 1
                todo.append(t)
    return seen


def test_after_commit_counterexample_replays():
    d = run("after_sync_invisible_inductive").detail
    c = d["after_commit_counterexample"]
    m, n = c["M"], c["N"]
    pre, post = from_json(c["pre"]), from_json(c["post"])
    assert len(pre[1]) == d["transactions"] and len(pre[1][0][5]) == m
    assert invariant(pre, n) and not invariant(post, n)
    assert (c["action"], post) in successors(pre, n, "AFTER_COMMIT")
    assert post not in [t for _, t in successors(pre, n, "AFTER_SYNC")]
    # The pre state is a real one (the phantom read needs no unreachable setup): AFTER_SYNC
    # reaches it too, and from it AFTER_COMMIT exposes a transaction no relay log holds.
    assert pre in reachable(m, len(pre[1]), n, "AFTER_SYNC")


def test_after_sync_per_m_results():
    d = run("after_sync_invisible_inductive").detail
    assert d["max_replicas"] >= 1 and d["transactions"] >= 1 and d["strengthening"]
    for m in range(1, d["max_replicas"] + 1):
        row = d["per_M_by_N"][str(m)]
        assert list(row) == [str(n) for n in range(1, m + 1)]
        for r in row.values():
            assert r == {"after_sync": PROVED, "failover": PROVED, "I_alone_inductive": "counterexample",
                         "after_commit": "counterexample"}


@pytest.mark.parametrize("m,n", [(1, 1), (2, 1), (2, 2), (3, 2)])
def test_twin_reachable_states_agree_with_the_proof(m, n):
    """Exhaustively, on the twin: AFTER_SYNC keeps I and loses nothing on failover; AFTER_COMMIT breaks I."""
    states = reachable(m, 2, n, "AFTER_SYNC")
    for on, trxs in states:
        assert invariant((on, trxs), n)
        # Relay logs are binlog prefixes, so the longest one holds everything any replica holds.
        best = max(range(m), key=lambda r: sum(t[5][r] for t in trxs))
        assert all(t[5][best] for t in trxs if (t[1] and on) or t[3] or t[4])
    assert not all(invariant(s, n) for s in reachable(m, 2, n, "AFTER_COMMIT"))
