"""Backends: how tools are found and run in one page (see ``base`` for the interface).

May import: what ``harness.browser`` may import, and its sibling modules.
"""
