"""The link a tensor-parallel group's all-reduces cross, and what one all-reduce costs on it.

**Cost** of one all-reduce of M bytes among n GPUs (NCCL's ring; nccl-tests doc/PERFORMANCE.md
defines the bus bandwidth so that it is independent of n): latency + 2 (n - 1) / n x M / busbw.

**Which link** (:func:`tp_link`):

- NVLink: SXM/OAM modules (``Gpu.quoted_link_bytes_per_s`` > 0): half the bidirectional figure x
  :data:`planner.speed.constants.COLLECTIVE_EFFICIENCY`, latency
  :data:`planner.speed.constants.ALLREDUCE_LATENCY_S`. A PCIe card's NVLink bridge is in no catalog
  platform or quote (platform ``parts`` categories are cpu, motherboard, chassis, psu, cooler,
  storage: docs/catalog.md), so PCIe cards, H100 NVL pairs included, are timed over PCIe.
- PCIe with peer-to-peer (every card but NVIDIA's GeForce): NCCL's P2P transport; bus bandwidth
  :data:`PCIE_P2P_BUSBW_SHARE` of one direction of the card's link (per-lane rate x lanes: the
  slower of card and host when the caller knows the host, else the card's own generation).
- PCIe without peer-to-peer (GeForce, segment ``consumer``: the driver reports no peer access
  over PCIe, so NCCL stages through host memory, its SHM transport): :data:`PCIE_SHM_BUSBW_SHARE`.
- vLLM's custom all-reduce (vllm/distributed/device_communicators/custom_all_reduce.py, vLLM commit
  00d618aab60448acdf3fac3e9c4e2e22d0c6c753): on PCIe it is enabled only for 2 GPUs ("not supported
  on more than two PCIe-only GPUs") that pass the P2P check (``_can_p2p``: GeForce fails it), and
  ``should_custom_ar`` takes it only for messages under ``max_size`` = 8192 x 1024 bytes
  (:data:`VLLM_CUSTOM_AR_MAX_BYTES`); then the latency is :data:`PCIE_CUSTOM_AR_LATENCY_S`.
  Everything else runs NCCL.

Importing this module does no work.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.speed.constants import (
    ALLREDUCE_LATENCY_S,
    COLLECTIVE_EFFICIENCY,
    DEFAULT_NODE_LINK_BYTES_PER_S,
    PCIE_ALLREDUCE_LATENCY_S,
    Figure,
)

#: PCIe per-lane rate, one direction, after line encoding, bytes/s, by generation (PCI-SIG PCI
#: Express Base Specifications 3.0-6.0; the same figures as catalog/pcie.yaml): used when the caller
#: does not pass the host link's rate (the card's own generation is then the link's).
PCIE_PER_LANE_BYTES_PER_S = {3: 0.985e9, 4: 1.969e9, 5: 3.938e9, 6: 7.56e9}

#: NCCL all_reduce bus bandwidth over PCIe with peer-to-peer, as a share of one direction of the
#: x16 link. 8 x RTX PRO 6000 Blackwell (PCIe 5.0 x16, 63.0 GB/s per direction), nccl-tests
#: all_reduce_perf sweep 8 MB-2 GB: 41.1 GB/s behind three PCIe switches, 39.4-40.1 GB/s behind
#: four, 37.6 GB/s direct-attached to two EPYC Turin sockets, 41.3-41.7 GB/s on 7 GPUs (NCCL_P2P_LEVEL
#: =SYS); the same systems' unidirectional P2P copies reach 53-56 GB/s (voipmonitor/rtx6kpro
#: hardware/pcie-bandwidth.md, commit 070506ff96a20039f71a067adcb250e8fe3414f8, "NCCL AllReduce
#: Bus Bandwidth"). 41.1 / 63.0 = 0.65. Measured at 8 GPUs; no 2-GPU sweep was found (fewer GPUs
#: share the host bridges less, so for 2 the share is a lower bound). Other generations: the same
#: share of their link (no Gen4 sweep with the large sizes was found).
PCIE_P2P_BUSBW_SHARE = Figure(0.65, "nccl-tests all_reduce_perf on 8 x RTX PRO 6000 Blackwell, PCIe 5.0 x16: busbw "
                                    "37.6-41.7 GB/s, 41.1 GB/s behind PCIe switches (voipmonitor/rtx6kpro "
                                    "hardware/pcie-bandwidth.md @070506ff); 41.1 / 63.0 GB/s per direction")

#: The same without peer-to-peer (NCCL's SHM transport through host memory), by GPU count.
#: 8 x RTX 5090 (PCIe 5.0 x16) on 2 x Xeon 8480+, all_reduce_perf 1-8 GB with NCCL_MIN_NCHANNELS=8:
#: busbw 28 GB/s on 8 GPUs, 35 GB/s on 4 (NVIDIA/nccl issue #1639; NCCL's maintainer there: "On PCI
#: systems, the performance you get is usually determined by the bandwidth your CPU and memory can
#: deliver"). 35 / 63.0 = 0.556 for up to 4 GPUs (2 GPUs: the 4-GPU share, a lower bound: no 2-GPU
#: measurement found), 28 / 63.0 = 0.444 above.
PCIE_SHM_BUSBW_SHARE = {
    4: Figure(0.556, "nccl-tests all_reduce_perf on 4 x RTX 5090 (PCIe 5.0, P2P off: host memory): busbw 35 GB/s "
                     "(NVIDIA/nccl issue #1639); 35 / 63.0 GB/s per direction"),
    8: Figure(0.444, "nccl-tests all_reduce_perf on 8 x RTX 5090 (PCIe 5.0, P2P off: host memory): busbw 28 GB/s "
                     "(NVIDIA/nccl issue #1639); 28 / 63.0 GB/s per direction"),
}

#: Latency of one small NCCL all-reduce among 3-8 PCIe GPUs with peer-to-peer: 24.1-24.6 us for
#: 256 B-8 KB on 8 x RTX PRO 6000 Blackwell behind PCIe switches (voipmonitor/rtx6kpro
#: hardware/pcie-bandwidth.md @070506ff, "Custom Allreduce vs NCCL (Small Messages)"); 2 GPUs:
#: :data:`planner.speed.constants.PCIE_ALLREDUCE_LATENCY_S` [2]. Without peer-to-peer, 3-8 GPUs:
#: ``PCIE_ALLREDUCE_LATENCY_S[8]`` (8 x RTX 4090, 40-42 us).
PCIE_P2P_NCCL_LATENCY_S = Figure(24e-6, "NCCL all-reduce of 256 B-8 KB on 8 x RTX PRO 6000 Blackwell over PCIe "
                                        "(P2P): 24.1-24.6 us (voipmonitor/rtx6kpro hardware/pcie-bandwidth.md @070506ff)")

#: vLLM's custom all-reduce ``max_size`` default, bytes (custom_all_reduce.py ``max_size=8192 * 1024``;
#: ``should_custom_ar``: ``inp_size < self.max_size``).
VLLM_CUSTOM_AR_MAX_BYTES = 8192 * 1024

#: Latency of one small all-reduce by a custom P2P kernel over PCIe (IPC buffers, one kernel, no
#: NCCL protocol): 7.5 us for 256 B-1 KB, 9.2 us for 8 KB, on RTX PRO 6000 Blackwell cards behind a
#: PCIe switch (voipmonitor/rtx6kpro hardware/pcie-bandwidth.md @070506ff, "Custom Allreduce vs
#: NCCL": a custom kernel of the same one-shot design as vLLM's, measured against NCCL's 24 us).
#: No measurement of vLLM's own kernel on 2 PCIe GPUs was found: 7.5 us taken, marked assumed.
PCIE_CUSTOM_AR_LATENCY_S = Figure(7.5e-6, "custom one-shot P2P all-reduce over PCIe: 7.5 us at 256 B-1 KB (voipmonitor/"
                                          "rtx6kpro hardware/pcie-bandwidth.md @070506ff); vLLM's own kernel on 2 PCIe "
                                          "GPUs not measured", assumed=True)


@dataclass(frozen=True)
class TpLink:
    """The link a tensor-parallel group's all-reduces cross (module docstring).

    Attributes:
        path: 'NVLink', 'inter-node link', 'PCIe P2P' or 'PCIe via host memory'.
        busbw: NCCL bus bandwidth, bytes/s.
        latency_s: one small NCCL all-reduce, seconds.
        custom_latency_s: vLLM's custom all-reduce latency where vLLM takes it for messages under
            :data:`VLLM_CUSTOM_AR_MAX_BYTES` (2 PCIe GPUs with P2P), else None (NVLink: the
            NVLink latency already covers it).
        text: how busbw was computed, for the console.
        source: the measurements behind it.
        assumed: True when a figure NCCL's path rests on is assumed (the custom all-reduce's
            latency is :data:`PCIE_CUSTOM_AR_LATENCY_S`, assumed: :meth:`assumed_for`).
    """

    path: str
    busbw: float
    latency_s: float
    custom_latency_s: float | None
    text: str
    source: str
    assumed: bool = False

    def custom(self, message_bytes: float) -> bool:
        """True when vLLM's custom all-reduce takes a message of ``message_bytes``."""
        return self.custom_latency_s is not None and message_bytes < VLLM_CUSTOM_AR_MAX_BYTES

    def assumed_for(self, message_bytes: float) -> bool:
        """Whether the time of an all-reduce of ``message_bytes`` rests on an assumed figure."""
        return self.assumed or (self.custom(message_bytes) and PCIE_CUSTOM_AR_LATENCY_S.assumed)

    def allreduce_s(self, message_bytes: float, gpus: int) -> float:
        """Seconds of one all-reduce of ``message_bytes`` among ``gpus`` GPUs: latency + 2 (n - 1) / n x
        M / busbw (NCCL ring, nccl-tests PERFORMANCE.md), at vLLM's custom-kernel latency when it runs."""
        n = max(int(gpus), 1)
        if n < 2:
            return 0.0
        lat = self.custom_latency_s if self.custom(message_bytes) else self.latency_s
        return lat + 2.0 * (n - 1) / n * message_bytes / self.busbw


