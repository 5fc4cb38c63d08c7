"""How much of what the generator draws a real server can run: per family, the share of 200
generated Histories (seed 0 unless --seed) that the harness accepts (check_supported, and the
variables against the installed build when one is found), and the refusals left, most frequent first.
`--target server:mariadb-10.11` generates for that server (generate(..., target=...)).
Usage: .venv/bin/python bench/server_runnable.py [--histories 200] [--seed 0] [--target T]
"""
from __future__ import annotations

import argparse
import collections
import re
import sys
import time


def _reason(message: str) -> str:
    """A refusal without where it fell (ops[i] (at t µs), topology.nodes[i]): one line per kind."""
    message = re.sub(r"^ops\[\d+\] \(at \d+ µs\): ", "", message)
    return re.sub(r"\[\d+\]", "[i]", re.sub(r"\(node [^)]*\)", "", message)).strip()


def main(argv: list[str] | None = None) -> int:
    from replcheck.generate import FAMILIES, generate
    from replcheck.harness.binaries import find_server
    from replcheck.harness.errors import ServerNotFound
    from replcheck.harness.ops import check_server, check_supported
    from replcheck.harness.statements import RunnerError

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--histories", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", default=None)
    args = p.parse_args(argv)
    try:
        server = find_server()
    except ServerNotFound as e:
        server = None
        print(f"no server, variables not checked: {e}", file=sys.stderr)
    worst = 1.0
    began = time.monotonic()
    for family in FAMILIES:
        refusals: collections.Counter[str] = collections.Counter()
        for i in range(args.histories):
            h = generate(args.seed, i, (family,), **({"target": args.target} if args.target else {}))
            try:
                check_supported(h)
                if server is not None:
                    check_server(h, server)
            except RunnerError as e:
                refusals[_reason(str(e))] += 1
        runnable = args.histories - sum(refusals.values())
        worst = min(worst, runnable / args.histories)
        print(f"{family:12} {runnable:4d}/{args.histories} runnable ({100 * runnable / args.histories:.0f} %)")
        for reason, n in refusals.most_common():
            print(f"{'':14}{n:4d}  {reason}")
    print(f"lowest rate {100 * worst:.0f} %; {time.monotonic() - began:.1f} s"
          + (f"; target {args.target}" if args.target else "; no target"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
