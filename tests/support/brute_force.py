"""Exhaustive enumeration of every complete path of a small fusion DAG: the solvers' oracle."""

from msfcnn.fusion.dag import FusionDAG


def all_paths(dag: FusionDAG) -> list[tuple]:
    outgoing = {}
    for b in dag.blocks:
        outgoing.setdefault(b.src, []).append(b)
    paths = []

    def walk(cut, blocks):
        if cut == dag.target:
            paths.append(tuple(blocks))
            return
        for b in outgoing.get(cut, []):
            walk(b.dst, blocks + [b])

    walk(0, [])
    return paths


def peak(path) -> int:
    return max(b.ram_bytes for b in path)


def macs(path) -> int:
    return sum(b.macs for b in path)


def front(paths) -> set[tuple[int, int]]:
    points = {(peak(p), macs(p)) for p in paths}
    return {(r, m) for r, m in points if not any(r2 <= r and m2 <= m and (r2, m2) != (r, m) for r2, m2 in points)}
