#!/usr/bin/python3
"""Run the real consumers of rtshield's files and print one verdict line
per consumer (see README.md).

  check.py result DIR [--exit-status N] [--max-latency DUR]
                      [--metrics-file FILE] [--cyclictest-json FILE]
      DIR is a `rtshield measure` result directory. The harness exports it
      with `rtshield export` in every format and runs each consumer on the
      files; --exit-status is what `measure` exited with (3: the run failed
      its --max-latency), so the verdicts can be checked.
  check.py import FILE
      FILE is a cyclictest --json file or -h text: rtshield reads it
      (`report`, `runs import`) and what it shows is compared with what the
      file says by cyclictest's rules.
  check.py selftest
      The rule checkers on files whose verdict is known (real cyclictest
      output must pass; broken files must fail).

Common options: --rtshield BIN, --strict (a consumer that is not installed
is a failure), --json FILE (the verdicts, machine-readable), --keep DIR.
Exit status: 0 when every verdict is PASS (MISSING allowed without
--strict), 1 otherwise, 2 on bad usage.
"""

import argparse
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conformance import cyclictest, junit, kcidb, prom, readback, tables  # noqa: E402
from conformance.common import (ERROR, FAIL, MISSING, PASS, Rtshield, Verdict,  # noqa: E402
                                find_rtshield, load_json, us_floor)


def parse_dur_ns(text):
    m = re.match(r"^(\d+(?:\.\d+)?)(ns|us|ms|s)$", text)
    if not m:
        raise SystemExit(f"check.py: bad duration {text!r} (e.g. 100us)")
    return int(float(m.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)])


def expected_failures(result, exit_status, limit_ns):
    """How many threads a CI reader must see failed: None when unknown."""
    if limit_ns is not None:
        return sum(1 for t in result["threads"] if t["max_ns"] > limit_ns or t["samples"] == 0)
    if exit_status is None:
        return None
    return 0 if exit_status == 0 else (len(result["threads"]) if exit_status == 3 else None)


