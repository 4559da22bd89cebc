"""Prometheus consumers: promtool, the Python client's parsers, and PromQL's
histogram_quantile run by promtool's own rule engine.

Rules (restated, not copied):
- promtool check metrics: the exposition must lint clean (exit 0, nothing
  printed).
- The Python client's OpenMetrics parser (prometheus_client.openmetrics.
  parser) is strict: a counter family is declared by its name *without*
  `_total` and its samples end in `_total`; `# EOF` ends the text.
- histogram_quantile (promql/quantile.go, bucketQuantile): buckets sorted
  by `le`, the last must be +Inf; observations = the +Inf bucket; rank =
  q * observations; the first bucket whose count >= rank is chosen; inside
  it the value is interpolated linearly from the previous bound; if the
  chosen bucket is +Inf the previous bound is returned. So every sample must
  be in every bucket whose bound is at or above it: overflow samples
  included, `+Inf` == `_count`.
"""

import math
import os
import re
import tempfile

from .common import (ERROR, FAIL, MISSING, PASS, Finding, Verdict, run,
                     system_python, which, dpkg_version)

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( \S+)?$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_samples(text):
    """(name, {labels}, value) for every sample line of an exposition."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            continue
        labels = dict(LABEL.findall(m.group(3) or ""))
        v = m.group(4)
        value = math.inf if v == "+Inf" else float(v)
        out.append((m.group(1), labels, value))
    return out


def promtool_check(path, subject):
    """promtool check metrics lints the Prometheus text format 0.0.4 (its
    parser is expfmt's TextParser): run it on `export --format prometheus`.
    On an OpenMetrics file it reports each counter's `_total` samples as
    having no help text (in OpenMetrics the help belongs to the family
    named without `_total`): a difference of the two formats, not an
    error of the file."""
    v = Verdict("promtool check metrics", subject)
    if not which("promtool"):
        v.status, v.detail = MISSING, "promtool not installed (apt: prometheus)"
        return v
    v.version = "promtool " + (dpkg_version("prometheus") or "?")
    with open(path, "rb") as f:
        rc, out, err = run(["promtool", "check", "metrics"], stdin=f.read().decode())
    if rc != 0 or out.strip() or err.strip():
        v.fail(f"exit {rc}: {(out + err).strip()}")
    else:
        v.detail = "lints clean"
    return v


def promtool_tsdb_import(path, subject):
    """`promtool tsdb create-blocks-from openmetrics FILE DIR`: Prometheus'
    own strict OpenMetrics parser (textparse.OpenMetricsParser) reads the
    file and writes TSDB blocks; every sample needs a timestamp (`export
    --format openmetrics --timestamps`). The block must hold every sample
    line of the file."""
    v = Verdict("promtool tsdb create-blocks-from openmetrics", subject)
    if not which("promtool"):
        v.status, v.detail = MISSING, "promtool not installed (apt: prometheus)"
        return v
    v.version = "promtool " + (dpkg_version("prometheus") or "?")
    d = tempfile.mkdtemp(prefix="tsdb.")
    rc, out, err = run(["promtool", "tsdb", "create-blocks-from", "openmetrics", path,
                        os.path.join(d, "data")])
    if rc != 0:
        return v.fail(f"exit {rc}: {(out + err).strip()[:300]}")
    text = open(path, encoding="utf-8").read()
    want = len(parse_samples(text))
    m = re.search(r"^\S+\s+\d+\s+\d+\s+\S+\s+(\d+)\s", out, re.M)
    got = int(m.group(1)) if m else None
    if got != want:
        v.add(Finding("samples in the TSDB block", got, want,
                      "every sample line of the file is imported", issue=6))
    v.detail = f"block with {got} samples"
    return v


CLIENT_SCRIPT = r"""
import sys
mode = sys.argv[1]
if mode == "openmetrics":
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
else:
    from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[2], encoding="utf-8").read()
try:
    fams = list(text_string_to_metric_families(text))
except Exception as e:
    print("REJECT %s: %s" % (type(e).__name__, e))
    sys.exit(0)
