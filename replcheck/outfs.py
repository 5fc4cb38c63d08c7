"""A campaign's --out: a local path or a URI (file://, s3:// or s3a://, gs://, hdfs://), read and
written through pyarrow.fs by the driver and by every task alike.

The tasks write the table's chunk files themselves (not Spark's writer), so that one layer, with
one commit rule, serves every filesystem, including the object stores Spark has no connector for:
a chunk is done exactly when its one file, `table/chunk=K/part-00000.parquet`, exists. Its rows
are a function of the campaign's arguments, so a retried or speculative task writes the same
rows to the same name, and writing it twice changes nothing. The file appears whole or not at
all: on a filesystem with an atomic rename (a local disk, HDFS) it is written under a hidden name
and renamed; on an object store, where rename is a copy, it is written straight to its name, as
an object is visible only once its upload is complete. A killed run leaves at most hidden files
(or an incomplete multipart upload, which the store's lifecycle rule removes), never a partial
chunk.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from functools import cached_property
from urllib.parse import urlsplit

from replcheck import io

CHUNK_FILE = "part-00000.parquet"
SCHEMES = ("file", "s3", "s3a", "gs", "hdfs")
OBJECT_STORES = ("s3", "gcs")  # pyarrow's type names of the filesystems whose rename copies


class OutError(Exception):
    """An --out that names no filesystem this layer reaches: bad input."""


@dataclass(frozen=True)
class Out:
    """The campaign directory: `uri` as given (for messages), `url` what every process opens."""
    uri: str
    url: str  # an absolute local path or a URI pyarrow.fs opens

    @cached_property
    def _opened(self):
        from pyarrow import fs

        if "://" not in self.url:
            return fs.LocalFileSystem(), self.url
        return fs.FileSystem.from_uri(self.url)

    @property
    def fs(self):
        return self._opened[0]

    def path(self, *parts: str) -> str:
        return "/".join((self._opened[1].rstrip("/"), *parts))

    @property
    def local(self) -> bool:
        return self.fs.type_name == "local"

    def __str__(self) -> str:
        return self.uri

    def __getstate__(self):  # a task opens its own filesystem from the URL
        return {"uri": self.uri, "url": self.url}

    def kind(self, *parts: str) -> str | None:
        """'file', 'dir' or None (nothing there); an object store's prefix with objects is a 'dir'."""
        from pyarrow.fs import FileType

        if self.local:  # io's checks: a link to a directory, a name no file can have
            path = self.path(*parts)
            return None if io.lstat(path) is None else "dir" if io.is_dir(path) else "file"
        info = self.fs.get_file_info(self.path(*parts))
        return {FileType.File: "file", FileType.Directory: "dir"}.get(info.type)

    def is_empty(self) -> bool:
        from pyarrow.fs import FileSelector

        return not self.fs.get_file_info(FileSelector(self.path(), allow_not_found=True))

    def read_text(self, name: str) -> str:
        if self.local:
            return io.read_text(self.path(name))
        with self.fs.open_input_stream(self.path(name)) as f:
            data = f.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise io.InputError(f"{self.uri}/{name}", None, "", f"not UTF-8 text: {e.reason} at byte {e.start}") from None

    def write_text(self, name: str, text: str) -> None:
        if self.local:
            io.write_atomic(self.path(name), text)
        else:
            self._write(self.path(name), text.encode())

    def _write(self, path: str, data: bytes | None = None, table=None) -> None:
        """Bytes or an Arrow table to `path`, seen whole or not at all (the module's commit rule)."""
        import pyarrow.parquet as pq

        parent = path.rsplit("/", 1)[0]
        self.fs.create_dir(parent, recursive=True)
        direct = self.fs.type_name in OBJECT_STORES
        target = path if direct else f"{parent}/.{uuid.uuid4().hex}.tmp"
        try:
            with self.fs.open_output_stream(target) as f:
                if table is not None:
                    pq.write_table(table, f)
                else:
                    f.write(data)
            if not direct:
                self.fs.move(target, path)
        except BaseException:
            if not direct and self.fs.get_file_info(target).is_file:
                self.fs.delete_file(target)
            raise

    # -- the table ---------------------------------------------------------------------------
    def write_chunk(self, k: int, table) -> None:
        self._write(self.path("table", f"chunk={k}", CHUNK_FILE), table=table)

    def chunk_files(self) -> dict[int, list[str]]:
        """chunk -> its Parquet files: one written here, one per task of the Spark writer of
        earlier versions; hidden files (a killed run's temporary ones) are none."""
        from pyarrow.fs import FileSelector

        out: dict[int, list[str]] = {}
        for info in self.fs.get_file_info(FileSelector(self.path("table"), recursive=True, allow_not_found=True)):
            parts = info.path.rsplit("/", 2)
            if (info.is_file and len(parts) == 3 and parts[1].startswith("chunk=") and parts[2].endswith(".parquet")
                    and not parts[2].startswith((".", "_"))):
                out.setdefault(int(parts[1].split("=", 1)[1]), []).append(info.path)
        return out

    def remove_temporaries(self) -> None:
        """A killed run's hidden files under table/ (an object store has none: nothing is renamed)."""
        from pyarrow.fs import FileSelector

        if self.fs.type_name in OBJECT_STORES:
            return
        for info in self.fs.get_file_info(FileSelector(self.path("table"), recursive=True, allow_not_found=True)):
            name = info.base_name
            if name.startswith(".") and info.is_file:
                self.fs.delete_file(info.path)
            elif name.startswith(".spark-staging-") and info.type.name == "Directory":  # the Spark writer's
                self.fs.delete_dir(info.path)


def open_out(text: str | os.PathLike) -> Out:
    """--out as given: a path (relative to here: made absolute, since the tasks run elsewhere) or a URI."""
    text = os.fspath(text)
    if "://" not in text:
        return Out(text, os.path.abspath(text))
    scheme = urlsplit(text).scheme.lower()
    if scheme not in SCHEMES:
        raise OutError(f"--out {text}: scheme {scheme!r} is not one of {', '.join(SCHEMES)} (or a local path)")
    url = "s3" + text[len("s3a"):] if scheme == "s3a" else text  # the same bucket and key
    out = Out(text, url)
    try:
        out.fs  # an OSError (an S3 region not found, no libhdfs) is the environment's: the caller's to say
    except ValueError as e:  # pyarrow's ArrowInvalid: a URI it cannot parse
        raise OutError(f"--out {text}: {str(e).strip().splitlines()[0]}") from None
    return out


def as_out(out: str | os.PathLike | Out) -> Out:
    return out if isinstance(out, Out) else open_out(out)
