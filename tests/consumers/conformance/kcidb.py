"""KCIDB: KernelCI's own schema validation (PyPI package kcidb-io), run the
way its command-line tools do, and the verdict KernelCI would show.

kcidb-validate and kcidb-submit live in the `kcidb` package, which PyPI
does not carry; both call kcidb-io: `kcidb_io.schema.LATEST.validate(data)`
(the data may be of LATEST or any earlier version: it is validated by the
version it declares, jsonschema Draft 7 with format checking) and, before
submitting, `LATEST.upgrade(data)`. The script below does exactly that,
then `LATEST.validate_exactly` on the upgraded data.

Verdict rules (KCIDB v5 `tests[].status`): FAIL = the test ran and found a
problem; PASS = it ran and found none; DONE = it ran, no verdict. A run that
failed its --max-latency limit must show FAIL on the thread's `max`.
"""

import json
import os

from .common import ERROR, MISSING, Finding, Verdict, run, system_python

VALIDATE = r"""
import json, sys
import kcidb_io
from importlib.metadata import version
data = json.load(open(sys.argv[1], encoding="utf-8"))
try:
    kcidb_io.schema.LATEST.validate(data)          # kcidb-validate
    up = kcidb_io.schema.LATEST.upgrade(data)      # kcidb-submit
    kcidb_io.schema.LATEST.validate_exactly(up)
except Exception as e:
    print("INVALID %s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))
    sys.exit(0)
print("VALID kcidb-io %s, schema %s -> %s" % (version("kcidb-io"),
      kcidb_io.schema.LATEST.get_exactly_compatible(data), kcidb_io.schema.LATEST))
"""


def _env():
    env = dict(os.environ)
    extra = os.environ.get("RTSHIELD_TEST_PYTHONPATH")
    if extra:
        env["PYTHONPATH"] = extra + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def validate(path, subject):
    v = Verdict("KCIDB validator (kcidb-io schema)", subject)
    py = system_python()
    rc, _, _ = run([py, "-c", "import kcidb_io"], env=_env())
    if rc != 0:
        v.status = MISSING
        v.detail = ("python module kcidb_io not importable (pip: kcidb-io; put its --target "
                    "dir on PYTHONPATH or RTSHIELD_TEST_PYTHONPATH)")
        return v
    rc, out, err = run([py, "-c", VALIDATE, path], env=_env())
    if rc != 0:
        v.status, v.detail = ERROR, err.strip()[-300:]
    elif out.startswith("INVALID"):
        v.fail(out.strip())
    else:
        v.version = out.split(",")[0].replace("VALID ", "")
        v.detail = out.strip()
    return v


def semantics(path, result, subject, expect_failed_threads):
    """KernelCI's verdict and numbers against results.json."""
    v = Verdict("KCIDB verdict and numbers", subject)
    d = json.load(open(path, encoding="utf-8"))
    by = {t["path"]: t for t in d.get("tests", [])}
    failed = [p for p, t in by.items() if p.endswith(".max") and t.get("status") == "FAIL"]
    if expect_failed_threads is not None and len(failed) != expect_failed_threads:
        v.add(Finding("tests with status FAIL (thread maxima)", len(failed), expect_failed_threads,
                      "the run failed its --max-latency (measure exit 3): KCIDB status FAIL "
                      "on the thread's max, not DONE", issue=5))
    for t in result["threads"]:
        i = t["index"]
        unknown = set(t.get("unknown") or [])
        checks = [("max", t["max_ns"] / 1e9), ("min", t["min_ns"] / 1e9),
                  ("samples", t["samples"])]
        for k in ("overruns", "missed_periods", "lost"):
            if k not in unknown:
                checks.append((k, t[k]))
            elif f"rtshield.latency.t{i}.{k}" in by:
                v.add(Finding(f"t{i}.{k}", by[f"rtshield.latency.t{i}.{k}"]["number"]["value"],
                              "no test entry", "the source did not record it: unknown is "
                              "absent, never 0", issue=4))
        for key, ns in (t.get("percentiles") or {}).items():
            checks.append(("p" + key.replace(".", "_"), ns / 1e9))
        for stat, want in checks:
            e = by.get(f"rtshield.latency.t{i}.{stat}")
            if e is None:
                v.add(Finding(f"t{i}.{stat}", "absent", want, "one test per thread and statistic"))
            elif abs(e["number"]["value"] - want) > 1e-12 * max(1.0, abs(want)):
                v.add(Finding(f"t{i}.{stat}", e["number"]["value"], want, "results.json"))
    v.detail = f"{len(by)} tests, {len(failed)} FAIL"
    return v