print("OK %d families, %d samples" % (len(fams), sum(len(f.samples) for f in fams)))
"""


def client_parse(path, subject, mode):
    name = ("prometheus_client OpenMetrics parser (strict)" if mode == "openmetrics"
            else "prometheus_client text-format parser")
    v = Verdict(name, subject)
    py = system_python()
    rc, out, err = run([py, "-c", "import prometheus_client as p; print(p.__file__)"])
    if rc != 0:
        v.status, v.detail = MISSING, "python3-prometheus-client not installed"
        return v
    v.version = "python3-prometheus-client " + (dpkg_version("python3-prometheus-client") or "pip")
    rc, out, err = run([py, "-c", CLIENT_SCRIPT, mode, path])
    if rc != 0:
        v.status, v.detail = ERROR, err.strip()[-300:]
    elif out.startswith("REJECT"):
        v.fail(out.strip())
        if "Clashing name" in out:
            v.add(Finding("counter family declaration", "# TYPE rtshield_samples_total counter",
                          "# TYPE rtshield_samples counter (samples keep _total)",
                          "OpenMetrics 1.0: a counter MetricFamily name has no _total suffix; "
                          "the sample name is the family name + _total", issue=6))
    else:
        v.detail = out.strip()
    return v


def bucket_quantile(q, buckets):
    """PromQL's bucketQuantile restated: buckets = [(le, cumulative count)]."""
    if q < 0:
        return -math.inf, None
    if q > 1:
        return math.inf, None
    b = sorted(buckets)
    if len(b) < 2 or not math.isinf(b[-1][0]):
        return math.nan, None
    # ensureMonotonic: a count below its predecessor is raised to it.
    fixed, top = [], -math.inf
    for le, c in b:
        top = max(top, c)
        fixed.append((le, top))
    b = fixed
    obs = b[-1][1]
    if obs == 0:
        return math.nan, None
    rank = q * obs
    i = next((k for k in range(len(b) - 1) if b[k][1] >= rank), len(b) - 1)
    if i == len(b) - 1:
        return b[-2][0], (b[-2][0], math.inf)
    if i == 0 and b[0][0] <= 0:
        return b[0][0], (-math.inf, b[0][0])
    start = b[i - 1][0] if i > 0 else 0.0
    end, count = b[i][0], b[i][1]
    if i > 0:
        count -= b[i - 1][1]
        rank -= b[i - 1][1]
    return start + (end - start) * (rank / count), (start, end)


