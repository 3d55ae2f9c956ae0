"""Rules that last: remembered for a project or for the user, listed by ID, revoked.

"Remember" in the app saves an allow to `<workspace>/.ioh-tui/policy.toml` (this project) or
`$XDG_CONFIG_HOME/ioh-tui/policy.toml` (this user); later runs load both as layers
(`policy/stack.py`). A path pattern saved for the user is made absolute first: `calc.py` saved as
it is would allow `calc.py` in every project.

Every rule in force has a stable ID, a digest of its layer, act, effect and pattern, so
`ioh-tui rules revoke ID` and the app's rules screen name the same rule run after run. The
remembered rules (the two `policy.toml` files) and the rules of the two configuration files are
revoked here; a configuration file is the user's own text, so its rule is cut out as text and its
comments stay (`config/edit_rule.py`). `--policy` files, the contract's policy and the built-in
tiers are not the user's choices to revoke here.

Writes are atomic (a sibling renamed over the file) and keep the file's other rules. The project's
file comes with a cloned repository as easily as its configuration: when the app writes it and
the file was agreed to before (or held nothing that needed agreeing to), the new text is recorded
as agreed, so a person's own remembered rule never asks for their agreement.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ioh_tui.config.edit_rule import without_rule
from ioh_tui.config.locations import (
    CONFIG_NAME,
    project_file,
    project_rules_file,
    user_file,
    user_rules_file,
)
from ioh_tui.config.merge import Config, load_config
from ioh_tui.config.trust import TrustBook, keep_trusted
from ioh_tui.core.errors import ConfigError
from ioh_tui.policy import Policy
from ioh_tui.policy.rules import REMEMBERED
from ioh_tui.policy.stack import absolute_pattern, stack_files, table_widens
from ioh_tui.policy.toml import parse_data, render_toml_layer
from ioh_tui.policy.types import Layer, Rule

Scope = Literal["project", "user"]

HEADER = (
    "# Rules remembered by ioh-tui (`ioh-tui rules` lists them, `ioh-tui rules revoke ID` removes\n"
    "# one). Loaded by every later run as a layer under the contract and --policy; a deny\n"
    "# anywhere still beats these allows.\n"
)


@dataclass(frozen=True, slots=True)
class RuleInForce:
    """One rule of a run's policy, where it came from, and whether it can be revoked here."""

    id: str
    rule: Rule
    layer: str
    file: str | None
    """The file its layer was read from (None: built in)."""
    revocable: bool

    def to_json(self) -> dict[str, Any]:
        """The `ioh-tui rules --json` form."""
        return {
            "id": self.id,
            "act": self.rule.act.value,
            "effect": self.rule.effect.value,
            "pattern": self.rule.pattern,
            "layer": self.layer,
            "file": self.file,
            "revocable": self.revocable,
        }


def rule_id(layer: str, rule: Rule) -> str:
    """The rule's stable ID: 8 hex digits of a digest of its layer, act, effect and pattern."""
    text = "\0".join((layer, rule.act.value, rule.effect.value, rule.pattern))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def rules_file(scope: Scope, workspace: Path) -> Path:
    """Where rules remembered for `scope` are kept."""
    return project_rules_file(workspace.resolve()) if scope == "project" else user_rules_file()


def as_saved(scope: Scope, rule: Rule, workspace: Path) -> Rule:
    """The rule as it is written for `scope` (a user's path pattern made absolute)."""
    return absolute_pattern(rule, workspace) if scope == "user" else rule


def save_rules(
    scope: Scope, rules: Iterable[Rule], workspace: Path, *, book: TrustBook | None = None
) -> Path:
    """Add `rules` to the scope's file (rules already in it are not repeated); returns the file.

    Raises:
        ConfigError: the file is not a policy, or cannot be written (one line naming it).
    """
    file = rules_file(scope, workspace)
    saved = [as_saved(scope, rule, workspace) for rule in rules]
    with _agreement_kept(scope, file, workspace, book):
        layers = _read_layers(file)
        present = {rule for layer in layers for rule in layer.rules}
        new = tuple(dict.fromkeys(rule for rule in saved if rule not in present))
        if new:
            mine = next((i for i, layer in enumerate(layers) if layer.name == REMEMBERED), None)
            if mine is None:
                layers.append(Layer(REMEMBERED, new))
            else:
                layers[mine] = Layer(REMEMBERED, layers[mine].rules + new)
            _write(file, layers)
    return file


def revoke(found: RuleInForce, workspace: Path, *, book: TrustBook | None = None) -> None:
    """Remove `found` from its file (every copy of it in that layer), keeping the other rules.

    Raises:
        ConfigError: it cannot be revoked here (its reason), or the file cannot be rewritten.
    """
    if not found.revocable or found.file is None:
        raise ConfigError(f"rule {found.id} {why_not_revocable(found)}")
    file = Path(found.file)
    scope: Scope = "user" if file in (user_rules_file(), user_file()) else "project"
    name = found.layer.split(":", 1)[1]
    if file.name == CONFIG_NAME:
        with _agreement_kept(scope, file, workspace, book, kind="policy"):
            _revoke_in_config(file, name, found)
        return
    with _agreement_kept(scope, file, workspace, book):
        layers = [
            Layer(layer.name, tuple(r for r in layer.rules if r != found.rule))
            if layer.name == name
            else layer
            for layer in _read_layers(file)
        ]
        _write(file, [layer for layer in layers if layer.rules])


