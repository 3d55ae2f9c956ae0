"""Suite-wide guards: no remote model calls, and a private data directory for every test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from ioh_tui.engine import budgets

# Imported unconditionally: if the kill switch cannot be imported, no test may run.
from ioh_tui.providers import base as providers_base

# Two test workers share the machine with subprocess-heavy tests: how fast Hypothesis draws its
# inputs, or how long one example takes, says nothing about the property under test.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


@pytest.fixture(autouse=True, scope="session")
def _hypothesis_regex() -> None:
    """Import Hypothesis's regex strategies once, near the top of a stack.

    Hypothesis is a pytest plugin, so pytest rewrites its modules as they are imported, and
    CPython 3.11.7 can fail to compile a module imported deep in a stack ("SystemError: AST
    constructor recursion depth mismatch", fixed in 3.11.8). `st.from_regex` imports this one
    lazily, deep inside Hypothesis's strategy resolution; CI hit it once
    (`test_openai_chunks_reassemble_to_the_turn`). Not at the conftest's import: Hypothesis
    warns against loading its data while plugins load.
    """
    import hypothesis.strategies._internal.regex  # noqa: F401


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep each test's store and config out of the user's home, and keys out of the env."""
    home = tmp_path_factory.mktemp("ioh-home")
    for var in list(os.environ):
        # IOH_TUI_NOTIFY, IOH_TUI_BUDGETS_MAX_STEPS, ...: the configuration's variables.
        if var.startswith("IOH_TUI_"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("IOH_TUI_HOME", str(home))
    # The user's own configuration file is never read by the suite.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("ioh-config")))
    for var in list(os.environ):
        if var.endswith("_API_KEY") or var.endswith("_MODEL") or var == "OPENAI_BASE_URL":
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(providers_base, "ALLOW_REMOTE", False)


@pytest.fixture(autouse=True)
def _brief_budget_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's runs hold for a budget offer at most half a second in tests.

    Most app tests never answer the offer their run's last steps bring; the tests of the hold
    itself (tests/tui/test_budget.py) set a long one again.
    """
    monkeypatch.setattr(budgets, "OFFER_WAIT_S", 0.5)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A tiny Python project with one bug (`add` subtracts) and a check failing until fixed."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "check_calc.py").write_text(
        "import calc\n\nassert calc.add(2, 3) == 5, 'add is wrong'\n"
    )
    (root / "README.md").write_text("# calc\n\nA calculator.\n")
    return root