def pcie_p2p(gpu) -> bool:
    """True when ``gpu`` can reach a peer over PCIe directly: every card but NVIDIA's GeForce
    (catalog segment ``consumer``), whose driver reports no peer access over PCIe (tinygrad/
    open-gpu-kernel-modules README: a patched kernel module is needed to enable P2P on the RTX 4090;
    NVIDIA/nccl issue #1639: 8 x RTX 5090 run NCCL over host memory)."""
    return str(getattr(gpu, "segment", "") or "").lower() != "consumer"


def pcie_link_bytes_per_s(gpu, per_lane: float = 0.0, lanes: int | None = None) -> tuple[float, str]:
    """One direction of ``gpu``'s PCIe link, bytes/s, and how it was found: ``per_lane`` x ``lanes``
    when the caller gives the host link's per-lane rate (the slower of card and host), else the card's
    generation (:data:`PCIE_PER_LANE_BYTES_PER_S`) x its lanes."""
    n = int(lanes or getattr(gpu, "pcie_lanes", 16) or 16)
    if per_lane and per_lane > 0:
        return float(per_lane) * n, f"{per_lane / 1e9:.3f} GB/s x {n} lanes"
    gen = int(getattr(gpu, "pcie_gen", 4) or 4)
    rate = PCIE_PER_LANE_BYTES_PER_S.get(gen, PCIE_PER_LANE_BYTES_PER_S[4])
    return rate * n, f"PCIe {gen}.0 x{n} {rate / 1e9:.3f} GB/s per lane"


