"""Damaged, foreign and misplaced stores on the command line (issue 18, item 14).

Every command that opens the store says what is wrong in one line naming the file, exits 2 (bad
input), prints no traceback, and leaves the file exactly as it was. The whole matrix runs through
`ioh_tui.cli.main` in this process (fast); a sample runs as real `ioh-tui` processes, where an
exception escaping `main` would print a traceback.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from ioh_tui.cli import main
from ioh_tui.store.schema import SCHEMA_VERSION
from tests.integration.cli.test_exec import ioh, write_scenario

Damage = Callable[[Path, Path], Path]
"""Builds a bad store from a good one (its path, and a directory to build in)."""


def _copy(good: Path, where: Path, name: str, *sql: str) -> Path:
    path = where / name
    shutil.copy(good, path)
    # Closed, not only committed: the store is in WAL mode, and the change must reach the file.
    with closing(sqlite3.connect(path)) as db, db:
        for statement in sql:
            db.execute(statement)
    return path


def truncated(good: Path, where: Path) -> Path:
    path = where / "truncated.db"
    data = good.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def garbage(good: Path, where: Path) -> Path:
    path = where / "garbage.db"
    path.write_bytes(bytes(range(255, -1, -1)) * 32)
    return path


def text(good: Path, where: Path) -> Path:
    path = where / "notes.db"
    path.write_text("these are my notes, not a store\n" * 40)
    return path


def empty(good: Path, where: Path) -> Path:
    path = where / "empty.db"
    path.touch()
    return path


def dropped_table(good: Path, where: Path) -> Path:
    return _copy(good, where, "dropped.db", "DROP TABLE steps")


def contract_not_json(good: Path, where: Path) -> Path:
    return _copy(good, where, "contract.db", "UPDATE runs SET contract = '{not json'")


def newer(good: Path, where: Path) -> Path:
    return _copy(good, where, "newer.db", f"PRAGMA user_version = {SCHEMA_VERSION + 1}")


def foreign(good: Path, where: Path) -> Path:
    path = where / "other-program.db"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE notes (text TEXT)")
    return path


def damaged_page(good: Path, where: Path) -> Path:
    """The `runs` table's root page overwritten: the header and the schema still read fine."""
    path = _copy(good, where, "damaged.db")
    with closing(sqlite3.connect(path)) as db:
        (root,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").fetchone()
        (size,) = db.execute("PRAGMA page_size").fetchone()
    with path.open("r+b") as file:
        file.seek((root - 1) * size)
        file.write(b"\xff" * size)
    return path


def directory(good: Path, where: Path) -> Path:
    path = where / "store.db"
    path.mkdir()
    return path


def under_proc(good: Path, where: Path) -> Path:
    return Path("/proc/self/status")


def under_sys(good: Path, where: Path) -> Path:
    return Path("/sys/kernel/ioh-tui-store.db")


CASES: dict[str, tuple[Damage, str]] = {
    "truncated": (truncated, "is truncated"),
    "garbage": (garbage, "is not an ioh-tui store: it is not an SQLite database"),
    "text": (text, "is not an ioh-tui store: it is not an SQLite database"),
    "empty": (empty, "is empty (0 bytes): not an ioh-tui store"),
    "dropped table": (dropped_table, "is damaged: its steps table is missing"),
    "contract not JSON": (contract_not_json, "is damaged: run 1's contract is not JSON"),
    "newer": (newer, f"format {SCHEMA_VERSION + 1} is newer than this ioh-tui understands"),
    "foreign": (foreign, "is an SQLite database but not an ioh-tui store (notes)"),
    "damaged page": (damaged_page, "is damaged"),
    "directory": (directory, "is a directory, not a store file"),
    "under /proc": (under_proc, "is under /proc, a kernel file system"),
    "under /sys": (under_sys, "is under /sys, a kernel file system"),
}

RECORDS = {"contract not JSON", "empty"}
"""Cases a command that records may use: `exec` adds its run beside the unreadable one, and
turns an empty file into a store (only reading commands must not)."""


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A good store holding run 1, the run's workspace and its scenario."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    scenario = write_scenario(tmp_path / "s.json", {"text": "Nothing to do."})
    store = tmp_path / "good.db"
    status = main([*_exec(workspace, scenario), "--store", str(store)])
    assert status == 0 and not Path(f"{store}-wal").exists()
    return store, workspace, scenario


def _exec(workspace: Path, scenario: Path, goal: str = "hi") -> list[str]:
    """`exec` of a one-turn run on the floor rung (no `--store`)."""
    workspace_and_scenario = ["--workspace", str(workspace), "--scenario", str(scenario)]
    return ["exec", goal, *workspace_and_scenario, "--sandbox", "floor"]


def _commands(workspace: Path, scenario: Path) -> dict[str, list[str]]:
    """Every headless command that opens the store."""
    resume = ["resume", "1", "--headless", "--scenario", str(scenario), "--sandbox", "floor"]
    return {
        "runs": ["runs"],
        "runs --json": ["runs", "--json"],
        "show": ["show", "1"],
        "show --json": ["show", "1", "--json"],
        "approvals": ["approvals"],
        "approvals --json": ["approvals", "--json"],
        "resume": resume,
        "resume --decide": [*resume, "--decide", "approve"],
        "exec": _exec(workspace, scenario),
        "demo --headless": ["demo", "--headless"],
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_command_says_what_is_wrong_with_the_store_in_one_line(
    case: str,
    recorded: tuple[Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good, workspace, scenario = recorded
    damage, message = CASES[case]
    store = damage(good, tmp_path)
    before = store.read_bytes() if store.is_file() and store.parts[1] != "proc" else None
    commands = _commands(workspace, scenario)
    if case in RECORDS:
        del commands["exec"], commands["demo --headless"]
    if case in ("damaged page", "contract not JSON"):
        # Pending decisions are listed without reading a contract or a `runs` page.
        del commands["approvals"], commands["approvals --json"]
    for name, argv in commands.items():
        status = main([*argv, "--store", str(store)])
        out, err = capsys.readouterr()
        assert status == 2, (name, err)
        assert out == "", name
        assert err.count("\n") == 1 and message in err and str(store) in err, (name, err)
    if before is not None:
        assert store.read_bytes() == before  # nothing recorded was changed, nothing added


def test_a_reading_command_does_not_make_an_empty_file_a_store(
    recorded: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, workspace, scenario = recorded
    store = empty(Path(), tmp_path)
    for argv in (["runs"], ["show", "1"], ["approvals"]):
        assert main([*argv, "--store", str(store)]) == 2
        assert "is empty (0 bytes)" in capsys.readouterr().err
        assert store.stat().st_size == 0
    missing = tmp_path / "nowhere" / "store.db"
    assert main(["runs", "--store", str(missing)]) == 2
    assert capsys.readouterr().err == f"ioh-tui: no store at {missing}\n"
    assert not missing.parent.exists()
    # A command that records may start a store in an empty file (as `touch` then use).
    assert main([*_exec(workspace, scenario), "--store", str(store)]) == 0
    assert main(["runs", "--json", "--store", str(store)]) == 0
    assert '"goal": "hi"' in capsys.readouterr().out


def test_a_run_beside_an_unreadable_contract_is_recorded_and_the_old_row_kept(
    recorded: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, workspace, scenario = recorded
    store = contract_not_json(good, tmp_path)
    assert main([*_exec(workspace, scenario, "again"), "--store", str(store)]) == 0
    with closing(sqlite3.connect(store)) as db:
        rows = db.execute("SELECT id, contract FROM runs ORDER BY id").fetchall()
    assert rows[0] == (1, "{not json") and len(rows) == 2


@pytest.mark.parametrize(
    ("contract", "message"),
    [
        ("[]", "the stored contract is not a task contract"),
        ('{"goal": "hi"}', "the stored contract is not a task contract: missing 'mode'"),
        ("NaN", "the stored contract is not a task contract"),
    ],
)
def test_a_stored_contract_that_is_json_but_not_a_contract_is_one_line(
    contract: str,
    message: str,
    recorded: tuple[Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good, _, scenario = recorded
    store = _copy(good, tmp_path, "odd.db", f"UPDATE runs SET contract = '{contract}'")
    argv = ["resume", "1", "--headless", "--scenario", str(scenario), "--sandbox", "floor"]
    assert main([*argv, "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"store {store}: run 1: {message}" in err, err


def test_a_nan_budget_in_a_stored_contract_is_refused_on_resume(
    recorded: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, _, scenario = recorded
    nan = "'\"time_budget_s\": null', '\"time_budget_s\": NaN'"  # as json.dumps writes one
    sql = f"UPDATE runs SET contract = replace(contract, {nan})"
    store = _copy(good, tmp_path, "nan.db", sql)
    argv = ["resume", "1", "--headless", "--scenario", str(scenario), "--sandbox", "floor"]
    assert main([*argv, "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "run 1: the stored contract's time_budget_s is nan" in err, err


APP_CASES = ("text", "truncated", "newer", "directory", "under /proc")


@pytest.mark.slow
@pytest.mark.parametrize("case", APP_CASES)
def test_real_processes_print_one_line_and_no_traceback(
    case: str, recorded: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    good, workspace, scenario = recorded
    damage, message = CASES[case]
    store = str(damage(good, tmp_path))
    commands = [
        ["runs", "--store", store],
        [*_exec(workspace, scenario), "--store", store],
    ]
    if case == "text":  # the app's commands check the store before the app starts
        commands += [
            ["--store", store],
            [
                "run",
                "hi",
                "--workspace",
                str(workspace),
                "--scenario",
                str(scenario),
                "--store",
                store,
            ],
            ["resume", "1", "--store", store],
            ["demo", "--store", store],
        ]
    for argv in commands:
        done = ioh(*argv, cwd=tmp_path)
        assert done.returncode == 2, (argv, done.stderr)
        assert done.stdout == ""
        assert done.stderr.count("\n") == 1, (argv, done.stderr)  # no traceback, no noise
        assert message in done.stderr and store in done.stderr, (argv, done.stderr)
