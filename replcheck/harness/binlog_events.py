"""A binlog's events as the collector reads them: the bytes SHOW BINLOG EVENTS leaves out (each
header's timestamp, an incident's code and message), and a group's events as a replica relayed and
committed them."""
from __future__ import annotations


# What begins a statement of a group in the binlog: its Annotate_rows (ROW format), its Query
# (STATEMENT format), or a Table_map after a Rows event (ROW format without annotations).
STATEMENT_STARTS = frozenset({"ANNOTATE_ROWS_EVENT", "QUERY_EVENT"})


ROWS_EVENTS = frozenset({"WRITE_ROWS_EVENT", "UPDATE_ROWS_EVENT", "DELETE_ROWS_EVENT"})


def as_relayed(group: list[dict], relayed: dict, node: str, connection: str | None, gtid: str) -> list[dict]:
    """The group's events as the replica's relay log holds them: a hop further down a chain relays
    its source's binlog copy, which may differ from the origin's (B, binlog_format ROW, logs A's
    three statement events as six row events): the SQL thread executes those. The origin's where
    the copy is the same or not whole."""
    copy = []
    while (copies := relayed.get((node, connection, gtid, len(copy)))):
        copy.append(copies[0])
    whole = copy and copy[-1].get("last")
    return copy if whole and [e["type"] for e in copy] != [e["type"] for e in group] else group


def committed(group: list[dict], parts: dict[int, int]) -> list[dict]:
    """The events of a group a replica committed, as its rows show: statement i of a client
    transaction inserts the row (k, i), so a statement whose row the replica has fewer of than the
    first statement's was committed without it (a partial group, PARTIAL.GROUP.WHOLE): its events
    are left out, the commit (the group's last event) is not. The SQL thread's events are not
    observed one by one; this is what its commit left. No rows (DDL, not read): the whole group."""
    if not parts:
        return group
    statements: list[list[dict]] = []
    for e in group[1:-1]:
        if not statements or e["type"] in STATEMENT_STARTS or (e["type"] == "TABLE_MAP_EVENT"
                                                              and statements[-1][-1]["type"] in ROWS_EVENTS):
            statements.append([e])
        else:
            statements[-1].append(e)
    first = parts.get(0, 0)
    return group[:1] + [e for i, st in enumerate(statements) for e in st if parts.get(i, 0) >= first] + group[-1:]


def close_group(group: list[dict]) -> None:
    if group:
        group[-1]["last"] = True


def incident_body(path: str, pos: int) -> dict:
    """An INCIDENT_EVENT's code and message, from its body: 2-byte code, 1-byte length, message
    (SHOW BINLOG EVENTS shows the code's name but not the message)."""
    try:
        with open(path, "rb") as f:
            f.seek(pos + 19)  # past the common header
            body = f.read(3 + 255)
    except OSError:
        return {}
    if len(body) < 3:
        return {}
    return {"incident": int.from_bytes(body[:2], "little"), "message": body[3:3 + body[2]].decode("utf-8", "replace")}


def header_timestamps(path: str, positions: list[int]) -> dict[int, int]:
    """The 4-byte little-endian timestamp that starts each event header (SHOW BINLOG EVENTS omits it)."""
    out = {}
    try:
        with open(path, "rb") as f:
            for pos in positions:
                f.seek(pos)
                b = f.read(4)
                if len(b) == 4:
                    out[pos] = int.from_bytes(b, "little")
    except OSError:
        pass
    return out
