"""The built-in patterns: credentials no agent touches by default, and files the host runs.

Only a person (or a rule naming the file exactly) lets an agent write a file the host runs.

Each is a policy glob (`glob.py`): it matches the whole relative path or its basename, and `*`
crosses `/`. A file under a directory (`.aws/credentials`) is named at the root and at any depth.
"""

from __future__ import annotations

from ioh_tui.policy.glob import glob_match

# Not `.env.*`: `.env.example`, `.env.sample` and `.env.template` are templates committed to the
# repository for people (and agents) to read. Every other common variant is named.
_ENV = (
    ".env",
    ".envrc",
    ".env.local",
    ".env.*.local",
    ".env.dev*",
    ".env.prod*",
    ".env.stag*",
    ".env.test*",
    ".env.ci",
    ".env.qa",
    ".env.uat",
    ".env.preview",
    ".env.secret*",
    ".env.private",
    ".env.vault",
    ".env.keys",
    ".env.me",
    ".env.bak",
    ".env.backup",
    ".env.old",
    ".env.orig",
    ".env.save",
    ".env.docker",
    ".env.override",
)
_KEYS = (
    "*.pem",
    "*.key",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_*_sk",
    "*.ppk",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
)
_TOKENS = (
    ".npmrc",
    ".netrc",
    "_netrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    "credentials.json",
    "service-account*.json",
    "secrets.yaml",
    "secrets.yml",
    "*.tfvars",
    "*.tfvars.json",
)
_UNDER = (".aws/credentials", ".docker/config.json", ".kube/config")

SECRET_PATTERNS: tuple[str, ...] = (
    *_ENV,
    *_KEYS,
    *_TOKENS,
    *_UNDER,
    *(f"*/{path}" for path in _UNDER),
)
"""Files no default policy lets an agent read or write (matched on basename too)."""

HOST_EXECUTED_LAYER = "builtin-host-executed"
"""The layer named in a verdict that asks because a write targets a file the host runs."""

HOST_EXECUTED: tuple[tuple[str, str], ...] = (
    (".git/config", "git runs the programs it names (core.fsmonitor, core.hooksPath, aliases)"),
    ("*/.git/config", "git runs the programs it names (core.fsmonitor, core.hooksPath, aliases)"),
    (".git/hooks/*", "git runs it as a hook on commit, checkout, merge or push"),
    ("*/.git/hooks/*", "git runs it as a hook on commit, checkout, merge or push"),
    (".envrc", "direnv runs it in your shell when you enter the directory"),
    (".vscode/tasks.json", "VS Code runs its tasks, some as soon as the folder is opened"),
    (".vscode/settings.json", "VS Code runs the interpreters, linters and shells it names"),
    (".vscode/launch.json", "VS Code runs its launch configurations"),
    (".idea/*", "JetBrains IDEs run its run configurations and startup tasks"),
    (".pre-commit-config.yaml", "pre-commit runs its hooks at your next commit"),
    (".husky/*", "husky runs it as a git hook"),
)
"""Files a tool on the host runs (or reads commands from) implicitly, outside every sandbox, and
what each does. A write to one always asks a person: only a rule naming the file exactly allows
it, never a broad rule (`write *`) or a blanket approver."""


def host_executed(target: str) -> tuple[str, str] | None:
    """The protected pattern `target` (a relative path) falls under, and what the file does."""
    for pattern, does in HOST_EXECUTED:
        if glob_match(pattern, target):
            return pattern, does
    return None
