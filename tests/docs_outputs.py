"""The command outputs the documentation shows, made by real runs: the demo (``make demo``),
``scrapy robots URL`` against the demo site, a crawl's start and the mistakes it refuses.

Each output is a file of ``docs/_outputs/``, which the pages include as they are.
``tests/test_docs_examples.py`` runs the same commands and fails when an output changed;
``python -m tests.docs_outputs`` writes them again (run it after a change of what the
commands print, and commit the files).

Ports, clock times and counts that depend on timing are the only parts that may differ from
one run to the next: :func:`normalised` takes them out before two runs are compared.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = ROOT / "docs" / "_outputs"
EXAMPLE_PROJECT = ROOT / "example_project"
RUN_DEMO = EXAMPLE_PROJECT / "run_demo.py"
DEMO_SITE = EXAMPLE_PROJECT / "demosite.py"
EXPLAIN = ROOT / "docs" / "examples" / "explain.py"
# Nothing of the caller's environment may pick the project for the commands.
ENV = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
SCRAPY = [sys.executable, "-m", "scrapy"]
# A guard only: every run takes a few seconds.
TIMEOUT = 120
# How ``make demo`` names its output folder, which a run of the tests puts elsewhere.
DEMO_OUTPUT = "example_project/output"
# The paths of the demo's items the pages show, JSON and CSV.
JSON_ITEMS = {
    "demo-item-signals.json": "/open/data.html",
    "demo-item-tdmrep.json": "/journals/article.html",
}
CSV_ROWS = ("/", "/licensed.html", "/noai.html", "/docs/report.pdf")
# A log line as Scrapy writes it: a timestamp, then "[logger] LEVEL: message".
ROBOTSTXT_LOGGER = "[scrapy_robotsmeta.downloadermiddleware]"
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (\[[\w.]+\] \w+: .*)$")


def run_demo(output: Path) -> str:
    """Run the demo as ``make demo`` does, its exports and log in *output*: its stdout."""
    done = subprocess.run(
        [sys.executable, str(RUN_DEMO), "--output", str(output)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def demo_outputs(output: Path, stdout: str) -> dict[str, str]:
    """What the demo printed, and the parts of its log and exports that the pages show, in an
    order that does not depend on the crawl's: by origin, then as logged."""
    origins = dict(re.findall(r"(\w+) (http://[\d.:]+)", stdout.split("\n", 1)[0]))
    main, flaky, down = origins["main"], origins["flaky"], origins["down"]
    outputs = {"demo-summary.txt": stdout.replace(str(output), DEMO_OUTPUT)}
    log = [
        found.group(1)
        for line in (output / "crawl.log").read_text("utf-8").splitlines()
        if (found := LOG_LINE.match(line))
    ]
    outputs["demo-start.log"] = _picked(log, "[scrapy_robotsmeta.addon] INFO: ")
    outputs["demo-refusals.log"] = _picked(
        log,
        f"Forbidden by robots.txt: <GET {main}/",
        f"Dropped <GET {main}/",
        f"Forbidden by robots.txt: <GET {flaky}/",
        f"Dropped <GET {down}/",
    )
    # What the robots.txt part said of each origin that was not plain rules, as it happened.
    said = [
        line
        for line in log
        if line.startswith((f"{ROBOTSTXT_LOGGER} INFO", f"{ROBOTSTXT_LOGGER} WARNING"))
    ]
    outputs["demo-robotstxt.log"] = _picked(
        said, *(f"robots.txt of {origins[role]}" for role in ("no_robots", "flaky", "down"))
    )
    items = [json.loads(line) for line in (output / "items.jsonl").read_text("utf-8").splitlines()]
    for name, path in JSON_ITEMS.items():
        [item] = [item for item in items if urlsplit(item["url"]).path == path]
        outputs[name] = json.dumps(item, ensure_ascii=False) + "\n"
    header, *rows = (output / "items.csv").read_text("utf-8").splitlines()
    shown = [row for path in CSV_ROWS for row in rows if row.startswith(f"{main}{path},")]
    outputs["demo-items.csv"] = "\n".join([header, *shown]) + "\n"
    return outputs


def _picked(log: list[str], *parts: str) -> str:
    """The lines of *log* holding each of *parts*: those of the first part, then those of the
    second…, each in the log's order."""
    return "".join(line + "\n" for part in parts for line in log if part in line)


@contextmanager
def demo_site() -> Iterator[dict[str, str]]:
    """The demo site served by its own process, as ``python demosite.py`` serves it: each
    origin's role → its base URL."""
    process = subprocess.Popen(
        [sys.executable, str(DEMO_SITE)], stdout=subprocess.PIPE, text=True, env=ENV
    )
    try:
        assert process.stdout is not None
        yield json.loads(process.stdout.readline())
    finally:
        process.terminate()
        process.wait(timeout=60)