def check_result(args, rt, work):
    d = os.path.abspath(args.dir)
    rj = os.path.join(d, "results.json")
    result = load_json(rj)
    name = "/".join(d.rstrip("/").split("/")[-2:])
    limit = parse_dur_ns(args.max_latency) if args.max_latency else None
    n_fail = expected_failures(result, args.exit_status, limit)
    failed_run = None if n_fail is None else n_fail > 0
    out = []
    ex = {}
    for fmt, extra in (("openmetrics", ()), ("openmetrics", ("--timestamps",)),
                       ("prometheus", ()), ("junit", ()), ("kcidb", ()),
                       ("cyclictest-json", ())):
        key = fmt + "".join(extra)
        path = os.path.join(work, f"{name.replace('/', '-')}.{key.replace('-', '')}")
        rc, o, e = rt("export", d, "--format", fmt, *extra, "-o", path)
        if rc != 0:
            out.append(Verdict(f"rtshield export --format {fmt} {' '.join(extra)}", name, ERROR,
                               e.strip()[:200]))
        else:
            ex[key] = path
    sub = f"{name} export"
    if "openmetrics" in ex:
        text = open(ex["openmetrics"], encoding="utf-8").read()
        out += [prom.client_parse(ex["openmetrics"], sub, "openmetrics"),
                prom.client_parse(ex["openmetrics"], sub, "text"),
                prom.promql_quantiles(text, result, sub)]
    if "openmetrics--timestamps" in ex:
        s_ts = f"{name} export --timestamps"
        out += [prom.promtool_tsdb_import(ex["openmetrics--timestamps"], s_ts),
                prom.client_parse(ex["openmetrics--timestamps"], s_ts, "openmetrics")]
    if "prometheus" in ex:
        s_p = f"{name} export --format prometheus"
        out += [prom.promtool_check(ex["prometheus"], s_p),
                prom.client_parse(ex["prometheus"], s_p, "text"),
                prom.promql_quantiles(open(ex["prometheus"], encoding="utf-8").read(), result,
                                      s_p)]
    if args.metrics_file:
        mf = args.metrics_file
        sub_m = f"{name} --metrics-file"
        out += [prom.client_parse(mf, sub_m, "openmetrics"),
                prom.client_parse(mf, sub_m, "text"),
                prom.promql_quantiles(open(mf, encoding="utf-8").read(), result, sub_m)]
        if "openmetrics" in ex:
            out.append(prom.metrics_file_matches_export(open(mf, encoding="utf-8").read(),
                                                        open(ex["openmetrics"]).read(), sub_m))
    if "junit" in ex:
        out += junit.check(ex["junit"], sub, n_fail)
    if "kcidb" in ex:
        out += [kcidb.validate(ex["kcidb"], sub),
                kcidb.semantics(ex["kcidb"], result, sub, n_fail)]
    if limit is not None:  # the same two formats exported with the limit given again
        for fmt in ("junit", "kcidb"):
            path = os.path.join(work, f"{name.replace('/', '-')}.limit.{fmt}")
            rc, o, e = rt("export", d, "--format", fmt, "--max-latency", args.max_latency,
                          "-o", path)
            s = f"{name} export --max-latency {args.max_latency}"
            if rc != 0:
                out.append(Verdict(f"rtshield export --format {fmt}", s, ERROR, e.strip()[:200]))
            elif fmt == "junit":
                out += [v for v in junit.check(path, s, n_fail) if "verdict" in v.consumer]
            else:
                out.append(kcidb.semantics(path, result, s, n_fail))
    cts = [("export", ex.get("cyclictest-json"))]
    if args.cyclictest_json:
        cts.append(("measure --json-format cyclictest", args.cyclictest_json))
    for label, path in cts:
        if not path:
            continue
        s = f"{name} {label}"
        out += [cyclictest.check_json(path, result, args.exit_status, s),
                cyclictest.linaro_parse(path, s, failed_run)]
        e = readback.expect_own_cyclictest_json(path, result)
        rep, err = readback.via_report(rt, path)
        out.append(readback.compare_report(rep, e, s) if rep else
                   Verdict("rtshield report reads it back", s, ERROR, err))
        st, err = readback.via_store(rt, path)
        out.append(readback.compare_store(st, e, s) if st else
                   Verdict("rtshield runs import reads it back", s, ERROR, err))
    hist = os.path.join(d, "histogram.txt")
    if os.path.exists(hist):
        s = f"{name} histogram.txt"
        n_threads = len(result["threads"])
        out += [cyclictest.check_hist_text(hist, result, s),
                cyclictest.rteval_parse(hist, s, result),
                cyclictest.osadl_plot(hist, s, n_threads,
                                      max(us_floor(t["max_ns"]) for t in result["threads"]),
                                      cyclictest.histo_size_us(result))]
        e = readback.expect_hist_text(hist, result)
        st, err = readback.via_store(rt, hist)
        out.append(readback.compare_store(st, e, s) if st else
                   Verdict("rtshield runs import reads it back", s, ERROR, err))
    out.append(percentile_sample_rule(result, f"{name} results.json"))
    rep, err = readback.via_report(rt, d)
    out.append(readback.compare_report(rep, readback.expect_result(result), f"{name} report DIR")
               if rep else Verdict("rtshield report reads it back", name, ERROR, err))
    out.append(tables.results_csv(os.path.join(d, "results.csv"), result, f"{name} results.csv"))
    st, err = readback.via_store(rt, d)
    if st:
        rc, csvt, e = rt("runs", "export", f"id={st['id']}", "--format", "csv")
        out.append(tables.runs_export_csv(csvt, [st["run"]], f"{name} runs export"))
        out.append(store_roundtrip(st["run"], result, f"{name} runs import DIR"))
    else:
        out.append(Verdict("rtshield runs import", name, ERROR, err))
    t0 = result["threads"]
    out.append(tables.gnuplot_report(rt, d, f"{name} report", (
        max(us_floor(t["max_ns"]) for t in t0), sum(t["histogram"]["overflow"] for t in t0)
        if len(t0) == 1 else None)))
    return out


