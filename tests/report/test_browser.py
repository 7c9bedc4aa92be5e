"""The rendered reports in a real browser: headless Chromium (Debian's ``chromium``) driven over the DevTools protocol
on a pipe (``--remote-debugging-pipe``, no extra package). Every page must load with no JavaScript error, request
nothing from the network (plotly.js is inlined: no CDN), and draw every plotly figure with its data traces."""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from capmodel.report import notebooks
from tests.support.rendered_reports import USER_DATA, render_small, render_user_data

pytestmark = [pytest.mark.browser, pytest.mark.notebooks]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
         "--no-first-run", "--disable-component-update", "--disable-sync", "--remote-debugging-pipe",
         "--window-size=1280,1000", "--hide-scrollbars"]
ROOT = Path(__file__).resolve().parents[2]
# what the page reports once every figure had its chance to draw
FIGURES = """(() => {
  const divs = [...document.querySelectorAll('div.plotly-graph-div')];
  return JSON.stringify({
    figures: divs.length,
    drawn: divs.filter(d => d.querySelector('svg.main-svg') && d.querySelectorAll('g.trace, g.barlayer .trace,'
                                                      + ' g.scatterlayer .trace').length > 0).length,
    traces: divs.map(d => d.querySelectorAll('g.trace').length),
    plotly: typeof window.Plotly,
    height: document.documentElement.scrollHeight,
  });
})()"""


# what a reader sees: the headline, the visible text, anything wider than the window, the figures' axis titles
PAGE = """(() => {
  const width = window.innerWidth;
  const clipped = el => { for (let a = el.parentElement; a; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; }
    return false; };
  const wide = [...document.body.querySelectorAll('*')].filter(el => {
      const r = el.getBoundingClientRect(); return r.width > 0 && r.right > width + 1 && !clipped(el); })
    .map(el => el.tagName + '.' + el.className);
  const scrolled = [...document.querySelectorAll('.capmodel-table')].filter(t => t.scrollWidth > t.clientWidth + 1)
    .map(t => (t.querySelector('caption') || {}).textContent);
  const title = t => (t && (t.text !== undefined ? t.text : t)) || '';
  const axes = [...document.querySelectorAll('div.plotly-graph-div')].map(d => ({
      figure: title(d.layout.title), x: title(d.layout.xaxis.title), y: title(d.layout.yaxis.title)}));
  const head = document.querySelector('.capmodel-headline');
  return JSON.stringify({
    title: document.title, width: width, wide: wide, scrolled: scrolled, axes: axes,
    headline: head ? head.innerText : null,
    question: head && head.querySelector('.question') ? head.querySelector('.question').innerText : null,
    answer: head && head.querySelector('.answer') ? head.querySelector('.answer').innerText : null,
    provenance: head && head.querySelector('.provenance') ? head.querySelector('.provenance').innerText : null,
    evidence: head && head.querySelector('.capmodel-evidence') ? head.querySelector('.capmodel-evidence').innerText : null,
    text: document.body.innerText,
  });
})()"""
# words that must not reach a reader: Python's missing values and reprs, tracebacks
RAW = [r"\bNaN\b", r"\bnan\b", r"\bNone\b", r"\binf\b", r"\bInfinity\b", r"object at 0x", r"\{'", r"Traceback",
       r"<capmodel", r"dtype:", r"\bNaT\b"]
# an axis names its unit in parentheses, or counts things named by its title
COUNT_AXES = {"VM", "users", "users carried", "shards", "candidate nodes", "inserts/s", "workload",
              "contention scenario"}


