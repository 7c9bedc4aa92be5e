"""Report 03's load-per-user what-if (``plan_report(load_per_user=)``, its live control): on the bundled study the
load is derived from the baseline (25,000 users at 6,500 ops/s); another load per user keeps that measurement and
today's users, and every VM then carries its usable throughput over the new load."""
import pytest

from capmodel.plan import Objectives
from capmodel.report.plan_report import plan_report

OBJECTIVES = Objectives(utilization_target=0.8, latency_increase=0.05)


def test_the_derived_load_given_back_changes_nothing():
    base = plan_report(targets=[50_000, 90_000], objectives=OBJECTIVES)
    assert base.study.plan.workload.ops_per_user == pytest.approx(6_500 / 25_000)
    same = plan_report(targets=[50_000, 90_000], objectives=OBJECTIVES, load_per_user=6_500 / 25_000)
    assert same.answer == base.answer
    assert same.vms["users"].fillna(-1).tolist() == pytest.approx(base.vms["users"].fillna(-1).tolist())


@pytest.mark.parametrize("load", [0.13, 0.5, 1.3])
def test_another_load_per_user_divides_each_vm_s_usable_throughput_and_keeps_today_s_users(load):
    base = plan_report(targets=[50_000], objectives=OBJECTIVES)
    what_if = plan_report(targets=[50_000], objectives=OBJECTIVES, load_per_user=load)
    assert what_if.study.plan.workload.ops_per_user == pytest.approx(load)
    assert what_if.current_users == base.current_users == 25_000
    usable = base.vms.set_index("vm")["usable_throughput"].dropna()
    users = what_if.vms.set_index("vm")["users"]
    for vm, throughput in usable.items():
        assert users[vm] == pytest.approx(throughput / load, rel=1e-9), vm


def test_on_a_load_given_directly_the_what_if_replaces_it(tmp_path):
    catalog = tmp_path / "vms.csv"
    catalog.write_text("vm,monthly_cost,throughput,cpu_util\nsmall,100,1000,0.5\nlarge,300,4000,0.5\n")
    given = plan_report(catalog=str(catalog), ops_per_user=0.5, targets=[1_000], objectives=Objectives())
    what_if = plan_report(catalog=str(catalog), ops_per_user=0.5, targets=[1_000], objectives=Objectives(),
                          load_per_user=2.0)
    ratio = (given.vms.set_index("vm")["users"] / what_if.vms.set_index("vm")["users"]).tolist()
    assert ratio == pytest.approx([4.0, 4.0])
