"""A long path on a page breaks after a '/', never at a hyphen inside a folder's name (report 08's folders broke as
'.../orders-primary-0.db.internal-eu-' / 'central...'), on every page: the HTML conversion keeps names whole."""
import re

import pytest

from capmodel.formatting import NOWRAP, unbroken_names
from capmodel.report.convert import unbroken_page

KEPT = re.compile(re.escape(NOWRAP) + r"[^<]*</span>")


def breakable_hyphens(markup: str) -> list[str]:
    """Words of ``markup``'s text with a hyphen a browser may break at: outside every kept span (tags, scripts,
    styles and code left out)."""
    body = markup.partition("<body")[2].partition(">")[2] or markup
    body = re.sub(r"<(script|style|pre|code|textarea)\b.*?</\1>", " ", body, flags=re.S | re.I)
    text = re.sub(r"<[^>]+>", " ", KEPT.sub(" ", body))
    return re.findall(r"\S*\w-\w\S*", text)


def test_a_path_breaks_only_after_its_slashes_and_keeps_each_folder_whole():
    path = "/srv/eu-central-1/orders-primary-0.db_27017/diagnostic.data"
    shown = unbroken_names(f"folders = {path}")
    assert shown == (f"folders = /srv/<wbr>{NOWRAP}eu-central-1/</span><wbr>"
                     f"{NOWRAP}orders-primary-0.db_27017/</span><wbr>diagnostic.data")
    assert re.sub(r"<[^>]+>", "", shown) == f"folders = {path}"     # the text (and a copy of it) is the path
    assert not breakable_hyphens(shown)
    assert unbroken_names(shown) == shown                               # text already kept is left as it is


def test_a_page_keeps_names_in_its_text_and_leaves_scripts_code_and_title_alone():
    page = ("<html><head><title>m5-large?</title></head><body data-jp-theme-light=\"true\"><p>on m5-large at /a-b/c</p>"
            "<script>var x = a-b;</script><pre>r-s</pre><code>t-u</code></body></html>")
    shown = unbroken_page(page)
    assert '<body data-jp-theme-light="true"><p>' in shown      # the body's own attributes untouched
    assert "<title>m5-large?</title>" in shown and "<script>var x = a-b;</script>" in shown
    assert "<pre>r-s</pre>" in shown and "<code>t-u</code>" in shown
    assert not breakable_hyphens(shown) and breakable_hyphens(page)


def test_every_rendered_page_has_no_hyphen_a_browser_may_break_at(reports):
    from capmodel.report import notebooks

    for name in notebooks.names():
        page = (reports / f"{name}.html").read_text()
        assert not breakable_hyphens(page), (name, breakable_hyphens(page)[:5])


@pytest.fixture(scope="module")
def reports(tmp_path_factory, mongod):
    from tests.support.rendered_reports import render_small

    return render_small(tmp_path_factory, mongod.uri)[0]


def test_servers_folders_are_named_by_what_tells_them_apart_not_five_diagnostic_data():
    # report 08 on a user's folders said "From the FTDC in diagnostic.data, diagnostic.data, ..." and listed
    # "folder 1 = diagnostic.data", "folder 2 = diagnostic.data", ... as its inputs
    from capmodel.report.headline import distinct_names, folders_phrase, headline

    paths = [f"/srv/fleet/rs0-{m}.example.net_27017/diagnostic.data" for m in range(3)]
    assert distinct_names(paths) == [f"rs0-{m}.example.net_27017/diagnostic.data" for m in range(3)]
    assert folders_phrase(paths) == "3 folders under /srv/fleet"
    assert folders_phrase(paths[:1]) == "rs0-0.example.net_27017/diagnostic.data"
    assert distinct_names(["/a/x.csv", "/b/y.csv"]) == ["x.csv", "y.csv"]
    assert distinct_names(["/a/x.csv", "/b/x.csv"]) == ["a/x.csv", "b/x.csv"]
    assert folders_phrase(["/a/x", "/b/y"]) == "x, y"


def test_the_headline_names_each_input_so_that_two_read_apart(tmp_path):
    from capmodel.report.headline import headline

    for m in range(2):
        (tmp_path / f"rs0-{m}" / "diagnostic.data").mkdir(parents=True)
        (tmp_path / f"rs0-{m}" / "diagnostic.data" / "metrics.1").write_bytes(b"x")
    block = headline("Q?", "A.", None, inputs={f"folder {m + 1}": str(tmp_path / f"rs0-{m}" / "diagnostic.data")
                                               for m in range(2)})._repr_html_()
    text = re.sub(r"<[^>]+>", "", block)
    assert "folder 1 = rs0-0/diagnostic.data" in text and "folder 2 = rs0-1/diagnostic.data" in text