class Browser:
    """Chromium with the DevTools protocol on fds 3/4: JSON messages separated by NUL bytes."""

    def __init__(self, user_data_dir: Path):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire():  # the child reads commands on fd 3 and writes replies on fd 4
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)
            os.set_inheritable(3, True)  # dup2 onto itself keeps the pipe's close-on-exec flag
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
                                     preexec_fn=wire, close_fds=False, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _read(self, timeout: float) -> dict | None:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_child], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: bool = False, timeout: float = 60, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = self._read(deadline - time.monotonic())
            if reply is None:
                break
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
        raise TimeoutError(method)

    def wait_for(self, method: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            event = self._read(max(deadline - time.monotonic(), 0))
            if event is None:
                raise TimeoutError(method)
            self.events.append(event)

    def open(self, url: str) -> dict:
        """Load ``url``; returns what the page says about its figures once they are all drawn (or after 30 s)."""
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")
        deadline = time.monotonic() + 30
        while True:
            state = json.loads(self.evaluate(FIGURES))
            if state["drawn"] == state["figures"] or time.monotonic() > deadline:
                return state
            time.sleep(0.2)

    def evaluate(self, expression: str):
        return self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)["result"]["value"]

    def problems(self) -> list[str]:
        """JavaScript exceptions, console errors, error log entries and any request that left the machine."""
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails'].get('text')} "
                             f"{params['exceptionDetails'].get('exception', {}).get('description', '')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console.error: " + " ".join(str(a.get("value", a.get("description")))
                                                          for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
            elif method == "Network.requestWillBeSent":
                url = params["request"]["url"]
                if not url.startswith(("file:", "data:", "blob:", "about:")):
                    found.append(f"network request: {url}")
        return found

    def screenshot(self, path: Path, height: int) -> None:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=1280, height=min(height, 6000),
                  deviceScaleFactor=1, mobile=False)
        time.sleep(0.5)  # let plotly's responsive figures resize to the new viewport
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    assert Path(CHROMIUM).exists(), "chromium is missing: .ci/run installs Debian's chromium package"
    b = Browser(tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


@pytest.fixture(scope="module")
def reports(tmp_path_factory, mongod):
    out, _ = render_small(tmp_path_factory, mongod.uri)
    return out


def test_index_links_every_report_and_loads_cleanly(browser, reports):
    state = browser.open((reports / "index.html").as_uri())
    assert browser.problems() == []
    assert state["figures"] == 0
    links = json.loads(browser.evaluate(
        "JSON.stringify([...document.querySelectorAll('td a')].map(a => a.getAttribute('href')))"))
    assert {f"{name}.html" for name in notebooks.names()} <= set(links)


def test_the_index_reads_at_1024_px_with_each_reports_answer_grade_and_reason(browser, reports):
    """The index gives each report's answer in one sentence, its grade and its main reason; at 1,024 px
    nothing on it is wider than the window and every row shows all three."""
    browser.call("Emulation.setDeviceMetricsOverride", session=True, width=1024, height=900, deviceScaleFactor=1,
                 mobile=False)
    try:
        browser.open((reports / "index.html").as_uri())
        shown = json.loads(browser.evaluate("""(() => JSON.stringify({
          width: window.innerWidth,
          wide: [...document.body.querySelectorAll('*')].filter(el => el.getBoundingClientRect().right
                                                             > window.innerWidth + 1).map(el => el.tagName),
          rows: [...document.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.innerText)),
          grades: [...document.querySelectorAll('tbody tr')].map(r => (r.querySelector('.grade') || {}).innerText),
        }))()"""))
    finally:
        browser.call("Emulation.clearDeviceMetricsOverride", session=True)
    assert shown["width"] == 1024 and shown["wide"] == [], shown["wide"]
    assert len(shown["rows"]) == len(notebooks.names())
    for (report, answer, evidence, _), grade in zip(shown["rows"], shown["grades"]):
        assert answer.strip() and answer.strip().endswith("."), (report, answer)
        assert grade in ("sound", "weak", "unusable"), (report, grade)
        assert grade == "sound" or len(evidence.strip()) > len(grade) + 10, (report, evidence)   # and its reason


@pytest.mark.parametrize("name", notebooks.names())
def test_report_draws_every_figure_offline_without_errors(browser, reports, name):
    page = _page(browser, reports / f"{name}.html")
    state = page["figures"]
    assert page["problems"] == [], name
    assert state["plotly"] == "object"
    assert state["figures"] >= 2, state
    assert state["drawn"] == state["figures"], state
    assert all(t > 0 for t in state["traces"]), state
    if name == "03_vm_capacity_plan" and (ROOT / "reports").is_dir() and not os.environ.get("CI"):
        browser.open((reports / f"{name}.html").as_uri())
        browser.screenshot(ROOT / "reports" / "03_vm_capacity_plan.png", state["height"])


#: what each page showed, by browser and file: a page is loaded once and read by every test that asks about it (a
#: report's page is a few MB of plotly; the figure test and the text test of one page loaded it twice)
_SHOWN: dict = {}


def _page(browser, path: Path) -> dict:
    key = (browser, str(path))
    if key not in _SHOWN:
        state = browser.open(path.as_uri())
        page = json.loads(browser.evaluate(PAGE))
        page["figures"] = state
        page["problems"] = browser.problems()
        _SHOWN[key] = page
    return _SHOWN[key]


def _check_page(page: dict, name: str) -> None:
    import re

    assert page["problems"] == [], (name, page["problems"])
    assert page["headline"], f"{name}: no headline block"
    assert page["question"] and page["title"] == page["question"], (name, page["title"])
    assert page["answer"] and page["evidence"], name
    prov = page["provenance"] or ""
    assert "Rendered" in prov and "UTC" in prov and "capmodel" in prov and "Parameters:" in prov, (name, prov)
    for pattern in RAW:
        found = re.search(pattern, page["text"])
        around = page["text"][max(found.start() - 80, 0):found.end() + 80] if found else ""
        assert not found, f"{name}: {found.group(0)!r} in the page: ...{around}..."
    assert page["wide"] == [], f"{name}: wider than the {page['width']} px window: {page['wide'][:5]}"
    assert page["scrolled"] == [], f"{name}: tables wider than the page: {page['scrolled']}"
    for axis in page["axes"]:
        for which in ("x", "y"):
            t = axis[which].strip()
            assert t and ("(" in t and ")" in t or t in COUNT_AXES), f"{name}: {axis['figure']!r} {which} axis {t!r}"
    assert page["figures"]["drawn"] == page["figures"]["figures"], (name, page["figures"])


@pytest.mark.parametrize("name", notebooks.names())
def test_bundled_report_reads_answer_first_with_clean_text_and_units(browser, reports, name):
    _check_page(_page(browser, reports / f"{name}.html"), name)


@pytest.fixture(scope="module")
def user_reports(tmp_path_factory, mongod):
    out, _ = render_user_data(tmp_path_factory, mongod.uri)
    return out


@pytest.mark.parametrize("page", sorted(USER_DATA))
def test_report_on_users_data_reads_answer_first_with_clean_text_and_units(browser, user_reports, page):
    shown = _page(browser, user_reports / f"{page}.html")
    _check_page(shown, page)
    if page == "user_catalog_chf":  # a user's catalog: its currency, never the bundled study's story
        assert "CHF/month" in shown["answer"] and "EUR" not in shown["text"]
        assert "benchANT" not in shown["text"].split("Borrowed figures")[0]
    if page == "user_client_bound":  # unusable evidence: the answer gives no capacity, only what was measured
        assert "unusable" in shown["evidence"] and "at least the best measured" in shown["answer"]
        assert "ceiling of" not in shown["answer"] and "peaks at" not in shown["answer"]
    if page == "user_bench_folder":
        assert "MongoDB" in shown["provenance"] and "benchANT study" in shown["provenance"]


def _numbers(text: str) -> list[str]:
    import re

    return re.findall(r"\d[\d,]*(?:\.\d+)?", text)


def test_the_page_states_the_numbers_of_the_result_object(browser, reports, user_reports):
    """The answer on the page is the package's decision and answer for the same inputs, number for number."""
    from capmodel.plan import Objectives
    from capmodel.report.fit_report import fit_report
    from capmodel.report.plan_report import plan_report

    page = _page(browser, reports / "02_fit_curve.html")
    fitted = fit_report(dataset="plgm_workload1")
    assert _numbers(page["answer"]) == _numbers(fitted.decision) + _numbers(fitted.answer)
    assert round(fitted.fit.ceiling) == 15026            # the Amdahl ceiling the answer states (15,026 ops/s)
    _, values = USER_DATA["user_catalog_chf"]
    page = _page(browser, user_reports / "user_catalog_chf.html")
    expected = plan_report(catalog=values["catalog"], curves=values["curves"], vm_column="vm",
                           ops_per_user=values["ops_per_user"], targets=values["targets"],
                           objectives=Objectives(utilization_target=0.8))
    assert _numbers(page["answer"]) == _numbers(expected.decision) + _numbers(expected.answer)


@pytest.mark.parametrize("name", notebooks.names())
def test_report_fits_a_1024_px_window_with_no_table_behind_a_scroll_bar(browser, reports, name):
    # report 08's fleet table was 998 px wide in its 974 px column at 1,024 px: its runway column, the answer, sat
    # behind a scroll bar (the pages are read at 1,280 px above)
    browser.call("Emulation.setDeviceMetricsOverride", session=True, width=1024, height=900, deviceScaleFactor=1,
                 mobile=False)
    try:
        browser.open((reports / f"{name}.html").as_uri())
        page = json.loads(browser.evaluate(PAGE))
    finally:
        browser.call("Emulation.clearDeviceMetricsOverride", session=True)
    assert page["width"] == 1024
    assert page["wide"] == [], f"{name}: wider than the window: {page['wide'][:5]}"
    assert page["scrolled"] == [], f"{name}: tables wider than their column: {page['scrolled']}"
