"""SQL through the `mariadb` command-line client: literals, connection names, and its XML output parsed
so that NULL and the string 'NULL' differ (no client library needed)."""
from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from typing import Callable, Mapping

from replcheck.harness.errors import HarnessError, NoAnswer, SqlError
from replcheck.harness.topology import valid_connection

_CLIENT_ERROR = re.compile(r"^ERROR (\d+) \(([0-9A-Za-z]{5})\)(?: at line \d+)?: (.*)", re.M | re.S)
_XSI_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
# XML 1.0 cannot carry these (and folds \r), so they travel as private-use characters.
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0d\x0e-\x1f]")
_UNCTRL = re.compile(r"[\ue000-\ue01f]")

Results = list[tuple[list[str], list[list[str | None]]]]


def connection_clause(connection: str | None) -> str:
    """What names a multi-source connection in CHANGE MASTER, START/STOP/RESET SLAVE and SHOW SLAVE
    STATUS (MariaDB's `'name'` after the keyword, sql/sql_yacc.yy optional_connection_name); nothing for
    the default connection, or `''` where a multi-source topology names it among the others.
    Refuses a name valid_connection does not allow."""
    if connection is None:
        return ""
    if not valid_connection(connection):
        raise HarnessError(f"connection {connection!r} is not '' or 1 to 64 letters, digits or _")
    return f" {sql_quote(connection)}"


def sql_quote(s: str) -> str:
    """A string literal (the default sql_mode: backslash escapes are on)."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'").replace("\0", "\\0") + "'"


def parse_xml_results(out: bytes) -> list[tuple[list[str], list[list[str | None]]]]:
    """The `mariadb --xml` output of one or more statements: (columns, rows) per result set.
    NULL is None. The client itself prints NUL bytes as spaces; bytes that are not UTF-8 are
    replaced (select HEX(col) to see raw bytes)."""
    text = _CTRL.sub(lambda m: chr(0xE000 + ord(m.group())), out.decode("utf-8", "replace"))
    results = []
    for doc in text.split('<?xml version="1.0"?>'):
        if not doc.strip():
            continue
        columns: list[str] = []
        rows = []
        for row in ET.fromstring(doc.strip()).iter("row"):
            fields = row.findall("field")
            if not columns:
                columns = [f.get("name", "") for f in fields]
            rows.append([None if f.get(_XSI_NIL) == "true" else
                         _UNCTRL.sub(lambda m: chr(ord(m.group()) - 0xE000), f.text or "") for f in fields])
        results.append((columns, rows))
    return results


def run(client: str, defaults_file: str, port: int, statement: str, *, node: str, timeout: float,
        env: Mapping[str, str], redact: Callable[[str], str]) -> Results:
    """The statements, in one client session over TCP to 127.0.0.1:`port`: every result set. A failed
    statement raises SqlError (its number, SQLSTATE, message), one not answered within `timeout`
    NoAnswer, anything else HarnessError; `redact`
    hides passwords in what is raised."""
    # The option file keeps the password out of the process list.
    args = [client, f"--defaults-file={defaults_file}", "--protocol=TCP", "--host=127.0.0.1", f"--port={port}",
            "--batch", "--xml", "--default-character-set=utf8mb4", f"--connect-timeout={max(1, int(min(timeout, 10)))}"]
    try:  # the statement on stdin, not argv: it may hold a password
        out = subprocess.run(args, input=statement.encode(), capture_output=True, timeout=timeout, env=dict(env))
    except subprocess.TimeoutExpired:
        raise NoAnswer(node, timeout, redact(statement)) from None
    if out.returncode != 0:
        err = out.stderr.decode("utf-8", "replace")
        m = _CLIENT_ERROR.search(err)
        if m:
            raise SqlError(node, int(m.group(1)), m.group(2), redact(m.group(3).strip()), redact(statement))
        raise HarnessError(f"node {node}: mariadb client exited {out.returncode}: {redact(err.strip())}")
    try:
        return parse_xml_results(out.stdout)
    except ET.ParseError as e:
        raise HarnessError(f"node {node}: unreadable client output ({e}): {redact(statement)[:200]}") from None
