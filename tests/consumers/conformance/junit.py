"""JUnit XML: the rules of the two schemas JUnit readers validate against,
restated here from reading them (the schema files are not part of the
project), plus the verdict a CI system would draw.

Jenkins xunit plugin, junit-10.xsd:
- <testsuites> attributes: only name, time, tests, failures, errors;
  children: <testsuite>*.
- <testsuite> attributes: name, tests, failures, errors (required);
  group, time, skipped, timestamp, hostname, id, package, file, log, url;
  children, any order and count: testsuite, properties, testcase,
  system-out, system-err.
- `time` of testsuite/testsuites: SUREFIRE_TIME, digits with optional
  thousands commas and an optional fraction, nothing else.
- <testcase> attributes: name (required), time, classname, group;
  children, any order: skipped, error, failure, rerunFailure, rerunError,
  flakyFailure, flakyError, system-out, system-err. No <properties>.
- <failure>/<error>/<skipped>: attributes type, message; text only.
- <properties>: <property name= value=>* (both required, nothing else).

Ant's JUnit.xsd (windyroad, "JUnit test result schema for the Apache Ant
JUnit and JUnitReport tasks"):
- The root is <testsuite> (one suite) or <testsuites> (no attributes at
  all) whose <testsuite> children also carry `package` (token, required)
  and `id` (int, required, 0 for the first and +1 for each next).
- <testsuite>: name (token, min length 1), timestamp (xs:dateTime
  restricted to YYYY-MM-DDTHH:MM:SS: no time zone, no fraction), hostname
  (token, min length 1), tests, failures, errors (xs:int), time
  (xs:decimal) required; skipped (xs:int) optional; nothing else.
  Children in this order: <properties> (exactly one), <testcase>*,
  <system-out> (exactly one), <system-err> (exactly one).
- <testcase>: name, classname (token), time (xs:decimal), all required,
  nothing else; children: at most one of <skipped>, <error>, <failure>.
- <error>/<failure>: type required, message optional, text content.
"""

import re
import xml.etree.ElementTree as ET

from .common import FAIL, MISSING, Finding, Verdict, run, which, dpkg_version

SUREFIRE_TIME = re.compile(r"^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$")
XS_DECIMAL = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$")
XS_INT = re.compile(r"^[+-]?[0-9]+$")
ANT_TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")


def _int_ok(s):
    return bool(s is not None and XS_INT.match(s) and -2**31 <= int(s) < 2**31)


def _token_nonempty(s):
    return s is not None and " ".join(s.split()) != ""


def _extra(el, allowed):
    return sorted(set(el.attrib) - set(allowed))


def jenkins_violations(root):
    """Each violation of junit-10.xsd, as text."""
    out = []
    if root.tag not in ("testsuites", "testsuite"):
        return [f"root element <{root.tag}> (testsuites or testsuite)"]
    suites = [root] if root.tag == "testsuite" else []
    if root.tag == "testsuites":
        bad = _extra(root, ("name", "time", "tests", "failures", "errors"))
        if bad:
            out.append(f"<testsuites> attributes not in the schema: {bad}")
        if "time" in root.attrib and not SUREFIRE_TIME.match(root.get("time")):
            out.append(f"<testsuites time={root.get('time')!r}> is not SUREFIRE_TIME")
        for c in root:
            if c.tag != "testsuite":
                out.append(f"<{c.tag}> inside <testsuites>")
            else:
                suites.append(c)
    while suites:
        s = suites.pop(0)
        for a in ("name", "tests", "failures", "errors"):
            if a not in s.attrib:
                out.append(f"<testsuite> lacks required {a}")
        bad = _extra(s, ("name", "tests", "failures", "errors", "group", "time", "skipped",
                         "timestamp", "hostname", "id", "package", "file", "log", "url"))
        if bad:
            out.append(f"<testsuite> attributes not in the schema: {bad}")
        if "time" in s.attrib and not SUREFIRE_TIME.match(s.get("time")):
            out.append(f"<testsuite time={s.get('time')!r}> is not SUREFIRE_TIME")
        for c in s:
            if c.tag == "testsuite":
                suites.append(c)
            elif c.tag == "properties":
                out += _properties(c)
            elif c.tag == "testcase":
                out += _jenkins_case(c)
            elif c.tag not in ("system-out", "system-err"):
                out.append(f"<{c.tag}> inside <testsuite>")
    return out


