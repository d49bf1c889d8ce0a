"""Every MUST / MUST NOT sentence of the seeds, by id: each has at least one subtest citing it.

The seeds (``shared/seeds/`` beside the project) are drafts; their normative sentences are
few, and the user-agent suite cites each one (``cite("000-hint-raw")``). Seed 004 states its
requirements in lower case ("must be unique"); they are listed too. The quote is the
sentence as the seed spells it (shortened only with "…"), so a reader can find it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Requirement:
    """One normative sentence of a seed."""

    id: str
    seed: str
    """The seed's number: ``000``, ``001``, ``002`` or ``004``."""
    section: str
    quote: str

    @property
    def source(self) -> str:
        """``seed 000 §1``."""
        return f"seed {self.seed} {self.section}"


_ALL = (
    # -- seed 000: sensitiveHint, x-sensitive, secret_reference -----------------------------
    Requirement(
        "000-summary",
        "000",
        "Summary",
        "this output must not be forwarded to agent context.",
    ),
    Requirement(
        "000-hint-raw",
        "000",
        "§1",
        "When sensitiveHint is true, the user agent MUST NOT forward raw sensitive values to "
        "agent context.",
    ),
    Requirement(
        "000-hint-provide",
        "000",
        "§1",
        "The user agent MUST provide either: … a redacted structured result, or … a "
        "secret_reference content item.",
    ),
    Requirement(
        "000-redeem-origin",
        "000",
        "§4a",
        "Origin: redeemUrl MUST be same-origin with the page that registered the tool",
    ),
    Requirement(
        "000-redeem-cookies",
        "000",
        "§4a",
        'Credentials: user agent MUST send cookies with credentials: "same-origin"',
    ),
    Requirement(
        "000-reference-fields",
        "000",
        "§4b",
        "User agents MUST NOT forward secret_reference payload fields (id, redeemUrl) into "
        "agent context.",
    ),
    # -- seed 001: the Trust and Sensitivity Annotations SEP ---------------------------------
    Requirement(
        "001-constrained",
        "001",
        "Motivation",
        "it must be constrained so that it is impossible for that input to trigger any "
        "consequential actions.",
    ),
    Requirement(
        "001-aggregate",
        "001",
        "Response Annotations Scope",
        "Servers MUST aggregate annotations across all content",
    ),
    Requirement(
        "001-open-world-persists",
        "001",
        "Propagation Rules",
        "If openWorldHint is ever true, it MUST persist for the session",
    ),
    Requirement(
        "001-respect-request",
        "001",
        "Server Responsibilities",
        "Servers MUST respect trust annotations in requests when making policy decisions",
    ),
    Requirement(
        "001-propagate",
        "001",
        "Client Responsibilities",
        "Clients MUST propagate annotations according to propagation rules",
    ),
    Requirement(
        "001-untrusted-hints",
        "001",
        "Client Responsibilities",
        "MUST treat all annotations as untrusted hints unless the server is trusted.",
    ),
    Requirement(
        "001-propagation-must",
        "001",
        "Security Implications",
        "Mitigation: Propagation rules are MUST requirements",
    ),
    # -- seed 002: the declarative draft ----------------------------------------------------
    Requirement(
        "002-elicit-attribute",
        "002",
        "§2.2",
        "tool-elicit … if present, the browser MUST elicit/confirm this field from the user "
        "before submitting when invoked by an agent",
    ),
    Requirement(
        "002-unique-names",
        "002",
        "§6.1",
        "Tool names MUST be unique within a catalog.",
    ),
    Requirement(
        "002-ordering",
        "002",
        "§6.1",
        "the browser MUST enforce this ordering for a single tool invocation",
    ),
    Requirement(
        "002-no-unmount",
        "002",
        "§6.1",
        "the tool that is currently executing MUST NOT be unmounted (e.g., DOM removal or JS "
        "unregistration) until after its result has been delivered",
    ),
    Requirement(
        "002-freeze",
        "002",
        "§6.2",
        "Browser must “freeze” the invoking tool’s lifetime briefly",
    ),
    Requirement(
        "002-elicit-present",
        "002",
        "§8.1.1",
        "when present, the browser MUST present those fields in an elicitation UI before "
        "submitting.",
    ),
    Requirement(
        "002-elicit-confirm",
        "002",
        "§8.1.1",
        "The user must confirm or edit it.",
    ),
    # -- seed 004: the Script Tools proposal (its requirements are lower case) ---------------
    Requirement(
        "004-unique-name",
        "004",
        "API Proposal: name",
        "This must be unique for each tool in a page.",
    ),
    Requirement(
        "004-schema-subset",
        "004",
        "Input Schema",
        "the `inputSchema` argument must be a valid (to-be-defined subset of) JSON-Schema object",
    ),
    Requirement(
        "004-positive-price",
        "004",
        "Input Schema",
        "the price range arguments must be positive numbers.",
    ),
    Requirement(
        "004-deterministic",
        "004",
        "Prompt Injection",
        "Agents must be built with strong deterministic guarantees and properties to limit the "
        "harm that could be caused by malicious sites.",
    ),
)

REQUIREMENTS: dict[str, Requirement] = {r.id: r for r in _ALL}
"""Every seed requirement, by id."""
