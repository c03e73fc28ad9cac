"""Which device runs which op, and the compute buffer each device reserves: llama.cpp's backend scheduler, replayed.

Pure. Source: `core.llama_cpp.LLAMA_CPP_SOURCE`, ggml/src/ggml-backend.cpp `ggml_backend_sched_split_graph`
(passes 1–5 below) over the graph `compute_graph` builds, then one allocator for every backend
(`graph_alloc` Rule 6, `ggml_gallocr_alloc_graph_impl`). Backends are the GPUs in order, the CPU last
(src/llama-context.cpp `llama_context::llama_context`: model devices, then the CPU backend).

Rule 1: graph inputs (tokens, positions, masks, cache row indices, output ids) live on the CPU
        (`ggml_backend_sched_backend_id_from_cur`: `1.inp`, the last backend).
Rule 2: an op that reads a weight runs where the weight is (`1.wgt`), except RoPE and flash
        attention, whose small weights do not choose; a write into or view of a layer's KV cache
        runs where that cache is (`1.vsrc`); `-nkvo` without flash attention pins each attention's
        output to the CPU (src/llama-graph.cpp `build_attn_mha`: `ggml_backend_sched_set_tensor_backend`);
        with it the fused attention stays on the GPU, which reads a copy of the layer's cache.
Rule 3: op offload (`1.off`): an op whose weight is in host memory runs on the first GPU whose
        `offload_op` accepts it — CUDA/ROCm/SYCL/Vulkan: a batch of at least 32 rows, never
        `GET_ROWS` (ggml-cuda.cu `ggml_backend_cuda_device_offload_op`); RPC has no `offload_op`
        (ggml-rpc.cpp) — unless `--no-op-offload`. So a GPU holding no layer still computes a
        prompt's large batches, with a copy of each weight it borrows in its compute buffer. A
        repacked weight is never borrowed: only ops whose weight is in a host buffer are offloaded
        (`ggml_backend_sched_backend_id_from_cur`: `ggml_backend_buffer_is_host`), and CPU_REPACK's
        buffer type is not one (ggml-cpu/repack.cpp: `is_host` unset), so its op stays on the CPU.
Rule 4: with every layer offloaded, or a batch under 32 tokens, each block's norms run on that
        block's device (llama-context.cpp `graph_get_cb`: a `norm` tensor is pinned to
        `dev_layer(il)`, so a device boundary copies the residual once, not the norm beside it).
        Every other op takes a neighbour's device: GPUs expand down then up over ops not yet
        placed, ignoring the CPU; then any device down, then up (pass 2). Views follow their
        source (pass 4).
Rule 5: the graph is cut where the device changes (pass 5), and where an op reads a weight
        from a device it cannot read (each borrowed weight its own split). A tensor a split
        reads from another device is copied into that device's compute buffer once per graph
        (`tensor_id_copy`): at its first split, after a dependency that keeps the source alive
        until the copy is made; freed after its last reader. Copies of graph inputs come before
        copies of computed tensors (the order the recorded runs' buffer sizes show: the other
        order leaves a hole of one residual row block, tests/test_rpc_runs.py).
Rule 6: pipeline parallelism (llama-context.cpp: more than one device, every layer offloaded
        (`n_gpu_layers > n_layer`), `-sm layer`, KV offloaded, no `-ot`, every GPU async with
        events — CUDA, RPC) keeps 4 copies (`GGML_SCHED_MAX_COPIES`) of every graph input and of
        every copied tensor, allocated first and never freed (pass 6).
Rule 7: each device's compute buffer is the high-water mark of its own allocator, with its
        backend's alignment; llama.cpp prints a device's only when it is over 1 byte
        (`sched_reserve`).
Rule 8: a backend whose `supports_op` refuses an op by its size (Vulkan: a tensor past the device's
        `maxStorageBufferRange`, ggml-vulkan.cpp `ggml_backend_vk_device_supports_op`) is neither
        offered it (pass 1) nor given it by a neighbour (pass 2: `ggml_backend_sched_set_if_supported`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from gguf_budget.core.fit.buffers.graph_alloc import Node, buffer_sizes

SCHED_MAX_COPIES = 4
NO_OFFLOAD_OPS = frozenset({"get_rows"})
NO_WEIGHT_CHOICE = frozenset({"rope", "flash_attn"})


@dataclass(frozen=True, kw_only=True)
class Scheduler:
    """The backends the scheduler sees (GPUs in order, the CPU last) and how it places ops on them.

    `offload[b]`: the smallest batch GPU b's `offload_op` accepts, None for none (RPC, the CPU, `--no-op-offload`).
    `slot_device[i]`: the backend of layer slot i's weights (slot L: the output layer); `kv_device[il]` that of
    layer il's KV cache; `overrides`: (`-ot` pattern, backend), the first match wins; `kv_on_cpu`: `-nkvo`."""

    alignments: tuple[int, ...]
    offload: tuple[int | None, ...]
    slot_device: tuple[int, ...]
    kv_device: tuple[int, ...]
    overrides: tuple[tuple[str, int], ...] = ()
    copies: int = 1
    kv_on_cpu: bool = False
    matmul_only: tuple[bool, ...] = ()
    """Per GPU: its `offload_op` takes matrix products only (Metal)."""
    max_tensor: tuple[int | None, ...] = ()
    """Per GPU: the largest tensor its backend's `supports_op` takes (None: no limit); a larger op runs elsewhere."""
    pin_norms: bool = False
    """Rule 4's pinned norms: every layer offloaded (`n_gpu_layers > n_layer`); the reserved batch has ≥ 32 tokens."""
    repacked: frozenset[str] = frozenset()
    """The host weights held in CPU_REPACK, whose ops Rule 3 never offloads."""

    @property
    def cpu(self) -> int:
        return len(self.alignments) - 1

    def weight_device(self, name: str) -> int:
        """Where a weight lives: the first `-ot` pattern it matches (llama-model.cpp: `std::regex_search`), else its
        slot's device; the token embeddings (input layer) and tensors of no slot on the CPU."""
        return self.slot_weight_device(name, weight_slot(name, len(self.slot_device)))

    def slot_weight_device(self, name: str, slot: int | None) -> int:
        """`weight_device` of a weight whose `weight_slot` the caller keeps (a model's every tensor, walked per tick)."""
        dev = _overridden(self.overrides, name) if self.overrides else None
        if dev is not None:
            return dev
        return self.cpu if slot is None else self.slot_device[slot]

    def takes(self, b: int, n: Node) -> bool:
        """Whether backend b's `supports_op` takes op n by its size (ggml-vulkan.cpp `ggml_backend_vk_device_supports_op`:
        no tensor past `maxStorageBufferRange`)."""
        limit = self.max_tensor[b] if b < len(self.max_tensor) else None
        return limit is None or max(n.nbytes, n.weight_bytes) <= limit

    def block_key(self, il: int, names: tuple[str, ...]) -> tuple[int, ...]:
        """What tells block il's placement apart (`compute_graph` Rule 5): its tensors' devices (`names`: block il's,
        so their slot is il) and its cache's."""
        return (self.kv_device[il], *(self.slot_weight_device(n, il) for n in names))


