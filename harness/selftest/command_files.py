"""Malformed files named on the command line, given to ``webmcp-harness`` as a user gives
them: plans (``agent --agent scripted:FILE``), grids (``experiment FILE``), baselines and
previous reports (``conformance ua --baseline FILE`` / ``--diff FILE``), policy and answers
files (``call --policy FILE`` / ``--elicit FILE``).

Field by field and type by type, plus invalid syntax, an empty file, binary junk, a huge
file, a directory and a path that is not there. Each must end with exit status 2 and one
line on stderr that names the file, no traceback, and nothing written.

The commands run in one child process (``python -c``, the CLI's ``main`` once per case, in
a fresh empty working directory each): the CLI is the front end that may import the
others, and a process start per case would cost a second each. Every argument list also
holds a second problem that the command finds only *after* reading the file (a used
``--trace-dir``, ``--resume`` without ``--output``, ``--tests`` that select nothing,
``--settle -1``), so that a file wrongly accepted shows up as a message about something
else, and no browser ever starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.errors import MAX_INPUT_FILE_BYTES
from harness.selftest.inputs import ANSWERS_TEXTS, POLICY_TEXTS, InputResult

# Never contacted: every case stops before a browser starts.
URL = "http://127.0.0.1:9/"
# The whole batch (hundreds of cases, each a few milliseconds) must end within this.
BATCH_TIMEOUT_S = 600.0

# What the file holds: text, bytes, a directory (DIRECTORY) or nothing at all (MISSING).
DIRECTORY = "<directory>"
MISSING = "<missing>"


@dataclass
class FileCase:
    """One malformed file and the command line that is given it (``{file}`` marks where)."""

    family: str
    case: str
    suffix: str
    content: str | bytes
    argv: list[str] = field(default_factory=list)


# Values of every YAML/JSON type; each field is tried with those it does not take.
YAML_VALUES: list[tuple[str, Any]] = [
    ("null", None),
    ("bool", True),
    ("int", 3),
    ("float", 1.5),
    ("string", "text"),
    ("empty-string", ""),
    ("list", [1, "a"]),
    ("empty-list", []),
    ("mapping", {"a": 1}),
    ("empty-mapping", {}),
]

# The same for TOML (which has no null, and has dates).
TOML_VALUES: list[tuple[str, str]] = [
    ("bool", "true"),
    ("int", "3"),
    ("zero", "0"),
    ("negative", "-1"),
    ("float", "1.5"),
    ("string", '"text"'),
    ("empty-string", '""'),
    ("list", '[1, "a"]'),
    ("empty-list", "[]"),
    ("table", "{ a = 1 }"),
    ("datetime", "1979-05-27T07:32:00Z"),
]

# Files whose bytes are wrong whatever the format.
JUNK: list[tuple[str, str | bytes]] = [
    ("empty-file", ""),
    ("only-a-comment", "# nothing here\n"),
    ("binary-junk", b"\x00\xff\xfe\x80PK\x03\x04\x9c"),
    ("utf-16", "steps = 1\n".encode("utf-16")),
    ("huge-file", "#" * (MAX_INPUT_FILE_BYTES + 1)),
    ("directory", DIRECTORY),
    ("not-there", MISSING),
]


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False)


def _mutations(
    base: dict[str, Any], path: tuple[str | int, ...], takes: set[str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``base`` with the value at ``path`` replaced by each YAML value it does not take."""
    for label, value in YAML_VALUES:
        if label in takes:
            continue
        data = json.loads(json.dumps(base))
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        yield label, data


# -- plans (``agent --agent scripted:FILE``) ------------------------------------------------

PLAN: dict[str, Any] = {
    "task": "probe",
    "steps": [
        {"call": "echo", "args": {"n": 1}, "expect": {"isError": False}},
        {"navigate": "/next"},
        {"finish": "done"},
    ],
}

