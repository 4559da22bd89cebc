"""The harness's own checkers on inputs whose verdict is known: real
cyclictest output (the repository's fixtures, written by cyclictest 2.40)
must pass the cyclictest rules; documents valid by each JUnit schema must
pass that schema's rules and broken ones fail; the restated PromQL rule
must give promtool's answer. A checker that cannot fail is a defect."""

import json
import os
import re
import tempfile
import xml.etree.ElementTree as ET

from . import cyclictest, junit, prom, readback, tables
from .common import MISSING, PASS, which

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIX = os.path.join(ROOT, "tests", "fixtures", "report")


def result_from_cyclictest_hist(path):
    """A results.json-shaped dict holding what a real cyclictest -h file says."""
    text = open(path, encoding="utf-8").read()
    rows = [l.split() for l in text.splitlines() if l and not l.startswith("#")]
    foot = dict(l[2:].split(":", 1) for l in text.splitlines()
                if l.startswith("# ") and ":" in l and not l.startswith("# Thread"))
    nthreads = len(rows[0]) - 1
    threads = []
    for i in range(nthreads):
        counts = [[int(r[0]), int(r[i + 1])] for r in rows if int(r[i + 1])]
        ovf = int(foot["Histogram Overflows"].split()[i])
        total = sum(c for _, c in counts)
        threads.append(dict(index=i, samples=total + ovf,
                            min_ns=int(foot["Min Latencies"].split()[i]) * 1000,
                            max_ns=int(foot["Max Latencies"].split()[i]) * 1000,
                            avg_ns=int(foot["Avg Latencies"].split()[i]) * 1000 + 500,
                            histogram=dict(counts=counts, overflow=ovf, underflow=0),
                            percentiles={}, hist_stats=dict(samples=total)))
    return dict(settings=dict(histo_buckets=len(rows) + 1, resolution_ns=1000), threads=threads)


def result_from_cyclictest_json(path):
    d = json.load(open(path, encoding="utf-8"))
    n = readback.parse_cmdline(d["cmdline:"])["hist"]
    threads = []
    for k, t in sorted(d["thread"].items()):
        counts = [[int(b), c] for b, c in sorted(t["histogram"].items(), key=lambda x: int(x[0]))]
        threads.append(dict(index=int(k), samples=t["cycles"], min_ns=t["min"] * 1000,
                            max_ns=t["max"] * 1000, avg_ns=t["avg"] * 1000,
                            histogram=dict(counts=counts, overflow=t["cycles"] - sum(
                                c for _, c in counts))))
    return dict(settings=dict(histo_buckets=n + 1, resolution_ns=1000), threads=threads)


JENKINS_OK = """<testsuites name="x" time="1,234.5" tests="1" failures="1" errors="0">
<testsuite name="s" tests="1" failures="1" errors="0" time="0.5" timestamp="2026-01-01T00:00:00Z">
<properties><property name="a" value="b"/></properties>
<testcase name="c" classname="k" time="0.1"><failure type="t" message="m">text</failure>
<system-out>o</system-out></testcase></testsuite></testsuites>"""
ANT_OK = """<testsuites><testsuite package="p" id="0" name="s" timestamp="2026-01-01T00:00:00"
hostname="h" tests="1" failures="1" errors="0" time="0.5">
<properties><property name="a" value="b"/></properties>
<testcase name="c" classname="k" time="0.1"><failure type="t">x</failure></testcase>
<system-out/><system-err/></testsuite></testsuites>"""
RTSHIELD_LIKE = """<testsuites name="rtshield" tests="1" failures="0" errors="0" time="5.008">
<testsuite name="s" tests="1" failures="0" errors="0" skipped="0" time="5.008"
timestamp="2026-11-24T20:57:30Z" hostname="vm"><properties><property name="t" value="v"/>
</properties><testcase classname="k" name="c" time="5.008"><properties>
<property name="cpu" value="1"/></properties></testcase></testsuite></testsuites>"""