@lru_cache(maxsize=1 << 16)
def _overridden(overrides: tuple[tuple[str, int], ...], name: str) -> int | None:
    """The device of the first `-ot` pattern that finds `name`, None for none: asked of every weight of every replayed
    graph, and the same for every placement under one set of overrides."""
    return next((dev for pattern, dev in overrides if re.search(pattern, name)), None)


@lru_cache(maxsize=1 << 16)
def weight_slot(name: str, n_slots: int) -> int | None:
    """The layer slot a weight is placed with, by its name: the output layer's tensors the last of `n_slots`, block
    il's il; None for the token embeddings (input layer), tensors of no slot and a block the header does not count
    (the host's). Kept: asked of every weight of every replayed graph, and the same for every placement."""
    if name.startswith("output"):
        return n_slots - 1
    if name.startswith("blk."):
        il = name.split(".", 2)[1]
        if il.isdigit() and int(il) < n_slots - 1:
            return int(il)
    return None


def _pass1(n: Node, s: Scheduler) -> int | None:
    """Rules 1–3 for one op."""
    if n.is_input or n.on_cpu:
        return s.cpu
    if s.pin_norms and n.op == "norm" and n.layer is not None:
        return s.slot_device[n.layer]
    if n.cache is not None:
        return s.kv_device[n.cache]
    if n.weight is None or n.op in NO_WEIGHT_CHOICE:
        return None
    dev = s.weight_device(n.weight)
    if dev == s.cpu and n.op not in NO_OFFLOAD_OPS and n.weight not in s.repacked:
        for b in range(s.cpu):
            least = s.offload[b]
            only_matmul = b < len(s.matmul_only) and s.matmul_only[b]
            if (least is not None and n.rows >= least and (not only_matmul or n.op.startswith("mul_mat"))
                    and s.takes(b, n)):
                return b
    return dev


