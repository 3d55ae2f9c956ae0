"""The three-rule policy glob: `*` (crossing `/`), `?`, literal everything else, basename match."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioh_tui.policy.glob import basename, compile_glob, glob_match, glob_match_any, glob_to_regex


@pytest.mark.parametrize(
    ("pattern", "target"),
    [
        ("src/*", "src/a/b/c.py"),
        ("src/*.py", "src/pkg/mod.py"),
        ("*", ""),
        ("*", "any/thing at/all"),
        ("infra/*", "infra/"),
        ("*.env", ".env"),
        ("a**b", "a/x/b"),
    ],
)
def test_star_matches_any_run_including_slashes(pattern: str, target: str) -> None:
    assert glob_match(pattern, target)


@pytest.mark.parametrize(
    ("pattern", "target", "expected"),
    [
        ("a?c", "abc", True),
        ("a?c", "a/c", True),
        ("a?c", "ac", False),
        ("a?c", "abbc", False),
        ("??", "ab", True),
        ("??", "a", False),
        ("?", "", False),
    ],
)
def test_question_mark_is_exactly_one_character(pattern: str, target: str, expected: bool) -> None:
    assert glob_match(pattern, target) is expected


@pytest.mark.parametrize(
    ("pattern", "target", "expected"),
    [
        (".env", ".env", True),
        (".env", "config/.env", True),
        (".env", "a/b/c/.env", True),
        (".env", "config/.env.bak", False),
        ("id_rsa", "home/.ssh/id_rsa.pub", False),
        ("*.pem", "certs/site.pem", True),
        # Only the last segment stands in for the target, never a directory in the middle.
        ("config", "config/.env", False),
        ("config/*", "deploy/config/app.toml", False),
        ("main.py", "src/main.py", True),
        ("src/main.py", "other/src/main.py", False),
    ],
)
def test_whole_target_or_basename(pattern: str, target: str, expected: bool) -> None:
    assert glob_match(pattern, target) is expected


@pytest.mark.parametrize(
    ("pattern", "literal", "other"),
    [
        ("a.b", "a.b", "axb"),
        ("[ab].txt", "[ab].txt", "a.txt"),
        ("x+", "x+", "xx"),
        ("(a|b)", "(a|b)", "a"),
        ("^start$", "^start$", "start"),
        ("a\\b", "a\\b", "a/b"),
        ("{a,b}", "{a,b}", "a"),
        ("a{2}", "a{2}", "aa"),
    ],
)
def test_regex_and_fnmatch_metacharacters_are_literal(
    pattern: str, literal: str, other: str
) -> None:
    assert glob_match(pattern, literal)
    assert not glob_match(pattern, other)


def test_matching_is_case_sensitive() -> None:
    assert not glob_match("*.PEM", "key.pem")
    assert not glob_match(".ENV", "config/.env")
    assert glob_match("*.PEM", "KEY.PEM")


def test_star_and_question_cross_newlines() -> None:
    # A deny on `*` or `a?b` must not be dodged by putting a newline in the target.
    assert glob_match("*", "line one\nline two")
    assert glob_match("rm*", "rm -rf\n/")
    assert glob_match("a?b", "a\nb")


def test_basename_helper() -> None:
    assert basename("a/b/c.txt") == "c.txt"
    assert basename("c.txt") == "c.txt"
    assert basename("dir/") == ""


def test_match_any_tries_every_form() -> None:
    assert glob_match_any("example.com", ["example.com:443", "example.com"])
    assert not glob_match_any("example.org", ["example.com:443", "example.com"])
    assert not glob_match_any("*", [])


def test_compiled_patterns_are_cached() -> None:
    assert compile_glob("cache/me/*.txt") is compile_glob("cache/me/*.txt")
    before = compile_glob.cache_info().hits
    glob_match("cache/me/*.txt", "cache/me/x.txt")
    assert compile_glob.cache_info().hits > before


def test_many_stars_do_not_backtrack_exponentially() -> None:
    # As one regex, `.*a.*a.*a.*a.*a.*a.*b` needs seconds on a few hundred characters.
    started = time.perf_counter()
    assert not glob_match("*a*a*a*a*a*a*b", "a" * 20_000)
    assert not glob_match("*foo*bar*", "foo" * 20_000)
    assert time.perf_counter() - started < 0.5


_GLOB_ALPHABET = "ab/.*?"
_TARGET_ALPHABET = "ab/.\n"


@settings(max_examples=300, deadline=None)
@given(
    pattern=st.text(_GLOB_ALPHABET, max_size=8),
    target=st.text(_TARGET_ALPHABET, max_size=10),
)
def test_compiled_glob_agrees_with_the_anchored_regex(pattern: str, target: str) -> None:
    expected = re.fullmatch(glob_to_regex(pattern), target, re.DOTALL) is not None
    assert compile_glob(pattern).fullmatch(target) is expected


@settings(max_examples=200, deadline=None)
@given(
    pattern=st.text(_GLOB_ALPHABET, max_size=8),
    target=st.text(_TARGET_ALPHABET, max_size=10),
)
def test_glob_match_is_whole_or_basename(pattern: str, target: str) -> None:
    regex = re.compile(glob_to_regex(pattern), re.DOTALL)
    expected = bool(regex.fullmatch(target)) or bool(regex.fullmatch(target.split("/")[-1]))
    assert glob_match(pattern, target) is expected
