"""MkDocs hooks for the manual (mkdocs.yml, ``hooks:``).

- The bundled datasets' notes (``data/README.md``) and the changelog (``CHANGELOG.md``) live beside what they describe;
  they join the site as the pages ``datasets.md`` and ``changelog.md``, read from there at build time.
- The curve-table page holds ``capmodel.data.curve_columns.markdown_table()``; a page that no longer equals the
  declaration is a warning, so ``mkdocs build --strict`` fails (``tests/data/test_curve_columns.py`` checks the same).
"""
from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
FROM_REPOSITORY = {"datasets.md": ROOT / "data" / "README.md", "changelog.md": ROOT / "CHANGELOG.md"}
log = logging.getLogger("mkdocs.hooks.capmodel")


def on_files(files, config):
    for name, source in FROM_REPOSITORY.items():
        files.append(File.generated(config, name, abs_src_path=str(source)))
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "curve-table.md":
        from capmodel.data.curve_columns import markdown_table

        if markdown_table() not in markdown:
            log.warning("docs/curve-table.md no longer holds capmodel.data.curve_columns.markdown_table(): "
                        "paste the function's output over the page's table")
    return markdown
