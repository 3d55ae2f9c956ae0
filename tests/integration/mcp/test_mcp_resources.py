"""A server's resources through the real loop: listed, read under the policy, rendered."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ioh_tui.core.acts import Act
from ioh_tui.mcp.offers import ResourceInfo
from ioh_tui.mcp.resources import list_resources
from ioh_tui.policy import Decision, Policy
from tests.integration.engine.helpers import scripted
from tests.integration.engine.test_approvals import Scripted
from tests.integration.mcp.servers import marker, stdio_spec
from tests.integration.mcp.test_mcp_runs import call, drive

LISTED = """\
server fx: 3 resources, 1 template
  memo://note  note (text/plain): A short note.
  memo://pixel  pixel (image/png)
  memo://blob  blob (application/octet-stream)
  template memo://notes/{name}  named note (text/plain): A note by its name."""


def read(uri: str, server: str = "fx") -> dict[str, object]:
    return call("mcp_read_resource", server=server, uri=uri)


async def test_a_server_without_resources_offers_no_resource_tools(project: Path) -> None:
    provider = scripted({"text": "done"})
    await drive(project, provider, (stdio_spec(tag=marker()),))
    offered = {spec.name for spec in provider.requests[0].tools}
    assert "mcp__fx__echo" in offered
    assert not offered & {"mcp_resources", "mcp_read_resource"}


async def test_resources_are_listed_and_read_text_and_templates(project: Path) -> None:
    provider = scripted(
        call("mcp_resources"),
        read("memo://note"),
        read("memo://notes/alpha"),
        read("memo://blob"),
        {"text": "done"},
    )
    result, calls = await drive(project, provider, (stdio_spec(tag=marker(), resources=True),))
    assert result.outcome == "finished"
    offered = {spec.name: spec for spec in provider.requests[0].tools}
    assert offered["mcp_read_resource"].parameters["required"] == ["server", "uri"]
    assert [c.ok for c in calls] == [True, True, True, True]
    assert calls[0].output == LISTED
    assert calls[1].output == "[resource memo://note]\na note"
    assert calls[2].output == "[resource memo://notes/alpha]\nthe note called alpha"
    assert calls[3].output == "[resource memo://blob: application/octet-stream, 16 bytes]"


async def test_a_read_is_the_act_mcp_on_server_slash_uri_and_a_deny_rule_refuses_it(
    project: Path,
) -> None:
    provider = scripted(read("memo://note"), read("memo://blob"), {"text": "done"})
    policy = Policy.default().layer("team").deny_mcp("fx/memo://b*")
    approver = Scripted(Decision.approve())
    _, calls = await drive(
        project,
        provider,
        (stdio_spec(tag=marker(), resources=True),),
        policy=policy,
        approver=approver,
    )
    (asked,) = approver.seen  # the note is asked (mcp asks by default); the blob is denied
    assert (asked.act, asked.target, asked.tool) == (Act.MCP, "fx/memo://note", "mcp_read_resource")
    assert asked.preview == "resource note: A short note."
    assert calls[0].ok and calls[0].output == "[resource memo://note]\na note"
    assert calls[1].refused
    assert "fx/memo://blob (rule 'fx/memo://b*' in layer 'team')" in calls[1].output


async def test_an_image_resource_reaches_a_model_that_takes_images(project: Path) -> None:
    provider = scripted(read("memo://pixel"), {"text": "done"})
    provider.scenario = replace(provider.scenario, model="claude-sonnet-4")
    _, calls = await drive(project, provider, (stdio_spec(tag=marker(), resources=True),))
    (image,) = provider.requests[1].messages[-1].images
    assert (image.name, image.media_type, image.width, image.height) == (
        "fx/memo://pixel image 1",
        "image/png",
        3,
        2,
    )
    assert calls[0].output.startswith("[resource memo://pixel] [image: image/png, ")
    assert "shown to you as fx/memo://pixel image 1" in calls[0].output


