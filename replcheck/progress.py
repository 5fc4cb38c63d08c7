"""How a long command shows its progress: one line on stderr, drawn by tqdm, that counts the work
done of the total with the time left, and says what runs now; a message that must stay (a step
finished, a file written) prints above it. verify, conform and tlc count their checks with it.

On a terminal the line is redrawn in place; in a log (CI) it is written at most every
LOG_EVERY_S seconds, so a long run shows how far it got without a line per check.
"""
from __future__ import annotations

import sys

from tqdm import tqdm

from replcheck import exits

LOG_EVERY_S = 15.0


class _Lines:
    """stderr for a log: each of tqdm's redraws as a line of its own, no carriage returns or blanking."""

    def write(self, text: str) -> None:
        if line := text.replace("\r", "").strip():
            sys.stderr.write(line + "\n")

    def flush(self) -> None:
        sys.stderr.flush()


def _plural(unit: str) -> str:
    return unit[:-1] + "ies" if unit.endswith("y") else unit + "s"


class Progress:
    def __init__(self, command: str, total: int, unit: str = "check", done: int = 0):
        """`done`: the work found done already (a resumed run), not counted in the rate."""
        self.command = command
        tty = sys.stderr.isatty()
        self.bar = tqdm(total=total, initial=done, desc=command, unit=unit, file=sys.stderr if tty else _Lines(), dynamic_ncols=tty,
                        ncols=None if tty else 200, leave=True,
                        mininterval=0.2 if tty else LOG_EVERY_S, maxinterval=LOG_EVERY_S if not tty else 10.0,
                        bar_format="[{desc}] {n_fmt}/{total_fmt} " + _plural(unit) + ", {elapsed} elapsed, {remaining} left{postfix}")

    def now(self, what: str) -> None:
        """What runs now, on the line."""
        exits.check()  # each step of long work is where a lost stop signal is raised again
        self.bar.set_postfix_str(what, refresh=False)

    def done(self, n: int = 1) -> None:
        exits.check()
        self.bar.update(n)

    def more(self, n: int) -> None:
        """Work found on the way (a search that goes on to the next machine)."""
        self.bar.total += n
        self.bar.refresh()

    def say(self, message: str) -> None:
        """A line that stays, above the progress line."""
        self.bar.write(f"[{self.command}] {message}", file=sys.stderr)

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
