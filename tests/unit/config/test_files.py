"""A bad configuration file is one line naming the file, the line and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from ioh_tui.config import load_file
from ioh_tui.config.lines import key_lines
from ioh_tui.core.errors import ConfigError


def _error(tmp_path: Path, text: str, scope: str = "user") -> str:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_file(path, "project" if scope == "project" else "user")
    message = str(caught.value)
    assert "\n" not in message
    return message.replace(str(path), "FILE")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[budgets]\nmax_stepz = 3\n", "FILE:2: budgets.max_stepz: unknown key"),
        ('[budgets]\nmax_steps = "3"\n', "FILE:2: budgets.max_steps: must be a whole number"),
        ("[budgets]\n\nmax_steps = -1\n", "FILE:3: budgets.max_steps: must be a whole number"),
        ("[gate]\ntimeout_s = nan\n", "FILE:2: gate.timeout_s: must be a number of seconds"),
        ("[gate]\ncpu_s = inf\n", "FILE:2: gate.cpu_s: must be a number of seconds"),
        ("[gate]\nmemory_mb = 1.5\n", "FILE:2: gate.memory_mb: must be a whole number"),
        ('[sandbox]\nbackend = "docker"\n', "FILE:2: sandbox.backend: must be one of"),
        ("x = 1\n[provider]\nmodel = 2\n", "FILE:1: x: unknown key"),
        ("# top\nbudgets.max_steps = 0\n", "FILE:2: budgets.max_steps: must be a whole number"),
        (
            '[budgets]\nmax_steps = 3\n\n[provider]\nname = "gpt"\n',
            "FILE:5: provider.name: must be one of",
        ),
        (
            'provider = { name = "openai",\n# no: inline tables are one line\n}\n',
            None,
        ),
        (
            'provider = { name = "openai", model = 7 }\n',
            "FILE:1: provider.model: must be a non-empty string",
        ),
        (
            'note = """\n[budgets]\nmax_steps = 1\n"""\n',
            "FILE:1: note: unknown key",
        ),
        (
            '[profiles."my.work"]\nmodell = "m"\n',
            "FILE:2: profiles.my.work.modell: unknown key",
        ),
        (
            '[[hooks.pre_tool]]\ncommand = "a"\n[[hooks.pre_tool]]\ncommand = "b"\ntimeout_s = 0\n',
            "FILE:5: hooks.pre_tool[1].timeout_s: must be a number of seconds > 0",
        ),
        ('[[hooks.pre_tool]]\nmatch = "exec"\n', "FILE:1: hooks.pre_tool[0]: needs command"),
        (
            '[[hooks.pre_tool]]\nmatch = "exec||grep"\ncommand = "a"\n',
            "FILE:2: hooks.pre_tool[0].match: has an empty alternative",
        ),
        (
            '[[hooks.post_tool]]\nmatch = " "\ncommand = "a"\n',
            "FILE:2: hooks.post_tool[0].match: must be a glob on the tool name",
        ),
        (
            '[[hooks.stop]]\ncommand = "a"\ntimeout_s = 3600\n',
            "FILE:3: hooks.stop[0].timeout_s: must be a number of seconds > 0 and at most 600",
        ),
        ("[hooks]\non_start = []\n", "FILE:2: hooks.on_start: unknown key"),
        (
            '[mcp.servers.git]\ncommand = "mcp-git"\nurl = "http://x"\n',
            "FILE:1: mcp.servers.git: needs exactly one of command",
        ),
        (
            '[mcp.servers.web]\nurl = "http://x"\nheaders_env = { Authorization = "Bearer x" }\n',
            "FILE:3: mcp.servers.web.headers_env.Authorization: must be the name",
        ),
        (
            '[mcp.servers.web]\nurl = "http://x"\ntransport = "websocket"\n',
            'FILE:3: mcp.servers.web.transport: must be "http" (streamable HTTP) or "sse"',
        ),
        (
            '[mcp.servers.git]\ncommand = "mcp-git"\ntransport = "sse"\n',
            "FILE:3: mcp.servers.git.transport: goes with url (a local server speaks stdio)",
        ),
        (
            '[mcp.servers.git__hub]\ncommand = "mcp-git"\n',
            "FILE:1: mcp.servers.git__hub: a server name is at most 32 letters",
        ),
        (
            '[mcp.servers.web]\nurl = "http://x"\nheaders_env = { "Bad Header" = "TOKEN" }\n',
            "FILE:3: mcp.servers.web.headers_env.Bad Header: is not an HTTP header name",
        ),
        (
            '[policy.defaults]\nexec = "maybe"\n',
            "FILE:2: policy.defaults.exec: ",
        ),
        (
            '[sandbox]\nroot_user = "Bob Smith"\n',
            "FILE:2: sandbox.root_user: use auto, root, a user name or a uid, not 'Bob Smith'",
        ),
    ],
)
def test_one_line_naming_file_line_and_key(tmp_path: Path, text: str, expected: str | None) -> None:
    if expected is None:
        # Not TOML at all: tomllib's own message, still one line naming the file.
        assert _error(tmp_path, text).startswith("FILE: not valid TOML")
        return
    assert _error(tmp_path, text).startswith(expected)


@pytest.mark.parametrize(
    "text",
    [
        '[provider]\napi_key = "sk-live-abcdef"\n',
        'api_key = "anything"\n',
        '[profiles.work]\napi_key = "x"\n',
        '[provider]\napi_key_env = "sk-proj-Abc123Def456Ghi789Jkl"\n',
        '[mcp.servers.s]\ncommand = "s"\nenv = { GITHUB_TOKEN = "ghp_abcdefghijklmnop" }\n',
        '[mcp.servers.s]\ncommand = "s"\naccess_token = "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Ng"\n',
    ],
)
def test_a_key_value_in_a_file_is_refused(tmp_path: Path, text: str) -> None:
    message = _error(tmp_path, text, scope="project")
    assert message.startswith("FILE:")
    assert "key" in message


def test_a_project_cannot_move_the_store_turn_containment_off_or_choose_the_user(
    tmp_path: Path,
) -> None:
    assert _error(tmp_path, '[store]\npath = "/tmp/x.db"\n', "project").startswith(
        "FILE:2: store.path: only the user file"
    )
    assert _error(tmp_path, '[sandbox]\nbackend = "none"\n', "project").startswith(
        "FILE:2: sandbox.backend: a project file cannot turn containment off"
    )
    # `root` would hand a root harness's commands every root-only file.
    assert _error(tmp_path, '[sandbox]\nroot_user = "root"\n', "project").startswith(
        "FILE:2: sandbox.root_user: only the user file or IOH_TUI_SANDBOX_ROOT_USER"
    )


def test_relative_paths_are_the_files_own(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "config.toml"
    path.parent.mkdir()
    path.write_text('[pricing]\nfile = "prices.toml"\n[store]\npath = "../runs.db"\n')
    layer = load_file(path, "user")
    assert layer is not None
    assert layer.values["pricing.file"].value == str(tmp_path / "conf" / "prices.toml")
    assert layer.values["store.path"].value == str(tmp_path / "runs.db")


def test_a_missing_file_is_no_layer(tmp_path: Path) -> None:
    assert load_file(tmp_path / "nope.toml", "user") is None


def test_key_lines_follow_tables_dotted_quoted_and_inline_keys() -> None:
    text = (
        "# header\n"
        "top = 1\n"
        "[provider]\n"
        'name = "x"  # trailing\n'
        "'a.b'.c = [1,\n"
        "  2, {z = 3}]\n"
        's = """\n'
        "fake = 1\n"
        '"""\n'
        'inline = { m = "y", n.o = 2 }\n'
        "[[hooks.stop]]\n"
        'command = "a"\n'
        "[[hooks.stop]]\n"
        'command = "b"\n'
        '[ profiles . "p.q" ]\n'
        "model = 'm'\n"
    )
    lines = key_lines(text)
    assert lines[("top",)] == 2
    assert lines[("provider", "name")] == 4
    assert lines[("provider", "a.b", "c")] == 5
    assert lines[("provider", "a.b", "c", "#2", "z")] == 6
    assert lines[("provider", "s")] == 7
    assert ("provider", "fake") not in lines
    assert lines[("provider", "inline", "m")] == 10
    assert lines[("provider", "inline", "n", "o")] == 10
    assert lines[("hooks", "stop", "#0", "command")] == 12
    assert lines[("hooks", "stop", "#1", "command")] == 14
    assert lines[("profiles", "p.q", "model")] == 16


def test_the_documented_example_file_loads(tmp_path: Path) -> None:
    """docs/configuration.md's complete example is a valid user file, every key in it read."""
    from ioh_tui.config import KEYS

    doc = (Path(__file__).parents[3] / "docs" / "configuration.md").read_text()
    example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "config.toml"
    path.write_text(example)
    layer = load_file(path, "user")
    assert layer is not None
    assert set(layer.values) == {key.path for key in KEYS}
    assert set(layer.profiles) == {"claude", "local"}
    assert layer.policy is not None and layer.mcp["servers"]["github"]["url"]
    assert layer.hooks["post_tool"][0]["command"] == ["ruff", "format"]