async def test_a_bad_server_or_uri_is_an_error_and_the_run_goes_on(project: Path) -> None:
    provider = scripted(
        read("memo://note", server="nope"),
        read("memo://missing"),
        call("mcp_resources", server="nope"),
        read("echo"),
        read("memo://note"),
        {"text": "done"},
    )
    result, calls = await drive(project, provider, (stdio_spec(tag=marker(), resources=True),))
    assert result.outcome == "finished"
    assert calls[0].output == (
        "[mcp_read_resource error] no running MCP server 'nope' offers resources "
        "(servers that do: fx)"
    )
    # The server's own answer, said back (it did not exit).
    assert not calls[1].ok
    assert calls[1].output == (
        "[mcp_read_resource error] fx/memo://missing: Unknown resource: memo://missing"
    )
    assert not calls[2].ok and "'nope'" in calls[2].output
    # A URI without a scheme would read as the tool `fx/echo` to the policy: never decided.
    assert calls[3].output == (
        "[mcp_read_resource error] 'echo' is not a URI: it has no scheme (as in memo://note)"
    )
    assert calls[4].ok


async def test_the_list_is_read_again_when_the_server_says_it_changed(project: Path) -> None:
    provider = scripted(
        call("mcp__fx__publish"),
        call("mcp_resources", server="fx"),
        read("memo://published"),
        {"text": "done"},
    )
    _, calls = await drive(project, provider, (stdio_spec(tag=marker(), resources=True),))
    assert calls[0].output == "published"
    assert "  memo://published  published (text/plain)" in calls[1].output.splitlines()
    assert calls[2].output == "[resource memo://published]\npublished text"


def test_a_long_listing_is_capped_like_every_observation() -> None:
    many = tuple(ResourceInfo("big", f"file:///r/{n}", f"r{n}") for n in range(2_000))

    class Ctx:
        entry_cap = 4_000

    result = list_resources(many, "", Ctx())  # type: ignore[arg-type]
    assert result.output.startswith("server big: 2000 resources, 0 templates\n")
    assert len(result.output) < 4_100 and "characters elided ...]" in result.output


async def test_a_read_rewritten_to_another_uri_of_its_server_reads_that_one(
    project: Path,
) -> None:
    provider = scripted(
        read("memo://note"), read("memo://note"), read("memo://note"), {"text": "x"}
    )
    approver = Scripted(
        Decision.rewrite(target="fx/memo://notes/beta"),
        Decision.rewrite(target="other/memo://note"),
        Decision.rewrite(target="fx/memo://blob"),  # crosses the deny rule below
    )
    policy = Policy.default().layer("team").deny_mcp("fx/memo://blob")
    _, calls = await drive(
        project,
        provider,
        (stdio_spec(tag=marker(), resources=True),),
        policy=policy,
        approver=approver,
    )
    assert calls[0].ok and calls[0].output.startswith(
        "[resource memo://notes/beta]\nthe note called beta\n(the operator rewrote this action "
        "before approving it: mcp fx/memo://notes/beta)"
    )
    assert calls[1].refused and calls[1].output == (
        "[mcp_read_resource refused] other/memo://note: a read can be rewritten only to another "
        "URI of fx (fx/SCHEME:...)"
    )
    assert calls[2].refused and "an approved rewrite may not cross a deny" in calls[2].output


async def test_a_read_waits_as_long_as_the_run_allows_not_the_sessions_default(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ioh_tui.mcp import connection

    # The session's default (START_TIMEOUT_S, 30 s) cut reads the run had time for. Shown with
    # a 2 s default (enough to start on a loaded machine) and a read that answers after 4 s.
    monkeypatch.setattr(connection, "START_TIMEOUT_S", 2.0)
    provider = scripted(read("memo://notes/slow-4"), {"text": "done"})
    _, calls = await drive(project, provider, (stdio_spec(tag=marker(), resources=True),))
    assert calls[0].output == "[resource memo://notes/slow-4]\nthe note called slow-4"
