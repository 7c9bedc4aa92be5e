"""capmodel.plan: turn measured or fitted throughput into capacity and cost decisions.

Pure computation on tables and fits (no I/O): workload calibration, VM catalogs, users per VM under utilization and
latency targets, cost per user, the Pareto frontier, growth plans and runway, node-count multipliers and shard
scale-out, with intervals carried through from the inputs' ranges or a bootstrap of the fit.

Three keyword entry points run a whole study, for the command line and the report notebooks alike, each returning a
result whose ``describe()`` is the answer in words: ``plan_study`` (VMs, users, cost; ``capmodel plan``),
``plan_node_study`` (node-count multipliers; ``capmodel nodes``) and ``plan_shard_study`` (shard scale-out;
``capmodel shards``).
"""
from capmodel.models.estimate import Estimate, format_estimate
from capmodel.plan.calibration import UserLoad, calibrate_user_load, user_load_from_ops_per_user
from capmodel.plan.capacity import Objectives, capacity_from_fit
from capmodel.plan.catalog import join_measurements, validate_catalog
from capmodel.plan.economics import add_economics, pareto_frontier
from capmodel.plan.growth import cheapest_for_target, growth_plan
from capmodel.plan.nodes import NodeStudy, node_multipliers, node_sensitivity, nodes_needed_usl, plan_node_study
from capmodel.plan.planner import CapacityPlan, plan_vms
from capmodel.plan.shards import ShardStudy, clients_needed, plan_shard_study, plan_shards, shards_needed
from capmodel.plan.study import PlanStudy, fit_per_vm, plan_study

__all__ = [
    "CapacityPlan", "Estimate", "NodeStudy", "Objectives", "PlanStudy", "ShardStudy", "UserLoad", "add_economics",
    "calibrate_user_load", "capacity_from_fit", "cheapest_for_target", "clients_needed", "fit_per_vm",
    "format_estimate", "growth_plan", "join_measurements", "node_multipliers", "node_sensitivity",
    "nodes_needed_usl", "pareto_frontier", "plan_node_study", "plan_shard_study", "plan_shards", "plan_study",
    "plan_vms", "shards_needed", "validate_catalog", "user_load_from_ops_per_user",
]
