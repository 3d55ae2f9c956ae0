"""A seccomp-BPF deny-list, assembled by hand (no libseccomp dependency).

The filter answers EPERM (not kill) for syscalls a build or test command never needs but an
escape attempt does: mounts and the new mount API (which could undo the read-only view inside a
user namespace), ptrace and cross-process memory access, kernel modules, kexec, bpf,
perf_event_open, swap and reboot; and `socket(AF_VSOCK, ...)`, because a virtual machine's host
sockets are not confined by a network namespace. Everything else is allowed. Only x86_64 and
aarch64 are known; elsewhere `deny_list_program` returns None and the layer is reported as absent.
"""

from __future__ import annotations

import errno
import platform
import struct

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

# Syscall numbers from <asm/unistd_64.h> (x86_64) and <asm-generic/unistd.h> (aarch64).
# The mount API calls (open_tree .. mount_setattr) share numbers on every architecture.
_DENIED = {
    "x86_64": {
        "mount": 165,
        "umount2": 166,
        "pivot_root": 155,
        "ptrace": 101,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "init_module": 175,
        "finit_module": 313,
        "delete_module": 176,
        "kexec_load": 246,
        "kexec_file_load": 320,
        "bpf": 321,
        "perf_event_open": 298,
        "reboot": 169,
        "swapon": 167,
        "swapoff": 168,
    },
    "aarch64": {
        "mount": 40,
        "umount2": 39,
        "pivot_root": 41,
        "ptrace": 117,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "init_module": 105,
        "finit_module": 273,
        "delete_module": 106,
        "kexec_load": 104,
        "kexec_file_load": 294,
        "bpf": 280,
        "perf_event_open": 241,
        "reboot": 142,
        "swapon": 224,
        "swapoff": 225,
    },
}
_MOUNT_API = {
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
}

_SOCKET = {"x86_64": 41, "aarch64": 198}
AF_VSOCK = 40
_ARG0 = 16
"""Offset of the low 32 bits of args[0] in struct seccomp_data (both architectures are
little-endian)."""

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | errno.EPERM
_X32_BIT = 0x40000000
"""x86_64 numbers with this bit use the x32 ABI, a second numbering that would bypass the list."""


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def denied_syscalls(machine: str | None = None) -> dict[str, int]:
    """Name to number of every syscall the filter denies on `machine` (default: this one)."""
    arch = machine or platform.machine()
    if arch not in _DENIED:
        return {}
    return {**_DENIED[arch], **_MOUNT_API}


def deny_list_program(machine: str | None = None) -> bytes | None:
    """The raw BPF program (struct sock_filter array), or None on an unknown architecture.

    Layout: a foreign architecture (e.g. 32-bit `int 0x80` calls on x86_64, whose numbers differ)
    gets EPERM for everything; on x86_64 any x32 number gets EPERM; then one compare per denied
    syscall; then `socket` with the family AF_VSOCK; then allow.
    """
    arch = machine or platform.machine()
    if arch not in _AUDIT_ARCH:
        return None
    numbers = sorted(set(denied_syscalls(arch).values()))
    prog = [
        _insn(_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        _insn(_JEQ_K, 1, 0, _AUDIT_ARCH[arch]),
        _insn(_RET_K, 0, 0, _RET_EPERM),
        _insn(_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    # The family check after the list: 3 instructions between the last compare and ALLOW.
    tail = 3
    if arch == "x86_64":
        prog.append(_insn(_JGE_K, len(numbers) + tail + 1, 0, _X32_BIT))
    for index, number in enumerate(numbers):
        # On a match jump to the EPERM return that follows the final ALLOW.
        prog.append(_insn(_JEQ_K, len(numbers) - index + tail, 0, number))
    prog.append(_insn(_JEQ_K, 0, 2, _SOCKET[arch]))  # not socket(): on to ALLOW
    prog.append(_insn(_LD_W_ABS, 0, 0, _ARG0))  # the address family
    prog.append(_insn(_JEQ_K, 1, 0, AF_VSOCK))  # AF_VSOCK: to EPERM
    prog.append(_insn(_RET_K, 0, 0, _RET_ALLOW))
    prog.append(_insn(_RET_K, 0, 0, _RET_EPERM))
    return b"".join(prog)
