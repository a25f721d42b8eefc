"""Disks that refuse, for tests, on any system and as any user: a read-only folder (chmod, and where
that does not stop a write, as root, a refusal like the kernel's) and a full disk (ENOSPC part way
through a file ``store.atomic_file`` writes)."""

import errno
import os
import tempfile

from motionctl import store


def read_only(folder, monkeypatch) -> str:
    """Make ``folder`` read-only: chmod, and where that does not stop a write (running as root, as
    the tests do here), a new file in it refused as the kernel would (EACCES from ``mkstemp``).
    Returns how ("chmod" or "simulated"), so a test never passes for want of a read-only folder."""
    folder.chmod(0o500)
    probe = folder / ".probe"
    try:
        probe.write_text("x")
    except PermissionError:
        return "chmod"
    probe.unlink()
    real = tempfile.mkstemp

    def refused(*args, dir=None, **kw):
        if dir is not None and os.path.abspath(dir) == os.path.abspath(folder):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.path.join(str(dir), "tmp"))
        return real(*args, dir=dir, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    return "simulated"


def full_disk(monkeypatch, after: int = 4096) -> None:
    """Every file ``store.atomic_file`` writes fails with ENOSPC once ``after`` bytes are in it (a
    full disk, on any system: /dev/full cannot hold a temporary file beside the target)."""
    real = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh, self.written = fh, 0

        def write(self, data):
            self.written += len(data)
            if self.written > after:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return self.fh.write(data)

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)

    monkeypatch.setattr(store.os, "fdopen", lambda fd, *a, **kw: Full(real(fd, *a, **kw)))
