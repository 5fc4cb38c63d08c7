"""z3 proofs for semi-synchronous replication: WL#1720 (semi-sync), WL#7169 (wait for N
replicas' ACKs) and WL#6355 (AFTER_SYNC: externalize a transaction only after its ACKs).

Binlog positions are integers compared only for order, so a bound of L acks at positions 1..L
loses nothing: every sequence of L positions is order-isomorphic to one in that range. A refuted
mutant of a real bug accompanies every PROVED claim, so that a claim made true by an
over-constrained encoding shows up as "unknown" rather than as a proof.
"""
from __future__ import annotations

import z3

from replcheck.properties.core import COUNTEREXAMPLE, proof
from replcheck.properties.proofs import UNKNOWN, check as _check, combine as _combine, witness as _witness

FREE = -1  # server id of an unused ack slot

ACK_MAX_REPLICAS = 5  # bounded unrolling: M = 1..5 replicas, N = 1..M
ACK_STEPS = 6  # acks per sequence (positions 1..ACK_STEPS)
ACK_INDUCTIVE_MAX_REPLICAS = 6  # all lengths and positions: M = 1..6
SWITCH_MAX_REPLICAS = 5
SWITCH_STEPS = 6
SYNC_MAX_REPLICAS = 3
SYNC_TRX = 3  # transactions per state


def _count(conds) -> z3.ArithRef:
    return z3.Sum([z3.If(c, 1, 0) for c in conds]) if conds else z3.IntVal(0)


def _max(x, y):
    return z3.If(x >= y, x, y)


def _first(flags) -> list:
    """flags[i] and no earlier flag: the lowest-index slot with the property."""
    return [z3.And(f, *(z3.Not(g) for g in flags[:i])) for i, f in enumerate(flags)]


# ---- WL#7169: the ack container -------------------------------------------------------------
# A table of N-1 slots (server, position), as MySQL's AckContainer, and the released position R.
# On an ack (a, p): p <= R is stale and ignored; a server with a slot raises it; else a free slot
# is taken; else the table plus the new ack holds N distinct servers above R, so the victim
# position m is released and every slot at m is evicted (the new ack is kept if above m).

def _min_victim(pos, p):
    m = p
    for x in pos:
        m = z3.If(x < m, x, m)
    return m


def _last_below_victim(pos, p):
    """Bug #109829: minAck keeps the last slot below the new ack, not the minimum one."""
    m = p
    for x in pos:
        m = z3.If(x < p, x, m)
    return m


def _ack_step(state, a, p, n, m_replicas, victim, tag):
    """Fresh variables for the state after ack (a, p) and the constraints defining them."""
    r, sid, pos, mx = state
    c = n - 1
    r1 = z3.Int(f"R{tag}")
    sid1 = [z3.Int(f"sid{i}{tag}") for i in range(c)]
    pos1 = [z3.Int(f"pos{i}{tag}") for i in range(c)]
    mx1 = [z3.Int(f"mx{i}{tag}") for i in range(m_replicas)]
    has = [s == a for s in sid]
    any_has = z3.Or(*has) if c else z3.BoolVal(False)
    free = [s == FREE for s in sid]
    full = z3.And(*(z3.Not(f) for f in free)) if c else z3.BoolVal(True)
    fresh = p > r
    m = victim(pos, p)
    evict = z3.And(fresh, z3.Not(any_has), full)
    insert = z3.And(fresh, z3.Not(any_has), z3.Not(full))
    cleared = [x == m for x in pos]
    into_evicted = [z3.And(f, p > m) for f in _first(cleared)]
    into_free = _first(free)
    defs = [r1 == z3.If(evict, m, r)]
    for i in range(c):
        defs.append(sid1[i] == z3.If(evict, z3.If(into_evicted[i], a, z3.If(cleared[i], FREE, sid[i])),
                                     z3.If(insert, z3.If(into_free[i], a, sid[i]), sid[i])))
        defs.append(pos1[i] == z3.If(evict, z3.If(into_evicted[i], p, z3.If(cleared[i], 0, pos[i])),
                                     z3.If(insert, z3.If(into_free[i], p, pos[i]),
                                           z3.If(z3.And(fresh, has[i]), _max(pos[i], p), pos[i]))))
    for i in range(m_replicas):
        defs.append(mx1[i] == z3.If(a == i, _max(mx[i], p), mx[i]))
    return (r1, sid1, pos1, mx1), defs


