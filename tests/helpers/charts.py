"""What a drawn chart encloses: the areas under the PR curves in a Vega-Lite spec."""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def drawn_areas(spec: dict[str, Any]) -> dict[str, float]:
    """Area under each drawn line of a one-layer line spec, per colour.

    Vega-Lite joins a line's points in the order of its ``order`` channel (else by x, a stable
    sort) and joins consecutive points with d3's curve for ``interpolate``: ``step-after`` holds
    the left point's y up to the next x, ``step-before`` jumps to the right point's y at the left x,
    ``linear`` is a straight segment.
    """
    (rows,) = spec["datasets"].values()
    enc = spec["encoding"]
    x, y, colour = enc["x"]["field"], enc["y"]["field"], enc["color"]["field"]
    order = (enc.get("order") or {}).get("field")
    interpolate = spec["mark"].get("interpolate", "linear")
    lines: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        lines[r[colour]].append(r)
    out = {}
    for name, points in lines.items():
        points.sort(key=lambda r: r[order] if order else r[x])
        area = 0.0
        for a, b in zip(points, points[1:], strict=False):
            width = b[x] - a[x]
            assert width >= 0, "a line drawn backwards along recall"
            height = {"step-after": a[y], "step-before": b[y]}.get(interpolate, (a[y] + b[y]) / 2)
            area += width * height
        out[name] = area
    return out
