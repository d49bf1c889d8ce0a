"""The rules CI systems hold a ``junit.xml`` to, written out: the Jenkins/Ant schema
``junit-10.xsd`` (Jenkins' xUnit plugin; no package ships it) and GitLab's limits."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

ELEMENTS: dict[str, tuple[set[str], set[str], set[str]]] = {
    # element: (required attributes, optional attributes, allowed child elements)
    "testsuites": (set(), {"name", "time", "tests", "failures", "errors"}, {"testsuite"}),
    "testsuite": (
        {"name", "tests", "failures", "errors"},
        {
            "group",
            "time",
            "skipped",
            "timestamp",
            "hostname",
            "id",
            "package",
            "file",
            "log",
            "url",
        },
        {"testsuite", "properties", "testcase", "system-out", "system-err"},
    ),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, set(), set()),
    "testcase": (
        {"name"},
        {"time", "classname", "group"},
        {
            "skipped",
            "error",
            "failure",
            "rerunFailure",
            "rerunError",
            "flakyFailure",
            "flakyError",
            "system-out",
            "system-err",
        },
    ),
    "failure": (set(), {"type", "message"}, set()),
    "error": (set(), {"type", "message"}, set()),
    "skipped": (set(), {"type", "message"}, set()),
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}
SUREFIRE_TIME = re.compile(r"^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$")
GITLAB_MAX_BYTES = 30 * 1024 * 1024
GITLAB_MAX_CASES = 500_000
GITLAB_MAX_OBJECTS = 250_000  # its XML parser's complexity limit


def junit10_problems(root: ET.Element) -> list[str]:
    """Where ``root`` breaks junit-10.xsd."""
    problems = []
    if root.tag != "testsuites":
        problems.append(f"the root is <{root.tag}>, not <testsuites>")
    for element in root.iter():
        rules = ELEMENTS.get(element.tag)
        if rules is None:
            problems.append(f"<{element.tag}> is not in the schema")
            continue
        required, optional, children = rules
        attributes = set(element.attrib)
        if required - attributes:
            problems.append(f"<{element.tag}> lacks {sorted(required - attributes)}")
        if attributes - required - optional:
            problems.append(f"<{element.tag}> has {sorted(attributes - required - optional)}")
        for child in element:
            if child.tag not in children:
                problems.append(f"<{child.tag}> inside <{element.tag}>")
        timed = element.tag in ("testsuites", "testsuite") and "time" in element.attrib
        if timed and not SUREFIRE_TIME.match(element.attrib["time"]):
            problems.append(f"<{element.tag} time={element.attrib['time']!r}>")
        if element.tag == "testsuite" and element.find("testsuite") is not None:
            problems.append("nested suites (allowed, but no reader here expects them)")
    return problems


def gitlab_problems(path: Path) -> list[str]:
    """Where the file at ``path`` breaks what GitLab's unit test reports take."""
    root = ET.parse(path).getroot()
    problems = []
    keys = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    if len(keys) != len(set(keys)):
        problems.append("two cases share a (classname, name): GitLab keeps only the first")
    if path.stat().st_size >= GITLAB_MAX_BYTES:
        problems.append("over 30 MB")
    if len(keys) >= GITLAB_MAX_CASES:
        problems.append("over 500,000 test cases")
    objects = sum(1 + len(e.attrib) + bool((e.text or "").strip()) for e in root.iter())
    if objects >= GITLAB_MAX_OBJECTS:
        problems.append(f"{objects} XML objects, over its parser's limit")
    return problems