def _agrees(state, n):
    """R is the oracle's greatest releasable position: the N-th largest per-replica max ack
    (0 when fewer than N replicas acked). Equivalently, a waiter at p is released (R >= p) iff
    N distinct replicas acked >= p."""
    r, _, _, mx = state
    return z3.And(_count([x >= r for x in mx]) >= n, _count([x > r for x in mx]) < n)


def _ack_run(m_replicas, n, steps, victim, acks=None, tag=""):
    """The bounded unrolling from the empty table. Replicas are interchangeable, so they appear
    in index order; positions are compared only, so the ones used are 1..k with none skipped."""
    if acks is None:
        acks = [(z3.Int(f"a{t}{tag}"), z3.Int(f"p{t}{tag}")) for t in range(steps)]
    cons = [c for a, p in acks for c in (a >= 0, a < m_replicas, p >= 1, p <= steps)]
    seen = z3.IntVal(-1)
    for a, _ in acks:
        cons.append(a <= seen + 1)
        seen = _max(seen, a)
    used = [z3.Or(*(p == v for _, p in acks)) for v in range(1, steps + 1)]
    cons += [z3.Implies(used[v], used[v - 1]) for v in range(1, steps)]
    state = (z3.IntVal(0), [z3.IntVal(FREE)] * (n - 1), [z3.IntVal(0)] * (n - 1), [z3.IntVal(0)] * m_replicas)
    states = []
    for t, (a, p) in enumerate(acks):
        state, defs = _ack_step(state, a, p, n, m_replicas, victim, f"_{t}{tag}")
        cons += defs
        states.append(state)
    return acks, states, cons


def _ack_inductive(m_replicas, n) -> str:
    """For all sequence lengths and unbounded positions: the slot-table invariant is inductive."""
    c = n - 1

    def state(tag):
        return (z3.Int(f"R{tag}"), [z3.Int(f"sid{i}{tag}") for i in range(c)],
                [z3.Int(f"pos{i}{tag}") for i in range(c)], [z3.Int(f"mx{i}{tag}") for i in range(m_replicas)])

    def inv(s):
        r, sid, pos, mx = s
        out = [r >= 0, _agrees(s, n)] + [x >= 0 for x in mx]
        for i in range(c):
            used = sid[i] != FREE
            out.append(z3.Or(sid[i] == FREE, z3.And(sid[i] >= 0, sid[i] < m_replicas)))
            # An occupied slot holds its server's max ack, above R; servers hold one slot.
            out.append(z3.Implies(used, z3.And(pos[i] > r, z3.Or(*(z3.And(sid[i] == k, pos[i] == mx[k])
                                                                    for k in range(m_replicas))))))
            out += [z3.Implies(used, sid[i] != sid[j]) for j in range(i)]
        # Every replica whose max ack is above R has a slot.
        out += [z3.Implies(mx[k] > r, z3.Or(*(s_ == k for s_ in sid))) for k in range(m_replicas)]
        return z3.And(*out)

    init = (z3.IntVal(0), [z3.IntVal(FREE)] * c, [z3.IntVal(0)] * c, [z3.IntVal(0)] * m_replicas)
    base, _ = _check(z3.Not(inv(init)))
    pre = state("")
    a, p = z3.Ints("a p")
    post, defs = _ack_step(pre, a, p, n, m_replicas, _min_victim, "'")
    step, _ = _check(inv(pre), a >= 0, a < m_replicas, p >= 1, *defs, z3.Not(inv(post)))
    return _combine(base, step)


