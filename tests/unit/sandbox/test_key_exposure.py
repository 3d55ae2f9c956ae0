"""Where a rung cannot hide the harness's keys or root's files, the rung says so in one line."""

from __future__ import annotations

import os

import pytest

from ioh_tui.sandbox import floor, user
from ioh_tui.sandbox.floor import key_exposure
from ioh_tui.sandbox.user import ROOT_USER_ENV


@pytest.mark.parametrize(("backend", "named"), [("portable-floor", "floor"), ("none", "none")])
def test_as_root_the_floor_kept_at_uid_0_and_none_say_commands_can_read_the_keys(
    monkeypatch: pytest.MonkeyPatch, backend: str, named: str
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv(ROOT_USER_ENV, "root")
    said = key_exposure(backend)
    assert said is not None and said.startswith("the harness runs as root")
    assert f"--sandbox {named}" in said and "API keys" in said


def test_as_root_the_floor_runs_commands_as_another_user_so_the_keys_are_hidden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.delenv(ROOT_USER_ENV, raising=False)
    assert key_exposure("portable-floor") is None


@pytest.mark.parametrize(
    ("backend", "named"), [("linux-bubblewrap", "bwrap"), ("linux-namespaces", "namespaces")]
)
def test_as_root_a_contained_rung_says_when_its_commands_keep_uid_0(
    monkeypatch: pytest.MonkeyPatch, backend: str, named: str
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.delenv(ROOT_USER_ENV, raising=False)
    assert key_exposure(backend) is None
    monkeypatch.setitem(user._refused, backend, "no unprivileged user namespaces")
    said = key_exposure(backend) or ""
    assert "no unprivileged user namespaces" in said and f"--sandbox {named}" in said
    assert "uid 0" in said and "/etc/shadow" in said
    monkeypatch.delitem(user._refused, backend)
    monkeypatch.setenv(ROOT_USER_ENV, "root")
    assert f"{ROOT_USER_ENV}=root" in (key_exposure(backend) or "")


def test_an_ordinary_user_on_linux_has_nothing_to_say(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setenv(ROOT_USER_ENV, "root")  # read only as root
    assert key_exposure("linux-bubblewrap") is None and key_exposure("linux-namespaces") is None
    monkeypatch.setattr(floor, "can_protect_harness", lambda: True)
    assert key_exposure("portable-floor") is None
    monkeypatch.setattr(floor, "can_protect_harness", lambda: False)
    assert "cannot hide" in (key_exposure("none") or "")
