"""What each lever that cuts a campaign History's CPU is worth today, measured in one process on
the same Histories of the three models, with the lever and without it in turn (`--rounds` times,
alternated, so that the machine's load moves both alike): the kinds index (properties/judge.py
`exercisable`: a property whose kinds a Trace lacks is not run), the remembered runs and judged
Traces (model/sim/kernel.py `_runs`, properties/judge.py `_judged`: a system whose Config, or Trace,
equals another's is neither run nor judged again), and remembering the generator's runs (the
runs it makes to pick its steps, which no system asks for again), the generator's runs taking only
the status samples its steps read (model/steps `STEPS_READ`), and a Trace equal to one of the
History's before but for the system's name taking its cross-check facts and trace lines
(replcheck/campaign.py, `Judgement.same_as`); and, as a bound on what taking
status samples only where a property reads them could give, the periodic samples themselves (not a
lever to take as it is: without them a Trace holds less to judge, and the rows' checked counts differ).
Usage: .venv/bin/python bench/campaign_levers.py [--histories N] [--rounds N]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from contextlib import contextmanager
from typing import Callable, ContextManager, Iterator

import record
from dataclasses import replace

from replcheck import campaign
from replcheck.features import load_features
from replcheck.model import steps
from replcheck.model.sim import kernel
from replcheck.properties import judge
from replcheck.properties.core import PROPERTIES

MODELS = ("model:wl344", "model:wl7318", "model:groupid")


@contextmanager
def every_property() -> Iterator[None]:
    """No kinds index: every property runs on every Trace."""
    was, everything = judge.exercisable, frozenset(range(len(PROPERTIES)))
    judge.exercisable = lambda view: everything
    try:
        yield
    finally:
        judge.exercisable = was


@contextmanager
def nothing_remembered() -> Iterator[None]:
    """Every system runs and every Trace is judged, equal or not, and nothing is copied to be
    remembered (a run or Trace longer than what is remembered)."""
    runs, judged = kernel.REMEMBERED_UP_TO, judge.REMEMBERED_UP_TO
    kernel.REMEMBERED_UP_TO = judge.REMEMBERED_UP_TO = -1
    try:
        yield
    finally:
        kernel.REMEMBERED_UP_TO, judge.REMEMBERED_UP_TO = runs, judged


@contextmanager
def generator_unremembered() -> Iterator[None]:
    """The generator's runs simulated without the kernel's memory of runs."""
    def simulate(history: dict, config: kernel.Config, system: str = "model",
                 sampled: frozenset[str] = kernel.SAMPLED) -> tuple[dict, list[dict]]:
        sim = kernel.Simulator(history, config, system, sampled)
        out = sim.run()
        sim.dismantle()
        return out

    was, steps.simulate = steps.simulate, simulate
    try:
        yield
    finally:
        steps.simulate = was


@contextmanager
def swapped(owner: object, name: str, value: object) -> Iterator[None]:
    was = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, was)


def generator_sampling_all() -> ContextManager[None]:
    """The generator's runs take every status sample."""
    return swapped(steps, "STEPS_READ", kernel.SAMPLED)


def twins_unshared() -> ContextManager[None]:
    """Every Trace's facts and lines made anew, equal to one of the History's before or not."""
    judged = judge.judge_trace
    return swapped(judge, "judge_trace", lambda *args, **kwargs: replace(judged(*args, **kwargs), same_as=""))


@contextmanager
def unsampled() -> Iterator[None]:
    """The campaign's Histories without periodic status samples (the generator's runs keep theirs)."""
    was = campaign.generate

    def generate(*args, **kwargs) -> dict:
        history = was(*args, **kwargs)
        history["header"]["sample_every_us"] = 0
        return history

    campaign.generate = generate
    try:
        yield
    finally:
        campaign.generate = was


# each lever, and how the work runs without it
LEVERS: dict[str, Callable[[], ContextManager[None]]] = {
    "kinds index": every_property,
    "remembered runs and judged Traces": nothing_remembered,
    "the generator's runs remembered": generator_unremembered,
    "the generator's runs take only the samples its steps read": generator_sampling_all,
    "an equal Trace's facts and lines shared": twins_unshared,
    "periodic status samples (a bound, not a lever)": unsampled,
}


def rate(n: int) -> float:
    start = time.process_time()
    for index in range(1, n + 1):
        campaign.run_history(1, index, MODELS)
    return n / (time.process_time() - start)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--histories", type=int, default=150)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    load_features()
    campaign.run_history(1, 0, MODELS)  # imports and caches: not a History's cost
    levers = []
    for lever, off in LEVERS.items():
        on_rates, off_rates = [], []
        for _ in range(args.rounds):
            on_rates.append(rate(args.histories))
            with off():
                off_rates.append(rate(args.histories))
        on, without = statistics.median(on_rates), statistics.median(off_rates)
        levers.append({"lever": lever, "with": round(on, 1), "without": round(without, 1), "gain": round(on / without - 1, 3),
                       "rounds_with": [round(r, 1) for r in on_rates], "rounds_without": [round(r, 1) for r in off_rates]})
        print(json.dumps(levers[-1]), flush=True)
    print(f"wrote {record.write('campaign_levers', {'histories': args.histories, 'rounds': args.rounds, 'seed': 1, 'systems': list(MODELS), 'levers': levers})}")


if __name__ == "__main__":
    main()
