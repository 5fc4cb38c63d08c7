"""Output directories: replcheck writes a directory only where nothing of anyone else's can be lost.

Every directory replcheck writes carries a marker file, MARKER, naming its kind. An existing --out
is used only when it is such a directory of the same kind, or an empty directory; anything else (a
directory of other files, the current directory or one holding it, a regular file, a symbolic
link, a FIFO, a device) is refused before any work starts: exit 2, one line, nothing touched.

A report (verify, conform, report) is built whole in a hidden staging directory beside --out and
swapped in at the end, the old report and the new exchanged in one renameat2(RENAME_EXCHANGE) where
the kernel has it, so a reader sees the old report or the new one and never a mix; the staging
directory is removed on any exit the process lives through (replcheck.exits turns SIGTERM and
SIGINT into exceptions), and one left by kill -9 by the next run for the same --out. Files of their own
(replay's) are added to a directory of their kind, never replacing it.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import secrets
import shutil
import stat
from pathlib import Path
from typing import Iterator

from replcheck.io import InputError, lstat, write_atomic

MARKER = ".replcheck-output"
REPORT, REPLAY = "report", "replay"  # the kinds: a report replaces a report; replay adds files to its own


def _marked(path: Path) -> str | None:
    """The kind a directory's marker names, None when it has no readable marker."""
    try:
        doc = json.loads((path / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc.get("kind") if isinstance(doc, dict) and isinstance(doc.get("kind"), str) else None


def place(out: str | os.PathLike) -> Path | None:
    """OUT as an absolute path when it is a directory or nothing (None then: a new one), else the
    InputError: a symbolic link, a file, a FIFO or device, the current directory or one holding it."""
    out = Path(out)
    st, shown = lstat(out), str(out)
    absolute = Path(os.path.abspath(out))
    if st is None:
        parent = next(p for p in absolute.parents if os.path.lexists(p))
        if not os.path.isdir(parent):
            raise InputError(shown, None, "", f"cannot write: Not a directory ({parent} is not one)")
        return None
    if stat.S_ISLNK(st.st_mode):
        raise InputError(shown, None, "", "a symbolic link: refused as an output directory (name the directory itself)")
    if not stat.S_ISDIR(st.st_mode):
        what = "a regular file" if stat.S_ISREG(st.st_mode) else "not a directory (a FIFO, socket or device)"
        raise InputError(shown, None, "", f"{what}: refused as an output directory")
    here = Path(os.path.abspath(os.getcwd()))
    if absolute == here or absolute in here.parents:
        raise InputError(shown, None, "", "the current directory or one holding it: refused as an output directory")
    return absolute


def check(out: str | os.PathLike, kind: str) -> Path:
    """OUT as an absolute path, when replcheck may write a directory of `kind` there; else the InputError."""
    absolute, shown = place(out), str(out)
    if absolute is None:
        return Path(os.path.abspath(out))
    try:
        empty = next(os.scandir(absolute), None) is None
    except OSError as e:
        raise InputError(shown, None, "", f"cannot read: {e.strerror or e}") from None
    found = _marked(absolute)
    if empty or found == kind:
        return absolute
    if found is not None:
        raise InputError(shown, None, "", f"replcheck's {found} output, not a {kind}: refused (name a new directory)")
    raise InputError(shown, None, "", f"an existing directory that is not replcheck's {kind} output "
                                      f"(no {MARKER}): refused, nothing in it touched (name a new or empty directory)")


def _mark(directory: Path, kind: str) -> None:
    write_atomic(directory / MARKER, json.dumps({"schema": "replcheck.output/1", "kind": kind}) + "\n")


def _writable(e: OSError, out: Path) -> InputError:
    return InputError(str(out), None, "", f"cannot write: {e.strerror or e}")


def ensure(out: str | os.PathLike, kind: str) -> Path:
    """A directory of `kind` at OUT to add files to (created, or marked when it was empty)."""
    path = check(out, kind)
    try:
        path.mkdir(parents=True, exist_ok=True)
        if _marked(path) is None:
            _mark(path, kind)
    except OSError as e:
        raise _writable(e, Path(out)) from None
    return path


def _stale(out: Path) -> None:
    for old in out.parent.glob(f".{out.name}.staging-*"):
        pid = old.name[len(out.name) + len(".staging-") + 1:].split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):  # another name is not ours to remove
            shutil.rmtree(old, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: not ours to judge
        return True
    return True


@contextlib.contextmanager
def staged(out: str | os.PathLike, kind: str = REPORT, keep: bool = False) -> Iterator[Path]:
    """A staging directory to write the whole output into; swapped in for OUT when the block ends
    without an exception, removed whatever happens. With `keep` it starts as OUT's files, hard-linked
    (a writer replaces a file by renaming a new one over it, never writing into the old)."""
    target = check(out, kind)
    # The name is known before the directory exists, so that a signal at any point leaves nothing behind.
    staging = target.with_name(f".{target.name}.staging-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _stale(target)
            staging.mkdir()
        except OSError as e:  # a parent is a file, no permission, a full disk
            raise _writable(e, Path(out)) from None
        if keep and target.is_dir():
            shutil.copytree(target, staging, symlinks=True, dirs_exist_ok=True, copy_function=_link)
        yield staging
        _mark(staging, kind)
        check(out, kind)  # again: something may have appeared at OUT meanwhile
        _swap(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Exchange two paths in one step (Linux renameat2); False where the kernel or libc cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _link(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another filesystem, or one without hard links
        shutil.copy2(src, dst)


def _swap(staging: Path, target: Path) -> None:
    """The finished output in place of TARGET; the old one (if any) left in STAGING to be removed."""
    if not target.exists():
        os.rename(staging, target)
        return
    if _exchange(staging, target):
        return
    # Without RENAME_EXCHANGE: two renames, the old report kept aside until the new one is in place.
    aside = staging.with_name(staging.name + "-old")
    os.rename(target, aside)
    os.rename(staging, target)
    os.rename(aside, staging)
