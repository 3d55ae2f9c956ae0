"""Every key: flag beats environment beats project beats user beats default, with its source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ioh_tui.config import KEYS, load_config
from ioh_tui.config.locations import project_file, user_file

# (user, project, environment text, flag); None: that level cannot set the key.
SAMPLES: dict[str, tuple[Any, Any, str, Any]] = {
    "provider.name": ("openai", "anthropic", "openrouter", "compatible"),
    "provider.model": ("m-user", "m-project", "m-env", "m-flag"),
    "provider.base_url": ("http://u.test", "http://p.test", "http://e.test", "http://f.test"),
    "provider.api_key_env": ("U_KEY", "P_KEY", "E_KEY", "F_KEY"),
    "provider.fallback": ("openai:u", "openai:p", "openai:e", "openai:f"),
    "provider.reasoning_effort": ("low", "medium", "high", "low"),
    "pricing.file": ("u.toml", "p.toml", "e.toml", None),
    "budgets.max_steps": (1, 2, "3", 4),
    "budgets.time_budget_s": (1.5, 2.5, "3.5", 4.5),
    "budgets.token_budget": (100, 200, "300", 400),
    "budgets.max_retries": (1, 2, "3", 4),
    "budgets.stall_after": (1, 2, "3", 4),
    "budgets.exec_timeout_s": (10, 20, "30", None),
    "gate.timeout_s": (10, 20, "30", 40.0),
    "gate.cpu_s": (10, 20, "30", 40.0),
    "gate.memory_mb": (100, 200, "300", 400),
    "context.window": (1000, 2000, "3000", 4000),
    "sandbox.backend": ("floor", "bwrap", "namespaces", "none"),
    "sandbox.root_user": ("nobody", None, "1234", None),
    "store.path": ("u.db", None, "e.db", "f.db"),
    "notifications.style": ("osc9", "osc777", "osc9", None),
}


def test_every_key_has_samples() -> None:
    assert set(SAMPLES) == {key.path for key in KEYS}


def _same(value: Any, expected: Any) -> bool:
    """Numbers by value (a variable's "3" is 3); paths by their end (files make them absolute)."""
    try:
        return float(value) == float(expected)
    except (TypeError, ValueError):
        return str(value).endswith(str(expected))


def _toml(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def _write(path: Path, key: str, value: Any) -> None:
    section, name = key.split(".", 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# a comment\n\n[{section}]\n{name} = {_toml(value)}\n")


@pytest.mark.parametrize("key", [key for key in KEYS], ids=lambda key: key.path)
def test_precedence(key: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user, project, env_text, flag = SAMPLES[key.path]
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(tmp_path)

    def effective(flags: dict[str, Any] | None = None) -> tuple[Any, str]:
        value = load_config(flags, workspace=workspace).values[key.path]
        return value.value, value.source

    assert effective()[1] == "default"
    _write(user_file(), key.path, user)
    value, source = effective()
    assert source == f"user {user_file()}:4"
    assert _same(value, user)
    if project is not None:
        _write(project_file(workspace), key.path, project)
        value, source = effective()
        assert source == f"project {project_file(workspace.resolve())}:4"
        assert _same(value, project)
    variable = key.env_names[0]
    monkeypatch.setenv(variable, env_text)
    value, source = effective()
    assert source == f"env {variable}"
    assert _same(value, env_text)
    if flag is not None:
        assert key.dest is not None
        value, source = effective({key.dest: flag})
        assert (value, source) == (flag, f"flag {key.flag}")


def test_the_providers_own_model_variable_beats_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ANTHROPIC_MODEL is the environment for anthropic's model, as it always was."""
    user_file().parent.mkdir(parents=True)
    user_file().write_text('[provider]\nname = "anthropic"\nmodel = "from-file"\n')
    monkeypatch.setenv("ANTHROPIC_MODEL", "from-env")
    monkeypatch.setenv("OPENAI_MODEL", "not-this-one")
    value = load_config(workspace=tmp_path).values["provider.model"]
    assert (value.value, value.source) == ("from-env", "env ANTHROPIC_MODEL")


def test_a_profile_beats_the_environment_but_not_a_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_file().parent.mkdir(parents=True)
    user_file().write_text(
        '[provider]\nname = "openai"\nmodel = "base"\n\n'
        '[profiles.fast]\nmodel = "quick"\napi_key_env = "FAST_KEY"\n'
    )
    project_file(tmp_path).parent.mkdir(parents=True)
    project_file(tmp_path).write_text('[profiles.fast]\nmodel = "project-quick"\n')
    monkeypatch.setenv("OPENAI_MODEL", "from-env")
    config = load_config(workspace=tmp_path, profile="fast")
    model = config.values["provider.model"]
    # The project's definition of the profile wins over the user's (whole, not key by key).
    assert model.value == "project-quick"
    assert model.source == f"profile fast (project {project_file(tmp_path.resolve())}:2)"
    assert config.get("provider.api_key_env") is None
    assert config.get("provider.name") == "openai"
    flagged = load_config({"model": "flagged"}, workspace=tmp_path, profile="fast")
    assert flagged.values["provider.model"].source == "flag --model"


def test_an_unknown_profile_is_one_line_naming_the_defined_ones(tmp_path: Path) -> None:
    from ioh_tui.core.errors import ConfigError

    user_file().parent.mkdir(parents=True)
    user_file().write_text('[profiles.a]\nmodel = "x"\n[profiles.b]\nmodel = "y"\n')
    with pytest.raises(ConfigError, match=r"^--profile c: no \[profiles.c\] .*\(defined: a, b\)$"):
        load_config(workspace=tmp_path, profile="c")


def test_policy_mcp_and_hooks_are_exposed_for_their_users(tmp_path: Path) -> None:
    user_file().parent.mkdir(parents=True)
    user_file().write_text(
        '[policy.defaults]\nexec = "deny"\n\n'
        '[[policy.layers]]\nname = "mine"\nrules = [{act = "read", effect = "deny", '
        'pattern = ".env"}]\n\n'
        '[mcp.servers.files]\ncommand = "mcp-files"\nargs = ["--root", "."]\n\n'
        '[[hooks.pre_tool]]\nmatch = "exec"\ncommand = ["audit"]\ntimeout_s = 5\n'
    )
    project_file(tmp_path).parent.mkdir(parents=True)
    project_file(tmp_path).write_text('[policy.defaults]\nwrite = "allow"\n')
    config = load_config(workspace=tmp_path)
    layers = config.policy_layers()
    assert [(scope, path) for scope, path, _ in layers] == [
        ("user", user_file()),
        ("project", project_file(tmp_path.resolve())),
    ]
    assert layers[0][2]["defaults"] == {"exec": "deny"}
    assert config.mcp_servers()["files"]["args"] == ["--root", "."]
    assert config.hooks()["pre_tool"][0]["command"] == ["audit"]
