"""Model back-ends: our own streaming clients for the real wires, and a scripted model."""

from ioh_tui.core.errors import ProviderError
from ioh_tui.core.transcript import Completion, Message, Request, ToolCall, ToolSpec, Usage
from ioh_tui.providers.anthropic_provider import Anthropic
from ioh_tui.providers.base import Provider
from ioh_tui.providers.openai_provider import Compatible, OpenAI, OpenRouter
from ioh_tui.providers.registry import make_provider
from ioh_tui.providers.testing.scripted import ScriptedProvider

__all__ = [
    "Anthropic",
    "Compatible",
    "Completion",
    "Message",
    "OpenAI",
    "OpenRouter",
    "Provider",
    "ProviderError",
    "Request",
    "ScriptedProvider",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "make_provider",
]
