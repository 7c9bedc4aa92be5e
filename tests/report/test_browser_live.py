"""A what-if widget in a live JupyterLab: a real server on 127.0.0.1 with a token, headless Chromium (driven as in
test_browser.py), the shard scale-out notebook run from the page, one slider moved by typing into its readout as a
user would, and the answer redrawn to the shard count computed here independently."""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.report.test_browser import CHROMIUM, Browser

pytestmark = [pytest.mark.browser, pytest.mark.notebooks]

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "05_shard_scale_out.ipynb"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """A JupyterLab server on a copy of the notebook, with its own config/runtime dirs; stopped with its kernels."""
    home = tmp_path_factory.mktemp("jupyterlab")
    work = home / "notebooks"
    work.mkdir()
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, work / NOTEBOOK)
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(":"),
           "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
           "IPYTHONDIR": str(home / "ipython"), "CAPMODEL_NOTEBOOKS_DIR": str(ROOT / "notebooks")}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}", "--LabApp.expose_app_in_browser=True",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly",
         "--ServerApp.terminals_enabled=False", *(["--allow-root"] if os.geteuid() == 0 else [])],
        env=env, stdout=subprocess.DEVNULL, stderr=(home / "server.log").open("w"), start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not start: {(home / 'server.log').read_text()[-2000:]}")
            time.sleep(0.3)
        yield base, token
    finally:
        started = [server, *psutil.Process(server.pid).children(recursive=True)] if server.poll() is None else []
        try:  # the server shuts its kernels down itself
            urllib.request.urlopen(urllib.request.Request(f"{base}/api/shutdown?token={token}", method="POST"),
                                   timeout=5).close()
        except OSError:
            server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        for proc in started:  # anything the server started and left behind (a kernel)
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass


def _wait(browser, expression: str, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = browser.evaluate(expression)
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}; page problems: {browser.problems()[:5]}")


# the answer the what-if area shows (its last markdown output), or "" before it is drawn
WHAT_IF_ANSWER = """(() => {
  const areas = [...document.querySelectorAll('.jupyter-widgets-output-area, .widget-output')];
  const texts = areas.map(a => a.innerText).filter(t => t.includes('Answer for these settings'));
  return texts.length ? texts[texts.length - 1] : '';
})()"""
SIGMA_READOUT = """(() => {
  const slider = [...document.querySelectorAll('.widget-slider')]
      .find(s => (s.querySelector('.widget-label') || {}).innerText === 'σ (contention)');
  if (!slider) return null;
  const r = slider.querySelector('.widget-readout').getBoundingClientRect();
  slider.querySelector('.widget-readout').scrollIntoView({block: 'center'});
  const b = slider.querySelector('.widget-readout').getBoundingClientRect();
  return JSON.stringify({x: b.left + b.width / 2, y: b.top + b.height / 2, ok: r.width > 0});
})()"""


def _type_into(browser, x: float, y: float, text: str) -> None:
    """Click at (x, y), select what is there, type ``text`` and press Enter, as a user at the keyboard would."""
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, button="left", clickCount=1)
    browser.evaluate("document.execCommand('selectAll', false, null)")
    browser.call("Input.insertText", session=True, text=text)
    for kind in ("rawKeyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", session=True, type=kind, key="Enter", code="Enter",
                     windowsVirtualKeyCode=13, nativeVirtualKeyCode=13)


def test_moving_the_sigma_slider_replans_the_shards_live(jupyterlab, tmp_path):
    assert Path(CHROMIUM).exists(), "chromium is missing: .ci/run installs Debian's chromium package"
    base, token = jupyterlab
    browser = Browser(tmp_path / "chromium-profile")
    try:
        browser.call("Page.navigate", session=True, url=f"{base}/lab/tree/{NOTEBOOK}?token={token}")
        _wait(browser, "!!(window.jupyterapp && document.querySelector('.jp-Notebook'))", 60, "the notebook")
        _wait(browser, "(() => { const w = window.jupyterapp.shell.currentWidget; const s = w && w.sessionContext; "
                       "return !!(s && s.session && s.session.kernel && s.session.kernel.status === 'idle'); })()",
              60, "an idle kernel")
        browser.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells'), true")
        before = _wait(browser, WHAT_IF_ANSWER, 90, "the what-if answer")
        # the notebook's defaults: 1,000,000 inserts/s at 62,500 per shard, sigma = 0 -> 16 shards (the AWS post)
        assert "needs 16 shards" in before, before
        where = json.loads(_wait(browser, SIGMA_READOUT, 30, "the σ slider"))
        _type_into(browser, where["x"], where["y"], "0.02")
        needed = next(s for s in range(1, 33) if 62_500 * s / (1 + 0.02 * (s - 1)) >= 1_000_000)
        after = _wait(browser, f"(() => {{ const t = {WHAT_IF_ANSWER}; "
                               f"return t.includes('needs {needed} shards') ? t : ''; }})()", 30,
                      f"the answer for σ = 0.02 ({needed} shards)")
        assert "σ = 0.02 and κ = 0" in after and f"needs {needed} shards" in after
        # the redrawn figure has a line for the new σ
        assert browser.evaluate("[...document.querySelectorAll('.jupyter-widgets-output-area .legendtext, "
                                ".widget-output .legendtext')].some(e => e.textContent === 'σ = 0.02')")
    finally:
        browser.close()
