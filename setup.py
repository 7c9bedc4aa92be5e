"""Build step: a wheel carries the top-level ``data/`` and ``notebooks/`` inside the package, as ``capmodel/_bundled/``.

The repository keeps one copy of each folder, at the top level. ``build_py`` copies them into the build tree only (never
into the source tree), and lists them as sources so an sdist carries them too. ``capmodel._bundled.bundled_dir`` finds
the copy in an installed wheel; an editable install reads the top-level folders directly. Metadata: pyproject.toml.
"""
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.errors import FileError

ROOT = Path(__file__).resolve().parent
#: top-level folder -> the files of it that are bundled (patterns relative to the folder)
BUNDLED = {"data": ["**/*"], "notebooks": ["*.ipynb"]}
PACKAGED = ("capmodel", "_bundled")


def bundled_files() -> dict[str, list[Path]]:
    """Each bundled folder's files, relative to the folder; hidden files and caches are left out."""
    found = {}
    for folder, patterns in BUNDLED.items():
        source = ROOT / folder
        files = {p.relative_to(source) for pattern in patterns for p in source.glob(pattern) if p.is_file()}
        found[folder] = sorted(f for f in files if not any(part.startswith((".", "__")) for part in f.parts))
        if not found[folder]:
            raise FileError(f"setup.py: nothing to bundle in {source} (the wheel would carry no {folder})")
    return found


class build_py_with_bundled_files(build_py):
    """``build_py`` that also copies the bundled folders into ``capmodel/_bundled/`` of the build tree."""

    def bundled_mapping(self) -> dict[str, str]:
        """Build-tree path -> source path of every bundled file."""
        return {os.path.join(self.build_lib, *PACKAGED, folder, *relative.parts): str(ROOT / folder / relative)
                for folder, files in bundled_files().items() for relative in files}

    def run(self):
        super().run()
        if self.editable_mode:  # an editable install reads the top-level folders in place
            return
        for folder in BUNDLED:  # start clean, so a file deleted from the repository leaves the wheel too
            shutil.rmtree(os.path.join(self.build_lib, *PACKAGED, folder), ignore_errors=True)
        for target, source in self.bundled_mapping().items():
            self.mkpath(os.path.dirname(target))
            self.copy_file(source, target, preserve_mode=False)

    def get_outputs(self, include_bytecode=True):
        if self.editable_mode:  # the base class answers from get_output_mapping, which has them already
            return super().get_outputs(include_bytecode)
        return super().get_outputs(include_bytecode) + list(self.bundled_mapping())

    def get_output_mapping(self):
        return {**super().get_output_mapping(), **self.bundled_mapping()}

    def get_source_files(self):
        bundled = [os.path.relpath(source, ROOT) for source in self.bundled_mapping().values()]
        return super().get_source_files() + bundled


setup(cmdclass={"build_py": build_py_with_bundled_files})