# (where, what it takes).
PLAN_FIELDS: list[tuple[tuple[str | int, ...], set[str]]] = [
    (("task",), {"string", "empty-string", "null"}),
    (("steps",), {"list", "empty-list", "null"}),
    (("steps", 0), {"mapping"}),
    (("steps", 0, "call"), {"string"}),
    (("steps", 0, "args"), {"mapping", "empty-mapping", "null"}),
    (("steps", 0, "expect"), {"mapping", "empty-mapping", "null"}),
    (("steps", 1, "navigate"), {"string"}),
    (("steps", 2, "finish"), {"string", "empty-string", "null"}),
]


def plan_cases(used_dir: Path) -> Iterator[FileCase]:
    """Malformed plans. ``used_dir``: a non-empty directory, the ``--trace-dir`` that a
    wrongly accepted plan runs into."""
    argv = ["agent", URL, "--agent", "scripted:{file}", "--trace-dir", str(used_dir)]

    def case(label: str, text: str | bytes, suffix: str = ".yaml") -> FileCase:
        return FileCase("plan-file", label, suffix, text, argv)

    for label, value in YAML_VALUES:
        if label not in {"mapping", "empty-mapping"}:
            yield case(f"document={label}", _yaml(value))
    for path, takes in PLAN_FIELDS:
        where = ".".join(str(p) for p in path)
        for label, data in _mutations(PLAN, path, takes):
            yield case(f"{where}={label}", _yaml(data))
    yield case("unknown-key", _yaml({**PLAN, "colour": "blue"}))
    for index, extra in [(0, "retries"), (1, "args"), (2, "args")]:
        data = json.loads(json.dumps(PLAN))
        data["steps"][index][extra] = 1
        yield case(f"steps.{index}.{extra}=unknown-key", _yaml(data))
    yield case("step-with-two-kinds", _yaml({"steps": [{"call": "a", "finish": "b"}]}))
    yield case("step-with-no-kind", _yaml({"steps": [{"args": {"n": 1}}]}))
    yield case("invalid-yaml", "steps: [\n  - call: echo\n")
    yield case("tab-indented", "steps:\n\t- call: echo\n")
    yield case("recursive-alias", "steps: &s [*s]\n")
    for label, text in JUNK:
        yield case(label, text)


# -- grids (``experiment FILE``) -----------------------------------------------------------

GRID_EXPERIMENT = {"name": '"probe"', "seeds": "1"}
GRID_AGENT = {"spec": '"obedient"'}
GRID_TASK = {"id": '"t1"', "instruction": '"read the mail"', "site": '"mail"'}

# (table, key, what it takes) — the TOML values a field takes are left out.
GRID_FIELDS: list[tuple[str, str, set[str]]] = [
    ("experiment", "name", {"string", "empty-string"}),  # "": the default name
    ("experiment", "description", {"string", "empty-string"}),
    ("experiment", "seeds", {"int", "zero"}),
    ("experiment", "policies", set()),
    ("experiment", "elicitation", set()),
    ("experiment", "backends", set()),
    ("experiment", "suites", {"empty-list"}),
    ("experiment", "include", {"empty-list"}),
    ("experiment", "select", {"empty-list"}),
    ("experiment", "max_steps", {"int"}),
    ("experiment", "episode_timeout", {"int", "float"}),
    ("experiment", "call_timeout", {"int", "float"}),
    ("experiment", "workers", {"int"}),
    ("experiment", "screenshots", {"bool"}),
    ("experiment", "playwright_trace", set()),
    ("agents", "spec", set()),
    ("agents", "name", {"string", "empty-string"}),
    ("agents", "temperature", {"int", "zero", "float"}),
    ("agents", "max_tokens", {"int"}),
    ("agents", "seeded", {"bool"}),
    ("agents", "options", {"table"}),
    ("tasks", "id", {"string"}),
    ("tasks", "instruction", {"string"}),
    ("tasks", "site", {"string"}),
    ("tasks", "url", set()),
    ("tasks", "path", {"string", "empty-string"}),
    ("tasks", "plan", {"empty-list"}),  # inline steps: none
    ("tasks", "max_steps", {"int"}),
    ("tasks", "success", {"empty-list"}),
    ("tasks", "attack", set()),
]


