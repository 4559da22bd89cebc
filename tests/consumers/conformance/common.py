"""Shared pieces of the consumer-conformance harness: verdicts, findings,
running programs, and calling rtshield with a private HOME and store.

A *verdict* is what one consumer concluded about one file: PASS (it read
the file and every number it derived is the one rtshield measured), FAIL
(it refused the file, or reached a wrong verdict or number), MISSING (the
consumer is not installed: a failure with --strict) or ERROR (the harness
itself could not run the check). Each wrong number is a *finding*: what was
read, the value found, the value expected and the rule that says so.
"""

import json
import os
import shutil
import subprocess
import tempfile

PASS, FAIL, MISSING, ERROR = "PASS", "FAIL", "MISSING", "ERROR"


class Finding:
    """One wrong value: `what` was `got`, the rule `rule` says `expected`."""

    def __init__(self, what, got, expected, rule, issue=None):
        self.what, self.got, self.expected = what, got, expected
        self.rule, self.issue = rule, issue

    def line(self):
        tag = f" [issue 22 #{self.issue}]" if self.issue else " [new]"
        return (f"{self.what}: got {self.got!s}, expected {self.expected!s}"
                f" -- {self.rule}{tag}")

    def as_dict(self):
        return dict(what=self.what, got=str(self.got),
                    expected=str(self.expected), rule=self.rule,
                    issue=self.issue)


class Verdict:
    """One consumer's conclusion on one input."""

    def __init__(self, consumer, subject, status=PASS, detail="",
                 findings=None, version=None):
        self.consumer, self.subject = consumer, subject
        self.status, self.detail = status, detail
        self.findings = list(findings or [])
        self.version = version

    def add(self, finding):
        self.findings.append(finding)
        if self.status == PASS:
            self.status = FAIL
        return self

    def fail(self, detail):
        self.status = FAIL
        self.detail = (self.detail + "; " if self.detail else "") + detail
        return self

    def lines(self):
        head = f"{self.status:7} {self.consumer} [{self.subject}]"
        if self.version:
            head += f" ({self.version})"
        if self.detail:
            head += f": {self.detail}"
        return [head] + ["        x " + f.line() for f in self.findings]

    def as_dict(self):
        return dict(consumer=self.consumer, subject=self.subject,
                    status=self.status, detail=self.detail,
                    version=self.version,
                    findings=[f.as_dict() for f in self.findings])


def run(argv, cwd=None, env=None, stdin=None, timeout=300):
    """Run argv; (exit status, stdout, stderr) as text. Never raises on a
    non-zero status: the status is part of what a check looks at."""
    p = subprocess.run(argv, cwd=cwd, env=env, input=stdin,
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def which(name):
    return shutil.which(name)


def system_python():
    """The distribution's interpreter (Debian's python3-* modules live
    there), never a pyenv shim found first on PATH."""
    for p in ("/usr/bin/python3", shutil.which("python3")):
        if p and os.path.exists(p):
            return p
    return None


def python_has(module, python=None):
    py = python or system_python()
    if not py:
        return False
    rc, _, _ = run([py, "-c", f"import {module}"])
    return rc == 0


def tool_version(argv, first_line=True):
    try:
        rc, out, err = run(argv, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out or err).strip()
    return text.splitlines()[0] if (text and first_line) else text


def dpkg_version(package):
    rc, out, _ = run(["dpkg-query", "-W", "-f=${Version}", package])
    return out.strip() if rc == 0 and out.strip() else None


class Rtshield:
    """rtshield driven from its command line only (so the harness survives
    any restructuring of the code), with a private HOME and results store:
    nothing the harness runs touches the user's ~/.local/share/rtshield."""

    def __init__(self, binary, workdir):
        self.binary = binary
        self.home = tempfile.mkdtemp(prefix="home.", dir=workdir)
        self.store = os.path.join(self.home, "runs.db")
        self.env = dict(os.environ, HOME=self.home,
                        XDG_DATA_HOME=os.path.join(self.home, "data"),
                        RTSHIELD_STORE=self.store)

    def __call__(self, *args, cwd=None):
        return run([self.binary, *args], cwd=cwd, env=self.env)

    def version(self):
        return tool_version([self.binary, "--version"])


def find_rtshield(explicit=None):
    """--rtshield, else $RTSHIELD_BIN, else the worktree's target/, else PATH."""
    if explicit:
        return os.path.abspath(explicit)
    if os.environ.get("RTSHIELD_BIN"):
        return os.environ["RTSHIELD_BIN"]
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", "..", ".."))
    for sub in ("target/release/rtshield", "target/debug/rtshield"):
        p = os.path.join(root, sub)
        if os.access(p, os.X_OK):
            return p
    return shutil.which("rtshield")


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def us_floor(ns):
    """cyclictest's µs figures are integer divisions of ns (floored)."""
    return int(ns) // 1000
