"""The MariaDB build a run uses: its four programs and the version it says it is."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from replcheck.harness.errors import ServerNotFound

BASEDIR_ENV = "REPLCHECK_MARIADB_BASEDIR"
TOOLS = ("mariadbd", "mariadb-install-db", "mariadb", "mariadb-binlog")  # mariadb-binlog reads relay logs


@dataclass(frozen=True)
class ServerBinaries:
    mariadbd: str
    install_db: str
    client: str
    binlog: str  # mariadb-binlog, the server's own reader of binlog and relay-log files
    basedir: str | None  # a user's own build, passed on as --basedir; None for a system install
    version: str  # e.g. '10.11.19-MariaDB-0+deb12u1'
    version_line: str  # the whole `mariadbd --version` line

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", self.version.split("-")[0])[:3])


def find_server(basedir: str | None = None, *, timeout: float = 10.0) -> ServerBinaries:
    """mariadbd, mariadb-install-db, mariadb and mariadb-binlog from `basedir` (its bin/ or sbin/), else from
    $REPLCHECK_MARIADB_BASEDIR, else from PATH and /usr/sbin. ServerNotFound says what is missing."""
    from_env = False
    if basedir is None and os.environ.get(BASEDIR_ENV):
        basedir, from_env = os.environ[BASEDIR_ENV], True
    found: dict[str, str] = {}
    if basedir is not None:
        basedir = os.path.abspath(basedir)
        for tool in TOOLS:
            for sub in ("bin", "sbin"):
                path = os.path.join(basedir, sub, tool)
                if os.path.isfile(path) and os.access(path, os.X_OK):
                    found[tool] = path
                    break
        where = f"{basedir}/bin or {basedir}/sbin" + (f" (from {BASEDIR_ENV})" if from_env else "")
    else:
        search = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin"])
        for tool in TOOLS:
            path = shutil.which(tool, path=search)
            if path:
                found[tool] = path
        where = "PATH or /usr/sbin"
    missing = [t for t in TOOLS if t not in found]
    if missing:
        raise ServerNotFound(
            f"MariaDB not found: no {', '.join(missing)} in {where}; install mariadb-server and "
            f"mariadb-client, or set {BASEDIR_ENV} to a build's base directory")
    try:
        out = subprocess.run([found["mariadbd"], "--no-defaults", "--version"], stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ServerNotFound(f"MariaDB not usable: {found['mariadbd']} --version failed: {e}") from None
    line = next((ln.strip() for ln in (out.stdout + out.stderr).splitlines() if ln.strip()), "")
    m = re.search(r"\bVer\s+(\S+)", line)
    if out.returncode != 0 or not m:
        raise ServerNotFound(f"MariaDB not usable: {found['mariadbd']} --version exited {out.returncode}: {line!r}")
    return ServerBinaries(found["mariadbd"], found["mariadb-install-db"], found["mariadb"], found["mariadb-binlog"], basedir,
                          m.group(1), line)

