"""rtshield reading files back (`report`, `runs import` then `runs show` /
`runs export`), compared with what the file says by its own format's
rules: the values a cyclictest user reads in the same file.

What a cyclictest file says (rt-tests 2.x cyclictest.c option parsing):
`-p N`/`--priority=N` sets the priority and SCHED_FIFO unless -y/--policy
chose fifo or rr; `-i N`/`--interval=N` is the period in us, 1000 when
absent; `-D T`/`--duration=T` (s, or suffix m/h/d) the requested duration;
`-h N`/`-H N`/`--histogram=N` the histogram of 0..N-1 us (none without
it); `-m` mlockall. The measured duration is end_time - start_time (1 s
resolution). A -h text alone holds no policy, period, duration, start time
or end reason: they are unknown.

A percentile over every sample (rank ceil(q * cycles)) is known exactly
when that rank falls inside the histogram (its bucket), is only bounded
(>= the histogram's end) when it falls among the overflows, and unknown
without a histogram.
"""

import json
import math
import os
import re
import shlex
import tempfile
from datetime import datetime

from .common import Finding, Verdict, us_floor
from .tables import read_csv

PCT = ["50", "99", "99.9", "99.99"]
UNKNOWN_TEXT = {"?", "-", "", "unknown", "n/a", "not enough samples"}


# --- what a file says ------------------------------------------------------------

def parse_cmdline(cmd):
    """policy, priority, interval_us, duration_s, histogram N, memlock."""
    argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    o = dict(policy="other", priority=0, interval_us=1000, duration_s=None, hist=0,
             memlock=False, policy_set=False)
    i = 1
    short_val = {"p": "priority", "i": "interval", "D": "duration", "h": "hist", "H": "hist",
                 "y": "policy", "t": "threads", "a": "affinity", "l": "loops"}
    long_map = {"priority": "priority", "interval": "interval", "duration": "duration",
                "histogram": "hist", "histofall": "hist", "policy": "policy"}
    while i < len(argv):
        a, val, key = argv[i], None, None
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
            key = long_map.get(name)
            if name == "mlockall":
                o["memlock"] = True
            if key and not eq and i + 1 < len(argv):
                i, val = i + 1, argv[i + 1]
        elif a.startswith("-") and len(a) > 1:
            flags = a[1:]
            while flags:
                c, flags = flags[0], flags[1:]
                if c == "m":
                    o["memlock"] = True
                elif c in short_val:
                    key = short_val[c]
                    if flags:
                        val, flags = flags, ""
                    elif i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                        i, val = i + 1, argv[i + 1]
        if key == "priority" and val is not None:
            o["priority"] = int(val)
            if o["policy"] not in ("fifo", "rr"):
                o["policy"] = "fifo"
        elif key == "interval" and val is not None:
            o["interval_us"] = int(val)
        elif key == "duration" and val is not None:
            mult = {"s": 1, "m": 60, "h": 3600, "d": 86400}
            o["duration_s"] = (int(val[:-1]) * mult[val[-1]] if val[-1] in mult else int(val))
        elif key == "hist" and val is not None:
            o["hist"] = int(val)
        elif key == "policy" and val is not None:
            o["policy"] = val.lower()
        i += 1
    if o["priority"] and o["policy"] not in ("fifo", "rr"):
        o["policy"] = "fifo"
    return o


def pct_expect(hist, cycles, q, n):
    """('exact', us) / ('beyond', n) / ('unknown',) for a nearest-rank
    percentile over every cycle, from a {us: count} histogram."""
    if cycles < round(1 / (1 - q)):
        return ("not_enough",)  # q needs 1/(1 - q) samples, else it repeats the max
    if not hist and not n:
        return ("unknown",)
    r = math.ceil(q * cycles)
    acc = 0
    for k in sorted(hist):
        acc += hist[k]
        if acc >= r:
            return ("exact", k)
    return ("beyond", n or (max(hist) + 1 if hist else 0))


def expect_cyclictest_json(path):
    d = json.load(open(path, encoding="utf-8"))
    c = parse_cmdline(d["cmdline:"])
    fmt = "%a, %d %b %Y %H:%M:%S %z"
    dur = (datetime.strptime(d["end_time"], fmt) - datetime.strptime(d["start_time"], fmt)
           ).total_seconds()
    t = d["thread"]["0"]
    hist = {int(k): v for k, v in t["histogram"].items()}
    has_hist = bool(c["hist"]) or bool(hist)
    ovf = t["cycles"] - sum(hist.values()) if has_hist else None
    e = dict(source="cyclictest json", policy=c["policy"], priority=c["priority"],
             period_ns=c["interval_us"] * 1000, duration_s=(dur, 1.0), samples=t["cycles"],
             min_us=t["min"], max_us=t["max"], overflow=ovf,
             hist_samples=sum(hist.values()) if has_hist else None, overruns=None,
             mode="nanosleep", end_reason="duration" if c["duration_s"] else None,
             guess_duration=t["cycles"] * c["interval_us"] / 1e6)
    e["pct"] = {k: pct_expect(hist, t["cycles"], float(k) / 100, c["hist"] or None)
                for k in PCT} if has_hist else {k: ("unknown",) for k in PCT}
    return e