@proof("WL7169.N_DISTINCT",
       claim="A bounded ack table of N-1 slots that evicts the minimum ack when full releases, after "
             "every ack, exactly the greatest position that N distinct replicas have acknowledged: "
             "a waiter at p is released iff |{r : max_ack[r] >= p}| >= N, and no replica counts "
             "twice. Checked by unrolling bounded ack sequences, and for all lengths and positions "
             "by an inductive slot-table invariant.")
def ack_counting_releases_exactly_at_n_distinct():
    def disagree(states, n):
        return z3.Or(*(z3.Not(_agrees(s, n)) for s in states))

    per_m, outcomes = {}, []
    for m_replicas in range(1, ACK_INDUCTIVE_MAX_REPLICAS + 1):
        row = per_m[str(m_replicas)] = {"all_lengths_by_N": {}}
        for n in range(1, m_replicas + 1):
            row["all_lengths_by_N"][str(n)] = _ack_inductive(m_replicas, n)
        outcomes += row["all_lengths_by_N"].values()
        if m_replicas > ACK_MAX_REPLICAS:
            continue
        row["bounded_by_N"], row["mutant_by_N"] = {}, {}
        for n in range(1, m_replicas + 1):
            _, states, cons = _ack_run(m_replicas, n, ACK_STEPS, _min_victim)
            row["bounded_by_N"][str(n)], _ = _check(*cons, disagree(states, n))
            # With N <= 2 the table has at most one slot, so both evictions are the same rule.
            if n >= 3:
                _, states, cons = _ack_run(m_replicas, n, ACK_STEPS, _last_below_victim)
                row["mutant_by_N"][str(n)], _ = _check(*cons, disagree(states, n))
        outcomes += row["bounded_by_N"].values()
    detail = {"bounded_max_replicas": ACK_MAX_REPLICAS, "ack_sequence_length": ACK_STEPS,
              "positions": f"1..{ACK_STEPS}", "inductive_max_replicas": ACK_INDUCTIVE_MAX_REPLICAS,
              "per_M": per_m}

    # Shortest ack sequence on which the Bug #109829 eviction disagrees with the oracle, M >= 3;
    # the correct table is run on the same acks to show what should have been released.
    for steps in range(1, ACK_STEPS + 1):
        for m_replicas in range(3, ACK_MAX_REPLICAS + 1):
            for n in range(3, m_replicas + 1):
                acks, bug, cons = _ack_run(m_replicas, n, steps, _last_below_victim, tag="_mut")
                _, good, cons2 = _ack_run(m_replicas, n, steps, _min_victim, acks, tag="_ok")
                bad = cons + cons2 + [z3.Not(_agrees(bug[-1], n))]
                if _check(*bad)[0] != COUNTEREXAMPLE:
                    continue
                model = _witness(bad, [v for ack in acks for v in ack])
                if model is None:
                    return UNKNOWN, detail
                detail["mutant_counterexample"] = {
                    "M": m_replicas, "N": n,
                    "acks": [[model.eval(v).as_long() for v in ack] for ack in acks],
                    "mutant_released": model.eval(bug[-1][0]).as_long(),
                    "correct_released": model.eval(good[-1][0]).as_long()}
                return _combine(*outcomes), detail
    return UNKNOWN, detail


# ---- WL#7169 / MDEV-37116: switching back ON --------------------------------------------------
# Status is OFF after a timeout, waiting for the switch-back position q. Acks keep counting in
# async mode, so each replica starts from an arbitrary max ack.

def _switch_run(m_replicas, n, steps, rule):
    q = z3.Int("q")
    mx = [z3.Int(f"mx0_{r}") for r in range(m_replicas)]
    acks = [(z3.Int(f"a{t}"), z3.Int(f"p{t}")) for t in range(steps)]
    cons = [q >= 1] + [x >= 0 for x in mx] + [c for a, p in acks for c in (a >= 0, a < m_replicas, p >= 0)]
    on, rows = z3.BoolVal(False), []
    for a, p in acks:
        mx = [z3.If(a == r, _max(x, p), x) for r, x in enumerate(mx)]
        distinct = _count([x >= q for x in mx])
        on = z3.Or(on, distinct >= n if rule == "correct" else p >= q)
        rows.append((on, distinct))
    return q, acks, cons, rows