def tp_link(gpu, gpus: int, engine: str = "vllm", *, per_lane: float = 0.0, lanes: int | None = None,
            spans_machines: bool = False) -> TpLink:
    """The link the all-reduces of a tensor-parallel group of ``gpus`` ``gpu`` cards cross (module
    docstring). ``spans_machines``: the group is wider than one machine, its link at most
    :data:`planner.speed.constants.DEFAULT_NODE_LINK_BYTES_PER_S` (assumed)."""
    nv = float(getattr(gpu, "quoted_link_bytes_per_s", 0) or 0)
    n = max(int(gpus), 1)
    if nv > 0:
        bw = nv / 2 * COLLECTIVE_EFFICIENCY.value
        text = f"NVLink {nv / 2e9:,.0f} GB/s per direction x {COLLECTIVE_EFFICIENCY.value:g}"
        link = TpLink("NVLink", bw, ALLREDUCE_LATENCY_S.value, None, text,
                      f"{COLLECTIVE_EFFICIENCY.source}; {ALLREDUCE_LATENCY_S.source}")
    else:
        raw, how = pcie_link_bytes_per_s(gpu, per_lane, lanes)
        if pcie_p2p(gpu):
            share = PCIE_P2P_BUSBW_SHARE
            lat = PCIE_ALLREDUCE_LATENCY_S[2] if n <= 2 else PCIE_P2P_NCCL_LATENCY_S
            custom = PCIE_CUSTOM_AR_LATENCY_S if (engine == "vllm" and n == 2) else None
            path = "PCIe P2P"
        else:
            share = PCIE_SHM_BUSBW_SHARE[4 if n <= 4 else 8]
            lat = PCIE_ALLREDUCE_LATENCY_S[2 if n <= 2 else 8]
            custom = None
            path = "PCIe via host memory"
        text = f"{path}: {how} = {raw / 1e9:,.1f} GB/s x busbw share {share.value:g}"
        link = TpLink(path, raw * share.value, lat.value, custom.value if custom else None, text,
                      f"{share.source}; {lat.source}" + (f"; {custom.source}" if custom else ""),
                      assumed=share.assumed or lat.assumed)
    if spans_machines:
        node = DEFAULT_NODE_LINK_BYTES_PER_S.value * COLLECTIVE_EFFICIENCY.value
        if node < link.busbw:
            link = TpLink("inter-node link", node, link.latency_s, None,
                          f"inter-node {DEFAULT_NODE_LINK_BYTES_PER_S.value / 1e9:g} GB/s x {COLLECTIVE_EFFICIENCY.value:g}",
                          DEFAULT_NODE_LINK_BYTES_PER_S.source, assumed=True)
    return link


#: A PCIe card of unknown segment and link for callers that give only NVLink figures (the solver's
#: per-row decode rate): PCIe 4.0 x16 through host memory, the slowest common case, so a row is
#: never timed faster than its card would be.
class _GenericPcieCard:
    segment = "consumer"
    pcie_gen = 4
    pcie_lanes = 16
    quoted_link_bytes_per_s = 0.0


GENERIC_PCIE_CARD = _GenericPcieCard()

__all__ = ["GENERIC_PCIE_CARD", "PCIE_CUSTOM_AR_LATENCY_S", "PCIE_P2P_BUSBW_SHARE", "PCIE_P2P_NCCL_LATENCY_S",
           "PCIE_PER_LANE_BYTES_PER_S", "PCIE_SHM_BUSBW_SHARE", "TpLink", "VLLM_CUSTOM_AR_MAX_BYTES",
           "pcie_link_bytes_per_s", "pcie_p2p", "tp_link"]
