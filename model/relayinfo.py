"""relay-log.info, read and written byte for byte in both formats of WL#344.

Old format: four \\n-terminated lines (relay log name, relay log pos, master log name, master
log pos). New format: a first line with the number of fields (5 or more), the same four
fields, the delay. Either may be followed by garbage, because the file is overwritten in place
and never truncated; a reader therefore reads exactly the lines it needs and ignores the rest.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from replcheck.spec.formats import MAX_MASTER_DELAY

NEW_FORMAT_FIELDS = 5
FIELD_NAMES = ("relay_log_name", "relay_log_pos", "master_log_name", "master_log_pos", "delay")


class RelayLogInfoError(ValueError):
    """The file cannot be read; `line` is 1-based, `field` names what was expected there."""

    def __init__(self, line: int, field: str, problem: str):
        super().__init__(f"line {line}: {field}: {problem}")
        self.line, self.field, self.problem = line, field, problem


@dataclass(frozen=True)
class RelayLogInfo:
    relay_log_name: str
    relay_log_pos: int
    master_log_name: str
    master_log_pos: int
    delay: int = 0
    old_format: bool = False  # how it was read, and how encode() writes it
    garbage: str = ""  # bytes after the last field read

    def encode(self) -> str:
        """The content in this info's format, without garbage; see overwrite() for what lands on disk.
        A pre-WL#344 server writes the old format, which has no count line and no delay."""
        lines = f"{self.relay_log_name}\n{self.relay_log_pos}\n{self.master_log_name}\n{self.master_log_pos}\n"
        return lines if self.old_format else f"{NEW_FORMAT_FIELDS}\n{lines}{self.delay}\n"


def overwrite(old_content: str, info: RelayLogInfo) -> str:
    """What the file holds after writing `info` in place over `old_content` without truncating."""
    written = info.encode()
    if written.isascii() and old_content.isascii():  # as nearly always: a character is a byte, the strings overlay as the bytes do
        return written + old_content[len(written):]
    new = written.encode("utf-8", "surrogateescape")
    old = old_content.encode("utf-8", "surrogateescape")
    return (new + old[len(new):]).decode("utf-8", "surrogateescape")  # bytes, as the file holds them


def _integer(lines: list[str], n: int, field: str) -> int | None:
    """Line n (0-based) as a non-negative integer, None if it is not one; an integer with more digits
    than int() converts is an error, not a crash."""
    if not (lines[n].isascii() and lines[n].isdigit()):
        return None
    try:
        return int(lines[n])
    except ValueError:
        raise RelayLogInfoError(n + 1, field, f"an integer of more than {sys.get_int_max_str_digits()} digits") from None


def parse(content: str) -> RelayLogInfo:
    lines = content.split("\n")
    if len(lines) < 2:  # not even one \n-terminated line
        raise RelayLogInfoError(1, "first line", "missing or not \\n-terminated")
    count = _integer(lines, 0, "number_of_fields")
    if count is not None:
        if count < NEW_FORMAT_FIELDS:
            raise RelayLogInfoError(1, "number_of_fields", f"{count} is less than {NEW_FORMAT_FIELDS}")
        start, names, old = 1, FIELD_NAMES, False
    else:
        count, start, names, old = 4, 0, FIELD_NAMES[:4], True
    values: list[str] = []
    ints: dict[str, int] = {}
    for i, name in enumerate(names):
        n = start + i
        if n >= len(lines) - 1:  # the last split piece has no terminating \n
            raise RelayLogInfoError(n + 1, name, "missing or not \\n-terminated")
        values.append(lines[n])
        if name.endswith("_pos") or name == "delay":
            value = _integer(lines, n, name)
            if value is None:
                raise RelayLogInfoError(n + 1, name, f"{lines[n]!r} is not a non-negative integer")
            ints[name] = value
    if ints.get("delay", 0) > MAX_MASTER_DELAY:
        raise RelayLogInfoError(start + 5, "delay", f"{ints['delay']} exceeds the maximum {MAX_MASTER_DELAY}")
    # Fields beyond the ones this version knows are skipped, like garbage.
    consumed = start + (count if not old else 4)
    if consumed > len(lines) - 1:
        missing = len(lines)  # 1-based line number of the first missing field
        raise RelayLogInfoError(missing, f"field {missing - start}", f"file ends before its {count} fields")
    garbage = "\n".join(lines[consumed:])
    return RelayLogInfo(
        relay_log_name=values[0],
        relay_log_pos=ints["relay_log_pos"],
        master_log_name=values[2],
        master_log_pos=ints["master_log_pos"],
        delay=ints.get("delay", 0),
        old_format=old,
        garbage=garbage,
    )
