"""Placing text labels next to points without overlaps: the layout step of the spectrum's peak labels.

Everything here works in display pixels (origin at the bottom left of the canvas, y up), on boxes whose sizes
were measured with the renderer that draws them (:func:`text_box_size`), so what is checked is what is drawn.

The method (:func:`place_labels`), for labels taken in priority order (the strongest peak first):

* a label may sit anywhere inside ``bounds`` (the axes) whose bottom is above the *skyline* -- the highest
  drawn pixel of the data (lines and markers) in every pixel column it spans -- so it covers no line and no
  marker, and it is above its own marker;
* candidate left edges: centred on the anchor, just right or left of it, flush against either side of every box
  placed so far and of every obstacle (the legend), and flush with the bounds; for each, the lowest free height
  is found by stacking above whatever is in the way (labels, obstacles, the extent of leader lines);
* a candidate is refused when its box meets a placed label, an obstacle or a leader line, or when its own leader
  would cross a placed label or another leader; of the others the one nearest its anchor wins (horizontal distance counts
  :data:`HORIZONTAL_COST` times the vertical one: a label above its peak reads best);
* a label that ends up away from its anchor (not touching the marker) gets a leader line from the marker to the
  nearest point of its box; a label with no room left is not drawn (``None``), never drawn on top of another.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "HORIZONTAL_COST",
    "Box",
    "LabelArea",
    "Placement",
    "column_skyline",
    "layout_labels",
    "place_labels",
    "text_box_size",
    "wrap_to_width",
]

#: Cost of one pixel of horizontal displacement of a label, in pixels of vertical displacement.
HORIZONTAL_COST = 1.5
#: Cost per pixel between a spot and the preferred alignment on the anchor (breaks ties; far below a pixel of
#: displacement).
_TIE_COST = 1e-3


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in display pixels: ``x0 <= x1`` left to right, ``y0 <= y1`` bottom to top."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        """``x1 - x0`` in pixels."""
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        """``y1 - y0`` in pixels."""
        return self.y1 - self.y0

    def overlaps(self, other: Box, margin: float = 0.0) -> bool:
        """True if the boxes, each grown by ``margin / 2`` pixels, share an interior point."""
        return (
            self.x0 < other.x1 + margin
            and other.x0 < self.x1 + margin
            and self.y0 < other.y1 + margin
            and other.y0 < self.y1 + margin
        )

    def inside(self, other: Box) -> bool:
        """True if this box lies within ``other`` (edges may touch)."""
        return self.x0 >= other.x0 and self.x1 <= other.x1 and self.y0 >= other.y0 and self.y1 <= other.y1


@dataclass(frozen=True)
class Placement:
    """Where one label goes: its box, and the leader line ``((x, y) at the anchor, (x, y) on the box)`` or None."""

    box: Box
    leader: tuple[tuple[float, float], tuple[float, float]] | None = None


def text_box_size(text, renderer, pad_px: float = 0.0) -> tuple[float, float]:
    """``(width, height)`` in pixels of a matplotlib Text as ``renderer`` draws it, plus ``pad_px`` on every side."""
    extent = text.get_window_extent(renderer)
    return extent.width + 2 * pad_px, extent.height + 2 * pad_px


def wrap_to_width(text, renderer, width: float, separators: Sequence[str] = (" — ", ", ", " ")) -> None:
    """Break a matplotlib Text into lines no wider than ``width`` pixels (where it can), at the first separator that
    helps; the text is changed in place.  A single word wider than ``width`` stays one line."""
    if text.get_window_extent(renderer).width <= width:
        return
    whole = text.get_text()
    for separator in separators:
        parts = whole.split(separator)
        if len(parts) < 2:
            continue
        lines = [parts[0]]
        for part in parts[1:]:
            text.set_text(lines[-1] + separator + part)
            if text.get_window_extent(renderer).width <= width:
                lines[-1] += separator + part
            else:
                lines[-1] += separator.rstrip()
                lines.append(part)
        text.set_text("\n".join(lines))
        if text.get_window_extent(renderer).width <= width:
            return
    # no separator gives lines that fit: keep the finest split
    return


def column_skyline(bounds: Box, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """The highest y (pixels) of a polyline in each pixel column of ``bounds``; ``bounds.y0`` where it is absent.

    Parameters
    ----------
    bounds : Box
        The area, ``ceil(width)`` columns wide, column ``i`` covering ``[x0 + i, x0 + i + 1)``.
    xs, ys : np.ndarray, shape (n,)
        The polyline's vertices in display pixels, ``xs`` non-decreasing (NaN: a gap).

    Returns
    -------
    np.ndarray, shape (ceil(bounds.width),)
        Per column, the maximum of the vertices in it and of the polyline where it crosses the column's edges
        (a segment spanning columns without a vertex in them), clipped to ``[y0, y1]`` of ``bounds``.
    """
    n_columns = max(1, math.ceil(bounds.width))
    sky = np.full(n_columns, bounds.y0)
    keep = np.isfinite(xs) & np.isfinite(ys)
    xs, ys = xs[keep], ys[keep]
    if xs.size == 0:
        return sky
    columns = np.floor(xs - bounds.x0).astype(np.int64)
    inside = (columns >= 0) & (columns < n_columns)
    np.maximum.at(sky, columns[inside], np.minimum(ys[inside], bounds.y1))
    edges = bounds.x0 + np.arange(n_columns + 1)
    crossing = np.interp(edges, xs, ys, left=bounds.y0, right=bounds.y0)
    sky = np.maximum(sky, np.maximum(crossing[:-1], crossing[1:]))
    return np.clip(sky, bounds.y0, bounds.y1)


def _segment_meets_box(p: tuple[float, float], q: tuple[float, float], box: Box) -> bool:
    """True if the segment ``p``-``q`` passes through the interior of ``box`` (Liang-Barsky clipping)."""
    (x0, y0), (x1, y1) = p, q
    dx, dy = x1 - x0, y1 - y0
    low, high = 0.0, 1.0
    for step, distance in ((-dx, x0 - box.x0), (dx, box.x1 - x0), (-dy, y0 - box.y0), (dy, box.y1 - y0)):
        if step == 0:
            if distance <= 0:
                return False
            continue
        t = distance / step
        if step < 0:
            low = max(low, t)
        else:
            high = min(high, t)
        if low >= high:
            return False
    return True


def _segment_box(p: tuple[float, float], q: tuple[float, float]) -> Box:
    """The bounding box of a segment (what a label stacks above)."""
    return Box(min(p[0], q[0]), min(p[1], q[1]), max(p[0], q[0]), max(p[1], q[1]))


def _segments_cross(a: tuple[tuple[float, float], ...], b: tuple[tuple[float, float], ...]) -> bool:
    """True if two segments cross at a point interior to both (touching ends and collinear overlaps do not count)."""

    def side(p, q, r) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    (p1, p2), (q1, q2) = a, b
    d1, d2 = side(q1, q2, p1), side(q1, q2, p2)
    d3, d4 = side(p1, p2, q1), side(p1, p2, q2)
    return d1 * d2 < 0 and d3 * d4 < 0


def _leader(anchor: tuple[float, float], box: Box, gap: float) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The leader from ``anchor`` (the marker's top) to the nearest point of ``box``; None when the box is within
    ``gap`` pixels of the anchor (it touches its marker)."""
    x = min(max(anchor[0], box.x0), box.x1)
    y = min(max(anchor[1], box.y0), box.y1)
    if math.hypot(x - anchor[0], y - anchor[1]) <= gap:
        return None
    return anchor, (x, y)


