"""z3 proofs for delayed replication: WL#344 (MASTER_DELAY) and WL#7318 (delay measured from
the immediate master's commit timestamp).

Times are integers in µs of true (virtual-clock) time; a server whose clock offset is o reads
t + o at true time t. A refuted mutant accompanies every PROVED claim so that a claim made true
by an over-constrained encoding shows up as "unknown" rather than as a proof.
"""
from __future__ import annotations

import z3

from replcheck.properties.core import COUNTEREXAMPLE, PROVED, proof
from replcheck.properties.proofs import UNKNOWN, check as _check, combine as _combine, witness as _witness
from replcheck.spec.formats import MAX_MASTER_DELAY, US

RULES = ("WL344", "WL7318")


def _values(model: z3.ModelRef, terms: dict) -> dict:
    out = {}
    for name, t in terms.items():
        v = model.eval(t, model_completion=True)
        out[name] = v.as_signed_long() if z3.is_bv(v) else v.as_long()
    return out


# ---- the delay rules -------------------------------------------------------------------------

def _due(rule: str, t, o_m, o_s, n, compensate: bool = True):
    """True time before which the replica must not apply an event the master executed (WL#344)
    or committed (WL#7318) at true time t. z3's Int `/` floors for a positive divisor, which is
    C's truncation because stamps since the epoch are non-negative."""
    if rule == "WL344":
        when = (t + o_m) / US  # header timestamp: whole seconds on the master's clock
        stamp = when * US
    else:
        ict = t + o_m  # immediate_commit_timestamp: µs on the master's clock, cut by the replica
        stamp = (ict / US) * US
    # The replica waits on its own clock; without compensation the offsets do not cancel.
    local_due = stamp + n * US + ((o_s - o_m) if compensate else 0)
    return local_due - o_s


def _scenario(rule: str, compensate: bool = True, tag: str = ""):
    """Free variables, the true apply time and the domain of one replicated event."""
    v = dict(zip(("t", "o_m", "o_s", "n", "ready"), z3.Ints(" ".join(
        f"{x}{tag}" for x in ("t", "o_m", "o_s", "n", "ready")))))
    due = _due(rule, v["t"], v["o_m"], v["o_s"], v["n"], compensate)
    apply = z3.If(due >= v["ready"], due, v["ready"])
    # ready >= t: the replica cannot read an event before the master produced it.
    domain = [v["t"] >= 0, v["t"] + v["o_m"] >= 0, v["n"] >= 0, v["n"] <= MAX_MASTER_DELAY, v["ready"] >= v["t"]]
    return v, due, apply, domain


# ---- proofs ----------------------------------------------------------------------------------

@proof("WL344.DOC.GUARANTEE", expected=COUNTEREXAMPLE,
       claim="A delayed replica never applies an event earlier than N seconds after the master "
             "executed it.")
def promise_broken_by_whole_seconds():
    detail, outcomes = {}, []
    for rule in RULES:
        v, due, apply, domain = _scenario(rule)
        early = v["t"] + v["n"] * US - apply
        found, _ = _check(*domain, early > 0)
        if found != COUNTEREXAMPLE:
            outcomes.append(found)
            continue
        # The cut-off sub-second part of the stamp is the most the promise can be missed by.
        bounded, _ = _check(*domain, early >= US)
        m = _witness(domain + [early > 0], list(v.values()), maximize=early)
        if bounded != PROVED or m is None:
            outcomes.append(UNKNOWN)
            continue
        cex = _values(m, {**v, "apply": apply})
        cex["earliness_us"] = m.eval(early).as_long()
        # The witness maximises earliness and the bound is proved, so this is the maximum.
        detail[rule] = {"counterexample": cex, "max_earliness_us": cex["earliness_us"]}
        outcomes.append(COUNTEREXAMPLE)
    return _combine(*outcomes), detail


@proof("WL344.WAIT.RULE", "WL7318.F2",
       claim="A delayed replica applies every event later than N seconds minus one second after "
             "the master executed (WL#344) or committed (WL#7318) it.")
def one_second_slack_holds():
    def too_early(v, apply):
        return apply <= v["t"] + v["n"] * US - US

    detail, outcomes = {}, []
    for rule in RULES:
        v, _, apply, domain = _scenario(rule)
        outcome, _ = _check(*domain, too_early(v, apply))
        detail[rule] = outcome
        outcomes.append(outcome)
    # The replica that forgets clock compensation must break the claim, else it is vacuous.
    v, due, apply, domain = _scenario("WL344", compensate=False)
    m = _witness(domain + [too_early(v, apply)], list(v.values()))
    if m is None:
        return UNKNOWN, detail
    detail["mutant_counterexample"] = _values(m, {**v, "due": due, "apply": apply})
    return _combine(*outcomes), detail


@proof("WL344.CLOCK.COMPENSATE",
       claim="The true time a delayed event becomes due does not depend on the master's and "
             "replica's clock offsets beyond the sub-second cut of the timestamp.")
