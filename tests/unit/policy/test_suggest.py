"""Similar requests are grouped, and the suggested rule covers exactly a sensible family."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ioh_tui.core.acts import Act
from ioh_tui.policy.glob import glob_match
from ioh_tui.policy.suggest import group_similar, similarity_key, suggest_pattern


def test_commands_are_similar_by_program_and_subcommand() -> None:
    assert similarity_key(Act.EXEC, "git log --oneline") == ("exec", "git log")
    assert similarity_key(Act.EXEC, "git log -p calc.py") == ("exec", "git log")
    assert similarity_key(Act.EXEC, "git push origin") != similarity_key(Act.EXEC, "git log")
    assert similarity_key(Act.EXEC, "pytest -q tests") == ("exec", "pytest")
    assert similarity_key(Act.EXEC, "echo 'unbalanced") == ("exec", "echo 'unbalanced")


def test_paths_are_similar_by_directory_and_act() -> None:
    assert similarity_key(Act.WRITE, "src/a.py") == similarity_key(Act.WRITE, "src/b.py")
    assert similarity_key(Act.WRITE, "src/a.py") != similarity_key(Act.READ, "src/a.py")
    assert similarity_key(Act.WRITE, "src/a.py") != similarity_key(Act.WRITE, "docs/a.md")


def test_groups_keep_the_order_of_their_first_member() -> None:
    requests = [
        (Act.EXEC, "git log -1"),
        (Act.WRITE, "src/a.py"),
        (Act.EXEC, "git log -2"),
        (Act.WRITE, "src/b.py"),
        (Act.EXEC, "rm -rf build"),
    ]
    assert group_similar(requests) == [[0, 2], [1, 3], [4]]


def test_suggestions_stop_at_a_word_or_path_boundary() -> None:
    assert suggest_pattern(["pytest -q tests/a.py", "pytest -q tests/b.py"]) == "pytest -q tests/*"
    assert suggest_pattern(["git log -1", "git log --oneline"]) == "git log *"
    assert suggest_pattern(["src/calc.py", "src/cli.py"]) == "src/*"
    assert suggest_pattern(["ls", "ls -la"]) == "ls*"
    assert suggest_pattern(["a.py", "b.py"]) == "*.py"
    # Nothing shared: never a bare `*` (it would allow everything); the first target alone.
    assert suggest_pattern(["make", "ninja"]) == "make"
    assert suggest_pattern(["only this", "only this"]) == "only this"


@given(st.lists(st.text(alphabet="ab /.-*?", min_size=1, max_size=12), min_size=1, max_size=6))
def test_the_suggestion_covers_every_target_or_is_one_of_them(targets: list[str]) -> None:
    pattern = suggest_pattern(targets)
    assert pattern in targets or all(glob_match(pattern, t) for t in targets)
    assert pattern in targets or set(pattern) - {"*"}
