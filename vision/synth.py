"""Synthetic tiles and table scenes: face-down tiles (for the ``back`` class and the detector) and
scenes laid out as a player lays a won hand, made from real tile images.

Used by training (pretraining the detector on layouts the photos lack: sideways claimed tiles,
concealed kongs, the winning tile apart) and by the tests (scenes with known answers).
"""

from __future__ import annotations

import dataclasses
from typing import Mapping, Sequence

import cv2
import numpy as np

#: A tile in a layout: (label in scoring notation or ``back``, sideways).
LaidTile = tuple[str, bool]
#: One row of a layout: groups of adjacent tiles, separated by gaps.
Row = Sequence[Sequence[LaidTile]]

BACK_COLOURS = ((40, 140, 40), (160, 90, 20), (30, 150, 210), (20, 60, 170), (120, 60, 130), (60, 160, 230))


def render_back(rng: np.random.Generator, height: int = 96, width: int = 72) -> np.ndarray:
    """A face-down tile seen from above: a coloured back with a light edge of the tile's body.

    Returns:
        HxWx3 BGR uint8 image, ``height`` x ``width`` pixels.
    """
    base = np.array(BACK_COLOURS[rng.integers(len(BACK_COLOURS))], np.float32)
    base = np.clip(base * rng.uniform(0.7, 1.25) + rng.normal(0, 15, 3), 0, 255)
    img = np.empty((height, width, 3), np.float32)
    img[:] = base
    # gradient (lighting) and a light border strip (the ivory body seen at the edge)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    g = rng.uniform(-0.25, 0.25) * (xx / width - 0.5) + rng.uniform(-0.25, 0.25) * (yy / height - 0.5)
    img *= (1 + g)[..., None]
    ivory = np.array([200, 225, 235], np.float32) * rng.uniform(0.8, 1.05)
    edge = max(1, int(min(height, width) * rng.uniform(0.03, 0.12)))
    side = rng.integers(4)
    if side == 0:
        img[-edge:] = ivory
    elif side == 1:
        img[:edge] = ivory
    elif side == 2:
        img[:, :edge] = ivory
    else:
        img[:, -edge:] = ivory
    img += rng.normal(0, rng.uniform(2, 8), img.shape)
    out = np.clip(img, 0, 255).astype(np.uint8)
    cv2.rectangle(out, (0, 0), (width - 1, height - 1), tuple(int(v * 0.6) for v in base), 1)
    return out


def render_background(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """A table surface: felt (green, blue, grey) or wood, with noise and lighting. HxWx3 BGR uint8."""
    kind = rng.integers(3)
    if kind == 0:
        colour = np.array([(60, 140, 50), (130, 90, 40), (90, 90, 90), (50, 110, 60)][rng.integers(4)], np.float32)
    elif kind == 1:
        colour = np.array([120, 160, 200], np.float32)  # wood
    else:
        colour = rng.uniform(30, 220, 3).astype(np.float32)
    img = np.empty((height, width, 3), np.float32)
    img[:] = colour * rng.uniform(0.7, 1.2)
    if kind == 1:
        stripes = np.sin(np.linspace(0, rng.uniform(20, 80), height) + rng.normal(0, 0.3, height))[:, None, None]
        img += stripes * 18
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    img *= (1 + 0.3 * rng.uniform(-1, 1) * (xx / width - 0.5) + 0.3 * rng.uniform(-1, 1) * (yy / height - 0.5))[..., None]
    img += rng.normal(0, rng.uniform(3, 12), img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


@dataclasses.dataclass(frozen=True)
class SceneTile:
    """A tile placed in a synthetic scene: its label, box (x1, y1, x2, y2) in pixels, sideways."""

    tile: str
    box: tuple[int, int, int, int]
    sideways: bool


def compose_scene(rows: Sequence[Row], faces: Mapping[str, Sequence[np.ndarray]], rng: np.random.Generator,
                  size: tuple[int, int] = (480, 640), tile_height: int | None = None,
                  background: np.ndarray | None = None) -> tuple[np.ndarray, list[SceneTile]]:
    """Lay tiles on a table surface as rows of groups, as a player lays a won hand.

    Args:
        rows: top to bottom; each row is a list of groups, each a list of ``(label, sideways)``.
            Groups in a row are separated by a gap of about half a tile; ``back`` draws a
            face-down tile.
        faces: label -> upright tile face images (HxWx3 BGR uint8); one is chosen at random.
        rng: the random generator (the scene is a function of its state).
        size: (height, width) of the picture in pixels.
        tile_height: upright tile height in pixels; by default the largest that fits.
        background: HxWx3 BGR uint8 image of ``size``; a random surface by default.

    Returns:
        The picture (HxWx3 BGR uint8) and the placed tiles, row by row, left to right.

    Raises:
        ValueError: when the layout does not fit the picture or a label has no face image.
    """
    H, W = size
    img = render_background(rng, H, W) if background is None else background.copy()
    gap_in, gap_group = 0.04, 0.6
    # width of each row in units of the tile height (upright tile aspect 0.75)
    def row_units(row: Row) -> float:
        u = 0.0
        for gi, g in enumerate(row):
            u += sum((1.0 if sw else 0.75) for _, sw in g) + gap_in * max(0, len(g) - 1)
            u += gap_group if gi else 0.0
        return u
    widest = max(row_units(r) for r in rows)
    if tile_height is None:
        tile_height = int(min(0.9 * W / widest, 0.8 * H / (1.4 * len(rows))))
    th = tile_height
    tw = int(round(th * 0.75))
    if widest * th > W or 1.4 * th * len(rows) > H or th < 8:
        raise ValueError("the layout does not fit the picture")
    placed: list[SceneTile] = []
    y_top = int((H - 1.4 * th * len(rows) + 0.4 * th) / 2)
    for row in rows:
        x = int((W - row_units(row) * th) / 2)
        base_y = y_top + th  # tiles stand on a common line
        for gi, g in enumerate(row):
            if gi:
                x += int(gap_group * th)
            for ti, (label, sideways) in enumerate(g):
                if ti:
                    x += int(gap_in * th)
                if label == "back":
                    face = render_back(rng, th, tw)
                else:
                    choices = faces.get(label)
                    if not choices:
                        raise ValueError(f"no face image for {label!r}")
                    face = cv2.resize(choices[rng.integers(len(choices))], (tw, th), interpolation=cv2.INTER_AREA)
                if sideways:
                    face = np.ascontiguousarray(np.rot90(face, 1 if rng.integers(2) else 3))
                fh, fw = face.shape[:2]
                y1 = base_y - fh
                # a soft shadow, then the tile
                sh = max(1, th // 20)
                cv2.rectangle(img, (x + sh, y1 + sh), (x + fw + sh - 1, base_y + sh - 1), (0, 0, 0), -1)
                img[y1:base_y, x:x + fw] = face
                placed.append(SceneTile(label, (x, y1, x + fw, base_y), sideways))
                x += fw
        y_top += int(1.4 * th)
    return img, placed
