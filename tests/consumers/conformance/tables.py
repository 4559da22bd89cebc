"""Python's csv module on rtshield's CSV files, and gnuplot on the report's
plot.gp.

RFC 4180 as Python's csv reads it: a field holding a comma, a quote or a
line break is quoted, quotes doubled inside; every record has as many
fields as the header.
"""

import csv
import io
import os
import re
import tempfile

from .common import MISSING, Finding, Verdict, run, which, dpkg_version


def read_csv(text):
    rows = list(csv.reader(io.StringIO(text, newline="")))
    return rows[0] if rows else [], rows[1:]


def cell(v):
    """A results.json value as its CSV cell: null is empty."""
    return "" if v is None else str(v)


def results_csv(path, result, subject, text=None):
    """results.csv (the file at `path`, or `text`) against the result it
    was written from: per thread the counts, figures, policy, priority,
    period, percentile, and the run's start and duration."""
    v = Verdict("Python csv on results.csv", subject)
    if text is None:
        text = open(path, encoding="utf-8", newline="").read()
    header, rows = read_csv(text)
    if len(rows) != len(result["threads"]):
        v.add(Finding("records", len(rows), len(result["threads"]), "one row per thread"))
    for r in rows:
        if len(r) != len(header):
            v.add(Finding("fields in a record", len(r), len(header), "RFC 4180: as many as the header",
                          issue=8))
    dur = result.get("duration_s")
    for r, t in zip(rows, result["threads"]):
        rec = dict(zip(header, r))
        # Unknown (null in results.json) is an empty cell, never 0.
        want = {"label": result.get("label") or "", "samples": cell(t["samples"]),
                "min_ns": cell(t.get("min_ns")), "max_ns": cell(t.get("max_ns")),
                "avg_ns": "" if t.get("avg_ns") is None else f"{t['avg_ns']:.1f}",
                "p99.9_ns": cell(t["percentiles"].get("99.9")),
                "policy": cell(t.get("policy")), "priority": cell(t.get("priority")),
                "period_ns": cell(t.get("period_ns")),
                "duration_s": "" if dur is None else f"{dur:.3f}",
                "started_at": result["started_at"] or "", "overruns": cell(t["overruns"]),
                "command": " ".join(result["command"])}
        for k, w in want.items():
            got = rec.get(k)
            if k == "command":
                if got is None or result.get("label") and result["label"] not in got:
                    v.add(Finding("command", got, f"the argv, with the label {result.get('label')!r}",
                                  "results.json command"))
                continue
            if got != w:
                v.add(Finding(f"thread {t['index']} {k}", got, w, "results.json"))
    v.detail = f"{len(header)} columns, {len(rows)} records"
    return v


UNKNOWN = {"", "?", "unknown", "null", "None", "-"}


def runs_export_csv(text, stored, subject):
    """`runs export --format csv`: the records, and what the store holds
    (`stored` = the same runs from `runs export --format json`)."""
    v = Verdict("Python csv on runs export --format csv", subject)
    header, rows = read_csv(text)
    for r in rows:
        if len(r) != len(header):
            v.add(Finding("fields in a record", len(r), len(header),
                          "RFC 4180: a field with a comma is quoted (e.g. a cyclictest started "
                          "'Tue, 24 Nov 2026 ...')", issue=8))
    flat = [(run, t) for run in stored for t in run["threads"]]
    if len(rows) != len(flat):
        v.add(Finding("records", len(rows), len(flat), "one row per thread of each run"))
    for r, (runobj, t) in zip(rows, flat):
        if len(r) != len(header):
            continue
        rec = dict(zip(header, r))
        if rec.get("started") != (runobj["started_at"] or ""):
            v.add(Finding("started", rec.get("started"), runobj["started_at"], "the stored run"))
        if rec.get("label") != (runobj.get("label") or ""):
            v.add(Finding("label", rec.get("label"), runobj.get("label"), "the stored run"))
        for k in ("overruns", "missed_periods", "lost"):
            # Schema 1 listed placeholders in `unknown`; schema 2 writes null.
            if (k in (t.get("unknown") or []) or t.get(k) is None) and rec.get(k) not in UNKNOWN:
                v.add(Finding(f"{k} (not recorded by the source)", rec.get(k), "empty or ?",
                              "unknown is never 0", issue=4))
    v.detail = f"{len(header)} columns, {len(rows)} records"
    return v


def gnuplot_report(rt, source, subject, expect):
    """`rtshield report SOURCE --format gnuplot`, then gnuplot runs its
    plot.gp (to a dumb terminal) in the report directory; the curve titles
    must state the run's figures: `expect` = (max_us, overflow or None)."""
    v = Verdict("gnuplot on report plot.gp", subject)
    if not which("gnuplot"):
        v.status, v.detail = MISSING, "gnuplot not installed (apt: gnuplot-nox)"
        return v
    v.version = "gnuplot-nox " + (dpkg_version("gnuplot-nox") or "?")
    d = tempfile.mkdtemp(prefix="report.")
    out = os.path.join(d, "rep")
    rc, o, e = rt("report", source, "-o", out, "--format", "gnuplot")
    if rc != 0:
        return v.fail(f"rtshield report exit {rc}: {e.strip()[:200]}")
    rc, o, e = run(["gnuplot", "-e", "set terminal dumb size 100,30; set output 'plot.txt'",
                    "plot.gp"], cwd=out)
    if rc != 0:
        return v.fail(f"gnuplot exit {rc}: {e.strip()[:300]}")
    if e.strip():
        v.fail("gnuplot says: " + " | ".join(e.strip().splitlines())[:300])
    gp = open(os.path.join(out, "plot.gp"), encoding="utf-8").read()
    titles = [t for t in re.findall(r'title "((?:[^"\\]|\\.)*)"', gp)
              if not gp.count(f'set title "{t}"')]
    max_us, ovf = expect
    for t in titles:
        m = re.search(r"max (\d+) us", t)
        if m and max_us is not None and int(m.group(1)) != max_us:
            v.add(Finding("curve title max", m.group(1), max_us, "the run's maximum"))
        m = re.search(r"(\d+) overflow >= (\d+) us", t)
        if ovf is None and m:
            v.add(Finding("curve title overflow", m.group(0), "no overflow count (no histogram)",
                          "the source has no histogram: nothing is an overflow, the count is "
                          "unknown", issue=2))
        elif m and ovf is not None and int(m.group(1)) != ovf:
            v.add(Finding("curve title overflow", m.group(1), ovf, "samples beyond the histogram"))
    v.detail = f"{len(titles)} curve(s): " + " | ".join(titles)[:200]
    return v
