"""The form the elicitation tests ask about: seed 002's §8.1.1 ``add_todo`` example."""

from __future__ import annotations

from typing import Any

from harness.elicitation.base import ElicitationRequest

TODO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {
            "type": "string",
            "title": "Description",
            "description": "What needs to be done?",
            "minLength": 3,
            "maxLength": 140,
        },
        "priority": {"type": "string", "title": "Priority", "enum": ["low", "medium", "high"]},
        "count": {"type": "integer", "title": "How many", "minimum": 1, "maximum": 10},
    },
    "required": ["description"],
}


def with_fields(**fields: dict[str, Any]) -> dict[str, Any]:
    """The todo form with more fields."""
    return {**TODO_SCHEMA, "properties": {**TODO_SCHEMA["properties"], **fields}}


def todo_request(**changes: Any) -> ElicitationRequest:
    """The agent called ``add_todo`` with "Buy milk", medium priority; the form asks the user."""
    fields: dict[str, Any] = {
        "source": "tool-elicit",
        "message": "Confirm the todo before it is added.",
        "origin": "http://127.0.0.1:8101",
        "tool": "add_todo",
        "requested_schema": TODO_SCHEMA,
        "prefilled": {"description": "Buy milk", "priority": "medium"},
    }
    return ElicitationRequest(**{**fields, **changes})
