"""The generated fleet (tests/fleet/test_fleet.py's SERVERS), written once for the folder's value and wording tests."""
import pytest


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    from capmodel.observe import synthetic
    from tests.fleet.test_fleet import SERVERS

    parent = tmp_path_factory.mktemp("fleet")
    synthetic.write_fleet(list(SERVERS), parent)
    return parent
