"""The report notebooks live in JupyterLab, driven by Playwright on Debian's chromium: a JupyterLab server over a
copy of the notebooks, each live notebook opened and run, each control of its one panel moved in turn, and after
every move the headline (the page's first block) and a figure redrawn in place with the new value. Then the notebook,
saved from JupyterLab with its outputs, cleans (scripts/nbclean.py, git's filter for notebooks) to the stored file
byte for byte: running a notebook leaves ``git status`` clean."""
from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from capmodel.report import notebooks

pytestmark = [pytest.mark.browser, pytest.mark.notebooks]

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic", "--no-first-run",
         "--disable-component-update", "--disable-sync"]
def shards(target: float, sigma: float, kappa: float, per_shard: float = 62_500.0, limit: int = 32) -> int:
    """The shards report 05 must name for ``target`` inserts/s (its defaults: 62,500 a shard, at most 32)."""
    return next(n for n in range(1, limit + 1) if per_shard * n / (1 + sigma * (n - 1) + kappa * n * (n - 1)) >= target)


# per live notebook: each control's label, the value typed into its readout, and a phrase that must then be on the
# page, in the headline unless marked "page" (None: the headline must change, its words are the plan's). On the
# bundled study the latency objective binds no VM (its slow VMs are slower by measurement, not by a figure), so its
# control shows in the objectives stated under the headline and in no figure.
CONTROLS = {
    "03_vm_capacity_plan": [("monthly growth", "0.1", "10% a month"), ("target users", "60000", "60,000 users"),
                            ("utilization target", "0.6", None), ("ops/s per user", "0.5", None),
                            ("p95 increase allowed", "0.5", "page: no more than 50% above the baseline's")],
    # the contention figures are said below the headline block, in "How the answer was worked out"
    "04_node_multiplier": [("σ (contention)", "0.05", "page: with σ = 0.05 and κ"),
                           ("κ (coherency)", "0.0005", "page: and κ = 0.0005")],
    # the shard counts counted here: the smallest n with 62,500 n / (1 + σ(n − 1) + κn(n − 1)) >= the target
    "05_shard_scale_out": [("target inserts/s", "1200000", f"Plan {shards(1.2e6, 0, 0)} shards"),
                           ("σ (contention)", "0.015", f"Plan {shards(1.2e6, 0.015, 0)} shards"),
                           ("κ (coherency)", "0.00005", f"Plan {shards(1.2e6, 0.015, 0.00005)} shards")],
}
# every figure's traces (names and values), levels and labels drawn on it, to tell a redrawn figure from the one before
FIGURES = ("JSON.stringify([...document.querySelectorAll('.js-plotly-plot')].map(d => d.data ? "
           "[d.data.map(t => [t.name, t.x, t.y]), ((d.layout || {}).shapes || []).map(s => [s.y0, s.y1]), "
           "((d.layout || {}).annotations || []).map(a => a.text)] : null))")
HEADLINE = ".capmodel-headline"


