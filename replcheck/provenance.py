"""What made a result: the digest of replcheck's own files, which a campaign's table keeps so that
only the code that began it resumes it (replcheck.campaign)."""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path


@functools.cache
def code_digest() -> str:
    """The digest of the files a campaign's rows depend on besides its plan (replcheck's, its models',
    properties' and spec's): a table is resumed only by the code that began it, never mixed."""
    import replcheck
    from replcheck import model, properties, spec
    h = hashlib.sha256()
    for package in (replcheck, model, properties, spec):
        for root in map(Path, package.__path__):
            for path in sorted(root.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    h.update(f"{package.__name__}/{path.relative_to(root).as_posix()}".encode() + b"\0" + path.read_bytes())
    return "sha256:" + h.hexdigest()[:16]
