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


#: Colours (BGR) of a white dragon's frame (白板: a framed blank on Chinese sets): blue and dark blue
#: (most sets, listed twice), black, green.
WHITE_FRAME_COLOURS = ((170, 100, 40), (120, 50, 20), (170, 100, 40), (120, 50, 20), (50, 50, 50), (60, 120, 40))


def paint_white_dragon(img: np.ndarray, box: tuple[float, float, float, float], rng: np.random.Generator
                       ) -> np.ndarray:
    """A copy of ``img`` (HxWx3 BGR uint8) with the tile in ``box`` (x1, y1, x2, y2 pixels, any
    tile) painted as a white dragon: its face wiped to the tile's own body colour and lighting
    (a grey closing of the face, which removes the darker pigment, then blurred), then, in 85% of
    the cases, a rectangular frame drawn 12-30% of the face inside its edges (two lines in 70%,
    2.5-7% of the face's short side thick, a ``WHITE_FRAME_COLOURS`` colour), as the white dragons
    of the training photos are painted; 15% stay blank (sets without a frame). Synthetic training crops for the classifier's ``P`` (issue 21: the white dragon was
    read as ``unknown`` or ``back``, about half of all wrong readings). Returns ``img`` itself
    when the box is under 8 pixels on a side."""
    out = img.copy()
    H, W = img.shape[:2]
    x1, y1 = int(max(0, round(box[0]))), int(max(0, round(box[1])))
    x2, y2 = int(min(W, round(box[2]))), int(min(H, round(box[3])))
    w, h = x2 - x1, y2 - y1
    if w < 8 or h < 8:
        return out
    # the face: the box less a margin of the tile's body (more on one side: the body seen in perspective)
    mx, my = (rng.uniform(0.06, 0.14, 2) * w).astype(int), (rng.uniform(0.05, 0.12, 2) * h).astype(int)
    fx1, fx2, fy1, fy2 = x1 + mx[0], x2 - mx[1], y1 + my[0], y2 - my[1]
    face = out[fy1:fy2, fx1:fx2]
    k = max(3, (min(face.shape[:2]) // 3) | 1)
    body = cv2.morphologyEx(face, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    body = cv2.GaussianBlur(body, (k, k), 0).astype(np.float32)
    body += rng.normal(0, rng.uniform(1, 4), body.shape)
    face[:] = np.clip(body, 0, 255).astype(np.uint8)
    if rng.random() < 0.85:
        fh, fw = face.shape[:2]
        colour = np.array(WHITE_FRAME_COLOURS[rng.integers(len(WHITE_FRAME_COLOURS))], np.float32)
        colour = tuple(float(c) for c in np.clip(colour * rng.uniform(0.7, 1.3) + rng.normal(0, 12, 3), 0, 255))
        ix, iy = rng.uniform(0.14, 0.3) * fw, rng.uniform(0.12, 0.25) * fh
        t = max(1, int(round(rng.uniform(0.025, 0.07) * min(fw, fh))))
        cv2.rectangle(face, (int(ix), int(iy)), (int(fw - 1 - ix), int(fh - 1 - iy)), colour, t, cv2.LINE_AA)
        if rng.random() < 0.7:  # a thin second line inside the first
            g = t + max(1, int(round(rng.uniform(0.03, 0.07) * min(fw, fh))))
            cv2.rectangle(face, (int(ix + g), int(iy + g)), (int(fw - 1 - ix - g), int(fh - 1 - iy - g)),
                          colour, max(1, t // 2), cv2.LINE_AA)
        if rng.random() < 0.5:  # the paint seen through the lens: a little soft
            face[:] = cv2.GaussianBlur(face, (3, 3), 0)
    return out


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


def render_tile(face: np.ndarray, rng: np.random.Generator, depth: float) -> np.ndarray:
    """A tile seen from above at a slant: its face over a strip of its body (an ivory layer, then
    a coloured back layer), ``depth`` times the face height thick. HxWx3 BGR uint8 in, out
    (H + body) x W."""
    fh, fw = face.shape[:2]
    d = max(1, int(round(depth * fh)))
    body = np.empty((d, fw, 3), np.float32)
    ivory = np.array([205, 228, 238], np.float32) * rng.uniform(0.75, 1.05)
    back = np.array(BACK_COLOURS[rng.integers(len(BACK_COLOURS))], np.float32) * rng.uniform(0.7, 1.2)
    split = int(d * rng.uniform(0.3, 0.7))
    body[:split] = ivory * 0.9
    body[split:] = back
    body *= np.linspace(1.0, 0.75, d, dtype=np.float32)[:, None, None]  # shade away from the light
    return np.concatenate([face, np.clip(body, 0, 255).astype(np.uint8)])


def _turned_corners(x1: float, y1: float, x2: float, y2: float, m: np.ndarray) -> tuple[float, float, float, float]:
    pts = np.array([[x1, y1], [x2, y1], [x1, y2], [x2, y2]], np.float64) @ m[:, :2].T + m[:, 2]
    return float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max())


def compose_loose_scene(faces: Mapping[str, Sequence[np.ndarray]], labels: Sequence[str], rng: np.random.Generator,
                        size: int = 640) -> tuple[np.ndarray, list[SceneTile]]:
    """A close-up of tiles that are not laid in a neat row: either a packed grid of tiles standing
    face up, with their bodies showing, turned as a whole by up to 25 degrees, or tiles scattered
    at any angle, 50 to 190 pixels tall in a 640-pixel picture (in proportion for another ``size``). What the row scenes of
    ``compose_scene`` lack: turned tiles whose box is the axis-aligned box of the turned tile
    (face and body), as the photo data sets label them.

    Args:
        faces: label -> upright tile face images (HxWx3 BGR uint8).
        labels: the labels to draw from (each must be in ``faces``).
        rng: the random generator.
        size: side of the square picture in pixels.

    Returns:
        The picture (size x size x 3 BGR uint8) and the placed tiles (``sideways`` False; the box
        encloses the turned tile).
    """
    img = render_background(rng, size, size)
    placed: list[SceneTile] = []

    def face_of() -> tuple[str, np.ndarray]:
        lab = labels[rng.integers(len(labels))]
        pool = faces[lab]
        return lab, pool[rng.integers(len(pool))]

    def paste(sprite: np.ndarray, m: np.ndarray, occupied: np.ndarray | None) -> bool:
        warped = cv2.warpAffine(sprite, m, (size, size), flags=cv2.INTER_LINEAR)
        mask = cv2.warpAffine(np.full(sprite.shape[:2], 255, np.uint8), m, (size, size), flags=cv2.INTER_NEAREST) > 0
        if occupied is not None:
            if (mask & occupied).sum() > 0.03 * mask.sum():
                return False
            occupied |= mask
        shadow = np.roll(np.roll(mask, 3, 0), 3, 1) & ~mask
        img[shadow] = (img[shadow] * 0.55).astype(np.uint8)
        img[mask] = warped[mask]
        return True

    if rng.random() < 0.5:  # a packed grid, turned as a whole, that fits the picture
        angle = float(rng.uniform(-25, 25))
        th = int(round(size * rng.uniform(40, 110) / 640))
        tw = int(round(th * rng.uniform(0.68, 0.8)))
        depth = rng.uniform(0.08, 0.3)
        d = max(1, int(round(depth * th)))
        gap = int(rng.integers(0, max(1, th // 12) + 1))
        c, s_ = abs(np.cos(np.radians(angle))), abs(np.sin(np.radians(angle)))
        # the turned grid's box is (gw c + gh s) x (gw s + gh c): at most 0.95 of the picture
        rows = int(rng.integers(2, 7)); cols = int(rng.integers(2, 9))
        while rows > 1 or cols > 1:
            gh, gw = rows * (th + d + gap), cols * (tw + gap)
            if max(gw * c + gh * s_, gw * s_ + gh * c) <= 0.95 * size:
                break
            if cols * (tw + gap) >= rows * (th + d + gap) and cols > 1:
                cols -= 1
            else:
                rows -= 1
        gh, gw = rows * (th + d + gap), cols * (tw + gap)
        grid = np.zeros((gh, gw, 3), np.uint8)
        rects = []
        for r in range(rows):
            for c_ in range(cols):
                lab, face = face_of()
                tile = render_tile(cv2.resize(face, (tw, th), interpolation=cv2.INTER_AREA), rng, depth)
                y, x = r * (th + d + gap), c_ * (tw + gap)
                grid[y:y + th + d, x:x + tw] = tile
                rects.append((lab, x, y, x + tw, y + th + d))
        bw, bh = gw * c + gh * s_, gw * s_ + gh * c
        cx = rng.uniform(min(bw / 2, size / 2), max(size - bw / 2, size / 2))
        cy = rng.uniform(min(bh / 2, size / 2), max(size - bh / 2, size / 2))
        m = cv2.getRotationMatrix2D((gw / 2, gh / 2), angle, 1.0)
        m[:, 2] += (cx - gw / 2, cy - gh / 2)
        gmask = np.zeros((gh, gw), np.uint8)
        for _, x1, y1, x2, y2 in rects:
            gmask[y1:y2, x1:x2] = 255
        warped = cv2.warpAffine(grid, m, (size, size), flags=cv2.INTER_LINEAR)
        mask = cv2.warpAffine(gmask, m, (size, size), flags=cv2.INTER_NEAREST) > 0
        img[mask] = warped[mask]
        for lab, x1, y1, x2, y2 in rects:
            b = _turned_corners(x1, y1, x2, y2, m)
            cb = (max(0.0, b[0]), max(0.0, b[1]), min(float(size), b[2]), min(float(size), b[3]))
            if cb[2] > cb[0] and cb[3] > cb[1] and (cb[2] - cb[0]) * (cb[3] - cb[1]) >= 0.6 * (b[2] - b[0]) * (b[3] - b[1]):
                placed.append(SceneTile(lab, tuple(int(round(v)) for v in cb), False))
    else:  # scattered at any angle
        th = int(round(size * rng.uniform(50, 190) / 640))
        occupied = np.zeros((size, size), bool)
        for _ in range(int(rng.integers(3, 26))):
            lab, face = face_of()
            tw = int(round(th * rng.uniform(0.68, 0.8)))
            tile = render_tile(cv2.resize(face, (tw, th), interpolation=cv2.INTER_AREA), rng, rng.uniform(0.1, 0.4))
            h, w = tile.shape[:2]
            angle = float(rng.uniform(-180, 180) if rng.random() < 0.6 else rng.uniform(-20, 20))
            for _ in range(8):
                cx, cy = rng.uniform(0, size), rng.uniform(0, size)
                m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
                m[:, 2] += (cx - w / 2, cy - h / 2)
                b = _turned_corners(0, 0, w, h, m)
                if b[0] < 0 or b[1] < 0 or b[2] > size or b[3] > size:
                    continue
                if paste(tile, m, occupied):
                    placed.append(SceneTile(lab, tuple(int(round(v)) for v in b), False))
                    break
    return img, placed


def frame_of(scene: np.ndarray, placed: Sequence[SceneTile], rng: np.random.Generator, shake: float = 4.0,
             glare: float = 0.7, shadow: float = 0.7, noise: float = 6.0) -> tuple[np.ndarray, list[SceneTile]]:
    """One camera frame of a still ``scene``: what changes between frames of a fixed camera (the
    capture benchmark and tests of ``vision.voting``), each drawn independently from ``rng``:

    * a shake: the picture moved by up to ``shake`` px each way and turned by up to 0.3 degrees
      (the boxes move with their centres);
    * with probability ``glare`` a glare: a bright soft ellipse (a lamp's reflection on the
      tiles' glaze), 0.15-0.35 of the picture's short side across, that washes the faces out
      towards white (up to 85 %);
    * with probability ``shadow`` a shadow: a soft-edged band (an arm or a head between the lamp
      and the table) that darkens 30-60 %;
    * a change of exposure (0.85-1.15) and Gaussian sensor noise of ``noise`` grey levels.

    Args:
        scene: HxWx3 BGR uint8 picture (``compose_scene``); placed: its tiles.
    Returns:
        The frame (HxWx3 BGR uint8, the scene's size) and the tiles with their boxes in the frame.
    """
    H, W = scene.shape[:2]
    dx, dy = rng.uniform(-shake, shake, 2)
    m = cv2.getRotationMatrix2D((W / 2, H / 2), float(rng.uniform(-0.3, 0.3)), 1.0)
    m[:, 2] += (dx, dy)
    img = cv2.warpAffine(scene, m, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    if rng.random() < glare:
        cx, cy = rng.uniform(0.1, 0.9) * W, rng.uniform(0.2, 0.8) * H
        r = rng.uniform(0.15, 0.35) * min(H, W) / 2
        ax = rng.uniform(0.6, 1.6)
        g = np.exp(-(((xx - cx) / (r * ax)) ** 2 + ((yy - cy) / (r / ax)) ** 2)) * rng.uniform(0.5, 0.85)
        img = img * (1 - g[..., None]) + 255 * g[..., None]
    if rng.random() < shadow:
        a = rng.uniform(0, np.pi)
        d = (xx - rng.uniform(0.2, 0.8) * W) * np.cos(a) + (yy - rng.uniform(0.2, 0.8) * H) * np.sin(a)
        width = rng.uniform(0.1, 0.3) * min(H, W)
        soft = rng.uniform(0.05, 0.15) * min(H, W)
        s = 1 / (1 + np.exp((np.abs(d) - width / 2) / soft))
        img *= (1 - rng.uniform(0.3, 0.6) * s)[..., None]
    img = img * rng.uniform(0.85, 1.15) + rng.normal(0, noise, img.shape)
    out = np.clip(img, 0, 255).astype(np.uint8)
    moved = []
    for t in placed:
        x1, y1, x2, y2 = t.box
        c = m @ np.array([(x1 + x2) / 2, (y1 + y2) / 2, 1.0])
        w, h = x2 - x1, y2 - y1
        moved.append(SceneTile(t.tile, (int(round(c[0] - w / 2)), int(round(c[1] - h / 2)),
                                        int(round(c[0] + w / 2)), int(round(c[1] + h / 2))), t.sideways))
    return out, moved