@proof("WL7169.SWITCH_BACK_N",
       claim="With status OFF and switch-back position q, the rule 'switch ON when N distinct "
             "replicas acknowledged >= q' (acks counted also while OFF) turns the status ON after "
             "an ack exactly when |{r : max_ack[r] >= q}| >= N, so never with fewer than N.")
def switch_back_needs_n_distinct():
    # True by construction: the query guards the encoding, the MDEV-37116 mutant its non-vacuity.
    per_m, outcomes = {}, []
    for m_replicas in range(1, SWITCH_MAX_REPLICAS + 1):
        per_m[str(m_replicas)] = {}
        for n in range(1, m_replicas + 1):
            _, _, cons, rows = _switch_run(m_replicas, n, SWITCH_STEPS, "correct")
            outcome, _ = _check(*cons, z3.Or(*(on != (d >= n) for on, d in rows)))
            per_m[str(m_replicas)][str(n)] = outcome
            outcomes.append(outcome)
    detail = {"max_replicas": SWITCH_MAX_REPLICAS, "ack_sequence_length": SWITCH_STEPS, "per_M_by_N": per_m}

    # MDEV-37116: the first ack >= q switches ON, whatever N. Shortest witness, smallest M and N.
    for steps in range(1, SWITCH_STEPS + 1):
        for m_replicas in range(2, SWITCH_MAX_REPLICAS + 1):
            for n in range(2, m_replicas + 1):
                q, acks, cons, rows = _switch_run(m_replicas, n, steps, "mutant")
                on, d = rows[-1]
                bad = cons + [on, d < n]
                if _check(*bad)[0] != COUNTEREXAMPLE:
                    continue
                mx0 = [z3.Int(f"mx0_{r}") for r in range(m_replicas)]
                model = _witness(bad, [q] + mx0 + [v for ack in acks for v in ack])
                if model is None:
                    return UNKNOWN, detail
                detail["mutant_counterexample"] = {
                    "M": m_replicas, "N": n, "q": model.eval(q).as_long(),
                    "initial_max_ack": [model.eval(x).as_long() for x in mx0],
                    "acks": [[model.eval(v).as_long() for v in ack] for ack in acks],
                    "distinct_at_or_above_q": model.eval(d).as_long()}
                return _combine(*outcomes), detail
    return UNKNOWN, detail


# ---- WL#6355: AFTER_SYNC keeps a transaction invisible until N relay logs hold it ------------
# One master, M replicas, SYNC_TRX transactions binlogged in order; one action per step. Per
# transaction: b binlogged, v visible (committed in the engine), ret client returned, and two
# history flags so a later timeout cannot hide what was exposed: ron returned while ON, von
# visible at some moment while ON; per replica rl in its relay log, ack acknowledged.

def _sync_state(m_replicas, tag=""):
    names = ["on"] + [f"{k}{x}" for x in range(SYNC_TRX) for k in ("b", "v", "ret", "ron", "von")]
    names += [f"{k}{x}_{r}" for x in range(SYNC_TRX) for k in ("rl", "ack") for r in range(m_replicas)]
    return {k: z3.Bool(k + tag) for k in names}


def _holders(s, kind, x, m_replicas):
    return _count([s[f"{kind}{x}_{r}"] for r in range(m_replicas)])