def commands(origins: dict[str, str]) -> dict[str, list[str]]:
    """Each output file of a command, and the command's arguments after ``scrapy``; each is
    run inside the example project. The flaky origin's robots.txt answers 503 three times
    then recovers, so only one command may ask it."""
    main = origins["main"]
    # Not the project's feeds: a refused or short crawl writes no exports over the demo's.
    quiet = ["-s", "FEEDS={}", "-L", "WARNING"]
    crawl = ["crawl", "site", "-a", f"start_url={origins['no_robots']}/page.html"]
    return {
        "robots-disallowed.txt": ["robots", f"{main}/drafts/wip.html"],
        "robots-bot-meta.txt": ["robots", f"{main}/bot-meta.html"],
        "robots-usage.txt": ["robots", f"{origins['signals']}/open/data.html"],
        "robots-flaky.txt": ["robots", f"{origins['flaky']}/"],
        "robots-down.txt": ["robots", "--robots-timeout", "2", f"{origins['down']}/"],
        "robots-json.txt": ["robots", "--json", f"{main}/docs/report.pdf"],
        "settings-in-force.txt": [
            "shell",
            "--nolog",
            "-c",
            'settings.get("ROBOTSTXT_CACHE_EXPIRATION"), '
            'settings.get("ROBOTSTXT_UNAVAILABLE_TIMEOUT")',
        ],
        "mistake-misspelt.log": [*crawl, "-s", "ROBOTSTXT_UNAVAILABLE_TIMOUT=5", *quiet],
        "mistake-refused.log": [*crawl, "-s", "ROBOTSMETA_PURPOSES=ai-train", *quiet],
    }


def command_outputs(origins: dict[str, str]) -> dict[str, str]:
    """Run every command of :func:`commands` at once and give each one's output as the pages
    show it: ``scrapy robots`` as a terminal shows it, its prompt line, what it writes on
    stderr while it waits, its report and its exit status; a crawl's log lines without their
    timestamps, and its exit status; the shell's answer."""
    runs = {
        name: subprocess.Popen(
            [*SCRAPY, *args],
            cwd=EXAMPLE_PROJECT,
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, args in commands(origins).items()
    }
    explained = [f"{origins['main']}/drafts/wip.html", f"{origins['main']}/about.html"]
    explain = subprocess.Popen(
        [sys.executable, str(EXPLAIN), *explained],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    outputs = {}
    for name, process in runs.items():
        stdout, stderr = process.communicate(timeout=TIMEOUT)
        args = commands(origins)[name]
        if args[0] == "robots":
            outputs[name] = f"$ {shlex.join(['scrapy', *args])}\n{stderr}{stdout}"
        elif args[0] == "crawl":
            lines = [
                found.group(1) for line in stderr.splitlines() if (found := LOG_LINE.match(line))
            ]
            log = "".join(f"{line}\n" for line in lines)
            outputs[name] = (
                f"$ {shlex.join(['scrapy', *args])}\n{log}$ echo $?\n{process.returncode}\n"
            )
        else:
            assert process.returncode == 0, stderr
            outputs[name] = f"$ {shlex.join(['scrapy', *args])}\n{stdout}"
    stdout, stderr = explain.communicate(timeout=TIMEOUT)
    assert explain.returncode == 0, stderr
    shown = EXPLAIN.relative_to(ROOT)
    outputs["explain.txt"] = f"$ python {shown} {' '.join(explained)}\n{stdout}"
    return outputs


# Parts of an output that change from one run to the next, and what each becomes.
_VARYING = (
    (re.compile(r"\b\d\d:\d\d:\d\d\b"), "HH:MM:SS"),  # a clock time
    (re.compile(r"\(\d+ identical tries\)"), "(N identical tries)"),  # as many as time allowed
    (re.compile(r"\d+: 503 x\d+"), "N: 503 xN"),
    (re.compile(r"unavailable for \d+ s"), "unavailable for N s"),
)


def normalised(text: str) -> str:
    """*text* with what varies between two runs taken out: each port becomes its rank among
    the ports of the text (the demo site's ports are new on every run); times and the counts
    of tries that time decides become placeholders."""
    ports: dict[str, str] = {}

    def port(found: re.Match[str]) -> str:
        return "127.0.0.1:" + ports.setdefault(found.group(1), f"PORT{len(ports) + 1}")

    text = re.sub(r"127\.0\.0\.1:(\d+)", port, text)
    for pattern, placeholder in _VARYING:
        text = pattern.sub(placeholder, text)
    return text


def main() -> None:
    """Write every output again into ``docs/_outputs/``."""
    outputs = {}
    with tempfile.TemporaryDirectory() as output:
        outputs.update(demo_outputs(Path(output), run_demo(Path(output))))
    with demo_site() as origins:
        outputs.update(command_outputs(origins))
    OUTPUTS.mkdir(exist_ok=True)
    for stale in set(p.name for p in OUTPUTS.iterdir()) - set(outputs):
        (OUTPUTS / stale).unlink()
    for name, text in outputs.items():
        (OUTPUTS / name).write_text(text, encoding="utf-8")
        print(f"wrote {OUTPUTS.relative_to(ROOT) / name}")


if __name__ == "__main__":
    main()