def _properties(p):
    out = []
    for c in p:
        if c.tag != "property":
            out.append(f"<{c.tag}> inside <properties>")
        elif set(c.attrib) != {"name", "value"}:
            out.append(f"<property> attributes {sorted(c.attrib)} (name and value)")
        elif len(c):
            out.append("<property> has child elements")
    return out


def _jenkins_case(c):
    out = []
    if "name" not in c.attrib:
        out.append("<testcase> lacks required name")
    bad = _extra(c, ("name", "time", "classname", "group"))
    if bad:
        out.append(f"<testcase> attributes not in the schema: {bad}")
    allowed = ("skipped", "error", "failure", "rerunFailure", "rerunError", "flakyFailure",
               "flakyError", "system-out", "system-err")
    for k in c:
        if k.tag not in allowed:
            out.append(f"<{k.tag}> inside <testcase> (allowed: {', '.join(allowed)})")
        elif k.tag in ("failure", "error", "skipped"):
            if _extra(k, ("type", "message")):
                out.append(f"<{k.tag}> attributes {sorted(k.attrib)}")
            if len(k):
                out.append(f"<{k.tag}> has child elements (text only)")
    return out


def ant_violations(root):
    """Each violation of Ant's JUnit.xsd, as text."""
    out = []
    if root.tag == "testsuite":
        return _ant_suite(root, aggregated=False)
    if root.tag != "testsuites":
        return [f"root element <{root.tag}> (testsuite or testsuites)"]
    if root.attrib:
        out.append(f"<testsuites> has attributes {sorted(root.attrib)} (the schema allows none)")
    for i, s in enumerate(root):
        if s.tag != "testsuite":
            out.append(f"<{s.tag}> inside <testsuites>")
            continue
        out += _ant_suite(s, aggregated=True)
        if "package" not in s.attrib:
            out.append("<testsuite> inside <testsuites> lacks required package")
        if "id" not in s.attrib:
            out.append("<testsuite> inside <testsuites> lacks required id")
        elif s.get("id") != str(i):
            out.append(f"<testsuite id={s.get('id')!r}> (the {i}th suite has id {i})")
    return out


def _ant_suite(s, aggregated):
    out = []
    req = ("name", "timestamp", "hostname", "tests", "failures", "errors", "time")
    for a in req:
        if a not in s.attrib:
            out.append(f"<testsuite> lacks required {a}")
    allowed = req + ("skipped",) + (("package", "id") if aggregated else ())
    bad = _extra(s, allowed)
    if bad:
        out.append(f"<testsuite> attributes not in the schema: {bad}")
    if "name" in s.attrib and not _token_nonempty(s.get("name")):
        out.append("<testsuite name> is empty")
    if "hostname" in s.attrib and not _token_nonempty(s.get("hostname")):
        out.append("<testsuite hostname> is empty")
    if "timestamp" in s.attrib and not ANT_TIMESTAMP.match(s.get("timestamp")):
        out.append(f"<testsuite timestamp={s.get('timestamp')!r}> (YYYY-MM-DDTHH:MM:SS, "
                   "no time zone)")
    for a in ("tests", "failures", "errors", "skipped"):
        if a in s.attrib and not _int_ok(s.get(a)):
            out.append(f"<testsuite {a}={s.get(a)!r}> is not xs:int")
    if "time" in s.attrib and not XS_DECIMAL.match(s.get("time")):
        out.append(f"<testsuite time={s.get('time')!r}> is not xs:decimal")
    if aggregated and "package" in s.attrib and not _token_nonempty(s.get("package")):
        out.append("<testsuite package> is empty")
    tags = [c.tag for c in s]
    # properties, testcase*, system-out, system-err: in this order.
    expect = re.compile(r"^properties (testcase )*system-out system-err $")
    if not expect.match("".join(t + " " for t in tags)):
        out.append(f"<testsuite> children {tags}: the schema wants properties, testcase*, "
                   "system-out, system-err")
    for c in s:
        if c.tag == "properties":
            out += _properties(c)
            for p in c:
                if p.tag == "property" and not _token_nonempty(p.get("name")):
                    out.append("<property name> is empty")
        elif c.tag == "testcase":
            out += _ant_case(c)
    return out


