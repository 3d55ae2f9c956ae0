"""The scrubbed environment and the rlimits derived from Limits."""

from __future__ import annotations

import resource

import pytest

from ioh_tui.sandbox import Limits
from ioh_tui.sandbox._env import address_space_bytes, rlimits_for, scrubbed_env


def test_only_base_variables_are_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cret")
    monkeypatch.setenv("LANG", "en_GB.UTF-8")
    env = scrubbed_env(extra=None, network=False)
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["LANG"] == "en_GB.UTF-8"
    assert set(env) <= {"PATH", "HOME", "LANG", "TERM", "TMPDIR"}


def test_caller_variables_win_and_backend_overrides_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    env = scrubbed_env(extra={"TERM": "xterm", "X": "1"}, network=False, overrides={"HOME": "/tmp"})
    assert (env["HOME"], env["TERM"], env["X"]) == ("/tmp", "xterm", "1")


def test_proxies_are_removed_unless_network_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = {"HTTPS_PROXY": "http://p:1", "all_proxy": "socks5://p:2", "NO_PROXY": "x"}
    assert not any("proxy" in k.lower() for k in scrubbed_env(extra=extra, network=False))
    assert scrubbed_env(extra=extra, network=True)["HTTPS_PROXY"] == "http://p:1"


def test_inherit_all_keeps_the_parent_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IOH_SOMETHING", "kept")
    assert scrubbed_env(extra=None, network=True, inherit_all=True)["IOH_SOMETHING"] == "kept"


def test_defaults_when_parent_has_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("PATH", "LANG", "TERM"):
        monkeypatch.delenv(key, raising=False)
    env = scrubbed_env(extra=None, network=False)
    assert env["LANG"] == "C.UTF-8" and env["TERM"] == "dumb" and env["PATH"]


def test_address_space_is_derived_from_memory() -> None:
    assert address_space_bytes(Limits()) is None
    assert address_space_bytes(Limits(memory_mb=100)) == 456 * 1024 * 1024
    assert address_space_bytes(Limits(memory_mb=100, address_space_mb=0)) is None
    assert address_space_bytes(Limits(address_space_mb=300)) == 300 * 1024 * 1024


def test_rlimits_cover_every_cap() -> None:
    limits = Limits(cpu_s=1.5, memory_mb=64, file_size_mb=2, open_files=64)
    got = {res: (soft, hard) for res, soft, hard in rlimits_for(limits)}
    assert got[resource.RLIMIT_CPU] == (2, 3)  # SIGXCPU at the soft limit, SIGKILL a second later
    assert got[resource.RLIMIT_AS] == ((2 * 64 + 256) << 20,) * 2
    assert got[resource.RLIMIT_FSIZE] == (2 << 20, 2 << 20)
    assert got[resource.RLIMIT_NOFILE][0] <= 64
    assert got[resource.RLIMIT_CORE] == (0, 0)


@pytest.mark.parametrize(
    ("parent_hard", "expected"),
    [(4096, 4096), (resource.RLIM_INFINITY, 10**9)],
    ids=["finite parent: clamped", "unlimited parent: as asked"],
)
def test_rlimits_never_exceed_the_parent_hard_limit(
    monkeypatch: pytest.MonkeyPatch, parent_hard: int, expected: int
) -> None:
    # The parent's limit is pinned, so both branches are checked whatever this machine allows.
    monkeypatch.setattr(resource, "getrlimit", lambda res: (1024, parent_hard))
    got = {r: (s, h) for r, s, h in rlimits_for(Limits(open_files=10**9))}
    assert got[resource.RLIMIT_NOFILE] == (expected, expected)


def test_rlimits_here_stay_under_this_process_hard_limit() -> None:
    _, parent_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    got = {r: (s, h) for r, s, h in rlimits_for(Limits(open_files=10**9))}
    soft, hard = got[resource.RLIMIT_NOFILE]
    assert soft <= hard
    assert hard == (10**9 if parent_hard == resource.RLIM_INFINITY else min(10**9, parent_hard))
