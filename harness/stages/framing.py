"""Untrusted framing: page-provided text reaches the agent marked as data, not instructions.

Tool descriptions, titles, parameter descriptions and the text of results come from the
page. The agent view wraps them in ``<untrusted-data origin="…">…</untrusted-data>``;
text the harness writes itself (:func:`user_agent_text`) is marked so that it is never
framed. (The user's terminal gets page text through
:func:`harness.elicitation.terminal.plain`.)
"""

from __future__ import annotations

import copy
import re
from typing import Any

from mcp_types import CallToolResult, ContentBlock, TextContent

from harness.models import META_PREFIX, ErrorKind
from harness.schemas import subschemas

# Any spelling of a frame marker a reader (a model) could take for the real one:
# any case, spaces or a slash inside, ``-``, ``_`` or a space between the words.
_MARKER = re.compile(r"<(\s*/?\s*)(untrusted[\s_-]*data)", re.IGNORECASE)


def frame_untrusted(text: str, origin: str) -> str:
    """Mark page-provided text as data from ``origin``, not instructions.

    The markers cannot be forged from inside: every occurrence of an opening or closing
    marker in the text, in any case or spacing, is defused first.
    """
    defused = _MARKER.sub(lambda m: "<\\" + m.group(1) + m.group(2), text)
    return f'<untrusted-data origin="{origin}">\n{defused}\n</untrusted-data>'


def frame_schema(schema: dict[str, Any], origin: str) -> dict[str, Any]:
    """A copy of a page's JSON Schema whose ``title`` and ``description`` texts are framed.

    Only schema keywords are touched (a property *named* ``description`` keeps its name);
    everything else — types, constraints, enum values — is data a validator reads.
    """
    framed = copy.deepcopy(schema)
    stack: list[Any] = [framed]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        for keyword in ("title", "description"):
            if isinstance(node.get(keyword), str):
                node[keyword] = frame_untrusted(node[keyword], origin)
        stack.extend(subschemas(node))
    return framed


USER_AGENT_BLOCK = META_PREFIX + "user-agent"
"""Content-block ``_meta`` key marking text the harness itself wrote into a result."""

# Results whose content the page produced (a value, or a thrown error's message); every
# other kind (validation, refusal, timeout, cancel, navigation) is the harness's own text.
PAGE_RESULT_KINDS: tuple[ErrorKind | None, ...] = (None, "thrown")


def user_agent_text(text: str) -> TextContent:
    """A text block the harness writes into a result: never framed as page data."""
    return TextContent(type="text", text=text, meta={USER_AGENT_BLOCK: True})


def is_user_agent_block(block: ContentBlock) -> bool:
    """Whether a content block was written by the harness (see :func:`user_agent_text`)."""
    meta = getattr(block, "meta", None)
    return isinstance(meta, dict) and meta.get(USER_AGENT_BLOCK) is True


def frame_result(result: CallToolResult, origin: str) -> CallToolResult:
    """The result with every page-provided text block marked as untrusted data from ``origin``.

    ``structuredContent`` and ``_meta`` are left as they are (machine-readable data, not
    text an agent reads as prose); blocks the harness wrote stay unframed.
    """
    content: list[ContentBlock] = [
        block.model_copy(update={"text": frame_untrusted(block.text, origin)})
        if isinstance(block, TextContent) and not is_user_agent_block(block)
        else block
        for block in result.content
    ]
    return result.model_copy(update={"content": content})
