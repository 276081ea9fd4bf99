#!/usr/bin/env python3
"""How evenly flash3_wgmma's causal persistent grid spreads its work tiles over 132 blocks, modelled: a work tile costs
its K/V tiles plus `overhead` (its prologue and epilogue, in K/V-tile units). "static" is the kernel's schedule
(longest first in L2 sections of heads, passes snaking; flash3_kernel.cuh's DecodeWorkTile and BlockWork), "greedy"
hands the same order out one tile at a time to the block that is free first (a counter), "equal sections" splits the
heads into sections of equal size instead of full ones and a short last one. Prints the longest block's load over the
mean. The L2 size is the H200's 60 MB (hopper_host::SectionHeads takes half of it)."""
import heapq


def tiles(n, br, bc, heads, d, blocks=132, l2=60 * 1024 * 1024, equal_sections=False):
    q_tiles = (n + br - 1) // br
    section = heads if heads <= blocks else max(1, min(heads, (l2 // 2) // (2 * n * d * 2)))
    if equal_sections and heads > blocks:
        count = (heads + section - 1) // section
        sizes = [heads // count + (1 if i < heads % count else 0) for i in range(count)]
    else:
        sizes = [min(section, heads - first) for first in range(0, heads, section)]
    out = []
    for size in sizes:
        for rank in range(q_tiles):
            last_key = min(n, (q_tiles - 1 - rank) * br + br) - 1
            out += [last_key // bc + 1] * size
    return out


def static(t, blocks=132, overhead=1.0):
    load = [0.0] * blocks
    for local in range((len(t) + blocks - 1) // blocks):
        for b in range(blocks):
            w = local * blocks + (blocks - 1 - b if local & 1 else b)
            if w < len(t):
                load[b] += t[w] + overhead
    return max(load) / (sum(load) / blocks)


def greedy(t, blocks=132, overhead=1.0):
    heap = [(0.0, b) for b in range(blocks)]
    for x in t:
        free, b = heapq.heappop(heap)
        heapq.heappush(heap, (free + x + overhead, b))
    return max(f for f, _ in heap) / ((sum(t) + overhead * len(t)) / blocks)


# The table's causal shapes on the persistent grid: (N, B_r, B·H, d).
for n, br, heads, d in [(1024, 128, 1024, 64), (4096, 192, 256, 64), (16384, 192, 16, 64), (1024, 128, 1024, 128)]:
    t, e = tiles(n, br, 128, heads, d), tiles(n, br, 128, heads, d, equal_sections=True)
    print(f"d = {d:3} N = {n:5} B_r = {br}: static {static(t):.4f}, greedy {greedy(t):.4f}, "
          f"greedy with equal sections {greedy(e):.4f}")