def _grid(
    experiment: dict[str, str], agent: dict[str, str] | None, task: dict[str, str] | None
) -> str:
    lines = ["[experiment]", *(f"{k} = {v}" for k, v in experiment.items())]
    if agent is not None:
        lines += ["", "[[agents]]", *(f"{k} = {v}" for k, v in agent.items())]
    if task is not None:
        lines += ["", "[[tasks]]", *(f"{k} = {v}" for k, v in task.items())]
    return "\n".join(lines) + "\n"


def grid_cases() -> Iterator[FileCase]:
    """Malformed grids; a wrongly accepted one runs into ``--resume`` without ``--output``."""
    argv = ["experiment", "{file}", "--resume"]

    def case(label: str, text: str | bytes) -> FileCase:
        return FileCase("grid-file", label, ".toml", text, argv)

    for table, key, takes in GRID_FIELDS:
        for label, literal in TOML_VALUES:
            if label in takes:
                continue
            parts = {"experiment": dict(GRID_EXPERIMENT), "agents": dict(GRID_AGENT)}
            parts["tasks"] = dict(GRID_TASK)
            parts[table][key] = literal
            yield case(f"{table}.{key}={label}", _grid(*parts.values()))
    for table in ("experiment", "agents", "tasks"):
        parts = {"experiment": dict(GRID_EXPERIMENT), "agents": dict(GRID_AGENT)}
        parts["tasks"] = dict(GRID_TASK)
        parts[table]["colour"] = '"blue"'
        yield case(f"{table}.colour=unknown-key", _grid(*parts.values()))
    yield case("agents.spec=missing", _grid(GRID_EXPERIMENT, {"name": '"a"'}, GRID_TASK))
    yield case("tasks.id=missing", _grid(GRID_EXPERIMENT, GRID_AGENT, {"instruction": '"x"'}))
    yield case("tasks.instruction=missing", _grid(GRID_EXPERIMENT, GRID_AGENT, {"id": '"t"'}))
    yield case("no-agents", _grid(GRID_EXPERIMENT, None, GRID_TASK))
    yield case("no-tasks", _grid(GRID_EXPERIMENT, GRID_AGENT, None))
    yield case("experiment-not-a-table", 'experiment = 3\n[[agents]]\nspec = "obedient"\n')
    yield case("agents-not-a-list", '[experiment]\nname = "p"\nagents = "obedient"\n')
    yield case("invalid-toml", "[experiment\nname = 1\n")
    yield case("duplicate-key", '[experiment]\nname = "a"\nname = "b"\n')
    yield case("a-yaml-file", _yaml({"experiment": {"name": "p"}}))
    for label, text in JUNK:
        yield case(label, text)


# -- baselines and previous reports (``conformance ua --baseline FILE`` / ``--diff FILE``) ---

BASELINE: dict[str, Any] = {
    "polyfill": {
        "/webmcp/probe.html": {
            "status": "OK",
            "reason": "why",
            "subtests": {"a subtest": {"status": "FAIL", "reason": "why", "intermittent": []}},
        }
    }
}
_TEST = ("polyfill", "/webmcp/probe.html")
_SUBTEST = (*_TEST, "subtests", "a subtest")
BASELINE_FIELDS: list[tuple[tuple[str | int, ...], set[str]]] = [
    (("polyfill",), {"mapping", "empty-mapping", "null"}),
    (_TEST, {"mapping", "empty-mapping", "null"}),
    ((*_TEST, "status"), {"string", "empty-string"}),
    ((*_TEST, "reason"), {"string", "empty-string"}),
    ((*_TEST, "subtests"), {"mapping", "empty-mapping"}),
    (_SUBTEST, set()),
    ((*_SUBTEST, "status"), {"string", "empty-string"}),
    ((*_SUBTEST, "reason"), {"string", "empty-string"}),
    ((*_SUBTEST, "intermittent"), {"empty-list"}),
]