def clean(text: str) -> str:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import nbclean
    finally:
        sys.path.pop(0)
    return nbclean.clean(text)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server (this machine only, a token of its own) over a copy of the notebooks; yields its base
    URL, the token and the folder."""
    root = tmp_path_factory.mktemp("lab")
    for name in CONTROLS:
        shutil.copy(notebooks.path(name), root)
    token = secrets.token_hex(16)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # every cell rendered whether in view or not (JupyterLab 4 lays out only the visible ones by default), and no
    # news or update prompts over the page
    settings = root / ".settings"
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}))
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(root / ".config"), "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
           "JUPYTER_DATA_DIR": str(root / ".data")}
    env.pop("JUPYTER_PATH", None)
    log = open(root / ".lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", f"--LabApp.user_settings_dir={settings}",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, (root / ".lab.log").read_text()[-2000:]
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "JupyterLab did not listen within 120 s"
                time.sleep(0.25)
        yield f"http://127.0.0.1:{port}", token, root
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


def wait_until(condition, what, timeout: float = 90):
    """Poll ``condition`` until it holds; past ``timeout`` seconds fail saying ``what`` (a string, or a function
    giving one then)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what() if callable(what) else what
        time.sleep(0.2)


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_each_control_redraws_the_headline_and_a_figure_in_place(lab, browser, name, tmp_path):
    url, token, root = lab
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    try:
        page.goto(f"{url}/lab/workspaces/{name.replace('_', '-')}/tree/{name}.ipynb?reset&token={token}")   # a workspace of its own
        choose = page.locator(".jp-Dialog button", has_text="Select")   # JupyterLab may ask which kernel to start

        def kernel_status() -> str:
            status = page.locator(".jp-Notebook-ExecutionIndicator")
            return (status.first.get_attribute("data-status") if status.count() else None) or "unknown"

        def kernel_ready() -> bool:
            if choose.count() and choose.first.is_visible():
                choose.first.click()
            return kernel_status() == "idle" \
                and "Python 3" in page.locator(".jp-StatusBar-Widget").all_inner_texts().__str__()
        wait_until(kernel_ready, f"{name}: the kernel did not start", timeout=120)
        for attempt in range(4):     # on a loaded machine the first run can be sent before the kernel listens
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
            try:
                page.wait_for_selector(HEADLINE, timeout=30_000)
                break
            except PlaywrightTimeout:
                assert attempt < 3, f"{name}: four runs of every cell drew no headline"
        wait_until(lambda: page.locator(".widget-slider").count() == len(CONTROLS[name]),
                   f"{name}: the panel's {len(CONTROLS[name])} controls did not appear")
        wait_until(lambda: json.loads(page.evaluate(FIGURES)) and all(json.loads(page.evaluate(FIGURES))),
                   f"{name}: the figures were not drawn")
        labels = [page.locator(".widget-slider").nth(i).inner_text().splitlines()[0]
                  for i in range(page.locator(".widget-slider").count())]
        assert sorted(labels) == sorted(label for label, _, _ in CONTROLS[name])
        # the panel stands above the headline: the page's first block after it
        panel_y = page.locator(".widget-slider").first.bounding_box()["y"]
        assert panel_y < page.locator(HEADLINE).first.bounding_box()["y"]

        def settled() -> str:
            """The figures' traces once the kernel is idle and every figure is drawn, read twice half a second
            apart and alike (a redraw replaces the figures one by one)."""
            def read():
                drawn = page.evaluate(FIGURES)
                return drawn if kernel_status() == "idle" and all(json.loads(drawn)) else None
            found: list = []

            def steady() -> bool:
                first = read()
                time.sleep(0.5)
                found[:] = [first]
                return first is not None and read() == first
            wait_until(steady, f"{name}: the figures did not settle (kernel {kernel_status()})")
            return found[0]

        for label, typed, said in CONTROLS[name]:
            on_page = bool(said) and said.startswith("page: ")
            said = said.removeprefix("page: ") if said else said
            headline, figures = page.locator(HEADLINE).first.inner_text(), settled()
            where = (lambda: page.locator(".jp-Notebook").first.inner_text()) if on_page else \
                (lambda: page.locator(HEADLINE).first.inner_text())
            assert said is None or said not in where(), (label, said)
            readout = page.locator(".widget-slider").nth(labels.index(label)).locator(".widget-readout")
            readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type(typed)
            page.keyboard.press("Enter")
            wait_until(lambda: said in where() if said else page.locator(HEADLINE).first.inner_text() != headline,
                       f"{name}: moving {label} to {typed} did not redraw the " + ("page" if on_page else "headline")
                       + (f" with {said!r}" if said else ""))
            if not on_page:
                wait_until(lambda: settled() != figures,
                           lambda: f"{name}: moving {label} to {typed} redrew no figure (kernel {kernel_status()}, "
                                   f"{len(json.loads(page.evaluate(FIGURES)))} figures on the page)")
            assert page.locator(HEADLINE).count() == 1, "the headline was added to, not redrawn in place"
        page.screenshot(path=str(tmp_path / f"{name}.png"))
        page.keyboard.press("Control+s")
        stored = notebooks.path(name).read_text(encoding="utf-8")
        wait_until(lambda: (root / f"{name}.ipynb").read_text(encoding="utf-8") != stored,
                   f"{name}: JupyterLab did not save the notebook")
        saved = (root / f"{name}.ipynb").read_text(encoding="utf-8")
        assert json.loads(saved)["cells"] and any(c.get("outputs") for c in json.loads(saved)["cells"])
        assert clean(saved) == stored
    except Exception:
        page.screenshot(path=str(tmp_path / f"{name}-failed.png"))
        raise
    finally:
        page.close()