def _revoke_in_config(file: Path, name: str, found: RuleInForce) -> None:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read it: {exc}") from None
    try:
        edited = without_rule(text, name, found.rule)
    except ConfigError as exc:
        raise ConfigError(f"{file}: {exc}") from None
    if edited is None:
        raise ConfigError(
            f"rule {found.id} is not written as one inline table in {file}: edit that file to "
            "remove it"
        )
    _write_text(file, edited)


THIS_RUN = "this run"
"""The layer name shown for rules remembered while the run goes (its `remembered` layer)."""


def this_run(rules: Iterable[Rule]) -> list[RuleInForce]:
    """Rules remembered during a run that is going, as rows of the rules in force."""
    return [
        RuleInForce(rule_id(THIS_RUN, rule), rule, THIS_RUN, None, False)
        for rule in dict.fromkeys(rules)
    ]


def why_not_revocable(found: RuleInForce) -> str:
    """Why a rule cannot be revoked here, in the user's words."""
    if found.layer == THIS_RUN:
        return "was remembered by the run that is going: it holds until that run ends"
    if found.file is None:
        return f"is built in ({found.layer}): it cannot be revoked"
    return f"comes from {found.file} (a --policy file or a contract): edit or leave out that file"


def rules_in_force(
    workspace: Path, *, extra: Policy | None = None, config: Config | None = None
) -> tuple[list[RuleInForce], Config]:
    """Every rule a run in `workspace` starts with, and the configuration they were read from.

    The built-in tiers, the configuration files' policies and the remembered rules (a project's
    sections not agreed to are left out, as a run leaves them out), then `extra` (`--policy`).
    Patterns are shown as written (a user's remembered rule as an absolute path).
    """
    root = workspace.resolve()
    if config is None:
        config, _ = keep_trusted(load_config(workspace=root), root, TrustBook())
    policy = stack_files(Policy.default(), config.policy_files())
    if extra is not None:
        policy = policy.merge(extra)
    mine = {
        str(path)
        for path in (user_rules_file(), project_rules_file(root), user_file(), project_file(root))
    }
    found = [
        RuleInForce(
            rule_id(layer.name, rule),
            rule,
            layer.name,
            layer.source,
            layer.source in mine and ":" in layer.name,
        )
        for layer in policy.layers
        for rule in layer.rules
    ]
    return found, config


def find(rules: list[RuleInForce], wanted: str) -> RuleInForce | None:
    """The rule whose ID is `wanted` (case does not matter), or None."""
    return next((r for r in rules if r.id == wanted.strip().lower()), None)


# -- the files ---------------------------------------------------------------------------------


def _read_layers(file: Path) -> list[Layer]:
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read the remembered rules: {exc}") from None
    try:
        data = tomllib.loads(text)
        return list(parse_data(data.get("policy", {}), "policy")[0])
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except ConfigError as exc:
        raise ConfigError(f"{file}: {exc}") from None


def _raw_table(file: Path) -> dict[str, Any] | None:
    """The file's `[policy]` table exactly as a run reads it (what the trust digest is of)."""
    try:
        table = tomllib.loads(file.read_text(encoding="utf-8")).get("policy", {})
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read the remembered rules: {exc}") from None
    return dict(table)


def _render(layers: list[Layer]) -> str:
    lines = [HEADER]
    for index, layer in enumerate(layers):
        lines += [*render_toml_layer(layer, f"policy.layers[{index}]"), ""]
    return "\n".join(lines)


def _write(file: Path, layers: list[Layer]) -> None:
    _write_text(file, _render(layers))


def _write_text(file: Path, text: str) -> None:
    # Written beside the file and renamed over it: a reader never sees half a policy.
    temporary = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, file)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise ConfigError(f"{file}: cannot write the remembered rules: {exc}") from None


@contextlib.contextmanager
def _agreement_kept(
    scope: Scope, file: Path, workspace: Path, book: TrustBook | None, *, kind: str = "rules"
) -> Iterator[None]:
    """Around a write of a project's file: keep the user's agreement to it, if it had one.

    A file already agreed to (or holding nothing that needs agreeing to) stays agreed to after
    the person's own change; a file that came unagreed with the repository stays unagreed.
    `kind` is the trust section the file's `[policy]` is (`rules`: its `policy.toml`; `policy`:
    its `config.toml`).
    """
    if scope != "project":
        yield
        return
    book = book or TrustBook()
    root = workspace.resolve()
    before = _raw_table(file)
    agreed = before is None or not table_widens(before, rules_only=kind == "rules")
    agreed = agreed or book.trusted(root, kind, before)
    yield
    after = _raw_table(file)
    if agreed and after is not None:
        book.trust(root, kind, after)
