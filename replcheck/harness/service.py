"""Who the servers run as. As root, replcheck starts MariaDB as an unprivileged user, as Debian's
service and mysql_install_db's --user do: mariadbd switches to it at start (sql/mysqld.cc,
check_user/set_user), and a server replcheck drives can then touch nothing of the machine's that
the user could not. Not as root, the servers run as the user replcheck runs as, and nothing here acts."""
from __future__ import annotations

import os
import pathlib
import pwd
import stat

SERVICE_USER = "mysql"  # Debian's mariadb-server creates it


class Refused(Exception):
    """The service user cannot be had or cannot reach the servers' folder (the harness says why)."""


def as_root() -> bool:
    return os.geteuid() == 0


def user_args() -> list[str]:
    """mariadbd's --user, when replcheck runs as root."""
    return [f"--user={SERVICE_USER}"] if as_root() else []


def _user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        raise Refused(f"running as root, replcheck starts MariaDB as the unprivileged user {SERVICE_USER!r}, "
                      f"which this machine lacks (Debian's mariadb-server creates it; or run as another user)") from None


def open_to_it(root: str, tmpdir_setting: str) -> None:
    """As root: ROOT lets the service user through to its node's folder and lists nothing (0711), and
    every folder above it lets it through, or Refused naming the first that does not."""
    if not as_root():
        return
    os.chmod(root, 0o711)
    user = _user()
    for d in reversed(pathlib.Path(root).resolve().parents):
        st = os.stat(d)
        bit = 0o100 if st.st_uid == user.pw_uid else 0o010 if st.st_gid == user.pw_gid else 0o001
        if not st.st_mode & bit:
            raise Refused(f"the servers run as {SERVICE_USER!r} (replcheck runs as root), who cannot pass through "
                          f"{d} (mode {stat.S_IMODE(st.st_mode):o}): give it o+x, or set {tmpdir_setting} to a folder it can")


def give(path: str) -> None:
    """As root: a node's files to the service user, so that its server can write them."""
    if not as_root():
        return
    user = _user()
    for where, dirs, files in os.walk(path):
        for name in [where, *(os.path.join(where, n) for n in dirs + files)]:
            os.chown(name, user.pw_uid, user.pw_gid, follow_symlinks=False)
