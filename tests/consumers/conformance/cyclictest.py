"""cyclictest's formats and the readers written for them, restated from
their sources (read, not copied):

cyclictest -h N text (rt-tests 2.x cyclictest.c, print_hist, and the
sampling loop): `# Histogram`, then exactly N rows `%06d ` + one `%06lu`
per thread joined by tabs, for latencies 0..N-1 us (a sample of N us or
more is an overflow: `if (diff >= histogram) hist_overflow++`);
`# Total:` the rows' sums (`%09llu`); `# Min Latencies:`, `# Avg
Latencies:` (the mean of *every* cycle, truncated), `# Max Latencies:`,
`# Histogram Overflows:` (`%05lu` each); `# Histogram Overflow at cycle
number:` then per thread `# Thread i:` with the (0-based) cycle number of
each of the first min(overflows, N) overflows (` %05lu` each) and
` # %05lu others` when there were more; then an empty line.

cyclictest --json (rt-utils.c rt_write_json + cyclictest write_stats):
keys file_version, "cmdline:", "rt_test_version:" (printf "%1.2f" of the
rt-tests VERSION), start_time, end_time ("%a, %d %b %Y %T %z"),
return_code (the status cyclictest exits with), sysinfo{sysname, nodename,
release, version, machine, realtime}, num_threads, resolution_in_ns,
thread{"i": {histogram (non-zero buckets < N only), cycles, min, max, avg
(%.2f), cpu, node}}. Without -h the histogram is empty: there is no
histogram, not a histogram of zero samples.

Linaro test-definitions, automated/lib/parse_rt_tests_results.py (what
LAVA runs): for i in range(num_threads) reads thread[str(i)] (its
"receiver" if present) min/avg/max and prints `t{i}-{key}-latency pass
{value} us`; then `{test} pass` if int(return_code) == 0 else `{test} fail`.

rteval, rteval/modules/measurement/cyclictest.py: lines starting with `#`
are skipped except `# Max Latencies: ` (one int per core after the colon)
and `# Break value: `; any other non-blank line is `int(vals[0])` (the
bucket) then `int(vals[i+1])` per core; samples, min, max, median, mode,
mean, mean absolute deviation and (n-1) standard deviation come from the
buckets; the max is also raised to `# Max Latencies`; when that max
exceeds its -h buckets it reports no statistics.

OSADL mklatencyplot.bash: max = `grep "Max Latencies" | tr " " "\n" |
sort -n | tail -1 | sed s/^0*//`; data = `grep -v -e "^#" -e "^$" |
tr " " "\t"`; per core `cut -f1,N+1`; gnuplot `using 1:2 with histeps`,
`set xrange [0:400]` (the -h size), `set logscale y`.
"""

import math
import os
import re
import shutil
import subprocess
import tempfile

from .common import (ERROR, FAIL, MISSING, PASS, Finding, Verdict, run,
                     us_floor, which, dpkg_version)

JSON_KEYS = ["file_version", "cmdline:", "rt_test_version:", "start_time", "end_time",
             "return_code", "sysinfo", "num_threads", "resolution_in_ns", "thread"]
SYSINFO_KEYS = ["sysname", "nodename", "release", "version", "machine", "realtime"]
THREAD_KEYS = ["histogram", "cycles", "min", "max", "avg", "cpu", "node"]
TIME_RE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|"
                     r"Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d [+-]\d{4}$")


def histo_size_us(result):
    """The cyclictest -h N equivalent of an rtshield run: --histo-size in us."""
    s = result["settings"]
    return (s["histo_buckets"] - 1) * s["resolution_ns"] // 1000


def thread_counts(t):
    """{bucket: count} of an rtshield thread histogram."""
    return {b: c for b, c in t["histogram"]["counts"]}


def parse_hist_text(text):
    """The parts of a cyclictest -h file: rows [(index, [counts])] and the
    `# Key: values` lines after the rows, plus the overflow-cycle lines."""
    lines = text.split("\n")
    try:
        start = lines.index("# Histogram")
    except ValueError:
        return None
    rows, footer, oflow, i = [], {}, {}, start + 1
    while i < len(lines) and lines[i] and not lines[i].startswith("#"):
        rows.append(lines[i])
        i += 1
    rest = lines[i:]
    for line in rest:
        m = re.match(r"^# Thread (\d+):(.*)$", line)
        if m:
            oflow[int(m.group(1))] = m.group(2)
        elif line.startswith("# ") and ":" in line:
            k, v = line[2:].split(":", 1)
            footer[k] = v
    return rows, footer, oflow, rest


