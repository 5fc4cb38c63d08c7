"""z3 proofs for global group IDs: uniqueness of IDs under the design's filtering, continuation,
election and recovery rules for every topology of up to MAX_SERVERS servers and any number of
steps (an inductive invariant), and the unique parse of the index line `full_path|group_id|` for
every Linux path, '|' included.

Each proof takes its rules as parameters; the tests run them with one rule broken and get a
counterexample, so a proof made true by an over-constrained encoding would show.
"""
from __future__ import annotations

import z3

from replcheck.properties.core import proof
from replcheck.properties.proofs import check as _check, combine as _combine

MAX_SERVERS = 4
BAR, NEWLINE, DOT = ord("|"), ord("\n"), ord(".")


# ---- uniqueness of group IDs ------------------------------------------------------------------
def _state(n: int, tag: str):
    alive = [z3.Bool(f"alive{i}{tag}") for i in range(n)]
    root = [z3.Bool(f"root{i}{tag}") for i in range(n)]
    last = [z3.Int(f"last{i}{tag}") for i in range(n)]
    return alive, root, last


def _invariant(alive, root, last):
    """One live root; every live server's last ID is at most the root's (a prefix of its stream)."""
    n = len(alive)
    live_root = [z3.And(alive[i], root[i]) for i in range(n)]
    return z3.And(z3.Or(live_root),
                  *[z3.Not(z3.And(live_root[i], live_root[j])) for i in range(n) for j in range(i + 1, n)],
                  *[z3.Implies(z3.And(live_root[i], alive[j]), z3.And(last[j] >= 0, last[j] <= last[i]))
                    for i in range(n) for j in range(n)])


def _frame(pre, post, keep):
    return z3.And(*[a == b for (xs, ys) in zip(pre, post) for k, (a, b) in enumerate(zip(xs, ys)) if k not in keep])


def _transitions(n: int, pre, post, filtering: bool, continuation: str, election: str, recovery: str):
    """(action name, transition, the IDs it issues must be fresh?) for every actor."""
    (alive, root, last), (alive2, root2, last2) = pre, post
    out = []
    for i in range(n):
        others = [j for j in range(n) if j != i]
        fr_i = lambda extra=(): _frame(pre, post, {i, *extra})  # noqa: E731
        # A client commit on server i: only a server without a master issues an ID (filtering).
        may_issue = root[i] if filtering else z3.BoolVal(True)
        issue = z3.And(alive[i], may_issue, last2[i] == last[i] + 1, alive2[i] == alive[i], root2[i] == root[i], fr_i())
        fresh = z3.And(*[z3.Implies(alive[j], last2[i] > last[j]) for j in others])
        out.append((f"issue@{i}", issue, fresh))
        # The SQL thread of slave i plays groups of a live server m (its master, or after CHANGE MASTER).
        for m in others:
            play = z3.And(alive[i], z3.Not(root[i]), alive[m], last2[i] > last[i], last2[i] <= last[m],
                          alive2[i] == alive[i], root2[i] == root[i], fr_i())
            out.append((f"play@{i}<-{m}", play, None))
        # Crash and restart: recovery finds the last ID in the binlog (or trusts a stale summary).
        recovered = last2[i] == last[i] if recovery == "last-in-binlog" else z3.And(last2[i] >= 0, last2[i] <= last[i])
        out.append((f"crash@{i}", z3.And(alive[i], recovered, alive2[i], root2[i] == root[i], fr_i()), None))
        # Failover: the root i dies, slave s becomes root and continues from what it played.
        for s in others:
            elected = z3.And(*[z3.Implies(alive[j], last[j] <= last[s]) for j in range(n) if j != i]) \
                if election == "most-advanced" else z3.BoolVal(True)
            cont = last2[s] == last[s] if continuation == "last-played" else last2[s] == 0
            fail = z3.And(alive[i], root[i], alive[s], z3.Not(root[s]), elected, z3.Not(alive2[i]), root2[i] == root[i],
                          last2[i] == last[i], alive2[s], root2[s], cont, fr_i((s,)))
            out.append((f"failover@{i}->{s}", fail, None))
        # Restore: a dead server is rebuilt from a live donor and SET to the donor's saved ID.
        for d in others:
            restore = z3.And(z3.Not(alive[i]), alive[d], alive2[i], z3.Not(root2[i]), last2[i] == last[d], fr_i())
            out.append((f"restore@{i}<-{d}", restore, None))
    return out


def ids_unique(filtering: bool = True, continuation: str = "last-played", election: str = "most-advanced",
               recovery: str = "last-in-binlog", servers: int = MAX_SERVERS) -> tuple[str, dict]:
    """For 2..servers servers: the invariant holds at start and after every step, and every ID
    issued is above every live server's last, so it names no group already in the system."""
    detail, outcomes = {}, []
    for n in range(2, servers + 1):
        pre, post = _state(n, ""), _state(n, "'")
        alive, root, last = pre
        init = z3.And(*alive, root[0], *[z3.Not(r) for r in root[1:]], *[x == 0 for x in last])
        base, _ = _check(init, z3.Not(_invariant(*pre)))
        steps = _transitions(n, pre, post, filtering, continuation, election, recovery)
        bad = z3.Or(*[z3.And(t, z3.Not(z3.And(_invariant(*post), fresh if fresh is not None else z3.BoolVal(True))))
                      for _, t, fresh in steps])
        step, model = _check(_invariant(*pre), bad)
        outcome = _combine(base, step)
        outcomes.append(outcome)
        if model is not None:
            action = next(name for name, t, fresh in steps
                          if z3.is_true(model.eval(z3.And(t, z3.Not(z3.And(_invariant(*post), fresh if fresh is not None else True))),
                                                   model_completion=True)))
            detail[f"{n} servers"] = {"step": action, "before": _show(model, pre), "after": _show(model, post)}
        else:
            detail[f"{n} servers"] = outcome
    return _combine(*outcomes), detail