@dataclass(frozen=True, eq=False)
class LabelArea:
    """Where labels may go and what is in their way (:func:`place_labels`, :func:`layout_labels`).

    Attributes
    ----------
    bounds : Box
        Where labels may go (the axes' area).
    skyline : np.ndarray, shape (columns,)
        The highest drawn pixel in each column of ``bounds`` (:func:`column_skyline`): a label's bottom stays
        ``gap`` above it over the whole width of the label.
    obstacles : sequence of Box
        Boxes no label may meet (the legend).
    gap : float
        Pixels between a label and its marker, or the data beneath it; a label farther than this from its anchor
        gets a leader line.
    margin : float
        Pixels kept between any two boxes, and between a box and the edges of ``bounds``.
    """

    bounds: Box
    skyline: np.ndarray
    obstacles: Sequence[Box] = ()
    gap: float = 3.0
    margin: float = 2.0


def place_labels(
    anchors: Sequence[tuple[float, float]],
    sizes: Sequence[tuple[float, float]],
    area: LabelArea,
    *,
    order: Sequence[int] | None = None,
    prefer: str = "centre",
) -> list[Placement | None]:
    """Place labels of the given sizes near their anchors, one at a time in ``order`` (the first gets the best spot).

    Parameters
    ----------
    anchors : sequence of (x, y)
        Display pixels of each label's point: the top centre of its marker.
    sizes : sequence of (width, height)
        Each label's box in pixels, as drawn (:func:`text_box_size`).
    area : LabelArea
        The bounds, the data's skyline, the obstacles and the spacing.
    order : sequence of int, optional
        The order in which labels are placed (default: as given).  A label's box is never more than its own
        width away from its anchor horizontally.
    prefer : {"centre", "staircase"}
        ``"centre"``: of the spots equally near, the one centred on the anchor.  ``"staircase"``: a label left
        of the middle of ``bounds`` starts at its anchor, one right of it ends there, wherever that spot has room
        (above whatever is in the way); only a label for which that spot is refused takes another.

    Returns
    -------
    list of Placement or None
        One per label, in the order of ``anchors``; None for a label with no room.
    """
    if prefer not in ("centre", "staircase"):
        raise ValueError(f"prefer={prefer!r}: use 'centre' or 'staircase'")
    if len(sizes) != len(anchors):
        raise ValueError(f"{len(anchors)} anchors but {len(sizes)} sizes")
    bounds, gap, margin = area.bounds, area.gap, area.margin
    scene = _Scene(area)
    result: list[Placement | None] = [None] * len(anchors)
    middle = (bounds.x0 + bounds.x1) / 2
    for index in order if order is not None else range(len(anchors)):
        (ax, ay), (w, h) = anchors[index], sizes[index]
        if w > bounds.width - 2 * margin or not (bounds.x0 <= ax <= bounds.x1):
            continue
        hang = ax - w / 2 if prefer == "centre" else ax - margin if ax < middle else ax + margin - w
        starts = {hang, ax - w / 2, ax + gap, ax - gap - w, bounds.x0, bounds.x1}
        for other in scene.blockers:
            starts |= {other.x1 + margin, other.x0 - margin - w}
        spot = scene.best((ax, ay), (w, h), [hang], hang) if prefer == "staircase" else None
        spot = spot or scene.best((ax, ay), (w, h), sorted(starts), hang)
        if spot is not None:
            result[index] = scene.take((ax, ay), spot)
    return result


