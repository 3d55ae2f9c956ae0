"""The seal on answers: an HMAC, keyed by a per-store secret, that a forged answer cannot carry.

Anything that can write the store could otherwise answer the operator's decisions: rewrite a
pending ask to `approve`, or slip `exec allow *` into its remembered rules (issue 18, item 2). So
every answer is sealed when it is written (`Decisions.resolve_approval`, the one writer the
engine, the app, the queue and `resume --decide` all go through) and checked when it is read; an
answer whose seal does not verify is no answer.

The secret is 32 random bytes in `<store>.key`, beside the store and never in it, readable by the
user only (0600). It is made at first use, atomically (a linked temporary file, so two processes
opening a new store agree on one key). The sandbox hides it with the store (`Store.open` hides
both); on the floor and `none` a command can read it, as it can read the store (docs/security.md).
An in-memory store keys with a secret of this process.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ioh_tui.core.errors import ConfigError
from ioh_tui.paths import store_key

KEY_BYTES = 32
_MEMORY = ":memory:"
_process_key = secrets.token_bytes(KEY_BYTES)
_keys: dict[str, bytes] = {}


def key_path(store: str | os.PathLike[str]) -> Path:
    """Where the key of the store at `store` lives (`paths.store_key`)."""
    return store_key(store)


def ensure_key(store: str) -> None:
    """Make the store's key now if it has none, so it exists before any command starts.

    The sandbox can only hide a file that exists when a command starts (`Store.open` calls this).
    A store in a directory the user cannot write (a read-only copy, looked at) gets none: its
    answers then read as unsealed, and answering one fails with the reason.

    Raises:
        ConfigError: The key file is unusable.
    """
    if key_path(store).exists() or os.access(os.path.dirname(os.path.abspath(store)), os.W_OK):
        _key(store)


@dataclass(frozen=True, slots=True)
class Sealed:
    """What an answer's seal covers: the request it answers and everything the answer says."""

    run_id: int
    request_id: int
    act: str
    target: str
    content: str | None
    status: str
    reason: str | None
    performed_target: str | None
    performed_content: str | None
    remembered: Sequence[str]

    def message(self) -> bytes:
        """The bytes the HMAC is taken over (JSON: unambiguous, and safe for any string)."""
        return json.dumps(
            [
                "ioh-tui answer 1",
                self.run_id,
                self.request_id,
                self.act,
                self.target,
                self.content,
                self.status,
                self.reason,
                self.performed_target,
                self.performed_content,
                list(self.remembered),
            ]
        ).encode()


def seal(store: str, fields: Sealed) -> str:
    """The seal (hex HMAC-SHA256) of an answer written to the store at `store`.

    Raises:
        ConfigError: The key file is unusable (not a regular file, not the user's, readable by
            others, or the wrong size).
    """
    return hmac.new(_key(store), fields.message(), hashlib.sha256).hexdigest()


def verifies(store: str, fields: Sealed, mac: str | None) -> bool:
    """Whether `mac` is the seal of `fields` (constant time); a missing seal never verifies."""
    if not mac:
        return False
    return hmac.compare_digest(seal(store, fields), mac)


def _key(store: str) -> bytes:
    if store == _MEMORY:
        return _process_key
    where = os.path.abspath(store)
    if (known := _keys.get(where)) is None:
        known = _keys[where] = _load_or_make(key_path(where))
    return known


def _load_or_make(path: Path) -> bytes:
    try:
        return _load(path)
    except FileNotFoundError:
        pass
    except OSError as exc:  # a symlink (O_NOFOLLOW), a directory, no permission
        raise ConfigError(f"the store's key {path} cannot be read: {exc.strerror}") from exc
    try:
        return _make(path)
    except OSError as exc:
        raise ConfigError(f"the store's key {path} cannot be made: {exc.strerror}") from exc


def _make(path: Path) -> bytes:
    temporary = path.with_name(f"{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, secrets.token_bytes(KEY_BYTES))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)  # fails if another process made the key first: use theirs
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)
    return _load(path)


def _load(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        problem = None
        if not stat.S_ISREG(info.st_mode):
            problem = "is not a regular file"
        elif info.st_uid != os.geteuid():
            problem = "belongs to another user"
        elif info.st_mode & 0o077:
            problem = f"is readable by others (mode {stat.S_IMODE(info.st_mode):o}; chmod 600 it)"
        elif info.st_size != KEY_BYTES:
            problem = f"is {info.st_size} bytes, not {KEY_BYTES}"
        if problem is not None:
            raise ConfigError(f"the store's key {path} {problem}")
        return os.read(fd, KEY_BYTES)
    finally:
        os.close(fd)