def check_hist_text(path, result, subject):
    """rtshield's histogram.txt against what cyclictest -h N writes for the
    same samples, N = the run's --histo-size in us."""
    v = Verdict("cyclictest -h N text rules (rt-tests print_hist)", subject)
    text = open(path, encoding="utf-8").read()
    parsed = parse_hist_text(text)
    if parsed is None:
        return v.fail("no `# Histogram` line")
    rows, footer, oflow, rest = parsed
    n = histo_size_us(result)
    threads = result["threads"]
    row_re = re.compile(r"^\d{6,} \d{6,}(\t\d{6,})*$")
    bad = [r for r in rows if not row_re.match(r)]
    if bad:
        v.add(Finding("row format", repr(bad[0]), "'%06d ' + '%06lu' per thread joined by tabs",
                      "print_hist"))
    if len(rows) != n:
        v.add(Finding("histogram rows", len(rows), n,
                      f"cyclictest -h {n} prints rows 0..{n - 1} (for i < histogram)", issue=11))
    idx = [int(r.split()[0]) for r in rows if row_re.match(r)]
    if idx != list(range(len(idx))):
        v.add(Finding("row indices", "not 0,1,2,...", "0..N-1 consecutive", "print_hist"))
    for t in threads:
        i = t["index"]
        counts = thread_counts(t)
        over_n = sum(c for b, c in counts.items() if b >= n)
        want_ovf = t["histogram"]["overflow"] + over_n
        want_total = t["samples"] - want_ovf
        checks = [
            ("Total", want_total, 9, "rows' sum: samples below N us"),
            ("Min Latencies", us_floor(t["min_ns"]), 5, "stats->min"),
            ("Avg Latencies", int(t["avg_ns"] // 1000), 5,
             "stats->avg / stats->cycles: the mean of every cycle, truncated"),
            ("Max Latencies", us_floor(t["max_ns"]), 5, "stats->max"),
            ("Histogram Overflows", want_ovf, 5, f"samples >= {n} us (diff >= histogram)"),
        ]
        for key, want, width, rule in checks:
            vals = footer.get(key, "").split()
            got = vals[i] if i < len(vals) else None
            if got is None or int(got) != want or len(got) != max(width, len(str(want))):
                v.add(Finding(f"# {key}: thread {i}", got, f"{want:0{width}d}", rule,
                              issue=11 if key == "Histogram Overflows" and over_n else None))
        line = oflow.get(i)
        listed = min(want_ovf, n)
        want_tail = f" # {want_ovf - listed:05d} others" if want_ovf > listed else ""
        nums = re.findall(r" (\d{5,})(?= |$)", (line or "").split(" #")[0])
        if line is None or len(nums) != listed or not (line.endswith(want_tail) if want_tail
                                                      else "#" not in line):
            v.add(Finding(f"# Thread {i}: overflow cycle numbers", repr(line),
                          f"{listed} cycle numbers (0-based index of each sample >= {n} us)"
                          + (want_tail and f" then '{want_tail.strip()}'"),
                          "print_hist: the first min(overflows, N) outliers, then '# N others'",
                          issue=11))
    if text.endswith("\n\n") is False:
        v.add(Finding("end of file", repr(text[-20:]), "an empty line after the last thread line",
                      "print_hist ends with fprintf(fd, \"\\n\")"))
    v.detail = f"{len(rows)} rows, -h {n}"
    return v


def check_json(path, result, exit_status, subject):
    """rtshield's cyclictest-json against rt_write_json/write_stats' rules."""
    import json
    v = Verdict("cyclictest --json rules (rt-tests rt_write_json)", subject)
    d = json.load(open(path, encoding="utf-8"))
    if list(d) != JSON_KEYS:
        v.add(Finding("top-level keys", list(d), JSON_KEYS, "rt_write_json order"))
    ver = d.get("rt_test_version:")
    if not isinstance(ver, str) or not re.match(r"^\d+\.\d\d$", ver):
        v.add(Finding('"rt_test_version:" value', repr(ver), "a number printed %1.2f, e.g. \"2.40\"",
                      "rt_write_json: fprintf(\"\\\"rt_test_version:\\\": \\\"%1.2f\\\"\", VERSION); "
                      "a reader doing float() on it fails", issue=11))
    for k in ("start_time", "end_time"):
        if not TIME_RE.match(str(d.get(k))):
            v.add(Finding(k, d.get(k), "%a, %d %b %Y %T %z", "get_timestamp"))
    if exit_status is not None and d.get("return_code") != exit_status:
        v.add(Finding("return_code", d.get("return_code"), exit_status,
                      "cyclictest writes rt_write_json(jsonfile, ret) then exit(ret): return_code "
                      "is the program's exit status", issue=5))
    if list(d.get("sysinfo", {})) != SYSINFO_KEYS:
        v.add(Finding("sysinfo keys", list(d.get("sysinfo", {})), SYSINFO_KEYS, "rt_write_json"))
    n = histo_size_us(result)
    th = d.get("thread", {})
    if d.get("num_threads") != len(result["threads"]) or sorted(th) != sorted(
            str(i) for i in range(len(result["threads"]))):
        v.add(Finding("num_threads / thread keys", (d.get("num_threads"), sorted(th)),
                      len(result["threads"]), "write_stats"))
    for t in result["threads"]:
        j = th.get(str(t["index"]), {})
        if list(j) != THREAD_KEYS:
            v.add(Finding(f"thread {t['index']} keys", list(j), THREAD_KEYS, "write_stats"))
        h = {int(k): c for k, c in j.get("histogram", {}).items()}
        want = [("cycles", t["samples"]), ("min", us_floor(t["min_ns"])),
                ("max", us_floor(t["max_ns"]))]
        for k, w in want:
            if j.get(k) != w:
                v.add(Finding(f"thread {t['index']} {k}", j.get(k), w, "results.json"))
        if abs(j.get("avg", -1) - t["avg_ns"] / 1000) > 1.0:
            v.add(Finding(f"thread {t['index']} avg", j.get("avg"), round(t["avg_ns"] / 1000, 2),
                          "mean of every cycle"))
        beyond = sorted(k for k in h if k >= n)
        if beyond:
            v.add(Finding(f"thread {t['index']} histogram keys >= {n}", beyond, f"none (keys < {n})",
                          f"write_stats prints buckets j < histogram; a {n} us sample is an "
                          "overflow", issue=11))
    v.detail = f"{len(th)} threads"
    return v


def linaro_parse(path, subject, expect_fail):
    """Linaro's parse_rt_tests_results.py on the file, restated: its
    output lines and the pass/fail it prints."""
    import json
    v = Verdict("Linaro parse_rt_tests_results.py (LAVA)", subject)
    out = []
    try:
        d = json.load(open(path, encoding="utf-8"))
        for i in range(int(d["num_threads"])):
            t = d["thread"][str(i)]
            t = t.get("receiver", t)
            for k in ("min", "avg", "max"):
                out.append(f"t{i}-{k}-latency pass {t[k]} us")
        verdict = "pass" if int(d["return_code"]) == 0 else "fail"
        out.append(f"cyclictest {verdict}")
    except (KeyError, ValueError, TypeError) as e:
        return v.fail(f"the parser raises {type(e).__name__}: {e}")
    if expect_fail is not None and (verdict == "fail") != expect_fail:
        v.add(Finding("LAVA result", f"cyclictest {verdict}",
                      f"cyclictest {'fail' if expect_fail else 'pass'}",
                      "the parser's verdict is int(return_code) == 0; the run "
                      + ("failed (exit 3)" if expect_fail else "passed"), issue=5))
    v.detail = " | ".join(out)
    return v


def rteval_parse(path, subject, result=None):
    """rteval's cyclictest parser on a -h text, restated: what it would
    report per core."""
    v = Verdict("rteval cyclictest parser", subject)
    cores, maxlat = {}, []
    for line in open(path, encoding="utf-8"):
        if line.startswith("#"):
            if line.startswith("# Max Latencies: "):
                maxlat = [int(x) for x in line.split(":")[1].split()]
            continue
        vals = line.split()
        if not vals:
            continue
        try:
            index = int(vals[0])
        except ValueError:
            continue
        for i, c in enumerate(vals[1:]):
            cores.setdefault(i, {})
            cores[i][index] = cores[i].get(index, 0) + int(c)
    parts = []
    for i, hist in sorted(cores.items()):
        st = rteval_stats(hist, maxlat[i] if i < len(maxlat) else 0)
        parts.append("core %d: samples %d min %s max %s median %s mode %s mean %.2f std %.2f" % (
            i, st["samples"], st["min"], st["max"], st["median"], st["mode"], st["mean"],
            st["stddev"]))
        if result is not None and i < len(result["threads"]):
            t = result["threads"][i]
            n = histo_size_us(result)
            if st["max"] != us_floor(t["max_ns"]):
                v.add(Finding(f"core {i} max", st["max"], us_floor(t["max_ns"]), "results.json max"))
            want = t["samples"] - t["histogram"]["overflow"] - sum(
                c for b, c in thread_counts(t).items() if b >= n)
            if st["samples"] != want:
                v.add(Finding(f"core {i} samples", st["samples"], want,
                              f"rteval sums the rows: with cyclictest -h {n} the samples < {n} us",
                              issue=11))
            if st["max"] > n:
                parts.append(f"(rteval -h {n}: max {st['max']} > {n}, statistics skipped)")
    v.detail = "; ".join(parts)
    return v


def rteval_stats(samples, max_latency):
    n = sum(samples.values())
    keys = sorted(samples)
    st = dict(samples=n, min=None, max=max_latency, median=0, mode=0, mean=0.0, stddev=0.0)
    nz = [k for k in keys if samples[k]]
    if nz:
        st["min"] = nz[0]
        st["max"] = max(max_latency, nz[-1])
    if n <= 1:
        return st
    mid = n // 2 + 1
    total, total_us, occ, last = 0, 0, 0, -1
    for i in keys:
        if total < mid <= total + samples[i]:
            st["median"] = (last + i) / 2 if (n & 1 != 0 and mid == total + 1) else i
        last = i
        total += samples[i]
        total_us += i * samples[i]
        if samples[i] > occ:
            occ, st["mode"] = samples[i], i
    st["mean"] = total_us / n
    var = sum(((i - st["mean"]) ** 2) * samples[i] for i in keys)
    st["stddev"] = math.sqrt(var / (n - 1))
    return st


def osadl_plot(path, subject, n_threads, expect_max_us, xrange_us):
    """OSADL's mklatencyplot.bash steps, run with the real shell tools and
    gnuplot in a temp dir."""
    v = Verdict("OSADL mklatencyplot.bash recipe", subject)
    if not which("gnuplot"):
        v.status, v.detail = MISSING, "gnuplot not installed (apt: gnuplot-nox)"
        return v
    v.version = "gnuplot-nox " + (dpkg_version("gnuplot-nox") or "?")
    d = tempfile.mkdtemp(prefix="osadl.")
    shutil.copy(path, os.path.join(d, "output"))
    script = f"""
set -e
max=$(grep "Max Latencies" output | tr " " "\\n" | sort -n | tail -1 | sed s/^0*//)
grep -v -e "^#" -e "^$" output | tr " " "\\t" >histogram
for i in $(seq 1 {n_threads}); do cut -f1,$((i + 1)) histogram >histogram$i; done
{{ printf 'set title "Latency plot"\\nset terminal png\\nset xlabel "Latency (us), max %s us"\\n' "$max"
  printf 'set logscale y\\nset xrange [0:{xrange_us}]\\nset yrange [0.8:*]\\nset output "plot.png"\\nplot '
  for i in $(seq 1 {n_threads}); do [ $i != 1 ] && printf ', '; printf '"histogram%d" using 1:2 title " CPU%d" with histeps' $i $((i - 1)); done
  echo; }} >plotcmd
gnuplot <plotcmd
echo "MAX=$max"
awk -F'\\t' '{{print NF}}' histogram | sort -u | tr "\\n" " "
"""
    rc, out, err = run(["bash", "-c", script], cwd=d)
    if rc != 0 or err.strip():
        return v.fail(f"exit {rc}: {err.strip()[:300]}")
    m = re.search(r"MAX=(\d*)", out)
    got_max = int(m.group(1)) if m and m.group(1) else None
    if got_max != expect_max_us:
        v.add(Finding("max latency (plot label)", got_max, expect_max_us,
                      "grep Max Latencies | sort -n | tail -1: the largest # Max Latencies value"))
    fields = out.split("\n", 1)[1].split() if "\n" in out else []
    if fields != [str(n_threads + 1)]:
        v.add(Finding("fields per data line", fields, [str(n_threads + 1)],
                      "cut -f1,N+1 needs the bucket then one column per core on every line"))
    if not os.path.getsize(os.path.join(d, "plot.png")):
        v.fail("no plot.png")
    v.detail = f"plot.png drawn, max {got_max} us"
    return v
