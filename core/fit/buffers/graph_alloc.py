"""How big ggml's graph allocator makes a compute buffer: its algorithm, replayed over a node list.

Pure and exact for the node list it is given (ggml/src/ggml-alloc.c of `core.llama_cpp.LLAMA_CPP_SOURCE`):

Rule 1: graph inputs are placed first, in order, so nothing overwrites them.
Rule 2: nodes are placed in order; a view takes no memory of its own. A node whose op may
        work in place takes over a parent's memory when that parent has the same size, is not
        an output, has no other consumer left and no views (`ggml_gallocr_allocate_node`).
Rule 3: otherwise the best-fitting free block (the smallest that fits, the last such on
        ties) is used, else the free space at the end, which grows the buffer
        (`ggml_dyn_tallocr_alloc`); sizes are rounded up to the 32-byte alignment.
Rule 4: after a node runs, each parent with no consumer and no view left is freed and merged
        with its free neighbours (a view's source when its last view goes); outputs never are.
Rule 5: the buffer's size is the highest address ever used (`affine.highest`: with sizes that move with the
        cache's cells, the highest of each line, compared after the replay).
Rule 6: one allocator serves every backend of a split graph (`ggml_gallocr` with one buffer
        per backend): each node is placed in its backend's buffer, with that buffer's
        alignment; a node takes over a parent's memory only in the same buffer; a dependency
        node (`GGML_OP_NONE`, the scheduler's `input_dep`) reads its sources and takes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gguf_budget.core.fit.buffers.affine import highest

ALIGNMENT = 32
END = 1 << 62


@dataclass(frozen=True, kw_only=True)
class Node:
    """One tensor of the graph: `nbytes` of memory, the names it reads, how it may be placed."""

    name: str
    nbytes: int
    srcs: tuple[str, ...] = ()
    inplace: bool = False
    view_of: str | None = None
    is_input: bool = False
    is_output: bool = False
    buffer: int = 0
    dep: bool = False
    weight: str | None = None
    """The model tensor the op reads (its device places the op: `sched` Rule 2); `weight_bytes` its size."""
    weight_bytes: int = 0
    op: str = ""
    rows: int = 0
    """What a backend's `offload_op` measures: the batch the op works on (`sched` Rule 3)."""
    cache: int | None = None
    """A view of layer `cache`'s KV cache (it lives where the cache does)."""
    on_cpu: bool = False
    """llama.cpp pins the op to the CPU (`-nkvo`: the attention output)."""
    layer: int | None = None
    """The block the op belongs to (None: the input or output layer)."""

    def allocated(self, buffer: int, srcs: tuple[str, ...] | None = None, name: str | None = None,
                  is_output: bool | None = None) -> Node:
        """The node as the allocator reads it (Rule 6), on backend `buffer`: the scheduler's graph copy of it, made
        directly (`dataclasses.replace` walked every field of every node of every replay: a third of its time)."""
        return Node(name=self.name if name is None else name, nbytes=self.nbytes,
                    srcs=self.srcs if srcs is None else srcs, inplace=self.inplace, view_of=self.view_of,
                    is_input=self.is_input, is_output=self.is_output if is_output is None else is_output,
                    buffer=buffer, dep=self.dep)


def _aligned(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


class _FreeList:
    """ggml's `ggml_dyn_tallocr`: free blocks sorted by offset, the last one open-ended (Rules 3–5)."""

    def __init__(self, alignment: int = ALIGNMENT) -> None:
        self.blocks: list[list[int]] = [[0, END]]
        self.high = 0
        self.alignment = alignment

    def take(self, size: int) -> int:
        size = _aligned(size, self.alignment)
        best, best_size = len(self.blocks) - 1, END
        for i, (_, free) in enumerate(self.blocks[:-1]):
            if size <= free <= best_size:
                best, best_size = i, free
        offset = self.blocks[best][0]
        self.blocks[best][0] += size
        self.blocks[best][1] -= size
        if self.blocks[best][1] == 0:
            del self.blocks[best]
        self.high = highest(self.high, offset + size)
        return offset

    def give(self, offset: int, size: int) -> None:
        size = _aligned(size, self.alignment)
        for i, (start, free) in enumerate(self.blocks):
            if start + free == offset:
                self.blocks[i][1] += size
                self._merge(i)
                return
            if offset + size == start:
                self.blocks[i] = [offset, free + size]
                if i > 0:
                    self._merge(i - 1)
                return
        self.blocks.append([offset, size])
        self.blocks.sort()

    def _merge(self, i: int) -> None:
        if i + 1 < len(self.blocks) and self.blocks[i][0] + self.blocks[i][1] == self.blocks[i + 1][0]:
            self.blocks[i][1] += self.blocks[i + 1][1]
            del self.blocks[i + 1]


def buffer_size(nodes: tuple[Node, ...] | list[Node]) -> int:
    """The compute buffer ggml-alloc reserves for `nodes` (Rules 1–5), in bytes."""
    return buffer_sizes(nodes, (ALIGNMENT,))[0]


def buffer_sizes(nodes: tuple[Node, ...] | list[Node], alignments: tuple[int, ...],
                 resized: Mapping[str, int] | None = None) -> tuple[int, ...]:
    """The compute buffer of each backend (Rules 1–6): `alignments[b]` is buffer b's, in bytes. `resized`: the sizes
    of some nodes, by name, in place of their own (`placed_graph` Rule 7: a kept graph at other cells)."""
    by_name = {n.name: n for n in nodes}
    size = {n.name: n.nbytes for n in nodes}
    if resized:
        size.update(resized)
    consumers = dict.fromkeys(by_name, 0)
    views = dict.fromkeys(by_name, 0)
    for n in nodes:
        if n.view_of in views:
            views[n.view_of] += 1
        for s in n.srcs:
            if s in consumers:
                consumers[s] += 1
    placed: dict[str, int] = {}
    frees = [_FreeList(a) for a in alignments]

    def place(n: Node) -> None:
        if n.view_of is not None or n.dep or n.name in placed:
            return
        if n.inplace:
            for p in n.srcs:
                parent = by_name.get(p)
                if (parent is not None and p in placed and not parent.is_output and parent.view_of is None
                        and parent.buffer == n.buffer and size[p] == size[n.name] and consumers[p] == 1
                        and views[p] == 0):
                    placed[n.name] = placed.pop(p)
                    return
        placed[n.name] = frees[n.buffer].take(size[n.name])

    def release(name: str) -> None:
        node = by_name[name]
        if name in placed and not node.is_output:
            frees[node.buffer].give(placed.pop(name), size[name])

    for n in nodes:
        if n.is_input:
            place(n)
    for n in nodes:
        place(n)
        for p in n.srcs:
            if p not in consumers:
                continue
            consumers[p] -= 1
            if consumers[p] or views[p]:
                continue
            source = by_name[p].view_of
            if source is None:
                release(p)
            elif source in views:
                views[source] -= 1
                if views[source] == 0 and consumers[source] == 0:
                    release(source)
    return tuple(f.high for f in frees)