REPORT: dict[str, Any] = {
    "run_info": {"product": "webmcp-harness", "backend": "polyfill"},
    "time_start": 1,
    "time_end": 2,
    "results": [{"test": "/webmcp/probe.html", "status": "OK", "subtests": []}],
}
REPORT_FIELDS: list[tuple[tuple[str | int, ...], set[str]]] = [
    (("run_info",), {"mapping", "empty-mapping"}),
    (("time_start",), {"int"}),
    (("results",), {"empty-list"}),
    (("results", 0), set()),
    (("results", 0, "test"), {"string", "empty-string"}),
    (("results", 0, "status"), set()),
    (("results", 0, "subtests"), {"empty-list"}),
]


def conformance_cases() -> Iterator[FileCase]:
    """Malformed baselines and previous reports; a wrongly accepted file runs into
    ``--tests`` that select nothing."""
    run = ["conformance", "ua", "--no-progress", "--tests", "/no/such/test"]

    def baseline(label: str, text: str | bytes) -> FileCase:
        return FileCase("baseline-file", label, ".yaml", text, [*run, "--baseline", "{file}"])

    def report(label: str, text: str | bytes) -> FileCase:
        return FileCase("report-file", label, ".json", text, [*run, "--diff", "{file}"])

    for label, value in YAML_VALUES:
        if label not in {"mapping", "empty-mapping", "null"}:
            yield baseline(f"document={label}", _yaml(value))
    for path, takes in BASELINE_FIELDS:
        where = ".".join(str(p) for p in path[1:]) or "backend"
        for label, data in _mutations(BASELINE, path, takes):
            yield baseline(f"{where}={label}", _yaml(data))
    unknown = json.loads(json.dumps(BASELINE))
    unknown["polyfill"]["/webmcp/probe.html"]["colour"] = "blue"
    yield baseline("test.colour=unknown-key", _yaml(unknown))
    yield baseline("invalid-yaml", "polyfill: [unclosed\n")
    yield baseline("tab-indented", "polyfill:\n\t/a: {}\n")
    for label, text in JUNK:
        if label not in {"empty-file", "only-a-comment"}:  # an empty baseline expects passes
            yield baseline(label, text)
    for label, value in YAML_VALUES:
        if label != "mapping":
            yield report(f"document={label}", json.dumps(value))
    for path, takes in REPORT_FIELDS:
        where = ".".join(str(p) for p in path)
        for label, data in _mutations(REPORT, path, takes):
            yield report(f"{where}={label}", json.dumps(data))
    missing = {k: v for k, v in REPORT.items() if k != "run_info"}
    yield report("run_info=missing", json.dumps(missing))
    yield report("invalid-json", '{"run_info": {')
    yield report("a-yaml-file", _yaml(REPORT))
    for label, text in JUNK:
        yield report(label, text)


# -- policy and answers files, through the command line ---------------------------------


def user_agent_cases() -> Iterator[FileCase]:
    """The policy and answers files :mod:`harness.selftest.inputs` loads directly, now
    through ``call --policy`` / ``--elicit``; a wrongly accepted one meets ``--settle -1``."""
    call = ["call", URL, "echo", "--settle", "-1"]
    for label, suffix, text in POLICY_TEXTS:
        if label == "huge-name":
            continue  # a well-formed policy (its rule has a long name): not a bad file
        yield FileCase("policy-file (command)", label, suffix, text, [*call, "--policy", "{file}"])
    for label, junk in JUNK:
        yield FileCase("policy-file (command)", label, ".toml", junk, [*call, "--policy", "{file}"])
    for label, suffix, answers in ANSWERS_TEXTS:
        content = MISSING if answers is None else answers
        yield FileCase(
            "answers-file (command)", label, suffix, content, [*call, "--elicit", "{file}"]
        )
    for label, junk in JUNK:
        if label != "not-there":  # tried above (ANSWERS_TEXTS' missing-file)
            yield FileCase(
                "answers-file (command)", label, ".yaml", junk, [*call, "--elicit", "{file}"]
            )


