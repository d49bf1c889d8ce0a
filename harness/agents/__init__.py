"""Agents: what decides the next step, given the task, the tools and the history.

``base`` defines the protocol and the actions; each agent is one module
(``scripted``, ``replay``, ``obedient``, ``openai``, ``anthropic``).
"""