class _Scene:
    """The labels placed so far, their leaders, and what else is in the way (:func:`place_labels`)."""

    def __init__(self, area: LabelArea):
        self.bounds, self.skyline, self.gap, self.margin = area.bounds, area.skyline, area.gap, area.margin
        self.blockers: list[Box] = list(area.obstacles)
        self.leaders: list[tuple[tuple[float, float], tuple[float, float]]] = []

    def spot(self, anchor: tuple[float, float], size: tuple[float, float], start: float) -> Box | None:
        """The lowest free box starting near ``start`` (clamped into the bounds), or None if it is refused."""
        (ax, ay), (w, h), bounds, margin = anchor, size, self.bounds, self.margin
        x0 = min(max(start, bounds.x0 + margin), bounds.x1 - margin - w)
        first = max(0, int(math.floor(x0 - bounds.x0)))
        last = min(self.skyline.size, int(math.ceil(x0 + w - bounds.x0)))
        floor = float(self.skyline[first:last].max()) if last > first else bounds.y0
        y0 = max(ay + self.gap, floor + self.gap, bounds.y0 + margin)
        extents = self.blockers + [_segment_box(p, q) for p, q in self.leaders]
        in_the_way = sorted((b for b in extents if b.x0 < x0 + w + margin and x0 < b.x1 + margin), key=lambda b: b.y0)
        moved = True
        while moved:  # stack above whatever the box meets
            moved = False
            for other in in_the_way:
                if other.y0 < y0 + h + margin and y0 < other.y1 + margin:
                    y0, moved = other.y1 + margin, True
        box = Box(x0, y0, x0 + w, y0 + h)
        if box.y1 > bounds.y1 - margin or max(box.x0 - ax, ax - box.x1, 0.0) > w:
            return None
        if any(_segment_meets_box(p, q, box) for p, q in self.leaders):
            return None
        leader = _leader(anchor, box, self.gap + margin)
        if leader is not None and any(_segment_meets_box(*leader, other) for other in self.blockers):
            return None
        if leader is not None and any(_segments_cross(leader, other) for other in self.leaders):
            return None
        return box

    def best(self, anchor: tuple[float, float], size: tuple[float, float], starts: Sequence[float], hang: float):
        """The spot of least cost among ``starts`` (ties: nearest ``hang``, then leftmost), or None."""
        found: tuple[float, float, Box] | None = None
        for start in starts:
            box = self.spot(anchor, size, start)
            if box is None:
                continue
            dx = max(box.x0 - anchor[0], anchor[0] - box.x1, 0.0)
            cost = HORIZONTAL_COST * dx + (box.y0 - (anchor[1] + self.gap)) + _TIE_COST * abs(box.x0 - hang)
            if found is None or (cost, box.x0) < found[:2]:
                found = (cost, box.x0, box)
        return None if found is None else found[2]

    def take(self, anchor: tuple[float, float], box: Box) -> Placement:
        """Record ``box`` (and its leader) as placed."""
        leader = _leader(anchor, box, self.gap + self.margin)
        self.blockers.append(box)
        if leader is not None:
            self.leaders.append(leader)
        return Placement(box, leader)