def percentile_sample_rule(result, subject):
    """rtshield's own rule (report footnote, docs/formats.md): a percentile
    q needs at least 1/(1 - q) samples, else it only repeats the maximum
    and is "not enough samples"; every writer should follow it."""
    from conformance.common import Finding
    v = Verdict("percentiles need 1/(1-q) samples (rtshield's report rule)", subject)
    for t in result["threads"]:
        for key, ns in (t.get("percentiles") or {}).items():
            need = round(1 / (1 - float(key) / 100))
            if t["samples"] < need:
                v.add(Finding(f"thread {t['index']} p{key} in results.json (and every export)",
                              f"{ns} ns" + (" (= the max)" if ns == t["max_ns"] else ""),
                              f"absent / 'not enough samples' ({t['samples']} < {need} samples)",
                              "report: 'a percentile needs at least 1/(1 - q) samples ... else "
                              "\"not enough samples\"'"))
    return v


def store_roundtrip(stored, result, subject):
    """The store gives back what results.json says (the same run)."""
    from conformance.common import Finding
    v = Verdict("results store round trip", subject)
    for k in ("started_at", "duration_s", "end_reason", "label"):
        if stored.get(k) != result.get(k):
            v.add(Finding(k, stored.get(k), result.get(k), "results.json"))
    for a, b in zip(stored["threads"], result["threads"]):
        for k in ("policy", "priority", "period_ns", "samples", "min_ns", "max_ns", "overruns",
                  "missed_periods", "lost", "percentiles"):
            if a.get(k) != b.get(k):
                v.add(Finding(f"thread {b['index']} {k}", a.get(k), b.get(k), "results.json"))
    return v


def check_import(args, rt, work):
    path = os.path.abspath(args.file)
    name = os.path.basename(path)
    text = open(path, encoding="utf-8").read()
    out = []
    if text.lstrip().startswith("{"):
        e = readback.expect_cyclictest_json(path)
        d = json.loads(text)
        out.append(cyclictest.linaro_parse(path, name, d["return_code"] != 0))
    else:
        e = readback.expect_hist_text(path)
        out.append(cyclictest.rteval_parse(path, name))
    rep, err = readback.via_report(rt, path)
    out.append(readback.compare_report(rep, e, name) if rep else
               Verdict("rtshield report reads it back", name, ERROR, err))
    st, err = readback.via_store(rt, path)
    if st:
        out.append(readback.compare_store(st, e, name))
        out.append(tables.runs_export_csv(st["csv"], [st["run"]], f"{name} runs export"))
    else:
        out.append(Verdict("rtshield runs import reads it back", name, ERROR, err))
    out.append(tables.gnuplot_report(rt, path, f"{name} report", (e["max_us"], e["overflow"])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtshield")
    ap.add_argument("--strict", action="store_true",
                    default=os.environ.get("RTSHIELD_REQUIRE_ROOT") == "1")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--keep")
    sp = ap.add_subparsers(dest="cmd", required=True)
    r = sp.add_parser("result")
    r.add_argument("dir")
    r.add_argument("--exit-status", type=int)
    r.add_argument("--max-latency")
    r.add_argument("--metrics-file")
    r.add_argument("--cyclictest-json")
    i = sp.add_parser("import")
    i.add_argument("file")
    sp.add_parser("selftest")
    args = ap.parse_args()
    if args.cmd == "selftest":
        from conformance import selftest
        return selftest.main()
    binary = find_rtshield(args.rtshield)
    if not binary:
        print("check.py: no rtshield binary (--rtshield, RTSHIELD_BIN, target/, PATH)",
              file=sys.stderr)
        return 2
    work = args.keep or tempfile.mkdtemp(prefix="rtshield-consumers.")
    os.makedirs(work, exist_ok=True)
    rt = Rtshield(binary, work)
    print(f"# {rt.version()} ({binary}); files in {work}")
    verdicts = check_result(args, rt, work) if args.cmd == "result" else check_import(args, rt,
                                                                                   work)
    for v in verdicts:
        print("\n".join(v.lines()))
    bad = [v for v in verdicts if v.status in (FAIL, ERROR) or (args.strict and
                                                                v.status == MISSING)]
    counts = {s: sum(1 for v in verdicts if v.status == s) for s in (PASS, FAIL, MISSING, ERROR)}
    print(f"consumers: {counts[PASS]} passed, {counts[FAIL] + counts[ERROR]} failed")
    if counts[MISSING]:
        print(f"({counts[MISSING]} consumer(s) not installed" +
              (": a failure with --strict)" if args.strict else ")"))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump([v.as_dict() for v in verdicts], f, indent=1)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
