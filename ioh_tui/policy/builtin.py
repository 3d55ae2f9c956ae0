"""The built-in layers' patterns: credential files no default policy lets an agent touch.

Each is a policy glob (`glob.py`): it matches the whole relative path or its basename, and `*`
crosses `/`. A file under a directory (`.aws/credentials`) is named at the root and at any depth.
"""

from __future__ import annotations

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