def expect_own_cyclictest_json(path, result):
    """rtshield's own cyclictest-json: the same file rules, plus what
    results.json says the run was (the file's cmdline is rtshield's)."""
    e = expect_cyclictest_json(path)
    t = result["threads"][0]
    e.update(source="rtshield cyclictest-json", policy=t["policy"].lower(),
             priority=t["priority"], period_ns=t["period_ns"],
             duration_s=(result["duration_s"], 1.0), end_reason=result["end_reason"],
             mode=result["settings"]["mode"])
    n = (result["settings"]["histo_buckets"] - 1) * result["settings"]["resolution_ns"] // 1000
    d = json.load(open(path, encoding="utf-8"))
    hist = {int(k): v for k, v in d["thread"]["0"]["histogram"].items()}
    e["pct"] = {k: pct_expect(hist, t["samples"], float(k) / 100, n) for k in PCT}
    e["true_pct_us"] = true_pct(t)
    return e


def expect_hist_text(path, result=None):
    text = open(path, encoding="utf-8").read()
    rows = [l.split() for l in text.splitlines() if l and not l.startswith("#")]
    hist = {int(r[0]): int(r[1]) for r in rows if int(r[1])}
    foot = dict(l[2:].split(":", 1) for l in text.splitlines()
                if l.startswith("# ") and ":" in l and not l.startswith("# Thread"))
    ovf = int(foot["Histogram Overflows"].split()[0])
    n = len(rows)
    cycles = sum(hist.values()) + ovf
    e = dict(source="cyclictest -h text", policy=None, priority=None, period_ns=None,
             duration_s=None, samples=cycles, min_us=int(foot["Min Latencies"].split()[0]),
             max_us=int(foot["Max Latencies"].split()[0]), overflow=ovf,
             hist_samples=sum(hist.values()), overruns=None, mode=None, end_reason=None)
    e["pct"] = {k: pct_expect(hist, cycles, float(k) / 100, n) for k in PCT}
    if result is not None:  # rtshield's own histogram.txt: its provenance lines say more
        t = result["threads"][0]
        e.update(source="rtshield histogram.txt", policy=t["policy"].lower(),
                 priority=t["priority"], period_ns=t["period_ns"],
                 duration_s=(result["duration_s"], 0.01), overruns=t["overruns"],
                 mode=result["settings"]["mode"], end_reason=result["end_reason"])
        e["true_pct_us"] = true_pct(t)
        e["guess_duration"] = t["samples"] * t["period_ns"] / 1e9
    return e


def expect_result(result):
    """What a result directory's own results.json says (thread 0)."""
    t = result["threads"][0]
    n = (result["settings"]["histo_buckets"] - 1) * result["settings"]["resolution_ns"] // 1000
    return dict(source="results.json", policy=t["policy"].lower(), priority=t["priority"],
                period_ns=t["period_ns"], duration_s=(result["duration_s"], 0.0),
                samples=t["samples"], min_us=t["min_ns"] / 1000, max_us=t["max_ns"] / 1000,
                overflow=t["histogram"]["overflow"], hist_samples=t["hist_stats"]["samples"],
                overruns=t["overruns"], mode=result["settings"]["mode"],
                end_reason=result["end_reason"],
                pct={k: ("exact", v) if v is not None else ("not_enough",)
                     for k, v in true_pct(t).items()},
                true_pct_us=true_pct(t))


def true_pct(t):
    """A thread's own percentiles in us; None where results.json has none
    (too few samples for it)."""
    return {k: (t["percentiles"][k] / 1000 if k in t["percentiles"] else None) for k in PCT}


# --- what rtshield says ----------------------------------------------------------

def via_report(rt, path):
    d = tempfile.mkdtemp(prefix="rb.")
    rc, o, err = rt("report", path, "-o", os.path.join(d, "r"), "--format", "csv")
    if rc != 0:
        return None, f"report exit {rc}: {err.strip()[:200]}"
    header, rows = read_csv(open(os.path.join(d, "r", "summary.csv"), encoding="utf-8").read())
    return {r[0]: r[1] for r in rows if len(r) > 1}, None


