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
from rendered_reports import render_small

pytestmark = [pytest.mark.browser, pytest.mark.notebooks]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
         "--no-first-run", "--disable-component-update", "--disable-sync", "--remote-debugging-pipe",
         "--window-size=1280,1000", "--hide-scrollbars"]
ROOT = Path(__file__).resolve().parents[1]
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


@pytest.mark.parametrize("name", notebooks.names())
def test_report_draws_every_figure_offline_without_errors(browser, reports, name):
    state = browser.open((reports / f"{name}.html").as_uri())
    assert browser.problems() == [], name
    assert state["plotly"] == "object"
    assert state["figures"] >= 2, state
    assert state["drawn"] == state["figures"], state
    assert all(t > 0 for t in state["traces"]), state
    if name == "03_vm_capacity_plan" and (ROOT / "reports").is_dir() and not os.environ.get("CI"):
        browser.screenshot(ROOT / "reports" / "03_vm_capacity_plan.png", state["height"])
