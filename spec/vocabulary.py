"""The History and Trace vocabulary that more than one writer shares: the model writes a Trace with
it, the harness writes a real server's Trace with it, and the engine reads Histories and Traces by
it. Beside spec/formats.py (codecs and messages) and spec/contract.py (what a System is), and as
they are: names, and the fields an observation carries, never a rule of a server. A model's or
the harness's decisions stay in their own layer; what both must spell alike is here, so neither
reaches into the other for it.
"""
from __future__ import annotations


# -- a History ---------------------------------------------------------------------------------------
def last_sample(history: dict) -> int:
    """Until when a History is sampled: its last op or its end_us, whichever is later."""
    return max([op["at"] for op in history["ops"]] + [history["header"].get("end_us", 0)])


# -- the tables a transaction writes, and its commit's fields ----------------------------------------
DB = "rc"  # the harness's database (replcheck/harness/runner.py, SCHEMA)


def table_of(op: dict) -> str:
    """The table a trx op writes, as the harness builds its statements (runner.trx_statement)."""
    if op.get("ddl"):
        return f"{DB}.d"
    return f"{DB}.m" if op.get("engine") == "myisam" else f"{DB}.r"


def commit_fields(op: dict, filtering: bool) -> dict:
    """What a commit observation adds in a Trace: the table where a topology filters (the properties
    judge each commit by it), and whether the session was marked."""
    return {**({"table": table_of(op)} if filtering else {}), **({"skip_replication": True} if op.get("skip_replication") else {})}


# -- replication filters' variables, as MariaDB names them --------------------------------------------
# A value is a comma-separated list (as the options' repeated values, or SET GLOBAL replicate_do_db='a,b').
MARKED = "replicate_events_marked_for_skip"
REPLICA_RULES = ("replicate_do_db", "replicate_ignore_db", "replicate_do_table", "replicate_ignore_table",
                 "replicate_wild_do_table", "replicate_wild_ignore_table")
SOURCE_RULES = ("binlog_do_db", "binlog_ignore_db")
FILTER_VARIABLES = (MARKED, *SOURCE_RULES, *REPLICA_RULES)


def filters(nodes: list[dict], ops: list[dict]) -> bool:
    """Whether a History's servers filter: a node configured with a filter, or an op setting one
    (SET GLOBAL of a filter variable, a restart with one in its configuration). Its commits then say
    which table they wrote."""
    return any(configured(n.get("variables") or {}) for n in nodes) or any(
        (o.get("op") == "set_global" and o.get("variable") in FILTER_VARIABLES)
        or (o.get("op") == "restart" and configured(o.get("variables") or {})) for o in ops)


def configured(variables: dict) -> dict:
    """The filter settings a node has, for the Trace header (none: nothing, so that an unfiltered
    topology's Trace is what it was)."""
    return {k: variables[k] for k in FILTER_VARIABLES if k in variables}


# -- multi-source: a named connection's fields and files ----------------------------------------------
IGNORE_DUPLICATES = "gtid_ignore_duplicates"
SKIP_REASON = "gtid_ignore_duplicates"  # a `skip` observation's reason when check_duplicate_gtid returns 0


def relay_base(connection: str | None) -> str:
    """The relay log's base name: a named connection's gets `-<name>` (create_logfile_name_with_suffix,
    sql/rpl_mi.cc), so two connections never share a file."""
    return "relay" if not connection else f"relay-{connection}"


def tagged(connection: str | None) -> dict:
    """The `connection` field of an observation: only on a replica whose topology names its connections,
    so that a single-source Trace stays as it was."""
    return {} if connection is None else {"connection": connection}


# -- the parallel applier's variables ----------------------------------------------------------------
THREADS, MODE = "slave_parallel_threads", "slave_parallel_mode"  # MariaDB
WORKERS, PRESERVE = "replica_parallel_workers", "replica_preserve_commit_order"  # MySQL
MARIADB_VARIABLES, MYSQL_VARIABLES = (THREADS, MODE), (WORKERS, PRESERVE)
