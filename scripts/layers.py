#!/usr/bin/env python3
"""The layers of src/ from its #include lines (issue 29: no cycle, at most 10 layers).

Each folder under src/ is one concept (one library). Folder A depends on folder B when a file of A
includes "B/...". A folder's layer is 0 if it includes no other folder, else one more than the
highest layer it includes. Prints every layer with its folders, then any cycles (strongly connected
folders) with the include lines that close them.

  python3 scripts/layers.py [--max-layers 10]      exit 1 on a cycle or too many layers
  python3 scripts/layers.py --self-test            the check fails on a tree with a cycle and on
                                                   one with too many layers (its negative control)
  python3 scripts/layers.py --svg docs/layers.svg  also draws the layers and the include edges
  python3 scripts/layers.py --check-svg docs/layers.svg   and fails when that drawing is stale
"""
import argparse
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parents[1] / "src"
include = re.compile(r'^\s*#\s*include\s+"([^"/]+)/[^"]+"', re.M)


def graph(src):
    folders = sorted(p.name for p in src.iterdir() if p.is_dir())
    edges = {f: {} for f in folders}  # folder -> {included folder: first file that includes it}
    for f in folders:
        for file in sorted((src / f).rglob("*")):
            if file.suffix not in (".hpp", ".cpp", ".h", ".c", ".cl"):
                continue
            for target in include.findall(file.read_text(errors="replace")):
                if target != f and target in edges:
                    edges[f].setdefault(target, str(file.relative_to(src.parent)))
    return folders, edges


def strongly_connected(folders, edges):
    """Tarjan's algorithm: the components with more than one folder are the cycles."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in folders:
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def layers(folders, edges, cycles):
    """Layers of the condensed graph (a cycle's folders share one layer)."""
    component = {f: i for i, c in enumerate(cycles) for f in c}
    key = lambda f: ("cycle", component[f]) if f in component else f
    members = {}
    for f in folders:
        members.setdefault(key(f), []).append(f)
    below = {k: {key(w) for f in fs for w in edges[f]} - {k} for k, fs in members.items()}
    depth = {}

    def visit(k):
        if k not in depth:
            depth[k] = 1 + max((visit(w) for w in below[k]), default=-1)
        return depth[k]

    return {f: visit(key(f)) for f in folders}


def svg(folders, edges, layer):
    """The layers as rows of boxes (layer 0 at the bottom), centred; a line from a folder's box down
    to each folder it includes, except where it also reaches that folder through another one it
    includes (the transitive reduction: the same order, fewer lines). Regenerated, never edited."""
    def reach(f, seen):
        for g in edges[f]:
            if g not in seen:
                seen.add(g)
                reach(g, seen)
        return seen
    direct = {f: {g for g in edges[f] if not any(g in reach(h, set()) for h in edges[f] if h != g)} for f in folders}
    rows = {}
    for f in folders:
        rows.setdefault(layer[f], []).append(f)
    box_w, box_h, gap_x, gap_y, margin = 110, 30, 24, 56, 20
    width = margin * 2 + 90 + max(len(r) for r in rows.values()) * (box_w + gap_x)
    height = margin * 2 + len(rows) * (box_h + gap_y)
    where = {}
    for n, fs in rows.items():
        y = height - margin - box_h - n * (box_h + gap_y)
        left = margin + 90 + (width - margin * 2 - 90 - len(fs) * (box_w + gap_x)) / 2
        for i, f in enumerate(fs):
            where[f] = (left + i * (box_w + gap_x), y)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="13">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    for a in folders:
        for b in sorted(direct[a]):
            (xa, ya), (xb, yb) = where[a], where[b]
            out.append(f'<line x1="{xa + box_w / 2}" y1="{ya + box_h}" x2="{xb + box_w / 2}" y2="{yb}" stroke="#9ab" '
                       'stroke-width="1"/>')
    for n in rows:
        y = height - margin - box_h - n * (box_h + gap_y)
        out.append(f'<text x="{margin}" y="{y + 20}" fill="#555">layer {n}</text>')
    for f, (x, y) in where.items():
        out.append(f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="5" fill="#eef4fb" stroke="#357"/>')
        out.append(f'<text x="{x + box_w / 2}" y="{y + 20}" text-anchor="middle">{f}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def self_test():
    """Synthetic trees: a chain a0 <- a1 <- ... (layers), and the same with a back edge (a cycle)."""
    import subprocess
    import tempfile

    def tree(depth, back_edge):
        d = pathlib.Path(tempfile.mkdtemp(prefix="dgrte_layers_"))
        for i in range(depth):
            (d / f"a{i}").mkdir()
            text = f'#include "a{i - 1}/x.hpp"\n' if i else ""
            if back_edge and i == 0:
                text += f'#include "a{depth - 1}/x.hpp"\n'
            (d / f"a{i}" / "x.hpp").write_text(text)
        return d

    def status(d, layers):
        return subprocess.run([sys.executable, __file__, "--src", str(d), "--max-layers", str(layers)],
                              stdout=subprocess.DEVNULL).returncode
    cases = [("a chain of 10 folders passes with at most 10 layers", status(tree(10, False), 10) == 0),
             ("a chain of 11 folders fails with at most 10 layers", status(tree(11, False), 10) == 1),
             ("a cycle fails", status(tree(3, True), 10) == 1)]
    for what, ok in cases:
        print(("ok      " if ok else "FAILED  ") + what)
    return 0 if all(ok for _, ok in cases) else 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-layers", type=int, default=10)
    parser.add_argument("--src", default=str(root))
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("--svg", help="also write the layers as an SVG drawing to this file")
    parser.add_argument("--check-svg", help="fail if this drawing is not what --svg writes now (a stale picture)")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    folders, edges = graph(pathlib.Path(args.src))
    cycles = strongly_connected(folders, edges)
    layer = layers(folders, edges, cycles)
    count = max(layer.values()) + 1
    for n in range(count):
        print(f"layer {n}: " + ", ".join(f for f in folders if layer[f] == n))
    for c in cycles:
        print("cycle: " + " <-> ".join(c))
        for a in c:
            for b in c:
                if b in edges[a]:
                    print(f"  {a} -> {b}: {edges[a][b]}")
    print(f"{count} layers (at most {args.max_layers}), {len(cycles)} cycles")
    drawing = svg(folders, edges, layer)
    if args.svg:
        pathlib.Path(args.svg).write_text(drawing)
    if args.check_svg and pathlib.Path(args.check_svg).read_text() != drawing:
        print(f"{args.check_svg} is stale: regenerate it with python3 scripts/layers.py --svg {args.check_svg}")
        return 1
    return 0 if not cycles and count <= args.max_layers else 1


if __name__ == "__main__":
    sys.exit(main())
