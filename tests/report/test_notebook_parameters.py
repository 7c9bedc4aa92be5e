"""papermill reads every parameter of every bundled notebook: the names its own parser finds in the cell tagged
``parameters`` (what ``papermill --help-notebook`` lists, and the source of its "Unable to parse line" warning on every
render) are the notebook's top-level assignments."""
import nbformat
import pytest
from papermill.translators import PythonTranslator

from capmodel.report import notebooks
from capmodel.report.params import notebook_parameters


@pytest.mark.parametrize("name", notebooks.names())
def test_papermill_parses_every_parameter(name):
    path = notebooks.path(name)
    cell = next(c for c in nbformat.read(path, as_version=4).cells if "parameters" in c.metadata.get("tags", []))
    assert [p.name for p in PythonTranslator.inspect(cell)] == list(notebook_parameters(path))