def _show(model, state) -> list[dict]:
    alive, root, last = state
    return [{"alive": z3.is_true(model.eval(a, model_completion=True)), "root": z3.is_true(model.eval(r, model_completion=True)),
             "last": model.eval(x, model_completion=True).as_long()} for a, r, x in zip(alive, root, last)]


@proof("GGID.UNIQUE", claim="With filtering (only a server without a master issues IDs), the new root continuing "
       "from the last ID it played, the most advanced slave elected, recovery finding the last ID in the binlog and "
       f"restores SET to the donor's ID, no ID is issued twice, in any topology of up to {MAX_SERVERS} servers after "
       "any number of commits, plays, crashes, failovers and restores.")
def group_ids_unique():
    return ids_unique()


# ---- the index line grammar ----------------------------------------------------------------
def _line(tag: str = ""):
    """A formatted line `path|digits|`: a path of a bytes (no NUL, no newline, '|' allowed), b digits."""
    L = z3.Array(f"line{tag}", z3.IntSort(), z3.IntSort())
    a, b, i = z3.Ints(f"a{tag} b{tag} i{tag}")
    n = a + b + 2
    domain = [a >= 1, b >= 1, L[a] == BAR, L[n - 1] == BAR,
              z3.ForAll([i], z3.Implies(z3.And(i > a, i <= a + b), z3.And(L[i] >= ord("0"), L[i] <= ord("9")))),
              z3.ForAll([i], z3.Implies(z3.And(i >= 0, i < n), z3.And(L[i] >= 1, L[i] <= 255, L[i] != NEWLINE)))]
    return L, a, b, n, domain


def index_parse_unique(split_at: str = "last") -> tuple[str, dict]:
    """The parser splits the line without its final '|' at the last '|' (`split_at="first"` is the
    naive split). Claim: the split point is where the path ended, for every path."""
    L, a, b, n, domain = _line()
    k, j = z3.Ints("k j")
    inside = z3.And(j >= 0, j < n - 1)
    later = z3.And(inside, j > k) if split_at == "last" else z3.And(inside, j < k)
    parse = [k >= 0, k < n - 1, L[k] == BAR, z3.ForAll([j], z3.Implies(later, L[j] != BAR))]
    outcome, model = _check(*domain, *parse, k != a)
    if model is None:
        return outcome, {"split": split_at}
    av, bv = model.eval(a).as_long(), model.eval(b).as_long()
    line = bytes(model.eval(L[x], model_completion=True).as_long() for x in range(av + bv + 2))
    return outcome, {"split": split_at, "line": line.decode("latin-1"), "path_length": av, "parsed_split": model.eval(k).as_long()}


@proof("GGID.INDEX.GRAMMAR", claim="Splitting `full_path|group_id|` at the last '|' before the closing one gives back "
       "the path and the group ID that were written, for every path of any length made of any bytes but NUL and "
       "newline, '|' included.")
def index_line_parse_unique():
    return index_parse_unique()


def old_format_recognised(recognise: str = "suffix") -> tuple[str, dict]:
    """An old-format line is a server-made binlog path, ending `.NNNNNN`. The reader takes a line as
    new-format only when it ends `|digits|` (`recognise="contains"` is the naive test for any '|')."""
    L, n, i = z3.Array("old", z3.IntSort(), z3.IntSort()), z3.Int("n"), z3.Int("i")
    domain = [n >= 8, L[n - 7] == DOT,
              z3.ForAll([i], z3.Implies(z3.And(i > n - 7, i < n), z3.And(L[i] >= ord("0"), L[i] <= ord("9")))),
              z3.ForAll([i], z3.Implies(z3.And(i >= 0, i < n), z3.And(L[i] >= 1, L[i] <= 255, L[i] != NEWLINE)))]
    if recognise == "suffix":
        new_format = L[n - 1] == BAR
    else:
        new_format = z3.Exists([i], z3.And(i >= 0, i < n, L[i] == BAR))
    outcome, model = _check(*domain, new_format)
    if model is None:
        return outcome, {"recognise": recognise}
    nv = model.eval(n).as_long()
    return outcome, {"recognise": recognise,
                     "line": bytes(model.eval(L[x], model_completion=True).as_long() for x in range(nv)).decode("latin-1")}


@proof("GGID.INDEX.OLD_FORMAT", claim="A line of an old-format index (a server-made binlog path ending `.NNNNNN`, "
       "'|' allowed elsewhere) is never taken for a new-format line: it reads as that path with group ID 0.")
def old_index_lines_read_as_paths():
    return old_format_recognised()