def clock_compensation_offset_independent():
    def pair(compensate):
        (v1, due1, _, d1), (v2, due2, _, d2) = (_scenario("WL344", compensate, tag) for tag in ("_1", "_2"))
        # Same event and delay, two clock-offset assignments.
        return v1, v2, due1, due2, d1 + d2 + [v1["t"] == v2["t"], v1["n"] == v2["n"]]

    v1, v2, due1, due2, dom = pair(True)
    whole = [o % US == 0 for o in (v1["o_m"], v1["o_s"], v2["o_m"], v2["o_s"])]
    a, _ = _check(*dom, *whole, due1 != due2)
    b, _ = _check(*dom, z3.Or(due1 - due2 >= US, due2 - due1 >= US))
    detail = {"whole_second_offsets": a, "arbitrary_offsets_spread_below_1s": b}

    v1, v2, due1, due2, dom = pair(False)
    pins = [v1["t"], v1["n"], v1["o_m"], v1["o_s"], v2["o_m"], v2["o_s"]]
    m = _witness(dom + [z3.Or(due1 - due2 > US, due2 - due1 > US)], pins)
    if m is None:
        return UNKNOWN, detail
    detail["mutant_counterexample"] = _values(m, {
        "t": v1["t"], "n": v1["n"], "o_m_1": v1["o_m"], "o_s_1": v1["o_s"], "o_m_2": v2["o_m"],
        "o_s_2": v2["o_s"], "due_1": due1, "due_2": due2})
    return _combine(a, b), detail


@proof("WL344.RLI.UNAMBIGUOUS",
       claim="The first line of relay-log.info tells the new format (a field count) from the old "
             "one (a relay log name) for every file, and a count below 5 is rejected.")
def relay_log_info_formats_unambiguous():
    # A private context: the string solver's models otherwise depend on earlier queries.
    ctx = z3.Context()
    digit = z3.Range("0", "9", ctx)
    count_line = z3.Plus(digit)

    def log_name(s):  # the only thing the seed promises about a relay log name
        return z3.And(z3.Not(z3.Contains(s, "\n")), z3.Contains(s, "."))

    first = z3.String("first_line", ctx)
    split, _ = _check(z3.InRe(first, count_line), log_name(first))

    count = z3.StrToInt(first)
    accepted = z3.And(z3.InRe(first, count_line), count >= 5)
    low, _ = _check(accepted, count < 5)
    five, _ = _check(accepted, count == 5)  # the reader must accept the count it writes
    detail = {"count_line_vs_log_name": split, "count_below_5_rejected": low}
    if five != COUNTEREXAMPLE:
        return UNKNOWN, detail

    # Rejected design: old format with the delay appended as a fifth line. Ask for a garbage
    # tail the new reader would accept as a delay of over a year (the seed's worst case), in a
    # file whose log names look like real ones (basename.NNNNNN) so the witness is not contrived.
    real_name = z3.Concat(z3.Plus(z3.Union(z3.Range("a", "z", ctx), z3.Re("-", ctx))),
                          z3.Re(".", ctx), z3.Loop(digit, 6, 6))
    ls = z3.Strings("l1 l2 l3 l4 l5", ctx)
    delay = z3.StrToInt(ls[4])
    ambiguous, m = _check(*(z3.InRe(ls[i], real_name) for i in (0, 2)),
                          *(z3.InRe(ls[i], count_line) for i in (1, 3, 4)),
                          delay >= 365 * 86400, delay <= MAX_MASTER_DELAY)
    if ambiguous != COUNTEREXAMPLE:
        return UNKNOWN, detail
    lines = [m.eval(l, model_completion=True).as_string() for l in ls]
    detail["mutant_counterexample"] = {"file": "".join(l + "\n" for l in lines),
                                       "garbage": lines[4] + "\n", "delay_s": int(lines[4])}
    return _combine(split, low), detail


@proof("WL344.CM.RANGE",
       claim="The due time when + clock_diff + N, computed as a 64-bit time_t, cannot overflow for "
             "any 32-bit event timestamp, |clock_diff| < 2^31 and 0 <= N < 2^31.")
def delay_range_fits():
    when, n = z3.BitVecs("when n", 32)  # when: unsigned seconds; n: signed delay
    cd = z3.BitVec("clock_diff", 64)
    domain = [n >= 0, cd > -(2**31), cd < 2**31]  # BitVecRef comparisons are signed
    w64, n64 = z3.ZeroExt(32, when), z3.SignExt(32, n)
    part = w64 + cd
    due = part + n64
    overflow = z3.Or(*(z3.Not(ok) for a, b in ((w64, cd), (part, n64))
                       for ok in (z3.BVAddNoOverflow(a, b, True), z3.BVAddNoUnderflow(a, b))))
    fits, _ = _check(*domain, z3.Or(overflow, due < w64 - 2**31))
    detail = {"time_t_64": fits}

    # Mutant: the same sum in int32 (the delay's own type) wraps for allowed inputs.
    due32 = when + z3.Extract(31, 0, cd) + n
    m = _witness(domain + [z3.SignExt(32, due32) != due], [when, n, cd])
    if m is None:
        return UNKNOWN, detail
    cex = _values(m, {"n": n, "clock_diff": cd, "due_int32": due32, "due_int64": due})
    cex["when"] = m.eval(when).as_long()  # unsigned
    detail["mutant_counterexample"] = cex
    return fits, detail