def _sync_actions(s, s1, m_replicas, n, wait_point):
    """(name, formula) per action: its guard, and s1 equal to s but for the changed variables."""
    yes = z3.BoolVal(True)

    def step(guard, **changes):
        return z3.And(guard, *(s1[k] == changes.get(k, s[k]) for k in s))

    out = []
    for x in range(SYNC_TRX):
        acked = _holders(s, "ack", x, m_replicas) >= n
        out.append((f"binlog({x})", step(z3.And(z3.Not(s[f"b{x}"]), s[f"b{x - 1}"] if x else yes),
                                         **{f"b{x}": yes})))
        for r in range(m_replicas):
            # Relay logs are prefixes of the binlog: trx x arrives after trx x-1.
            out.append((f"relay({x},{r})", step(z3.And(s[f"b{x}"], z3.Not(s[f"rl{x}_{r}"]),
                                                       s[f"rl{x - 1}_{r}"] if x else yes),
                                                **{f"rl{x}_{r}": yes})))
            out.append((f"ack({x},{r})", step(z3.And(s[f"rl{x}_{r}"], z3.Not(s[f"ack{x}_{r}"])),
                                              **{f"ack{x}_{r}": yes})))
        # AFTER_SYNC commits in the engine after N acks (or when OFF); AFTER_COMMIT right away.
        may = z3.Or(acked, z3.Not(s["on"])) if wait_point == "AFTER_SYNC" else yes
        out.append((f"commit({x})", step(z3.And(s[f"b{x}"], z3.Not(s[f"v{x}"]), may),
                                         **{f"v{x}": yes, f"von{x}": z3.Or(s[f"von{x}"], s["on"])})))
        out.append((f"return({x})", step(z3.And(s[f"v{x}"], z3.Not(s[f"ret{x}"]), z3.Or(acked, z3.Not(s["on"]))),
                                         **{f"ret{x}": yes, f"ron{x}": s["on"]})))
    out.append(("timeout", step(s["on"], on=z3.BoolVal(False))))
    # Simplification: switch back once N distinct replicas acked every binlogged transaction.
    back = z3.And(z3.Not(s["on"]), *(z3.Implies(s[f"b{x}"], _holders(s, "ack", x, m_replicas) >= n)
                                    for x in range(SYNC_TRX)))
    out.append(("switch_on", step(back, on=yes, **{f"von{x}": z3.Or(s[f"von{x}"], s[f"v{x}"])
                                                  for x in range(SYNC_TRX)})))
    return out


def _exposed(s, x):
    """Visible while ON now, or visible or returned at some moment while ON."""
    return z3.Or(z3.And(s[f"v{x}"], s["on"]), s[f"von{x}"], s[f"ron{x}"])


def _invariant(s, m_replicas, n):
    """I: nothing is exposed while ON before N relay logs hold it."""
    return z3.And(*(z3.Implies(_exposed(s, x), _holders(s, "rl", x, m_replicas) >= n) for x in range(SYNC_TRX)))


def _strengthening(s, m_replicas):
    """Acks come from relay logs, only binlogged trx are visible, relay logs are binlog prefixes."""
    out = []
    for x in range(SYNC_TRX):
        out.append(z3.Implies(s[f"v{x}"], s[f"b{x}"]))
        if x:
            out.append(z3.Implies(s[f"b{x}"], s[f"b{x - 1}"]))
        for r in range(m_replicas):
            out += [z3.Implies(s[f"ack{x}_{r}"], s[f"rl{x}_{r}"]), z3.Implies(s[f"rl{x}_{r}"], s[f"b{x}"])]
            if x:
                out.append(z3.Implies(s[f"rl{x}_{r}"], s[f"rl{x - 1}_{r}"]))
    return z3.And(*out)


STRENGTHENING = ("acked by r => in r's relay log", "visible => binlogged", "in a relay log => binlogged",
                 "binlog and relay logs are prefixes (trx x => trx x-1)")


def _state_json(model, s, m_replicas) -> dict:
    val = {k: z3.is_true(model.eval(v, model_completion=True)) for k, v in s.items()}
    return {"on": val["on"], "trx": [
        {"binlogged": val[f"b{x}"], "visible": val[f"v{x}"], "returned": val[f"ret{x}"],
         "returned_while_on": val[f"ron{x}"], "visible_while_on": val[f"von{x}"],
         "relay_log": [val[f"rl{x}_{r}"] for r in range(m_replicas)],
         "acked": [val[f"ack{x}_{r}"] for r in range(m_replicas)]} for x in range(SYNC_TRX)]}


