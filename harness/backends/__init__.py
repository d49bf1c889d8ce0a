"""Backends: how tools are found and run in the page."""
