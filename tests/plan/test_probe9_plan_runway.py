"""probe9: the runway sentence when today's users already exceed a VM (capmodel plan --growth --current-users)."""
import math

from capmodel.cli import main


def runway_lines(capsys, current):
    assert main(["plan", "--growth", "0.05", "--current-users", str(current)]) == 0
    out = capsys.readouterr().out
    block = out[out.index("Runway at"):].split("\n\n")[0].splitlines()
    return block[0], {line.split()[0]: line.split(None, 1)[1] for line in block[1:]}


def test_a_vm_already_too_small_is_said_over_not_there(capsys):
    """30,000 users today on the baseline VM that carries 25,000 (the bundled study's baseline) printed
    'now (already there)': a VM 20% too small read as one just full."""
    head, rows = runway_lines(capsys, 30000)
    assert rows["m3-xlarge-8-SAS"] == "now: already over, 30,000 users today against the 25,000 it carries"
    # a VM with room keeps its months: ln(65,000 / 30,000) / ln(1.05)
    assert rows["s3-2xlarge-8-SAS"].startswith(f"{math.log(65000 / 30000) / math.log(1.05):.1f} months")


def test_one_user_is_singular(capsys):
    head, _ = runway_lines(capsys, 1)
    assert "from 1 user (" in head
