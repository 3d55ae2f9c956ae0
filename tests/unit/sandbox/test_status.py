"""Turning a wait status into exit code, signal and cap."""

from __future__ import annotations

import signal

import pytest

from ioh_tui.sandbox import Limits
from ioh_tui.sandbox._runner import _classify, _decode_status
from ioh_tui.sandbox._tree import ProcessTree


@pytest.mark.parametrize(
    ("returncode", "wrapped", "expected"),
    [
        (0, False, (0, None)),
        (3, True, (3, None)),
        (-9, False, (None, 9)),
        (137, True, (None, 9)),
        (137, False, (137, None)),
        (None, False, (None, None)),
    ],
)
def test_decode_status(
    returncode: int | None, wrapped: bool, expected: tuple[int | None, int | None]
) -> None:
    assert _decode_status(returncode, wrapped) == expected


def _tree(peak_rss: int = 0, cpu_s: float = 0.0) -> ProcessTree:
    tree = ProcessTree(2**22 + 12345, None)  # a pid that does not exist
    tree.peak_rss, tree.cpu_s = peak_rss, cpu_s
    return tree


def test_sigxcpu_is_the_cpu_cap() -> None:
    assert _classify(signal.SIGXCPU, None, _tree(), Limits(cpu_s=1), b"") == "cpu"
    assert _classify(signal.SIGXCPU, None, _tree(), Limits(), b"") is None


def test_sigkill_counts_as_cpu_only_when_the_budget_was_spent() -> None:
    assert _classify(signal.SIGKILL, None, _tree(cpu_s=1.9), Limits(cpu_s=2), b"") == "cpu"
    assert _classify(signal.SIGKILL, None, _tree(cpu_s=0.2), Limits(cpu_s=2), b"") is None


def test_allocation_failure_is_the_memory_cap() -> None:
    limits = Limits(memory_mb=64)
    assert _classify(None, 1, _tree(), limits, b"...\nMemoryError\n") == "memory"
    assert _classify(signal.SIGABRT, None, _tree(), limits, b"std::bad_alloc") == "memory"
    assert _classify(None, 1, _tree(peak_rss=63 << 20), limits, b"") == "memory"
    assert _classify(None, 1, _tree(), limits, b"AssertionError") is None
    assert _classify(None, 0, _tree(), limits, b"MemoryError") is None
    assert _classify(None, 1, _tree(), Limits(), b"MemoryError") is None