def promtool_confirms(series, exprs):
    """Ask promtool's rule engine (real PromQL) for each expression's value
    and check it equals what bucket_quantile computed: `exprs` is a list of
    (expr, labels dict, expected float). Returns (ok, text)."""
    if not which("promtool"):
        return None, "promtool not installed"
    d = tempfile.mkdtemp(prefix="promql.")
    lines = ["rule_files: []", "evaluation_interval: 1m", "tests:",
             "  - interval: 1m", "    input_series:"]
    for name, labels, value in series:
        lab = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        val = "Inf" if math.isinf(value) else repr(value)
        lines += [f"      - series: '{name}{{{lab}}}'", f"        values: '{val}'"]
    lines.append("    promql_expr_test:")
    for expr, labels, expected in exprs:
        lab = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        lines += [f"      - expr: '{expr}'", "        eval_time: 0m", "        exp_samples:",
                  f"          - labels: '{{{lab}}}'", f"            value: {expected!r}"]
    path = os.path.join(d, "quantile_test.yml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    rc, out, err = run(["promtool", "test", "rules", path], cwd=d)
    return rc == 0, (out + err).strip()


QUANTILES = [("50", 0.5), ("90", 0.9), ("99", 0.99), ("99.9", 0.999), ("99.99", 0.9999)]


def promql_quantiles(text, result, subject):
    """histogram_quantile on the exported buckets, compared with rtshield's
    own percentiles (results.json): the bucket PromQL picks must hold the
    true value. Plus +Inf == _count and every bucket at or above the
    maximum == _count."""
    v = Verdict("PromQL histogram_quantile (promtool rule engine)", subject)
    samples = parse_samples(text)
    base = "rtshield_latency_seconds"
    threads = {t["index"]: t for t in result["threads"]}
    series_for_promtool, exprs = [], []
    for name, labels, value in samples:
        if name.startswith(base + "_bucket"):
            series_for_promtool.append((name, labels, value))
    for idx, t in sorted(threads.items()):
        sel = {"thread": str(idx)}
        b = [(math.inf if l["le"] == "+Inf" else float(l["le"]), val)
             for n, l, val in samples
             if n == base + "_bucket" and l.get("thread") == str(idx)]
        count = [val for n, l, val in samples
                 if n == base + "_count" and l.get("thread") == str(idx)]
        if not b or not count:
            v.fail(f"thread {idx}: no {base} buckets or _count")
            continue
        count = count[0]
        inf = [c for le, c in b if math.isinf(le)]
        if not inf or inf[0] != count:
            v.add(Finding(f"thread {idx} bucket le=+Inf", inf[0] if inf else "absent", count,
                          "OpenMetrics/Prometheus histogram: the +Inf bucket equals _count", issue=6))
        if count != t["samples"]:
            v.add(Finding(f"thread {idx} _count", count, t["samples"],
                          "_count is every observation (results.json samples)"))
        max_s, min_s = t["max_ns"] / 1e9, t["min_ns"] / 1e9
        for le, c in sorted(b):
            if not math.isinf(le) and le >= max_s and c != count:
                v.add(Finding(f"thread {idx} bucket le={le:g}", int(c), int(count),
                              f"a bucket counts every sample <= le; the maximum {max_s:g} s is <= "
                              f"{le:g}, so all {int(count)} samples (overflow included) are in it",
                              issue=6))
            if le < min_s and c != 0:
                v.add(Finding(f"thread {idx} bucket le={le:g}", int(c), 0,
                              f"no sample is below the minimum {min_s:g} s"))
        labels = next(l for n, l, val in samples
                      if n == base + "_bucket" and l.get("thread") == str(idx))
        out_labels = {k: val for k, val in labels.items() if k != "le"}
        for key, q in QUANTILES:
            true_ns = t.get("percentiles", {}).get(key)
            est, bounds = bucket_quantile(q, b)
            if bounds is None:
                v.add(Finding(f"thread {idx} histogram_quantile({q})", est, "a number",
                              "PromQL returns NaN: fewer than 2 buckets, no +Inf or no sample"))
                continue
            lo, hi = bounds
            exprs.append((f"histogram_quantile({q!r}, {base}_bucket)", out_labels, est))
            if true_ns is None:
                continue
            true_s = true_ns / 1e9
            inside = (lo < true_s <= hi) if not math.isinf(hi) else true_s > lo
            if not inside:
                v.add(Finding(f"thread {idx} histogram_quantile({q})",
                              f"{est * 1e6:.1f} us (bucket ({lo * 1e6:g}, {hi * 1e6:g}] us)",
                              f"a value in the bucket holding rtshield's p{key} = {true_ns / 1e3:.1f} us",
                              "PromQL bucketQuantile: the first bucket whose cumulative count >= q*count",
                              issue=6))
        # _sum / _count is the mean (docs/formats.md: _sum = _count x mean).
        s = [val for n, l, val in samples if n == base + "_sum" and l.get("thread") == str(idx)]
        if s and count and abs(s[0] / count * 1e9 - t["avg_ns"]) > 1.0:
            v.add(Finding(f"thread {idx} _sum/_count", f"{s[0] / count * 1e9:.1f} ns",
                          f"{t['avg_ns']:.1f} ns", "the mean of every sample (results.json avg_ns)"))
    ok, text_out = promtool_confirms(series_for_promtool, exprs)
    if ok is None:
        v.status, v.detail = MISSING, "promtool not installed: PromQL's answer not confirmed"
    elif not ok:
        v.status = ERROR
        v.detail = "the restated bucketQuantile disagrees with promtool: " + text_out[-400:]
    else:
        v.version = "promtool " + (dpkg_version("prometheus") or "?")
        v.detail = ("promtool's engine gives the quantiles computed here; " + ", ".join(
            f"q{q}={e[2] * 1e6:.1f}us" for (k, q), e in zip(QUANTILES, exprs[-len(QUANTILES):])))
    return v


def metrics_file_matches_export(metrics_text, export_text, subject):
    """--metrics-file's final content is the export of the same run."""
    v = Verdict("--metrics-file final = export", subject)
    a = {(n, tuple(sorted(l.items()))): val for n, l, val in parse_samples(metrics_text)}
    b = {(n, tuple(sorted(l.items()))): val for n, l, val in parse_samples(export_text)}
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x != y:
            noise = (isinstance(x, float) and isinstance(y, float) and
                     abs(x - y) <= 4 * math.ulp(max(abs(x), abs(y))))
            v.add(Finding(f"{key[0]}{dict(key[1])}", x if x is not None else "absent",
                          f"{y!r} in the export" if y is not None else "absent",
                          "the final metrics file and `rtshield export` write the same run's "
                          "figures identically" + (" (they differ in the last bit: one of "
                                                   "the two writers computes it with float "
                                                   "rounding noise)" if noise else "")))
    return v
