"""Whether a scenario's machines of several nodes need a scale-out fabric between the nodes.

A fabric (RDMA NICs, their cables and a switch: ``constraints.network``) is bought only for a
workload whose GPUs exchange tensors across nodes:

- training shards over every card of every node (data parallel all-reduce, ZeRO/FSDP gathers,
  tensor or pipeline parallel activations), so a training workload on several nodes needs it;
- a served (inference) workload runs identical replicas, each of ``tp`` GPUs inside one node
  (planner.solve.usages; the planner does not model tensor or pipeline parallelism across nodes),
  and replicas never exchange tensors: each takes its own requests from a load balancer over the
  ordinary Ethernet every platform has on board. vLLM's "Data Parallel Deployment" page
  (https://docs.vllm.ai/en/latest/serving/data_parallel_deployment/): the weights are replicated
  across separate instances that "process independent batches of requests", and each rank talks
  to the front end over ZMQ sockets; only MoE expert layers synchronise the ranks, which the
  planner does not split. Its "Distributed Inference and Serving" page
  (https://docs.vllm.ai/en/v0.8.3/serving/distributed_serving.html) uses several nodes for one
  model only as tensor parallel inside a node plus pipeline parallel across nodes, the case that
  needs a fast network between them.

Importing this module does no work.
"""

from __future__ import annotations

from typing import Any


def needs_fabric(scenario: Any) -> bool:
    """Whether a machine of several nodes for ``scenario`` needs the scale-out fabric (module
    docstring): True when any workload is training; False when every workload is served (its
    replicas stay inside a node and never exchange tensors)."""
    return any(sw.task != "infer" for sw in scenario.workloads)


#: The words for several nodes without a fabric (text, workbook and warnings say the same).
ONBOARD_WORDS = ("independent replicas over the onboard Ethernet (no RDMA NIC or switch: the replicas "
                 "never exchange tensors)")


__all__ = ["ONBOARD_WORDS", "needs_fabric"]
