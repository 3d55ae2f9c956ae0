"""The built-in secrets layer names the common credential files (issue 18, item 12)."""

from __future__ import annotations

import pytest

from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy import BUILTIN_SECRETS, Policy

CREDENTIALS = (
    ".env",
    ".env.local",
    ".env.production",
    ".env.development.local",
    ".envrc",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "server.pem",
    "tls.key",
    "putty.ppk",
    "cert.p12",
    "cert.pfx",
    "store.jks",
    "release.keystore",
    ".npmrc",
    ".netrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    ".aws/credentials",
    ".docker/config.json",
    ".kube/config",
    "credentials.json",
    "service-account.json",
    "service-account-prod.json",
    "secrets.yaml",
    "secrets.yml",
    "prod.tfvars",
    "terraform.tfvars.json",
)


@pytest.mark.parametrize("name", CREDENTIALS)
@pytest.mark.parametrize("where", ["", "deploy/nested/"])
@pytest.mark.parametrize("act", [Act.READ, Act.WRITE])
def test_every_common_credential_file_is_denied_by_default(name: str, where: str, act: Act) -> None:
    verdict = Policy.default().explain(act, where + name)
    assert (verdict.effect, verdict.layer) == (Effect.DENY, BUILTIN_SECRETS)


@pytest.mark.parametrize(
    "name",
    [".env.example", ".env.sample", ".env.template", "config.json", "kube/config", "secrets.md"],
)
def test_templates_and_ordinary_names_stay_readable(name: str) -> None:
    assert Policy.default().check(Act.READ, name) is Effect.ALLOW