def main():
    results = []

    def expect(name, cond, detail=""):
        results.append((name, bool(cond), detail))

    # cyclictest -h text rules and rteval/OSADL on real cyclictest output.
    hist = os.path.join(FIX, "cyclictest-2threads.hist")
    r = result_from_cyclictest_hist(hist)
    v = cyclictest.check_hist_text(hist, r, "fixture")
    expect("cyclictest -h rules accept real cyclictest -h 50 output", v.status == PASS,
           "\n".join(v.lines()))
    bad = tempfile.mktemp(suffix=".hist")
    text = open(hist, encoding="utf-8").read()
    open(bad, "w").write(re.sub(r"(# Thread 0:).*", r"\1 # 00129 others", text))
    v = cyclictest.check_hist_text(bad, r, "broken")
    expect("cyclictest -h rules reject a missing overflow cycle list", v.status != PASS)
    extra = text.replace("# Total:", "000050 000001\t000000\n# Total:")
    open(bad, "w").write(extra)
    v = cyclictest.check_hist_text(bad, r, "broken")
    expect("cyclictest -h rules reject N+1 rows", any("rows" in f.what for f in v.findings))
    v = cyclictest.rteval_parse(hist, "fixture", r)
    expect("rteval reads real cyclictest output", v.status == PASS, "\n".join(v.lines()))
    if which("gnuplot"):
        v = cyclictest.osadl_plot(hist, "fixture", 2, 363, 50)
        expect("OSADL recipe on real cyclictest output", v.status == PASS, "\n".join(v.lines()))
    # cyclictest JSON rules and Linaro's parser on real cyclictest --json.
    cj = os.path.join(FIX, "cyclictest-cpu1.json")
    v = cyclictest.check_json(cj, result_from_cyclictest_json(cj), 0, "fixture")
    expect("cyclictest --json rules accept real cyclictest output", v.status == PASS,
           "\n".join(v.lines()))
    v = cyclictest.linaro_parse(cj, "fixture", False)
    expect("Linaro's parser passes a real run", v.status == PASS, "\n".join(v.lines()))
    v = cyclictest.linaro_parse(cj, "fixture", True)
    expect("Linaro's verdict is checked", v.status != PASS)
    c = readback.parse_cmdline("cyclictest -m -p 98 -a 1 -t 1 -i 200 -D 2 -h 100 -q --json=x")
    expect("cyclictest options", (c["policy"], c["priority"], c["interval_us"], c["duration_s"],
                                  c["hist"], c["memlock"]) == ("fifo", 98, 200, 2, 100, True), c)
    c = readback.parse_cmdline("cyclictest -p98 -i200 -D1m --policy=rr -h400")
    expect("cyclictest options, attached", (c["policy"], c["priority"], c["interval_us"],
                                            c["duration_s"], c["hist"]) == ("rr", 98, 200, 60,
                                                                            400), c)
    # JUnit schema rules.
    for name, doc, fn, ok in (("Jenkins rules accept a valid document", JENKINS_OK,
                               junit.jenkins_violations, True),
                              ("Ant rules accept a valid document", ANT_OK,
                               junit.ant_violations, True),
                              ("Jenkins rules reject properties in a testcase", RTSHIELD_LIKE,
                               junit.jenkins_violations, False),
                              ("Ant rules reject rtshield's shape", RTSHIELD_LIKE,
                               junit.ant_violations, False),
                              ("Ant rules reject a time zone in timestamp", JENKINS_OK,
                               junit.ant_violations, False)):
        got = fn(ET.fromstring(doc))
        expect(name, (not got) == ok, got)
    # PromQL: the restated rule against promtool, and the overflow check.
    b = [(0.0001, 5.0), (0.001, 9.0), (0.01, 9.0), (float("inf"), 10.0)]
    series = [("m_bucket", {"le": "+Inf" if x == float("inf") else repr(x)}, c) for x, c in b]
    want = [(f"histogram_quantile({q}, m_bucket)", {}, prom.bucket_quantile(q, b)[0])
            for q in (0.5, 0.9, 0.95, 0.99)]
    if which("promtool"):
        ok, out = prom.promtool_confirms(series, want)
        expect("bucket_quantile gives promtool's answers", ok, out)
    res = dict(threads=[dict(index=0, samples=10, max_ns=5_000_000, min_ns=10_000,
                             avg_ns=600_000.0, percentiles={"99.9": 5_000_000})])
    text = "".join(f'rtshield_latency_seconds_bucket{{thread="0",le="{l}"}} {c}\n'
                   for l, c in (("0.0001", 5), ("0.001", 9), ("0.01", 9), ("+Inf", 10)))
    text += 'rtshield_latency_seconds_count{thread="0"} 10\n'
    v = prom.promql_quantiles(text, res, "synthetic")
    expect("an overflow sample left out of a bucket is found",
           any("le=0.01" in f.what for f in v.findings), "\n".join(v.lines()))
    # OpenMetrics strict parser: a conforming counter passes.
    om = tempfile.mktemp(suffix=".om")
    open(om, "w").write("# TYPE a counter\n# HELP a x\na_total 1\n# EOF\n")
    v = prom.client_parse(om, "synthetic", "openmetrics")
    expect("OpenMetrics parser accepts a conforming counter", v.status in (PASS, MISSING), v.lines())
    # CSV: a record with an unquoted comma is found.
    v = tables.runs_export_csv("a,started\n1,Tue, 24 Nov\n", [dict(started_at="Tue, 24 Nov",
                                                                     threads=[{}])], "synthetic")
    expect("an unquoted comma is found", v.status != PASS)
    # results.csv: a thread without samples must have empty min/max/avg,
    # a policy, priority, period and duration as results.json says.
    res = dict(label="l", started_at="2026-11-22T00:00:00Z", duration_s=10.017,
               command=["rtshield", "measure"],
               threads=[dict(index=0, samples=0, min_ns=None, max_ns=None, avg_ns=None,
                             percentiles={}, overruns=0, policy="fifo", priority=98,
                             period_ns=200000)])
    head = "label,samples,min_ns,max_ns,avg_ns,p99.9_ns,policy,priority,period_ns,duration_s," \
           "started_at,overruns,command\n"
    good = head + "l,0,,,,,fifo,98,200000,10.017,2026-11-22T00:00:00Z,0,rtshield measure\n"
    v = tables.results_csv(None, res, "synthetic", text=good)
    expect("results.csv with unknown figures empty passes", v.status == PASS, v.lines())
    bad = head + "l,0,0,0,0.0,,other,0,1000000,22.200,2026-11-22T00:00:00Z,0,rtshield measure\n"
    v = tables.results_csv(None, res, "synthetic", text=bad)
    found = {f.what.split()[-1] for f in v.findings}
    expect("results.csv zeros, another policy, period and duration are found",
           {"min_ns", "max_ns", "avg_ns", "policy", "priority", "period_ns",
            "duration_s"} <= found, "\n".join(v.lines()))
    failed = [r for r in results if not r[1]]
    for name, ok, detail in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
        if not ok and detail:
            print("     " + str(detail).replace("\n", "\n     "))
    print(f"selftest: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0