def via_store(rt, path):
    rc, o, err = rt("runs", "import", path)
    if rc != 0:
        return None, f"runs import exit {rc}: {err.strip()[:200]}"
    m = re.search(r"^\s*(\d+)\s+\S+\s+stored", o, re.M)
    if not m:
        return None, f"runs import did not store it: {o.strip()[:200]}"
    rid = m.group(1)
    rc, js, err = rt("runs", "export", f"id={rid}", "--format", "json")
    rc2, show, _ = rt("runs", "show", rid)
    rc3, csvt, _ = rt("runs", "export", f"id={rid}", "--format", "csv")
    return dict(id=rid, run=json.loads(js)[0], show=show, csv=csvt), None


# --- comparing -------------------------------------------------------------------

def _num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _pct_findings(v, where, key, got_text, got_num, exp, true_us, issue_unknown):
    kind = exp[0]
    if kind == "not_enough":
        if got_text is not None and got_text not in UNKNOWN_TEXT:
            v.add(Finding(f"{where} p{key}", got_text, "absent (not enough samples)",
                          "a percentile q needs 1/(1 - q) samples, else it repeats the max"))
    elif kind == "unknown":
        if got_text not in UNKNOWN_TEXT:
            v.add(Finding(f"{where} p{key}", got_text, "unknown (?)",
                          "no histogram: a percentile is not known; never the max, never >=0",
                          issue=issue_unknown))
    elif kind == "exact":
        if got_num is None or abs(got_num - exp[1]) > 1.0:
            v.add(Finding(f"{where} p{key}", got_text, f"{exp[1]} us",
                          "rank ceil(q*cycles) falls in the histogram: its bucket"))
    else:  # beyond the histogram: a bound, or the true value if known
        bound_ok = bool(re.match(r"^[≥>]\s*\d+", got_text or "")) or got_text in UNKNOWN_TEXT
        exact_ok = (got_num is not None and true_us is not None and abs(got_num - true_us) <= 1.0)
        if not (bound_ok or exact_ok):
            v.add(Finding(f"{where} p{key}", got_text,
                          f">= {exp[1]} us (a bound" + (f"; the run measured {true_us:.0f} us)"
                                                       if true_us is not None else ")"),
                          "rank ceil(q*cycles) falls among the overflows: only a bound is known, "
                          "never the max", issue=3))


def compare_report(rep, e, subject):
    v = Verdict("rtshield report reads it back", subject)
    pol = rep.get("policy", "")
    m = re.match(r"^(\w+)\s+(\d+)$", pol)
    if e["policy"] is not None:
        if not m or m.group(1).lower() != e["policy"] or int(m.group(2)) != e["priority"]:
            v.add(Finding("policy", pol, f"{e['policy']} {e['priority']}",
                          "cyclictest -p N: SCHED_FIFO N" if "cyclictest" in e["source"] else
                          "results.json", issue=1))
    elif pol.replace("?", "").strip():
        v.add(Finding("policy", pol, "?", "a -h text does not record it", issue=4))
    per = rep.get("period (µs)")
    if e["period_ns"] is not None and _num(per) != e["period_ns"] / 1000:
        v.add(Finding("period (µs)", per, e["period_ns"] / 1000, "cyclictest -i N (default 1000)",
                      issue=1))
    for key, want in (("samples", e["samples"]), ("max (µs)", e["max_us"]),
                      ("min (µs)", e["min_us"])):
        got = _num(rep.get(key))
        if got is None or abs(got - want) >= (1.0 if key != "samples" else 0.5):
            v.add(Finding(key, rep.get(key), want, "the file"))
    for key, want, rule in (("Samples_H", e["hist_samples"], "samples inside the histogram"),
                            ("overflows", e["overflow"], "samples beyond the histogram")):
        got = rep.get(key)
        if want is None and got not in UNKNOWN_TEXT:
            v.add(Finding(key, got, "unknown (?)", "no histogram: " + rule + " is not known",
                          issue=2))
        elif want is not None and _num(got) != want:
            v.add(Finding(key, got, want, rule))
    if e["hist_samples"] is None:
        for key in ("L_med_H (µs)", "L_std_H (µs)", "L_avg_H (µs)"):
            if key in rep and rep[key] not in UNKNOWN_TEXT:
                v.add(Finding(key, rep[key], "unknown (?)", "no histogram", issue=2))
    if e["overruns"] is None and rep.get("overruns") not in UNKNOWN_TEXT:
        v.add(Finding("overruns", rep.get("overruns"), "?", "not recorded by cyclictest", issue=4))
    for k in PCT:
        got = rep.get(f"p{k} (µs)")
        _pct_findings(v, "report", k, got, _num(got), e["pct"][k],
                      e.get("true_pct_us", {}).get(k), 2)
    return v


