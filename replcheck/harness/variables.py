"""The server variables a History starts its servers with, checked against the very build that will
run it before any server starts: a variable the build lacks would stop its server at start
("unknown variable"), which is the History's problem, not the server's.

What a build has is what `mariadbd --verbose --help` lists under "Variables (--variable-name=value)"
(its options, dashes for underscores), read once per build (cached by the binary's path, size and
modification time), plus the variables that have no command-line option and so are not listed.
"""
from __future__ import annotations

import functools
import os
import re
import subprocess

HELP_HEADER = "Variables (--variable-name=value)"
OPTION = re.compile(r"^  --([a-z0-9][a-z0-9_-]*)")
# Set at run time only: declared NO_CMD_LINE in sql/sys_vars.cc (Sys_slave_skip_counter,
# Sys_gtid_slave_pos, Sys_gtid_binlog_state, Sys_default_master_connection), so --help omits them.
RUNTIME_ONLY = frozenset({"sql_slave_skip_counter", "gtid_slave_pos", "gtid_binlog_state", "default_master_connection"})


class Unreadable(Exception):
    """`mariadbd --verbose --help` did not list the variables (the build's problem)."""


def listed(help_text: str) -> frozenset[str]:
    """The variable names of a `--verbose --help` text, with underscores: its table of variables,
    and the options described above it (a list option such as --replicate-ignore-table has no row
    in the table)."""
    lines = help_text.splitlines()
    options = {m.group(1).replace("-", "_") for line in lines if (m := OPTION.match(line))}
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith(HELP_HEADER))
    except StopIteration:
        raise Unreadable(f"no {HELP_HEADER!r} section") from None
    names = set()
    for line in lines[start + 3:]:  # the header's two lines and the dashes
        if not line.strip():
            break
        names.add(line.split()[0].replace("-", "_"))
    return frozenset(names | options)


@functools.lru_cache(maxsize=8)
def _variables(mariadbd: str, basedir: str | None, size: int, mtime_ns: int) -> frozenset[str]:
    args = [mariadbd, "--no-defaults", *([f"--basedir={basedir}"] if basedir else []), "--verbose", "--help"]
    try:
        out = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unreadable(f"{mariadbd} --verbose --help: {e}") from None
    try:
        return listed(out.stdout) | RUNTIME_ONLY
    except Unreadable as e:
        raise Unreadable(f"{mariadbd} --verbose --help (exit {out.returncode}): {e}") from None


def of(server) -> frozenset[str]:
    """Every variable the build (a ServerBinaries) has."""
    st = os.stat(server.mariadbd)
    return _variables(server.mariadbd, server.basedir, st.st_size, st.st_mtime_ns)


def lacking(history: dict, server) -> str | None:
    """The first variable the History asks for that the build lacks, as one line naming where the
    History asks for it, the variable and the server's version; None when it has them all."""
    have = of(server)
    # Only what its servers start with: a SET GLOBAL of a variable the server lacks is answered by the
    # server itself (ER_UNKNOWN_SYSTEM_VARIABLE), which a History may mean to see.
    where = [(f"topology.nodes[{i}].variables.{name}", name)
             for i, n in enumerate(history["header"]["topology"]["nodes"]) for name in (n.get("variables") or {})]
    for place, name in where:
        if name.lower() not in have:
            return f"{place}: MariaDB {server.version} has no variable {name} (its mariadbd --verbose --help lists none such)"
    return None
