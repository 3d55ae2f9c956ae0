"""Credential locations hidden inside the mount-namespace backends.

The bubblewrap and namespaces backends show the whole filesystem read-only, so without masking a
command could print `~/.ssh/id_ed25519` into its output, which goes to the model. These well-known
credential stores are covered (directories by an empty read-only tmpfs, files by /dev/null).
Anything not on this list is still readable: see docs/sandbox.md.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

SECRET_DIRS = (
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".kube",
    ".docker",
    ".password-store",
    ".config/gh",
    ".config/gcloud",
)
SECRET_FILES = (
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/git/credentials",
)


def secret_paths(keep: Sequence[Path]) -> tuple[list[str], list[str]]:
    """(directories, files) under the parent's HOME to hide; only those that exist.

    Args:
        keep: the working directory and writable roots; a mask that would cover one of them is
            skipped (hiding the workspace would break the command, and it is the caller's choice).
            A path under /tmp or /dev/shm is only masked when it lies inside one of them: the
            rest of those trees is replaced by private tmpfs anyway, so it is not there to mask.

    Returns:
        Real (symlink-free) paths, so the mount lands on the actual store.
    """
    home = os.environ.get("HOME")
    if not home or not os.path.isabs(home):
        return [], []
    dirs: list[str] = []
    files: list[str] = []
    for names, is_dir, out in ((SECRET_DIRS, True, dirs), (SECRET_FILES, False, files)):
        for name in names:
            path = os.path.join(home, name)
            # One stat first: most of these do not exist, and the rest is path arithmetic that
            # cost more than the command's own start when done for all sixteen (issue 23).
            if not (os.path.isdir(path) if is_dir else os.path.isfile(path)):
                continue
            real = Path(os.path.realpath(path))
            covers_kept = any(k == real or real in k.parents for k in keep)
            visible = not real.is_relative_to("/tmp") and not real.is_relative_to("/dev/shm")
            visible = visible or any(real.is_relative_to(k) for k in keep)
            if visible and not covers_kept:
                out.append(str(real))
    return dirs, files