def _expand(order: list[Node], where: dict[str, int], skip_cpu: int | None, s: Scheduler) -> None:
    cur: int | None = None
    for n in order:
        dev = where.get(n.name)
        if dev is not None:
            cur = None if dev == skip_cpu else dev
        elif cur is not None and s.takes(cur, n):
            where[n.name] = cur


def _is_view(n: Node) -> bool:
    return n.view_of is not None and n.op != "set_rows"


def assign(nodes: list[Node], s: Scheduler) -> dict[str, int]:
    """Each node's backend (passes 1–4)."""
    where: dict[str, int] = {}
    for n in nodes:
        dev = _pass1(n, s)
        if dev is not None:
            where[n.name] = dev
    ops = [n for n in nodes if not n.is_input and not _is_view(n)]
    _expand(ops, where, s.cpu, s)
    _expand(ops[::-1], where, s.cpu, s)
    _expand(ops, where, None, s)
    _expand(ops[::-1], where, None, s)
    for n in nodes:
        if n.name not in where:
            where[n.name] = where.get(n.view_of or "", s.cpu) if n.view_of else s.cpu
    return where


@dataclass
class _Copying:
    """Pass 5's state: the copies made so far, keyed by (source, backend)."""

    sizes: dict[str, int]
    where: dict[str, int]
    copies: dict[tuple[str, int], str]
    count: int = 0

    def copy_of(self, src: str, dev: int, inputs: list[str]) -> str:
        key = (src, dev)
        if key not in self.copies:
            self.count += 1
            self.copies[key] = f"{dev}#{src}"
            inputs.append(src)
        return self.copies[key]


def split_graph(nodes: list[Node], s: Scheduler) -> list[Node]:
    """The scheduler's graph copy (Rules 5–6): nodes with their backend as `buffer`, copies and dependencies added."""
    where = assign(nodes, s)
    sizes = {n.name: n.nbytes for n in nodes}
    for n in nodes:
        if n.weight is not None:
            where.setdefault(f"w:{n.weight}", s.weight_device(n.weight))
            sizes[f"w:{n.weight}"] = n.weight_bytes
    state = _Copying(sizes, where, {})
    splits: list[tuple[int, list[str], list[Node]]] = []
    cur: int | None = None
    for n in nodes:
        if n.is_input:
            continue
        if _is_view(n):
            if not splits:
                splits.append((where[n.name], [], []))
            splits[-1][2].append(n.allocated(where[n.name]))
            continue
        dev = where[n.name]
        srcs = list(n.srcs) + ([f"w:{n.weight}"] if n.weight is not None else [])
        borrowed = n.weight is not None and where[f"w:{n.weight}"] != dev
        if dev != cur or (borrowed and splits and splits[-1][1]):
            splits.append((dev, [], []))
            cur = dev
        inputs = splits[-1][1]
        new_srcs = [state.copy_of(p, dev, inputs) if where.get(p, dev) != dev else p for p in srcs]
        splits[-1][2].append(n.allocated(dev, tuple(p for p in new_srcs if not p.startswith("w:"))))
    return _graph_copy(nodes, splits, state, s)


def _graph_copy(nodes: list[Node], splits: list[tuple[int, list[str], list[Node]]], state: _Copying,
                s: Scheduler) -> list[Node]:
    keep = s.copies > 1
    out: list[Node] = []
    for n in nodes:
        if n.is_input:
            out.append(n.allocated(s.cpu, is_output=n.is_output or keep))
            out += [n.allocated(s.cpu, name=f"{n.name}@{c}", is_output=True) for c in range(1, s.copies)]
    if keep:
        for dev, inputs, _ in splits:
            for src in inputs:
                name = state.copies[(src, dev)]
                out += [Node(name=name if c == 0 else f"{name}@{c}", nbytes=state.sizes[src], buffer=dev,
                             is_input=True, is_output=True) for c in range(s.copies)]
    graph_inputs = {n.name for n in nodes if n.is_input}
    for dev, inputs, body in splits:
        for src in sorted(inputs, key=lambda name: name not in graph_inputs):
            if not src.startswith("w:"):
                out.append(Node(name=f"dep{len(out)}", nbytes=0, srcs=(src,), buffer=state.where[src], dep=True))
            if not keep:
                out.append(Node(name=state.copies[(src, dev)], nbytes=state.sizes[src], buffer=dev))
        out += body
    return out


def compute_buffers(nodes: list[Node], s: Scheduler) -> tuple[int, ...]:
    """Rule 7: each backend's compute buffer (GPUs in order, the CPU last), in bytes."""
    return buffer_sizes(split_graph(nodes, s), s.alignments)