def _ant_case(c):
    out = []
    for a in ("name", "classname", "time"):
        if a not in c.attrib:
            out.append(f"<testcase> lacks required {a}")
    bad = _extra(c, ("name", "classname", "time"))
    if bad:
        out.append(f"<testcase> attributes not in the schema: {bad}")
    if "time" in c.attrib and not XS_DECIMAL.match(c.get("time")):
        out.append(f"<testcase time={c.get('time')!r}> is not xs:decimal")
    kids = list(c)
    if len(kids) > 1:
        out.append(f"<testcase> children {[k.tag for k in kids]} (at most one of skipped, "
                   "error, failure)")
    for k in kids:
        if k.tag not in ("skipped", "error", "failure"):
            out.append(f"<{k.tag}> inside <testcase> (allowed: skipped, error, failure)")
        elif k.tag in ("error", "failure"):
            if "type" not in k.attrib:
                out.append(f"<{k.tag}> lacks required type")
            if _extra(k, ("type", "message")):
                out.append(f"<{k.tag}> attributes {sorted(k.attrib)}")
            if len(k):
                out.append(f"<{k.tag}> has child elements (text only)")
    return out


def check(path, subject, expect_failed_threads):
    """Three verdicts: Jenkins xunit's schema, Ant's schema, and the CI
    verdict (failures) against what the run concluded."""
    verdicts = []
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        return [Verdict("JUnit XML (xml.etree)", subject).fail(f"not well-formed: {e}")]
    wf = Verdict("xmllint --noout (well-formedness)", subject)
    if which("xmllint"):
        wf.version = "libxml2-utils " + (dpkg_version("libxml2-utils") or "?")
        rc, out, err = run(["xmllint", "--noout", path])
        if rc != 0:
            wf.fail(err.strip()[:300])
        else:
            wf.detail = "well-formed"
    else:
        wf.status, wf.detail = MISSING, "xmllint not installed (apt: libxml2-utils)"
    verdicts.append(wf)
    for name, fn, rule in (
            ("JUnit rules of Jenkins xunit junit-10.xsd", jenkins_violations,
             "Jenkins xunit plugin junit-10.xsd"),
            ("JUnit rules of Ant JUnit.xsd", ant_violations, "Ant JUnit.xsd (JUnitReport)")):
        v = Verdict(name, subject)
        for text in fn(root):
            v.add(Finding("structure", text, "valid", rule, issue=7))
        if not v.findings:
            v.detail = "valid by the schema's rules"
        verdicts.append(v)
    v = Verdict("JUnit verdict (failures)", subject)
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    cases = [c for s in suites for c in s.findall("testcase")]
    failed = [c.get("name") for c in cases if c.find("failure") is not None
              or c.find("error") is not None]
    if expect_failed_threads is not None:
        if len(failed) != expect_failed_threads:
            v.add(Finding("failed test cases", len(failed), expect_failed_threads,
                          "the run failed (measure exit 3: a maximum over --max-latency); a CI "
                          "reader counts failed <testcase>s", issue=5))
        total = sum(int(s.get("failures", "0")) for s in suites)
        if total != len(failed):
            v.add(Finding("testsuite failures=", total, len(failed),
                          "failures counts the failed test cases"))
    v.detail = f"{len(cases)} cases, {len(failed)} failed"
    verdicts.append(v)
    return verdicts
