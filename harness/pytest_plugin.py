"""The pytest plugin's entry point (``pytest11: webmcp``): it loads :mod:`harness.testing.plugin`.

Kept at this path because installed projects load the plugin by it.
"""

pytest_plugins = ["harness.testing.plugin"]