def _pins(s) -> list:
    return [s[k] for k in sorted(s)]


def _most_advanced(s, star, m_replicas):
    """Replica `star`'s relay log contains every other replica's."""
    return z3.And(*(z3.Implies(s[f"rl{x}_{r}"], s[f"rl{x}_{star}"]) for x in range(SYNC_TRX) for r in range(m_replicas)))


@proof("WL6355.AFTER_SYNC.INVISIBLE", "WL6355.FAILOVER.NO_LOSS",
       claim="Under AFTER_SYNC (engine commit and client return only after N distinct acks while "
             "ON; a timeout switches OFF; switching back ON, simplified, once N distinct replicas "
             "acked every binlogged transaction), I = 'a transaction visible while ON, or once "
             "visible or returned while ON, is in >= N relay logs' holds in every reachable state: "
             "I with a strengthening (acks come from relay logs; visible => binlogged; binlog and "
             "relay logs are prefixes) is inductive. Relay logs being prefixes, the most advanced "
             "replica holds every such transaction, so failover to it loses none. AFTER_COMMIT "
             "(engine commit before the ack wait) breaks the induction.")
def after_sync_invisible_inductive():
    per_m, outcomes, vacuous, detail = {}, [], False, {}
    for m_replicas in range(1, SYNC_MAX_REPLICAS + 1):
        per_m[str(m_replicas)] = {}
        s, s1 = _sync_state(m_replicas), _sync_state(m_replicas, "'")
        init = [s["on"]] + [z3.Not(v) for k, v in s.items() if k != "on"]
        for n in range(1, m_replicas + 1):
            inv = z3.And(_invariant(s, m_replicas, n), _strengthening(s, m_replicas))
            inv1 = z3.And(_invariant(s1, m_replicas, n), _strengthening(s1, m_replicas))
            sync = z3.Or(*(f for _, f in _sync_actions(s, s1, m_replicas, n, "AFTER_SYNC")))
            base, _ = _check(*init, z3.Not(inv))
            step, _ = _check(inv, sync, z3.Not(inv1))
            alone, _ = _check(_invariant(s, m_replicas, n), sync, z3.Not(_invariant(s1, m_replicas, n)))
            # Failover: one relay log contains all others, and it holds every exposed trx.
            exists, _ = _check(inv, *(z3.Not(_most_advanced(s, k, m_replicas)) for k in range(m_replicas)))
            lost = [_check(inv, _most_advanced(s, k, m_replicas),
                           z3.Or(*(z3.And(_exposed(s, x), z3.Not(s[f"rl{x}_{k}"])) for x in range(SYNC_TRX))))[0]
                    for k in range(m_replicas)]
            failover = _combine(exists, *lost)
            actions = _sync_actions(s, s1, m_replicas, n, "AFTER_COMMIT")
            cti = [inv, z3.Or(*(f for _, f in actions)), z3.Not(_invariant(s1, m_replicas, n))]
            after_commit, _ = _check(*cti)
            per_m[str(m_replicas)][str(n)] = {"after_sync": _combine(base, step), "failover": failover,
                                             "I_alone_inductive": alone, "after_commit": after_commit}
            outcomes += [base, step, failover]
            vacuous |= after_commit != COUNTEREXAMPLE
            if after_commit == COUNTEREXAMPLE and "after_commit_counterexample" not in detail:
                model = _witness(cti, _pins(s) + _pins(s1))
                if model is None:
                    return UNKNOWN, {"per_M_by_N": per_m}
                detail["after_commit_counterexample"] = {
                    "M": m_replicas, "N": n, "pre": _state_json(model, s, m_replicas),
                    "action": next(name for name, f in actions if z3.is_true(model.eval(f, model_completion=True))),
                    "post": _state_json(model, s1, m_replicas)}
    detail = {"max_replicas": SYNC_MAX_REPLICAS, "transactions": SYNC_TRX, "strengthening": list(STRENGTHENING),
              "per_M_by_N": per_m, **detail}
    return (UNKNOWN if vacuous else _combine(*outcomes)), detail
