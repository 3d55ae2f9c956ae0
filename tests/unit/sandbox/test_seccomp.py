"""The hand-assembled seccomp program has the shape the kernel expects."""

from __future__ import annotations

import struct

import pytest

from ioh_tui.sandbox._seccomp import denied_syscalls, deny_list_program


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_program_is_well_formed(machine: str) -> None:
    program = deny_list_program(machine)
    assert program is not None and len(program) % 8 == 0
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    assert len(insns) <= 4096
    # Every jump lands inside the program, and the program ends with ALLOW then EPERM.
    for index, (code, jt, jf, _) in enumerate(insns):
        if code & 0x07 == 0x05:
            assert index + 1 + max(jt, jf) < len(insns)
    assert insns[-2][3] == 0x7FFF0000 and insns[-1][3] == 0x00050001
    denied = {k for code, _, _, k in insns if code == 0x15}
    assert set(denied_syscalls(machine).values()) <= denied


def test_known_numbers() -> None:
    assert denied_syscalls("x86_64")["mount"] == 165
    assert denied_syscalls("x86_64")["ptrace"] == 101
    assert denied_syscalls("aarch64")["mount"] == 40
    assert denied_syscalls("aarch64")["mount_setattr"] == 442


def test_unknown_architecture_has_no_filter() -> None:
    assert deny_list_program("riscv64") is None
    assert denied_syscalls("riscv64") == {}
