"""Each z3 proof's wall time and the solver work it used (z3's rlimit count), against the
deterministic limit the proofs run under (properties/proofs RLIMIT). Timing lives here, not in
the tests: a proof's verdict depends on the rlimit alone, never on how busy the machine is.
Usage: .venv/bin/python bench/proofs.py
"""
from __future__ import annotations

import json
import os
import time

import z3

from replcheck.features import load_features
from replcheck.properties import core
from replcheck.properties.proofs import RLIMIT


def _rlimit_used() -> int:
    """The global resource counter of z3's main context (every solver of a proof adds to it)."""
    s = z3.Solver()
    s.check()
    return int(s.statistics().get_key_value("rlimit count"))


def main() -> None:
    load_features()
    rows = []
    for proof in core.PROOFS:
        before, start = _rlimit_used(), time.perf_counter()
        result = proof.run()
        rows.append({"proof": proof.name, "outcome": result.outcome, "expected": result.expected,
                     "seconds": round(time.perf_counter() - start, 2), "rlimit_used": _rlimit_used() - before})
    print(json.dumps({"rlimit": RLIMIT, "load_average": os.getloadavg()[0], "proofs": rows}, indent=1))


if __name__ == "__main__":
    main()
