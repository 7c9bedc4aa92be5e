"""capmodel.plan: turn measured or fitted throughput into capacity and cost decisions.

Pure computation on tables and fits (no I/O): workload calibration, VM catalogs, users per VM under utilization and
latency targets, cost per user, the Pareto frontier, growth plans and runway, node-count multipliers and shard
scale-out, with intervals carried through from the inputs' ranges or a bootstrap of the fit.
"""
from capmodel.plan.calibration import Workload, calibrate_workload, workload_from_ops_per_user
from capmodel.plan.capacity import Objectives, capacity_from_fit
from capmodel.plan.catalog import join_measurements, validate_catalog
from capmodel.plan.economics import add_economics, pareto_frontier
from capmodel.plan.growth import cheapest_for_target, growth_plan, runway_months
from capmodel.plan.intervals import Estimate, format_estimate
from capmodel.plan.nodes import node_multipliers, nodes_needed_usl
from capmodel.plan.planner import CapacityPlan, plan_vms
from capmodel.plan.shards import clients_needed, plan_shards, shards_needed

__all__ = [
    "CapacityPlan", "Estimate", "Objectives", "Workload", "add_economics", "calibrate_workload", "capacity_from_fit",
    "cheapest_for_target", "clients_needed", "format_estimate", "growth_plan", "join_measurements",
    "node_multipliers", "nodes_needed_usl", "pareto_frontier", "plan_shards", "plan_vms", "runway_months",
    "shards_needed", "validate_catalog", "workload_from_ops_per_user",
]
