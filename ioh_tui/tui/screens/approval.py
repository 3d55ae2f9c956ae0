"""ApprovalModal: one decision, with everything needed to take it, and the five answers.

y approve · e rewrite (edit in place, then approve the edit) · a remember (pick the pattern and
where it is kept, then approve) · n deny (with a reason the model reads) · d defer (park it).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import ContentSwitcher, Input, Label, RadioButton, RadioSet, Static, TextArea

from ioh_tui.config.remembered import as_saved, rules_file
from ioh_tui.core.acts import Act, Effect
from ioh_tui.policy import ApprovalRequest, Decision, Rule
from ioh_tui.policy.approver import RememberScope
from ioh_tui.tui.describe import visible, why_asked
from ioh_tui.tui.styles import stylesheet
from ioh_tui.tui.widgets.diff_view import BodyKind, DiffView

Mode = Literal["choices", "rewrite", "remember", "deny"]

SPLIT_FROM = 140
"""Terminal width from which a diff opens side by side."""

FULL_SIZE = (80, 24)
"""The smallest terminal (columns, rows) the modal is laid out for; below it, it says so."""

ANSWERS = (
    "y approve · e rewrite · a remember… · n deny… (esc) · d defer · v split · ctrl+c stop run"
)
"""All five answers, written on the modal itself."""


class ApprovalModal(ModalScreen[Decision]):
    """Shows one `ApprovalRequest` and returns the person's `Decision` through `dismiss`."""

    CSS_PATH = stylesheet("approval")
    AUTO_FOCUS = "#ask-body"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "approve", "Approve", tooltip="Approve the action as asked"),
        Binding(
            "e", "mode('rewrite')", "Rewrite", tooltip="Edit the action, then approve the edit"
        ),
        Binding("a", "mode('remember')", "Remember", tooltip="Approve and keep a rule"),
        Binding("n", "mode('deny')", "Deny", tooltip="Refuse, with a reason the model reads"),
        Binding("d", "defer", "Defer", tooltip="Park the decision; the run pauses"),
        Binding("v", "split", "Split/unified", show=False),
        Binding(
            "w", "queue", "Queue", tooltip="All pending decisions; answer similar ones together"
        ),
        Binding("ctrl+s", "submit", "Confirm", tooltip="Approve the rewrite / save the rule"),
        Binding(
            "escape",
            "back",
            "Back / deny…",
            tooltip="Leave the form; on the choices, open the deny reason (never stops the run)",
        ),
        # A modal screen hides the app's bindings (priority ones aside), so help is repeated here.
        Binding("f1,question_mark", "app.help", "Help", show=False),
    ]
    """Answer keys act only on the choices; ctrl+s and escape act in the forms."""

    waiting: reactive[int] = reactive(1)
    """How many decisions wait, this one included (from 2 on, the modal points at the queue)."""

    def __init__(
        self,
        request: ApprovalRequest,
        *,
        remember_file: Path,
        wide: bool = False,
        waiting: int = 1,
    ) -> None:
        super().__init__()
        self.request = request
        """The ask being decided."""
        self.remember_file = remember_file
        """Where a remembered rule is saved when the person picks the file scope."""
        self.mode: Mode = "choices"
        """Which form is open."""
        self._body, self._kind, self.notices = _body(request)
        self._wide = wide
        self.to_queue = False
        """Set when the person left for the queue (the modal then returns no decision)."""
        self.set_reactive(ApprovalModal.waiting, waiting)

    @property
    def rewrites_content(self) -> bool:
        """Whether a rewrite edits the content (writes, MCP arguments) rather than the target."""
        return self.request.act in (Act.WRITE, Act.MCP) and self.request.content is not None

    def compose(self) -> ComposeResult:
        """Title, why, the change, notices, the forms and the answers."""
        r = self.request
        with Vertical(id="ask"):
            yield Static(f"{r.act.value}  {r.target}", id="ask-title", markup=False)
            who = f"asked by {r.agent_label}" + (f" · step {r.step}" if r.step else "")
            tool = f" · tool {r.tool}" if r.tool else ""
            yield Static(
                f"why: {why_asked(r.rule, r.layer, r.act.value)}", id="ask-why", markup=False
            )
            yield Static(f"{who}{tool}", id="ask-who", markup=False)
            yield Static("", id="ask-queue", markup=False)
            yield DiffView(self._body, self._kind, split=self._wide, id="ask-body")
            yield Static(
                " · ".join(self.notices) or "shown in full",
                id="ask-notice",
                classes="-warning" if self.notices else "",
                markup=False,
            )
            with ContentSwitcher(initial="choices", id="ask-forms"):
                yield Static(ANSWERS, id="choices", markup=False)
                with Vertical(id="rewrite"):
                    yield Label("Edit below, then ctrl+s approves the rewrite · esc goes back")
                    yield TextArea(self._editable(), id="rewrite-text", soft_wrap=True)
                with Vertical(id="remember"):
                    yield Label("Rule pattern (glob; * matches anything) — enter or ctrl+s saves")
                    yield Input(r.target, id="remember-pattern")
                    with RadioSet(id="remember-scope"):
                        yield RadioButton("this run only", value=True, id="scope-run")
                        yield RadioButton("this project", id="scope-project")
                        yield RadioButton("this user", id="scope-user")
                        yield RadioButton("a policy file", id="scope-file")
                    yield Input(str(self.remember_file), id="remember-file")
                    yield Static("", id="remember-preview", markup=False)
                with Vertical(id="deny"):
                    yield Label("Why not? The model reads this — enter denies · esc goes back")
                    yield Input(placeholder="reason (optional)", id="deny-reason")

    def _editable(self) -> str:
        if self.rewrites_content:
            return self.request.content or ""
        return self.request.target

    def on_mount(self) -> None:
        """Reflect the starting state."""
        self._refresh_preview()
        self.watch_waiting(self.waiting)
        self._fit_terminal()

    def on_resize(self) -> None:
        """Say so while the terminal is too small to show the action in full."""
        self._fit_terminal()

    @property
    def too_small(self) -> bool:
        """Whether the terminal is below `FULL_SIZE`."""
        width, height = self.app.size
        return width < FULL_SIZE[0] or height < FULL_SIZE[1]

    def _fit_terminal(self) -> None:
        """Below 80×24: say the action cannot be shown in full, and keep the answer keys in view.

        The `-small` layout drops the box's border and the why/who lines, and lets the body give
        up its rows first, so the notice and the answers are the last things to go.
        """
        small = self.too_small
        self.set_class(small, "-small")
        notice = self.query_one("#ask-notice", Static)
        if small:
            width, height = self.app.size
            notice.update(
                f"terminal too small to show the action in full ({width}×{height}; "
                f"{FULL_SIZE[0]}×{FULL_SIZE[1]} needed) · remember is off until it fits"
            )
        else:
            notice.update(" · ".join(self.notices) or "shown in full")
        notice.set_class(small or bool(self.notices), "-warning")
        self.refresh_bindings()

    def watch_waiting(self, waiting: int) -> None:
        """Point at the queue once more than this decision waits."""
        found = self.query("#ask-queue")
        if not found:
            return  # not composed yet: `on_mount` draws it
        line = found.first(Static)
        line.display = waiting > 1
        line.update(f"{waiting} decisions wait · w opens the queue (answer similar ones together)")

    def action_queue(self) -> None:
        """w: leave this decision unanswered and open the queue of all of them."""
        self.to_queue = True
        self.dismiss(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Answer keys only on the choices; confirm only in the rewrite and remember forms."""
        if action in ("approve", "mode", "defer", "split", "queue"):
            if action == "mode" and parameters == ("remember",) and self.notices_block_remember:
                return False
            return self.mode == "choices"
        if action == "submit":
            return self.mode in ("rewrite", "remember")
        return True

    @property
    def notices_block_remember(self) -> bool:
        """Remembering is refused when part of the action could not be shown (or cannot now)."""
        return self.too_small or any(n.startswith("cannot show") for n in self.notices)

    def action_approve(self) -> None:
        """y: approve as asked."""
        self.dismiss(Decision.approve())

    def action_defer(self) -> None:
        """d: park the decision."""
        self.dismiss(Decision.defer())

    def action_split(self) -> None:
        """v: unified or side by side."""
        self.query_one(DiffView).toggle()

    def action_mode(self, mode: Mode) -> None:
        """Open a form (rewrite, remember, deny) or go back to the choices."""
        self.mode = mode
        self.query_one(ContentSwitcher).current = mode
        self.set_class(mode == "rewrite", "-rewrite")
        focus = {
            "choices": "#ask-body",
            "rewrite": "#rewrite-text",
            "remember": "#remember-pattern",
            "deny": "#deny-reason",
        }[mode]
        self.query_one(focus).focus()
        self.refresh_bindings()

    async def action_back(self) -> None:
        """esc: leave a form; on the choices, focus the deny reason ("no, and tell it why").

        As in Claude Code and Codex, escape never throws the run away; ctrl+c stops it.
        """
        self.action_mode("choices" if self.mode != "choices" else "deny")

    def action_submit(self) -> None:
        """ctrl+s: approve the rewrite, or save the rule."""
        if self.mode == "rewrite":
            self._submit_rewrite()
        elif self.mode == "remember":
            self._submit_remember()

    def _submit_rewrite(self) -> None:
        edited = self.query_one("#rewrite-text", TextArea).text
        if edited == self._editable():
            self.dismiss(Decision.approve())
        elif self.rewrites_content:
            self.dismiss(Decision.rewrite(content=edited))
        else:
            self.dismiss(Decision.rewrite(target=edited.strip()))

    def _submit_remember(self) -> None:
        pattern = self.query_one("#remember-pattern", Input).value.strip()
        if not pattern:
            self.notify("The rule needs a pattern.", severity="warning")
            return
        rule = Rule(self.request.act, Effect.ALLOW, pattern)
        scope = self._scope()
        if scope in ("project", "user"):
            # Saved by the engine, with the run's workspace (the preview showed the same).
            self.dismiss(Decision.remembering(rule, scope=scope))
        elif scope == "file":
            file = self.query_one("#remember-file", Input).value.strip()
            if not file:
                self.notify("Saving needs a policy file path.", severity="warning")
                return
            self.dismiss(Decision.remembering(rule, scope="file", file=Path(file).expanduser()))
        else:
            self.dismiss(Decision.remembering(rule, scope="run"))

    @on(Input.Submitted, "#deny-reason")
    def _deny(self, event: Input.Submitted) -> None:
        self.dismiss(Decision.deny(event.value.strip() or "denied by the operator"))

    @on(Input.Submitted, "#remember-pattern, #remember-file")
    def _remember_entered(self) -> None:
        self._submit_remember()

    @on(Input.Changed, "#remember-pattern, #remember-file")
    @on(RadioSet.Changed)
    def _refresh_preview(self) -> None:
        pattern = self.query_one("#remember-pattern", Input).value.strip() or "?"
        scope = self._scope()
        self.query_one("#remember-file", Input).display = scope == "file"
        self.query_one("#remember-preview", Static).update(
            remember_preview(
                self.request, pattern, scope, self.query_one("#remember-file", Input).value
            )
        )

    def _scope(self) -> RememberScope:
        for scope in ("project", "user", "file"):
            if self.query_one(f"#scope-{scope}", RadioButton).value:
                return scope
        return "run"


def remember_preview(
    request: ApprovalRequest, pattern: str, scope: RememberScope, file: str
) -> str:
    """The exact rule a remember answer keeps, and where: shown before anything is saved."""
    rule = Rule(request.act, Effect.ALLOW, pattern)
    if scope == "run":
        return f"will keep: {rule.describe()} — this run only"
    if scope == "file":
        # A saved file is an overlay: later runs use it when given as `--policy FILE`.
        return f"will keep: {rule.describe()} — this run, and saved to {file} (use with --policy)"
    if request.workspace is None:
        where = "the run's workspace" if scope == "project" else "your configuration directory"
        return (
            f"will keep: {rule.describe()} — this run, and saved to .ioh-tui/policy.toml in {where}"
        )
    saved = as_saved(scope, rule, request.workspace)
    target = rules_file(scope, request.workspace)
    later = "this project's later runs" if scope == "project" else "every later run, any project"
    return f"will keep: {saved.describe()} — this run and {later}: saved to {target}"


def _body(request: ApprovalRequest) -> tuple[str, BodyKind, list[str]]:
    """What to show for a request, and notices about anything that could not be shown as is."""
    notices: list[str] = []
    kind: BodyKind
    if request.act is Act.EXEC:
        # A command's preview says what it is given beyond the argv (the network).
        raw, kind = "\n\n".join(filter(None, (request.target, request.preview))), "command"
    elif request.act is Act.MCP:
        # The arguments as JSON, then the server's hints (information only: the policy asked).
        raw, kind = "\n\n".join(filter(None, (request.content, request.preview))), "command"
    elif request.preview:
        raw, kind = request.preview, "diff"
    elif request.act is Act.WRITE and request.content is not None:
        raw, kind = request.content, "content"
        notices.append("no diff: this is the whole new content")
    elif request.act is Act.WRITE:
        return "", "none", ["cannot show the content: the request carries none"]
    else:
        raw, kind = request.target, "command"
    if "\x00" in raw:
        notices.append(f"cannot show {raw.count(chr(0))} NUL bytes: the content looks binary")
    shown, escaped = visible(raw.replace("\x00", ""))
    if escaped:
        notices.append(f"{escaped} control characters are shown escaped (\\xNN)")
    return shown, kind, notices
