"""Requirement coverage as a number: per requirement, how many Histories exercised it
(some system gave `pass` or `violated`, not `not_exercised`), and for a requirement whose check has
distinct conditions (the catalogue's `conditions`, which its property reports reaching), how many
Histories reached each.

A requirement exercised by fewer than 1 in 1,000 Histories is *weakly covered*; the generator's
floor is 1 in 100 Histories of the requirement's own families (replcheck.generate.families_for
its feature), and a requirement below it is listed with its rate there. The counts come from a
campaign's table (`of_table`, at the end of every campaign) or from Verdicts as they are judged
(`Coverage.add`, what the bench and the tests use).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from replcheck import catalogue
from replcheck.generate import FAMILIES, families_for
from replcheck.properties.core import PASS, PROPERTIES, VIOLATED, Verdict

WEAK = 1 / 1000  # below this share of all Histories: weakly covered
FLOOR = 1 / 100  # what the generator must give every requirement in its families' Histories


@dataclass
class Coverage:
    histories: Counter = field(default_factory=Counter)  # family -> Histories
    exercised: Counter = field(default_factory=Counter)  # (family, requirement) -> Histories that exercised it
    conditions: Counter = field(default_factory=Counter)  # (family, requirement, condition) -> Histories that reached it

    def add(self, family: str, verdicts: Iterable[Verdict]) -> None:
        """One History: the verdicts every system gave on it (a requirement counts once per History)."""
        verdicts = list(verdicts)
        self.histories[family] += 1
        self.exercised.update({(family, v.requirement) for v in verdicts if v.status in (PASS, VIOLATED)})
        self.conditions.update({(family, v.requirement, c) for v in verdicts for c in v.conditions})

    def as_dict(self) -> dict:
        """Per requirement a trace property judges: Histories that exercised it, its rate overall and
        in its families, each condition's count; the weakly covered and the ones under the floor
        (JSON, for summary.json)."""
        total = sum(self.histories.values())
        traced = {p.requirement for p in PROPERTIES}
        rows = []
        for r in catalogue.load():
            if r.id not in traced:  # a proof's or TLC's alone: no History exercises it
                continue
            own = [f for f in _families(r.feature) if self.histories[f]]
            n = sum(self.exercised[(f, r.id)] for f in self.histories)
            in_own = sum(self.histories[f] for f in own)
            rows.append({"requirement": r.id, "feature": r.feature, "histories": n, "rate": n / total if total else 0.0,
                         "families": own,
                         "family_rate": sum(self.exercised[(f, r.id)] for f in own) / in_own if in_own else None,
                         "conditions": {c: sum(self.conditions[(f, r.id, c)] for f in self.histories) for c in r.conditions}})
        # a share is only told apart from 0 once its Histories number its inverse
        return {"histories": dict(sorted(self.histories.items())), "requirements": rows,
                "weakly_covered": [x["requirement"] for x in rows if total >= 1 / WEAK and x["rate"] < WEAK],
                "under_floor": [x["requirement"] for x in rows if x["family_rate"] is not None and x["family_rate"] < FLOOR
                                and sum(self.histories[f] for f in x["families"]) >= 1 / FLOOR]}


def _families(feature: str) -> tuple[str, ...]:
    return families_for(feature) or tuple(FAMILIES)


def lines(report: dict) -> list[str]:
    """The coverage as a few lines for a terminal: the Histories per family, the requirements under
    the floor of their families, the weakly covered, and each condition's count."""
    h = report["histories"]
    out = [f"requirement coverage over {sum(h.values())} Histories ({', '.join(f'{f} {n}' for f, n in h.items())})"]
    rows = {x["requirement"]: x for x in report["requirements"]}
    low = [rows[r] for r in report["under_floor"]]
    out.append(f"  under 1 in {round(1 / FLOOR)} of their families' Histories: "
               + (", ".join(f"{x['requirement']} {x['family_rate']:.2%}" for x in low) if low else "none"))
    weak = report["weakly_covered"] if sum(h.values()) >= 1 / WEAK else ["too few Histories to tell"]
    out.append(f"  weakly covered (under 1 in {round(1 / WEAK)}): " + (", ".join(weak) or "none"))
    for x in report["requirements"]:
        if x["conditions"] and (x["families"] or x["histories"]):
            out.append(f"  {x['requirement']}: " + "; ".join(f"{c} {n}" for c, n in x["conditions"].items()))
    return out


def of_table(df) -> dict:
    """The coverage of a campaign from its table: per family, its Histories, and per requirement
    those in which any system's verdict was pass or violated, and per condition those in which a
    system's check reached it."""
    from pyspark.sql import functions as F

    # A row per (History, system) lists the requirements it passed and violated (campaign.py).
    df = df.where("kind = 'history'")
    cov = Coverage()
    for r in df.groupBy("family").agg(F.countDistinct("index").alias("n")).collect():
        cov.histories[r["family"]] = r["n"]
    judged = df.select("family", "index", F.explode(F.concat("passed", "violated")).alias("requirement"))
    for r in judged.groupBy("family", "requirement").agg(F.countDistinct("index").alias("n")).collect():
        cov.exercised[(r["family"], r["requirement"])] = r["n"]
    # a condition counts once per History, whichever systems reached it
    met = (df.select("family", "index", F.explode("reached").alias("requirement", "conditions"))
           .select("family", "index", "requirement", F.explode("conditions").alias("condition")).distinct())
    for r in met.groupBy("family", "requirement", "condition").count().collect():
        cov.conditions[(r["family"], r["requirement"], r["condition"])] = r["count"]
    return cov.as_dict()