def all_cases(used_dir: Path) -> list[FileCase]:
    """Every malformed command-line file the selftest tries."""
    return [*plan_cases(used_dir), *grid_cases(), *conformance_cases(), *user_agent_cases()]


# -- running them ----------------------------------------------------------------------------

# The child: the CLI's `main` once per case, in an empty working directory of its own;
# what it exited with, said on stderr, raised, and left behind.
_DRIVER = r"""
import contextlib, io, json, os, sys, tempfile, time, traceback
from harness.cli.commands import main

root = os.getcwd()
answers = []
for argv in json.load(sys.stdin):
    work = tempfile.mkdtemp(prefix="case-", dir=root)
    os.chdir(work)
    err, out = io.StringIO(), io.StringIO()
    raised = ""
    started = time.perf_counter()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        code, raised = None, traceback.format_exc()
    os.chdir(root)
    answers.append({"code": code, "stderr": err.getvalue(), "raised": raised,
                    "left": sorted(os.listdir(work)),
                    "seconds": round(time.perf_counter() - started, 4)})
json.dump(answers, sys.stdout)
"""


def _write(case: FileCase, path: Path) -> None:
    if case.content == MISSING:
        return
    if case.content == DIRECTORY:
        path.mkdir()
    elif isinstance(case.content, bytes):
        path.write_bytes(case.content)
    else:
        path.write_text(case.content, encoding="utf-8")


def judge(case: FileCase, path: Path, answer: dict[str, Any]) -> tuple[bool, str]:
    """Clear: exit status 2, one line on stderr naming the file, no traceback, nothing written."""
    lines = [line for line in str(answer.get("stderr", "")).splitlines() if line.strip()]
    if answer.get("raised") or any("Traceback" in line for line in lines):
        last = (str(answer.get("raised") or "").strip().splitlines() or ["?"])[-1]
        return False, f"traceback: {last[:120]}"
    if answer.get("code") != 2:
        return False, f"exit {answer.get('code')}: {(lines or ['(nothing on stderr)'])[0][:120]}"
    if len(lines) != 1:
        return False, f"{len(lines)} lines on stderr"
    if path.name not in lines[0]:
        return False, f"does not name the file: {lines[0][:120]}"
    if answer.get("left"):
        return False, f"wrote {answer['left']}"
    return True, "refused"


def run_cases(cases: list[FileCase], directory: Path) -> list[InputResult]:
    """Write each case's file into ``directory``, run the commands, judge the answers."""
    paths: list[Path] = []
    argvs: list[list[str]] = []
    for index, case in enumerate(cases):
        path = directory / f"{case.family.split()[0]}-{index:04d}{case.suffix}"
        _write(case, path)
        paths.append(path)
        argvs.append(
            [str(path) if a == "{file}" else a.replace("{file}", str(path)) for a in case.argv]
        )
    with tempfile.TemporaryDirectory(prefix="webmcp-selftest-cwd-") as cwd:
        done = subprocess.run(
            [sys.executable, "-c", _DRIVER],
            input=json.dumps(argvs),
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=BATCH_TIMEOUT_S,
            check=False,
        )
    try:
        answers = json.loads(done.stdout)
    except ValueError:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        answers = [{"code": None, "stderr": "", "raised": f"the batch failed: {tail}"}] * len(cases)
    results = []
    for case, path, answer in zip(cases, paths, answers, strict=True):
        clear, said = judge(case, path, answer)
        results.append(
            InputResult(
                family=case.family,
                case=case.case,
                clear=clear,
                answer=said,
                seconds=float(answer.get("seconds") or 0.0),
            )
        )
    return results


def command_files() -> list[InputResult]:
    """Every malformed command-line file, each through its command."""
    with tempfile.TemporaryDirectory(prefix="webmcp-selftest-files-") as scratch:
        directory = Path(scratch)
        used = directory / "used-trace-dir"
        used.mkdir()
        (used / "trace.jsonl").write_text("{}\n", encoding="utf-8")
        return run_cases(all_cases(used), directory)
