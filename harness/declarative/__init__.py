"""Declarative tools, the Python side of both dialects.

- ``synthesis``: seed 002's ``tool-name`` dialect — declarations to JSON Schema;
- ``invocation``: its fetch-first invocation, the §6.1 ordering, ``tool-elicit``;
- ``review``: a filled ``<form toolname>`` without ``toolautosubmit`` waits for the user.

(The spec dialect's ``<form toolname>`` is read in the page, by ``injected_js/declarative.js``
and by Chromium itself.)

May import: ``harness.models``, ``harness.errors``, ``harness.catalog``,
``harness.elicitation``, ``harness.browser``, ``harness.stages`` — not the core or a front end.
"""
