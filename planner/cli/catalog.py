"""The ``planner catalog`` command: list catalog entries with units."""

from __future__ import annotations

import json
from typing import Any

import click

from planner.cli import options as opts
from planner.cli.common import handle_errors


CATALOG_KINDS = ("gpus", "platforms", "ram", "models", "network", "cloud")


class Kind(click.Choice):
    """A click.Choice whose refusal is one plain sentence with a did-you-mean ('gpu' -> 'gpus').

    Click's own message names the argument by its ``{a|b|...}`` metavar and lists every choice;
    with ``metavar`` set on the argument it reads "Invalid value for 'KIND': 'gpu' is not a
    catalog kind. Did you mean 'gpus'?".
    """

    def __init__(self, choices: tuple[str, ...], what: str) -> None:
        super().__init__(choices)
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in self.choices:
            return value
        from planner.core.errors import close_matches

        close = close_matches(str(value), [str(c) for c in self.choices])
        hint = ("Did you mean " + " or ".join(map(repr, close)) + "?") if close else \
            "Valid: " + ", ".join(map(str, self.choices)) + "."
        self.fail(f"{value!r} is not a {self.what}. {hint}", param, ctx)


def catalog_rows(catalog: Any, kind: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows for people with unit-bearing headers, records for --json with unit-suffixed keys)."""
    import dataclasses

    gib = 2**30
    human: list[dict[str, Any]] = []
    raw: list[dict[str, Any]] = []

    def plain(v: Any) -> Any:
        if dataclasses.is_dataclass(v):
            return {f.name: plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
        if hasattr(v, "items"):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v

    def rec(x: Any) -> dict[str, Any]:
        return {f.name: plain(getattr(x, f.name)) for f in dataclasses.fields(x) if f.name not in ("file", "where")}

    if kind == "gpus":
        for g in catalog.gpus:
            raw.append(rec(g))
            human.append({"id": g.id, "vendor": g.vendor, "arch": g.architecture,
                          "memory (GiB)": round(g.memory_bytes / gib, 2),
                          "usable (GiB)": round(g.memory_usable_bytes / gib, 2),
                          "CUDA total (GiB)": round(g.cuda_total_bytes / gib, 2),
                          "bandwidth (GB/s)": round(g.memory_bandwidth_bytes_per_s / 1e9),
                          "bf16 (TFLOPS)": g.bf16_tflops, "bf16": g.bf16, "fp8": g.fp8, "int8": g.int8, "form": g.form_factor,
                          "cooling": g.cooling or "", "slots": g.slot_width or 0, "TDP (W)": g.tdp_w,
                          "price (USD)": g.price_usd, "price kind": g.price_kind, "as of": g.as_of})
    elif kind == "platforms":
        for p in catalog.platforms:
            raw.append(rec(p))
            human.append({"id": p.id, "memory": p.memory_kind, "channels": p.memory_channels,
                          "DIMM slots": p.dimm_slots, "max memory (GiB)": round(p.max_memory_bytes / gib),
                          "GPU lanes": p.gpu_lanes,
                          "GPU slots": " or ".join(f"{s.count}x{s.width}-slot" for s in p.gpu_slots)
                          or f"{p.fixed_gpu_count} x {p.fixed_gpu}",
                          "max GPUs": p.max_gpus, "PSU (W)": p.psu_w, "platform (W)": p.platform_w,
                          "form factors": ",".join(p.form_factors),
                          "GPU cooling": ",".join(p.gpu_cooling or ()), "base price (USD)": p.base_price_usd,
                          "price kind": p.price_kind, "as of": p.as_of})
    elif kind == "ram":
        for d in catalog.dimms:
            raw.append(rec(d))
            human.append({"id": d.id, "kind": d.kind, "size (GiB)": round(d.size_bytes / gib, 2),
                          "speed (MT/s)": d.speed_mts, "price (USD)": d.price_usd,
                          "USD per GiB": round(d.price_usd / (d.size_bytes / gib), 2), "price kind": d.price_kind,
                          "as of": d.as_of})
    elif kind == "models":
        from planner.model.architecture import from_hf_config

        for m in catalog.models:
            arch = from_hf_config(m.config, m.where or None)
            r = rec(m)
            r["parameters"] = arch.parameters
            raw.append(r)
            human.append({"id": m.id, "hf_id": m.hf_id, "parameters (B)": round(arch.parameters / 1e9, 3),
                          "layers": arch.num_hidden_layers, "hidden": arch.hidden_size,
                          "heads": arch.num_attention_heads, "KV heads": arch.num_key_value_heads,
                          "vocab": arch.vocab_size, "max context (tokens)": arch.max_position_embeddings,
                          "as of": m.as_of})
    elif kind == "network":
        for n in catalog.nics:
            raw.append({"type": "nic", **rec(n)})
            human.append({"id": n.id, "type": "NIC", "kind": n.kind, "rate (Gb/s)": n.rate_bytes_per_s * 8 / 1e9,
                          "ports": 1, "price (USD)": n.price_usd, "cable (USD)": n.cable_price_usd,
                          "price kind": n.price_kind, "as of": n.as_of})
        for s in catalog.switches:
            raw.append({"type": "switch", **rec(s)})
            human.append({"id": s.id, "type": "switch", "kind": s.kind, "rate (Gb/s)": s.rate_bytes_per_s * 8 / 1e9,
                          "ports": s.ports, "price (USD)": s.price_usd, "cable (USD)": None,
                          "price kind": s.price_kind, "as of": s.as_of})
    else:
        for c in catalog.instances:
            raw.append(rec(c))
            human.append({"id": c.id, "provider": c.provider, "instance": c.instance, "GPU": c.gpu,
                          "GPUs": c.gpu_count,
                          # the provider's per-GPU figure where the catalog has one, else the GPU's own
                          "GPU memory, driver total (GiB)": round(
                              (c.gpu_memory_usable_bytes or catalog.gpu(c.gpu).memory_usable_bytes) / gib, 2),
                          "host memory (GiB)": round(c.memory_bytes / gib), "vCPUs": c.vcpus,
                          "price (USD/h)": c.usd_per_hour, "spot (USD/h)": c.spot_usd_per_hour,
                          # the zones' spot prices, lowest to highest, where cloud.yaml records them
                          "spot range (USD/h)": (f"{c.spot_usd_per_hour_range[0]:g}-{c.spot_usd_per_hour_range[1]:g}"
                                                 if c.spot_usd_per_hour_range else ""),
                          "region": c.region, "as of": c.as_of})
    return human, raw


@click.command(name="catalog")
@click.argument("kind", metavar="KIND", type=Kind(CATALOG_KINDS, "catalog kind"))
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON (sizes in bytes, money in USD).")
@handle_errors
def catalog_command(kind: str, catalog_dir: str | None, as_json: bool) -> None:
    """List catalog entries (gpus, platforms, ram, models, network, cloud) with units.

    Headers name their units ('memory (GiB)', 'price (USD)'); --json prints every field with
    unit-suffixed keys (bytes, bytes/s, USD, W) for scripts.

    \b
    Example:
      planner catalog gpus
      planner catalog platforms --catalog my-overlay/
      planner catalog ram --json
    """
    import pandas as pd

    catalog = opts.load_catalog_option(catalog_dir)
    human, raw = catalog_rows(catalog, kind)
    # values that load but look like typos, for the entries listed (Catalog.warnings)
    lists = {"gpus": ("gpus",), "platforms": ("platforms",), "ram": ("dimms",), "models": ("models",),
             "network": ("nics", "switches"), "cloud": ("instances",)}[kind]
    warnings = [w.text for w in catalog.warnings if w.kind in lists]
    if as_json:
        click.echo(json.dumps(raw, indent=2, default=str))
        for w in warnings:  # stdout stays the JSON document
            click.echo(f"Warning: {w}", err=True)
        return
    if not human:
        click.echo(f"The catalog has no {kind} entries.")
        return
    with pd.option_context("display.width", 250, "display.max_columns", 40, "display.max_rows", 1000):
        click.echo(pd.DataFrame(human).to_string(index=False, na_rep=""))
    for w in warnings:
        click.echo(f"Warning: {w}")
