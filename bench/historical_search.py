"""Generality of the search: historical bugs written as registry mutants after the search was, with
no step or History made for them, searched for by the generic search as it is.

For each mutant (by default the registry's historical section, model/mutants.py), the generator's
Histories are judged in order, first those of the mutant's own families, then those of all families:
a History finds the mutant when some requirement (any, not only its kills) is violated on the
mutant and not on its base for that History (replcheck.results.caught). Each row gives the first
such History (its index, the seconds until it, the requirement, its steps and how far it shrinks)
and the first History whose Trace differs from the base's at all, which tells a seam never reached
from one reached but not judged. `--composed mixed` also searches a composed family's Histories,
`--without` leaves requirements out (the search as it was before them), `--machines` adds verify's
state-machine search at verify's budget.
Usage: .venv/bin/python bench/historical_search.py [--seed 0] [--limit 3000] [--mutants a,b] [--machines] [--without R,S] [--composed mixed] [--label before]
"""
from __future__ import annotations

import os
import time

import record
from mutant_search import arguments, machines
from replcheck import systems
from replcheck.features import load_features
from replcheck.generate import COMPOSED, FAMILIES, families_for, generate
from replcheck.investigate import shrink
from replcheck.model import mutants as M
from replcheck.properties.core import PROPERTIES
from replcheck.properties.judge import judge
from replcheck.results import excused

# The bugs added to measure the search on bugs it was not written for (model/mutants.py, its last section).
HISTORICAL = (M.RLI_WRITTEN_AFTER_COMMIT, M.BINLOG_WRITE_ERROR_IGNORED, M.MASTER_FDE_LAG, M.PARALLEL_LAG_FROM_LAST_COMMIT,
              M.MTS_LAG_ZERO_AFTER_IDLE, M.FILTERED_DDL_GTID_LOST, M.PARALLEL_EXEC_POS_NOT_AT_ROTATE,
              M.PARALLEL_RESTART_PAST_GIVEN_UP, M.SEMISYNC_WAITS_WHILE_DISABLED)


def search(m: M.Mutant, seed: int, limit: int, families: tuple[str, ...], judged: tuple[str, ...] | None) -> dict:
    mutant, base = systems.get(f"mutant:{m.name}"), systems.get(m.base)
    start, reached = time.perf_counter(), None
    for index in range(limit):
        history = generate(seed, index, families)
        mine, theirs = mutant.run(history), base.run(history)
        if _observed(mine) == _observed(theirs):
            continue  # the same Trace: the same verdicts, nothing to tell them apart
        reached = index if reached is None else reached
        if got := anywhere(mutant, base, history, judged):
            seconds = time.perf_counter() - start
            small, _ = shrink(history, lambda h: got[0] in anywhere(mutant, base, h, (got[0],)))
            return {"index": index, "seconds": round(seconds, 2), "requirement": got[0], "steps": len(history["ops"]),
                    "shrunk": len(small["ops"]), "reached": reached}
    return {"index": None, "seconds": round(time.perf_counter() - start, 2), "requirement": "", "steps": None,
            "shrunk": None, "reached": reached}


def anywhere(mutant, base, history: dict, judged: tuple[str, ...] | None) -> tuple[str, ...]:
    """The requirements, any of `judged` (None: all), violated on the mutant and excused by nothing:
    neither declared nor violated by its base on the same History (replcheck.results.excused;
    results.caught counts only the mutant's own kills)."""
    j = judge(mutant, history, judged)
    if not j.violations:
        return ()
    gone = excused(j, judge(base, history, [v.requirement for v in j.violations]))
    return tuple(v.requirement for v in j.violations if v.requirement not in gone)


def _observed(run: tuple[dict, list[dict]]) -> tuple:
    """The Trace without what names the system: its name and the mutants it carries."""
    header, obs = run
    config = {k: v for k, v in header.get("config", {}).items() if k != "mutants"}
    return {**{k: v for k, v in header.items() if k not in ("system", "config")}, "config": config}, obs


def main() -> None:
    p = arguments(__doc__.splitlines()[0], 3000)
    p.add_argument("--label", default="", help="what this run measures (e.g. before, after), kept with the rows")
    p.add_argument("--composed", default="", help="also search these composed families (replcheck.generate.COMPOSED), e.g. mixed")
    p.add_argument("--without", default="", help="requirements not judged (comma-separated): the search as it was before them")
    a = p.parse_args()
    load_features()
    without = set(filter(None, a.without.split(",")))
    judged = tuple(r.requirement for r in PROPERTIES if r.requirement not in without) if without else None
    chosen = [M.REGISTRY[n] for n in a.mutants.split(",")] if a.mutants else list(HISTORICAL)
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for m in chosen:
        row = {"mutant": m.name, "bug": m.bug, "feature": m.feature,
               "own": search(m, a.seed, a.limit, families_for(m.feature), judged),
               "all": search(m, a.seed, a.limit, tuple(FAMILIES), judged),
               **{name: search(m, a.seed, a.limit, (name,), judged) for name in COMPOSED if name in a.composed.split(",")}}
        if a.machines:
            row["machines"] = [s["machine"] for s in machines(m, a.examples, a.seed) if s["found"]]
        rows.append(row)
        print(_line(row), flush=True)
    found = sum(1 for r in rows if r["own"]["index"] is not None or r["all"]["index"] is not None)
    print(f"found {found}/{len(rows)} within {a.limit} Histories of seed {a.seed}; load average after: {os.getloadavg()[0]:.2f}")
    out = record.write("historical_search", {"seed": a.seed, "limit": a.limit, "label": a.label, "without": sorted(without),
                                             "examples": a.examples if a.machines else None, "mutants": [_flat(r) for r in rows]})
    print(f"wrote {out}")


def _flat(row: dict) -> dict:
    """One record of scalars per mutant (the figures page shows each as a table row)."""
    out = {k: v for k, v in row.items() if not isinstance(v, (dict, list))}
    for scope, r in ((k, v) for k, v in row.items() if isinstance(v, dict)):
        out.update({f"{scope}_{k}": r[k] for k in ("index", "seconds", "requirement", "shrunk", "reached")})
    if "machines" in row:
        out["machines"] = ",".join(row["machines"]) or "-"
    return out


def _cell(r: dict) -> str:
    reach = "never reached" if r["reached"] is None else f"reached at {r['reached']}"
    if r["index"] is None:
        return f"not found ({reach})"
    return f"#{r['index']} {r['seconds']}s {r['requirement']} {r['steps']}->{r['shrunk']} steps ({reach})"


def _line(row: dict) -> str:
    machines_found = "" if "machines" not in row else "  machines: " + (",".join(row["machines"]) or "-")
    composed = "".join(f"  {name}: {_cell(row[name])}" for name in COMPOSED if name in row)
    return f"{row['mutant']}  own: {_cell(row['own'])}  all: {_cell(row['all'])}{composed}{machines_found}"


if __name__ == "__main__":
    main()
