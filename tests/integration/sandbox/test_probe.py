"""The probe tells the truth: it tries each rung for real, and `select` follows it."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from ioh_tui.core.errors import ConfigError, SandboxError
from ioh_tui.sandbox import BACKENDS, RUNGS, Limits, probe, probe_report, select

from .conftest import AVAILABLE


def test_floor_and_none_are_always_available() -> None:
    assert probe()[-2:] == ["floor", "none"]
    assert probe() == [r for r in RUNGS if r in probe()]  # strongest first


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_bwrap_is_found_on_path_here() -> None:
    assert "bwrap" in probe()


async def test_every_reported_rung_really_runs(any_rung: str, tmp_path: Path) -> None:
    sandbox = select(any_rung)
    result = await sandbox.run(["sh", "-c", "echo ok"], tmp_path, limits=Limits(wall_s=10))
    assert (result.stdout, result.exit_code) == ("ok\n", 0)
    assert result.backend == sandbox.backend == BACKENDS[any_rung]


def test_missing_bwrap_makes_auto_pick_the_next_rung_and_say_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert "bwrap" not in probe(bwrap="/nonexistent")
    with caplog.at_level(logging.WARNING, logger="ioh_tui.sandbox"):
        chosen = select("auto", bwrap="/nonexistent")
    expected = next(r for r in AVAILABLE if r != "bwrap")
    assert chosen.backend == BACKENDS[expected]
    assert "bwrap" in caplog.text and "not found" in caplog.text


def test_env_override_points_the_probe_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IOH_TUI_BWRAP", "/nonexistent")
    report = probe_report()
    assert "bwrap" not in report.available
    assert "not found" in report.missing["bwrap"]
    with pytest.raises(SandboxError) as caught:
        select("bwrap")
    assert "\n" not in str(caught.value)
    assert "bwrap" in str(caught.value)


def test_probe_attempts_the_restriction_rather_than_checking_existence(tmp_path: Path) -> None:
    # An executable called bwrap that refuses, as a kernel without user namespaces would.
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    report = probe_report(bwrap=str(fake), refresh=True)
    assert "bwrap" not in report.available
    assert "No permissions" in report.missing["bwrap"]


def test_probe_is_cached_per_process() -> None:
    assert probe_report() is probe_report()


def test_unknown_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        select("docker")


async def test_empty_argv_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        await select("floor").run([], tmp_path)
    with pytest.raises(ConfigError):
        await select("floor").run("ls -l", tmp_path)


async def test_missing_working_directory_is_a_sandbox_error(rung: str, tmp_path: Path) -> None:
    with pytest.raises(SandboxError):
        await select(rung).run(["true"], tmp_path / "missing")