def layout_labels(
    anchors: Sequence[tuple[float, float]], sizes: Sequence[tuple[float, float]], area: LabelArea
) -> list[Placement | None]:
    """:func:`place_labels` in a few orders -- priority (as given) centred on the anchors, a staircase from the
    middle outwards, the highest anchor first (as a staircase, and centred) -- and the best layout.

    The staircase places a cluster's labels from the one nearest the middle of the axes outwards, each starting
    (left half) or ending (right half) at its marker: they stack as steps rising away from the middle, every
    leader vertical and none crossing a label, where centred labels would run out of room.
    The best layout places the most labels, then the highest-priority ones (labels earlier in ``anchors``), then
    has the least total displacement (:data:`HORIZONTAL_COST`).
    """
    middle = (area.bounds.x0 + area.bounds.x1) / 2
    inside_out = sorted(range(len(anchors)), key=lambda i: (abs(anchors[i][0] - middle), i))
    best: tuple[tuple[Any, ...], list[Placement | None]] | None = None
    highest = sorted(range(len(anchors)), key=lambda i: (-anchors[i][1], i))
    strategies = ((range(len(anchors)), "centre"), (inside_out, "staircase"), (highest, "staircase"), (highest, "centre"))
    for order, prefer in strategies:
        placements = place_labels(anchors, sizes, area, order=order, prefer=prefer)
        flags = tuple(p is not None for p in placements)
        score = (sum(flags), flags, -_displacement(anchors, placements, area.gap))
        if best is None or score > best[0]:
            best = (score, placements)
    return best[1] if best is not None else []


def _displacement(anchors: Sequence[tuple[float, float]], placements: Sequence[Placement | None], gap: float) -> float:
    total = 0.0
    for (ax, ay), placement in zip(anchors, placements):
        if placement is not None:
            box = placement.box
            total += HORIZONTAL_COST * max(box.x0 - ax, ax - box.x1, 0.0) + max(box.y0 - (ay + gap), 0.0)
    return total
