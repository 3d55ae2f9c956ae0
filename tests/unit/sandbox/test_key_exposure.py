"""Where the floor or `none` cannot hide the harness's keys, the rung says so in one line."""

from __future__ import annotations

import os

import pytest

from ioh_tui.sandbox import floor
from ioh_tui.sandbox.floor import key_exposure


@pytest.mark.parametrize(("backend", "named"), [("portable-floor", "floor"), ("none", "none")])
def test_as_root_the_floor_and_none_say_commands_can_read_the_keys(
    monkeypatch: pytest.MonkeyPatch, backend: str, named: str
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    said = key_exposure(backend)
    assert said is not None and said.startswith("the harness runs as root")
    assert f"--sandbox {named}" in said and "API keys" in said


def test_contained_rungs_and_an_ordinary_user_on_linux_have_nothing_to_say(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert key_exposure("linux-bubblewrap") is None and key_exposure("linux-namespaces") is None
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(floor, "can_protect_harness", lambda: True)
    assert key_exposure("portable-floor") is None
    monkeypatch.setattr(floor, "can_protect_harness", lambda: False)
    assert "cannot hide" in (key_exposure("none") or "")
