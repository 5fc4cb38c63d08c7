"""A full disk under a node's binlog, the way the field makes one: the binlog on a small
filesystem of its own (a tmpfs; mounting one needs root, which CI and this machine's set-up run
as), filled by a file the harness writes until the kernel answers ENOSPC and deletes to free the
space. The server is not told: its next binlog write meets the full disk as it would in production.

Why a transaction's binlog write then always waits: a filesystem hands out space in pages, so a
write that fits in the part of the binlog's last page already allocated would still succeed on a
full disk. The runner makes each transaction it commits on a full disk write a row of PAD_BYTES
(ops.py), more than the free part of any page, so that its write needs space the disk lacks.
"""
from __future__ import annotations

import errno
import os
import subprocess

SIZE = "16m"  # a History's binlogs are kilobytes; room for the padded rows of a few waiting commits
BALLAST = "replcheck-ballast"
PAD_BYTES = 9000  # more than two pages of 4 KiB: see above


class Unavailable(Exception):
    """A small filesystem cannot be had here (the harness reports it as the environment's failure)."""


def mount(path: str) -> None:
    """A tmpfs of SIZE at PATH (an empty folder)."""
    if os.geteuid() != 0:
        raise Unavailable(f"a full disk needs a small filesystem for the binlog, and mounting one needs root "
                          f"(replcheck runs as uid {os.geteuid()})")
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "tmpfs", path],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unavailable(f"mount -t tmpfs at {path}: {e}") from None
    if done.returncode != 0:
        raise Unavailable(f"mount -t tmpfs at {path} failed: {done.stderr.strip() or done.returncode}")


def fill(path: str) -> None:
    """Write the ballast until the filesystem has no free page left: only on a filesystem of its
    own (a mount point), never on whatever disk PATH happens to be on."""
    if not os.path.ismount(path):
        raise Unavailable(f"{path} is not a filesystem of its own: it is not filled")
    with open(os.path.join(path, BALLAST), "ab", buffering=0) as f:
        for chunk in (1 << 20, 4096, 512, 1):
            try:
                while True:
                    f.write(b"\0" * chunk)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise


def free(path: str) -> None:
    try:
        os.remove(os.path.join(path, BALLAST))
    except FileNotFoundError:
        pass


def mounts_under(root: str) -> list[str]:
    """The mount points at or below ROOT, deepest first (/proc/self/mounts)."""
    root = os.path.realpath(root)
    try:
        with open("/proc/self/mounts") as f:
            points = [line.split()[1].replace("\\040", " ") for line in f]
    except OSError:
        return []
    return sorted((p for p in points if p == root or p.startswith(root + os.sep)), key=len, reverse=True)


def unmount_under(root: str) -> list[str]:
    """Unmount every filesystem at or below ROOT (lazily: a server killed a moment ago may still hold
    a file); what could not be unmounted, with why."""
    failed = []
    for p in mounts_under(root):
        done = subprocess.run(["umount", "-l", p], capture_output=True, text=True)
        if done.returncode != 0:
            failed.append(f"{p}: {done.stderr.strip()}")
    return failed
