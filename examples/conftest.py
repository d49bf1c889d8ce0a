"""The example suite's fixtures: the start URLs of the bundled sites.

With webmcp-harness installed, its pytest plugin is already loaded: `webmcp` (the
harness session on pytest-playwright's `page`) and `webmcp_sites` (the bundled demo
sites, served once per run and reset to their starting data before each test) need
no line here. Against your own site, start it here (or pass `--base-url`) and hand
its URL to the tests the same way.
"""

from __future__ import annotations

import pytest

from harness.testing.sites import WebMCPSites


@pytest.fixture
def todo_url(webmcp_sites: WebMCPSites) -> str:
    """The todo site's list page, with the site's three starting todos."""
    return webmcp_sites.todo


@pytest.fixture
def keys_url(webmcp_sites: WebMCPSites) -> str:
    """The keys console (its page load logs the browser in)."""
    return webmcp_sites.keys


@pytest.fixture
def sites(webmcp_sites: WebMCPSites) -> WebMCPSites:
    """All the bundled sites: `sites.url(site, path)`, `sites.requests(site)`."""
    return webmcp_sites