def compare_store(st, e, subject):
    v = Verdict("rtshield runs import / show / export reads it back", subject)
    r, t = st["run"], st["run"]["threads"][0]
    # Schema 1 listed placeholders in `unknown`; schema 2 writes null.
    unknown = set(t.get("unknown") or []) | {k for k, x in t.items() if x is None}
    pol = (t["policy"] or "?").lower()
    if e["policy"] is not None and (pol, t["priority"]) != (e["policy"], e["priority"]):
        v.add(Finding("stored policy", f"{t['policy']} {t['priority']}",
                      f"{e['policy']} {e['priority']}", "cyclictest -p N: SCHED_FIFO N", issue=1))
    if e["policy"] is not None and t["policy"] is not None and \
            t["policy"] != t["policy"].lower() and t["policy"].lower() == e["policy"]:
        v.add(Finding("stored policy spelling", t["policy"], t["policy"].lower(),
                      "measured runs store `fifo`; one vocabulary in the store"))
    if e["period_ns"] is not None and t["period_ns"] != e["period_ns"]:
        v.add(Finding("stored period_ns", t["period_ns"], e["period_ns"], "cyclictest -i N",
                      issue=1))
    show = st["show"]
    m = re.search(r"duration (\S+) s", show)
    got_d = float(m.group(1)) if m else None
    if e["duration_s"] is None:
        if "duration_s" not in unknown and (got_d is not None or r.get("duration_s") not in (None,)):
            v.add(Finding("duration", f"{r.get('duration_s')} (runs show: {got_d} s)", "unknown",
                          "a cyclictest -h text records no time", issue=4))
    else:
        want, tol = e["duration_s"]
        if abs(r["duration_s"] - want) > tol:
            guessed = e.get("guess_duration") is not None and abs(
                r["duration_s"] - e["guess_duration"]) < 1e-6
            v.add(Finding("stored duration_s", f"{r['duration_s']:g}" + (
                " (= samples x period)" if guessed else ""), f"{want:g} s",
                "end_time - start_time" if "cyclictest" in e["source"] else
                "the file's own first line states the run's duration; samples x period is a "
                "guess (missed periods make it short)", issue=1 if "json" in e["source"] else None))
        elif e.get("guess_duration") is not None and abs(r["duration_s"] - e["guess_duration"]) < 1e-9 \
                and abs(r["duration_s"] - want) > 1e-9:
            v.add(Finding("stored duration_s", f"{r['duration_s']} (= cycles x interval)",
                          f"{want:g} s (end_time - start_time)",
                          "a number not measured or read is unknown, never a guess: the file "
                          "records the start and end times"))
    for field, want, text in (("end", e["end_reason"], r"end (\S+)"), ("mode", e["mode"],
                                                                      r"mode (\S+)")):
        m = re.search(text, show)
        got = m.group(1) if m else None
        if want is None and got not in (None, "?"):
            v.add(Finding(f"runs show {field}", got, "?", "a -h text does not record it", issue=4))
    if e["overruns"] is None:
        if "overruns" not in unknown:
            v.add(Finding("stored overruns", t["overruns"], "unknown", "not recorded", issue=4))
        row = [l.split() for l in show.splitlines() if re.match(r"^\s+\d+\s", l)]
        if row and row[0][-1] not in ("?", "-"):
            v.add(Finding("runs show overrun", row[0][-1], "?", "not recorded: unknown, never 0",
                          issue=4))
    h = t["histogram"] or {}
    if e["overflow"] is None and "histogram" not in unknown:
        v.add(Finding("stored histogram overflow", h["overflow"], "unknown (no histogram)",
                      "cyclictest without -h writes no histogram", issue=2))
    elif e["overflow"] is not None and h["overflow"] != e["overflow"]:
        v.add(Finding("stored histogram overflow", h["overflow"], e["overflow"], "the file"))
    if e["hist_samples"] is None and (t["hist_stats"] or {}).get("samples") == 0 and \
            "histogram" not in unknown:
        v.add(Finding("stored hist_stats (Samples_H, L_med_H, L_std_H)", t["hist_stats"],
                      "unknown", "no histogram", issue=2))
    for k in PCT:
        ns = t["percentiles"].get(k)
        got_us = ns / 1000 if ns is not None else None
        got_text = "?" if ns is None else f"{got_us:g}"
        exp = e["pct"][k]
        if exp[0] == "unknown" and ns is not None and "percentiles" not in unknown:
            v.add(Finding(f"stored p{k}", f"{got_us:g} us" + (" (= the max)" if ns == t["max_ns"]
                                                              else ""), "unknown",
                          "no histogram: a percentile is not known, never the max", issue=2))
        elif exp[0] != "unknown":
            _pct_findings(v, "stored", k, got_text, got_us, exp, e.get("true_pct_us", {}).get(k), 2)
    return v
