"""The app's pure helpers: wording, meter arithmetic, diff rows, stylesheet paths."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ioh_tui.core import events as ev
from ioh_tui.tui import describe, highlight
from ioh_tui.tui.styles import styles_dir
from ioh_tui.tui.totals import Totals

DIFF = """--- a/calc.py
+++ b/calc.py
@@ -1,3 +1,3 @@
 def add(a, b):
-    return a - b
+    return a + b
 # end
"""


@pytest.mark.parametrize(
    ("name", "arguments", "line"),
    [
        ("read_file", {"path": "src/calc.py"}, "read src/calc.py"),
        ("edit_file", {"path": "/work/p/calc.py"}, "edit calc.py"),
        ("exec", {"argv": ["pytest", "-q", "tests dir"]}, "run pytest -q 'tests dir'"),
        ("grep", {"pattern": "add", "path": "src"}, "grep add in src"),
        ("list_dir", {"path": ""}, "list ."),
        ("find", {"pattern": "*.py"}, "find *.py"),
        ("mcp__github__create_issue", {"title": "bug"}, 'mcp github/create_issue {"title": "bug"}'),
        ("mcp__fx__ping", {}, "mcp fx/ping"),
        ("mcp_resources", {}, "mcp resources"),
        ("mcp_resources", {"server": "fx"}, "mcp resources fx"),
        ("mcp_read_resource", {"server": "fx", "uri": "memo://a"}, "mcp fx/memo://a"),
    ],
)
def test_a_tool_call_reads_as_verb_and_workspace_relative_path(
    name: str, arguments: dict[str, object], line: str
) -> None:
    assert describe.tool_line(name, arguments, Path("/work/p")) == line


def test_the_apps_copy_of_the_resource_tools_names_is_the_tools_own() -> None:
    from ioh_tui.mcp.resources import LIST_TOOL, READ_TOOL

    assert describe.RESOURCE_TOOLS == (LIST_TOOL, READ_TOOL)


def test_numbers_and_limits() -> None:
    assert [describe.tokens(n) for n in (950, 1234, 2_500_000)] == ["950", "1.2k", "2.5M"]
    assert [describe.duration(s) for s in (5, 65, 3725)] == ["0:05", "1:05", "1:02:05"]
    assert [describe.limit_state(v, 100) for v in (10, 75, 95)] == ["", "-warn", "-danger"]
    assert describe.limit_state(5, None) == ""


def test_control_characters_are_shown_escaped() -> None:
    assert describe.visible("ok\x1b[2Jbad\n") == ("ok\\x1b[2Jbad\n", 1)


def test_totals_follow_the_root_run() -> None:
    now = [100.0]
    totals = Totals()
    totals.apply(
        ev.RunStarted(
            run_id=1, goal="g", mode="workspace", budgets={"max_steps": 4, "token_budget": 1000}
        ),
        lambda: now[0],
    )
    totals.apply(ev.StepStarted(run_id=1, step=1), lambda: now[0])
    totals.apply(
        ev.UsageReported(
            run_id=1,
            step=1,
            input_tokens=300,
            output_tokens=50,
            ttft_ms=None,
            latency_ms=None,
            cost_usd=0.01,
        ),
        lambda: now[0],
    )
    now[0] = 165.0
    assert (totals.steps_reading(), totals.tokens_reading(), totals.cost_reading()) == (
        "1 / 4",
        "350 / 1.0k",
        "$0.0100",
    )
    assert totals.time_reading(lambda: now[0]) == "1:05"
    totals.apply(
        ev.StepFinished(run_id=1, step=1, tokens=350, total_tokens=350, tool_calls=0),
        lambda: now[0],
    )
    totals.apply(ev.RunFinished(run_id=1, outcome="success", steps=1, tokens=350), lambda: now[0])
    now[0] = 999.0
    assert totals.time_reading(lambda: now[0]) == "1:05"  # frozen at the finish


def test_a_resumed_run_s_totals_start_from_what_it_spent() -> None:
    totals = Totals()
    started = ev.RunStarted(
        run_id=1,
        goal="g",
        mode="workspace",
        budgets={"time_budget_s": 7200},
        resumed_from_step=3,
        tokens=4200,
        cost_usd=0.25,
        elapsed_s=3600.0,
    )
    totals.apply(started, lambda: 100.0)
    assert (totals.tokens_reading(), totals.cost_reading()) == ("4.2k", "$0.2500")
    assert totals.time_reading(lambda: 130.0) == "1:00:30 / 2:00:00"


def test_split_rows_pair_removals_with_additions() -> None:
    rows = [r for r in highlight.rows(DIFF) if r.kind in ("context", "change")]
    assert [(r.left_no, r.left, r.right_no, r.right) for r in rows] == [
        (1, "def add(a, b):", 1, "def add(a, b):"),
        (2, "    return a - b", 2, "    return a + b"),
        (3, "# end", 3, "# end"),
    ]


def test_the_unified_diff_keeps_every_character() -> None:
    assert highlight.unified(DIFF).plain == DIFF.rstrip("\n")


def test_every_stylesheet_a_screen_names_exists() -> None:
    """Each CSS_PATH in the app points at a file in styles/ (Textual would fail at start-up)."""
    names = set()
    for module in Path("ioh_tui/tui").rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "stylesheet":
                names.add(node.args[0].value)  # type: ignore[attr-defined]
    assert names >= {"base", "app", "run", "approval", "gate", "help", "start"}
    for name in names:
        assert (styles_dir() / f"{name}.tcss").is_file(), name


def test_a_resume_s_ask_about_a_cut_call_says_a_crash_cut_it() -> None:
    from ioh_tui.engine.recovery import RECOVERY_LAYER, RECOVERY_RULE

    assert describe.RECOVERY == RECOVERY_LAYER  # the app's copy of the engine's layer name
    why = describe.why_asked(RECOVERY_RULE, RECOVERY_LAYER, "mcp")
    assert why == "a crash cut this call: it may have run in part; approve makes it again"
    assert describe.why_asked("t", "project", "exec") == "rule `t` in layer `project`"
