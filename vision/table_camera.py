"""The table's own camera: it sees the same table from the same place every time, so its view is
calibrated once (``mjtable camera calibrate``) and every hand is then read in a rectified view of
the play area, turned so that the seat that laid the hand out sits at the bottom.

* The play area (``find_play_area``): in a picture of the empty table, the felt is the largest
  region of one colour: the pixels near the colour of the picture's middle (Lab, within
  ``FELT_DISTANCE``), cleaned by a morphological opening and closing, whose largest outline is
  simplified (``cv2.approxPolyDP``) to a convex quadrilateral covering at least ``MIN_AREA`` of
  the picture.
* The rectified view: the homography (``cv2.getPerspectiveTransform``) from the quadrilateral's
  corners to a square of ``side`` px (the mean length of the quadrilateral's edges, so that the
  view keeps about the camera's resolution). The corner nearest the picture's top-left goes to
  the square's top-left; the side at the bottom of the picture is ``bottom_seat`` (default E),
  and the seats follow in the order of play, counter-clockwise seen from above: E at the bottom,
  S on the right, W at the top, N on the left.
* The tile size: the median size of the tiles found (``Recognizer.find_tiles``) in a picture of a
  laid-out hand, read in the rectified view: upright width and height in rectified px.
* The seats' layout zones: the strip along each side of the square, ``ZONE_TILES`` tile heights
  deep (a row of concealed tiles and the declared sets in front of it). A hand belongs to the
  seat of the zone holding the median centre of its tiles (the nearest side where zones overlap
  at the corners); no seat when it lies in the middle, outside every zone.

The calibration is plain data (``TableCalibration.to_dict``), stored in the table's settings
(``controller.settings``, key ``camera``).
"""

from __future__ import annotations

import dataclasses
from statistics import median
from typing import Any, Mapping, Sequence

import cv2
import numpy as np

from .capture import check_image
from .errors import VisionError

#: Seats in the order of the square's sides from the bottom, counter-clockwise seen from above
#: (bottom, right, top, left), starting from the bottom seat.
SEATS = ("E", "S", "W", "N")
#: Lab distance from the felt's colour (the picture's middle) within which a pixel is felt.
FELT_DISTANCE = 28.0
#: The play area covers at least this share of the picture.
MIN_AREA = 0.15
#: Depth of a seat's layout zone, in tile heights.
ZONE_TILES = 4.0
_NO_FELT_ZH = "没有找到台面：画面中间不是台面；请把相机对准空桌，台面在画面中间"
_EDGE_ZH = {"left": "左", "top": "上", "right": "右", "bottom": "下"}
#: Colours (BGR) of the seats' zones in ``draw_view``: the hand's seat filled, the others outlined.
ZONE_COLOURS = {"E": (40, 40, 200), "S": (200, 110, 30), "W": (60, 150, 40), "N": (150, 40, 140)}
#: Quarter turns (counter-clockwise, ``np.rot90``) that bring each side of the square to the
#: bottom: bottom 0, right 3 (clockwise once), top 2, left 1.
_TURNS = (0, 3, 2, 1)


@dataclasses.dataclass(frozen=True)
class TableCalibration:
    """The table camera's view.

    Attributes:
        homography: 3x3, camera picture px -> rectified square px.
        side: the rectified square's side in px.
        picture: (width, height) in px of the camera pictures it applies to.
        corners: the play area's corners in the camera picture, px: top-left, top-right,
            bottom-right, bottom-left.
        tile: (width, height) of an upright tile in the rectified view, px (0, 0 when unknown).
        bottom_seat: the seat at the picture's bottom side (E, S, W or N).
    """

    homography: tuple[tuple[float, float, float], ...]
    side: int
    picture: tuple[int, int]
    corners: tuple[tuple[float, float], ...]
    tile: tuple[float, float] = (0.0, 0.0)
    bottom_seat: str = "E"

    def seats(self) -> tuple[str, str, str, str]:
        """The seats at the square's bottom, right, top and left sides."""
        k = SEATS.index(self.bottom_seat)
        return tuple(SEATS[(k + i) % 4] for i in range(4))  # type: ignore[return-value]

    def zones(self) -> dict[str, tuple[float, float, float, float]]:
        """Each seat's layout zone (x1, y1, x2, y2) in rectified px: the strip ``ZONE_TILES``
        tile heights deep along its side (the whole square when the tile size is unknown)."""
        s = float(self.side)
        d = min(s, ZONE_TILES * self.tile[1]) if self.tile[1] > 0 else s
        bottom, right, top, left = self.seats()
        return {bottom: (0.0, s - d, s, s), right: (s - d, 0.0, s, s), top: (0.0, 0.0, s, d), left: (0.0, 0.0, d, s)}

    def rectify(self, image: np.ndarray) -> np.ndarray:
        """``image`` (HxWx3 BGR uint8, a picture of the calibrated size) seen square from above:
        side x side x 3. Raises VisionError ``bad-image`` for a picture of another size."""
        check_image(image)
        if (image.shape[1], image.shape[0]) != tuple(self.picture):
            raise VisionError("bad-image", f"the picture is {image.shape[1]}x{image.shape[0]} px but the camera was "
                              f"calibrated at {self.picture[0]}x{self.picture[1]}: take it at that size, or calibrate "
                              "again (mjtable camera calibrate)")
        return cv2.warpPerspective(image, np.array(self.homography), (self.side, self.side), flags=cv2.INTER_AREA)

    def seat_of(self, centres: Sequence[tuple[float, float]]) -> str | None:
        """The seat whose zone holds the median of ``centres`` (tile centres in rectified px),
        the nearest side where zones overlap; None for no centre or one outside every zone."""
        if not len(centres):
            return None
        x, y = float(median(c[0] for c in centres)), float(median(c[1] for c in centres))
        inside = [seat for seat, z in self.zones().items() if z[0] <= x <= z[2] and z[1] <= y <= z[3]]
        if not inside:
            return None
        s = self.side
        distance = dict(zip(self.seats(), (s - y, s - x, y, x)))
        return min(inside, key=lambda seat: distance[seat])

    def turned(self, rectified: np.ndarray, seat: str) -> np.ndarray:
        """The rectified view turned so that ``seat``'s side is at the bottom (its rows then run
        left to right, as ``vision.assemble`` reads them)."""
        return np.ascontiguousarray(np.rot90(rectified, _TURNS[self.seats().index(seat)]))

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON): ``{"homography": 3x3, "side", "picture": [w, h], "corners": 4x2,
        "tile": [w, h], "bottom_seat"}``."""
        return {"homography": [[float(v) for v in r] for r in self.homography], "side": int(self.side),
                "picture": [int(v) for v in self.picture], "corners": [[round(float(v), 2) for v in c] for c in self.corners],
                "tile": [round(float(v), 2) for v in self.tile], "bottom_seat": self.bottom_seat}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "TableCalibration":
        """The inverse of ``to_dict`` (data checked by ``controller.settings.check_camera`` when the
        settings are loaded). Raises VisionError ``bad-config`` for data of another shape."""
        try:
            h = np.array(data["homography"], dtype=np.float64)
            corners = np.array(data["corners"], dtype=np.float64)
            if h.shape != (3, 3) or corners.shape != (4, 2) or not np.isfinite(h).all():
                raise ValueError("shapes")
            return cls(tuple(tuple(float(v) for v in r) for r in h), int(data["side"]),
                       (int(data["picture"][0]), int(data["picture"][1])), tuple(tuple(c) for c in corners.tolist()),
                       (float(data["tile"][0]), float(data["tile"][1])), str(data.get("bottom_seat", "E")))
        except (KeyError, TypeError, ValueError, IndexError):
            raise VisionError("bad-config", "the stored camera calibration is not valid: run mjtable camera "
                              "calibrate again") from None


def _ordered(quad: np.ndarray) -> np.ndarray:
    """Four points (4x2) as top-left, top-right, bottom-right, bottom-left of the picture."""
    c = quad.mean(axis=0)
    angle = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
    q = quad[np.argsort(angle)]  # clockwise on screen (y down), from the left
    start = int(np.argmin(q.sum(axis=1)))  # the top-left: smallest x + y
    return np.roll(q, -start, axis=0)


def find_play_area(empty: np.ndarray) -> np.ndarray:
    """The play area's corners in a picture of the empty table (module docstring).

    Args:
        empty: HxWx3 BGR uint8 picture of the empty table, from the table's camera.

    Returns:
        4x2 float array of the corners in px: top-left, top-right, bottom-right, bottom-left.

    Raises:
        VisionError: ``bad-image`` for an array that is not a picture; ``calibration`` when no
            region of one colour is large and four-sided enough (the message says what was seen).
    """
    check_image(empty)
    H, W = empty.shape[:2]
    lab = cv2.cvtColor(cv2.GaussianBlur(empty, (0, 0), max(1.0, min(H, W) / 300)), cv2.COLOR_BGR2LAB).astype(np.float32)
    middle = lab[H * 2 // 5:H * 3 // 5, W * 2 // 5:W * 3 // 5].reshape(-1, 3)
    felt = np.median(middle, axis=0)
    mask = (np.linalg.norm(lab - felt, axis=2) < FELT_DISTANCE).astype(np.uint8) * 255
    k = max(3, int(min(H, W) / 100) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))
    mask = cv2.morphologyEx(cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel), cv2.MORPH_CLOSE, kernel, iterations=3)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        raise VisionError("calibration", "no play area found: the middle of the picture is not the table's felt; "
                          "point the camera at the empty table, the felt in the middle", _NO_FELT_ZH)
    outline = cv2.convexHull(max(contours, key=cv2.contourArea))
    area = cv2.contourArea(outline) / (H * W)
    if area < MIN_AREA:
        raise VisionError("calibration", f"no play area found: the largest region of the felt's colour covers "
                          f"{100 * area:.0f}% of the picture (at least {100 * MIN_AREA:.0f}% needed); point the "
                          "camera at the empty table, the whole felt in view",
                          f"没有找到台面：与台面同色的最大区域只占画面的 {100 * area:.0f}%（至少要 {100 * MIN_AREA:.0f}%）；"
                          "请把相机对准空桌，整块台面都在画面内")
    perimeter = cv2.arcLength(outline, True)
    for eps in (0.01, 0.02, 0.03, 0.05, 0.08):
        quad = cv2.approxPolyDP(outline, eps * perimeter, True)
        if len(quad) <= 4:
            break
    fit = cv2.contourArea(quad) / cv2.contourArea(outline) if len(quad) == 4 else 0.0
    if len(quad) != 4 or abs(1 - fit) > 0.05:
        raise VisionError("calibration", "no play area found: the felt's outline is not four-sided (" + (
            f"{len(quad)} corners" if len(quad) != 4 else f"the best quadrilateral covers {100 * fit:.0f}% of it") +
            "); clear the table and make sure the whole felt is in view",
            "没有找到台面：台面的轮廓不是四边形；请清空桌面，让整块台面都在画面内")
    border = 0.01 * min(H, W)
    q = quad.reshape(4, 2)
    for name, on in (("left", q[:, 0] <= border), ("top", q[:, 1] <= border), ("right", q[:, 0] >= W - 1 - border),
                     ("bottom", q[:, 1] >= H - 1 - border)):
        if on.sum() >= 2:
            raise VisionError("calibration", f"no play area found: the felt's colour runs out of the picture's {name} "
                              "edge; move the camera so that the whole felt and its edges are in view",
                              f"没有找到台面：台面的颜色延伸出画面的{_EDGE_ZH[name]}边；请移动相机，让整块台面连同边缘都在画面内")
    return _refined(_ordered(quad.reshape(4, 2).astype(np.float64)), max(contours, key=cv2.contourArea).reshape(-1, 2))


def _refined(quad: np.ndarray, outline: np.ndarray) -> np.ndarray:
    """The corners of ``quad`` (4x2, in order) moved to the crossings of lines fitted
    (``cv2.fitLine``) to the outline's points along each side, away from the corners (the middle
    80 %): ``approxPolyDP`` keeps outline points, which the smoothing rounds off at the corners.
    A side with too few points keeps its corners."""
    pts = outline.astype(np.float64)
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = b - a
        length = float(np.hypot(*d))
        t = (pts - a) @ d / (length ** 2)
        off = np.abs((pts - a) @ np.array([-d[1], d[0]]) / length)
        near = pts[(t > 0.1) & (t < 0.9) & (off < 0.03 * length)]
        if len(near) < 10:
            return quad
        vx, vy, x0, y0 = cv2.fitLine(near.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
    out = []
    for i in range(4):  # corner i joins side i - 1 and side i
        (p1, v1), (p2, v2) = lines[i - 1], lines[i]
        m = np.array([v1, -v2]).T
        if abs(np.linalg.det(m)) < 1e-9:
            return quad
        t = np.linalg.solve(m, p2 - p1)
        out.append(p1 + t[0] * v1)
    return np.array(out)


def calibrate(empty: np.ndarray, hand: np.ndarray | None = None, recognizer: Any = None,
              bottom_seat: str = "E") -> tuple[TableCalibration, str | None]:
    """Calibrate the table's camera from a picture of the empty table and one of a laid-out hand.

    Args:
        empty: HxWx3 BGR uint8 picture of the empty table.
        hand: a picture of a hand laid out at one seat, same camera and size (None: the tile size
            stays unknown and the zones are the whole square).
        recognizer: the ``vision.Recognizer`` that finds the hand's tiles (needed with ``hand``).
        bottom_seat: the seat at the picture's bottom side.

    Returns:
        (the calibration, the seat whose zone holds the hand, or None).

    Raises:
        VisionError: ``calibration`` (no play area; no tile found in the hand picture; pictures of
            two sizes; an unknown seat), ``bad-image``.
    """
    if bottom_seat not in SEATS:
        raise VisionError("calibration", f"bottom seat {bottom_seat!r}: allowed are {', '.join(SEATS)}",
                          f"画面下方的座位 {bottom_seat!r} 不对：可选 东(E)、南(S)、西(W)、北(N)")
    corners = find_play_area(empty)
    edges = [np.hypot(*(corners[i] - corners[(i + 1) % 4])) for i in range(4)]
    side = int(round(float(np.mean(edges))))
    square = np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float64)
    h = cv2.getPerspectiveTransform(corners.astype(np.float32), square.astype(np.float32))
    cal = TableCalibration(tuple(tuple(float(v) for v in r) for r in h), side, (empty.shape[1], empty.shape[0]),
                           tuple(tuple(float(v) for v in c) for c in corners), (0.0, 0.0), bottom_seat)
    if hand is None:
        return cal, None
    check_image(hand)
    if hand.shape != empty.shape:
        raise VisionError("calibration", f"the hand picture is {hand.shape[1]}x{hand.shape[0]} px, the empty table's "
                          f"{empty.shape[1]}x{empty.shape[0]}: take both with the same camera at the same size",
                          "两张照片大小不同：请用同一台相机、同一尺寸拍空桌和手牌")
    view = cal.rectify(hand)
    tiles = recognizer.find_tiles(view)
    if not tiles:
        raise VisionError("calibration", "no tile found in the hand picture: lay a hand out in front of one seat "
                          "and take the picture again", "手牌照片中没有找到牌：请在一个座位前摆好一手牌，再拍一次")
    seat = cal.seat_of([t.centre for t in tiles])
    turned = cal.turned(view, seat) if seat is not None and seat != cal.seats()[0] else view
    if turned is not view:
        tiles = recognizer.find_tiles(turned)  # the hand's rows run left to right in its seat's view
    upright = [t for t in tiles if not t.sideways] or tiles
    size = (float(median(t.box[2] - t.box[0] for t in upright)), float(median(t.box[3] - t.box[1] for t in upright)))
    return dataclasses.replace(cal, tile=(min(size), max(size))), seat


def seat_views(cal: TableCalibration, frames: Sequence[np.ndarray], detector: Any) -> tuple[list[np.ndarray], str | None]:
    """Pictures of one hand as the table's camera reads them: each rectified
    (``TableCalibration.rectify``), the seat of the hand found from the boxes ``detector`` (a
    ``vision.TileDetector``; class-agnostic, so any turn will do) finds in the first, and each
    turned so that seat is at the bottom (``TableCalibration.turned``).

    Args:
        cal: the calibration; frames: HxWx3 BGR uint8 pictures of the calibrated size.
    Returns:
        (the views to recognise, each side x side x 3; the seat, or None when no tile is found or
        they lie outside every zone: the views are then the rectified ones unturned).
    Raises:
        VisionError: ``bad-image`` (see ``rectify``).
    """
    views = [cal.rectify(f) for f in frames]
    boxes = detector.detect(views[0]) if views else []
    seat = cal.seat_of([((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in boxes])
    return ([cal.turned(v, seat) for v in views] if seat is not None else views), seat


def draw_view(cal: TableCalibration, picture: np.ndarray, seat: str | None = None) -> np.ndarray:
    """``picture`` (a camera picture of the calibrated size, e.g. the laid-out hand) as the
    calibration sees it: rectified (``TableCalibration.rectify``), each seat's layout zone
    (``zones``) outlined in its colour (``ZONE_COLOURS``) and named (E, S, W, N) at its side's
    middle, the zone of ``seat`` (the hand's, or None) shaded.

    Returns:
        side x side x 3 BGR uint8. Raises VisionError ``bad-image`` as ``rectify``.
    """
    view = cal.rectify(picture).copy()
    s = cal.side
    width = max(2, s // 250)
    if seat is not None:
        x1, y1, x2, y2 = (int(round(v)) for v in cal.zones()[seat])
        shade = view.copy()
        cv2.rectangle(shade, (x1, y1), (x2 - 1, y2 - 1), ZONE_COLOURS[seat], -1)
        view = cv2.addWeighted(shade, 0.3, view, 0.7, 0)
    scale = max(0.6, s / 500)
    (tw, th), _ = cv2.getTextSize("W", cv2.FONT_HERSHEY_SIMPLEX, scale, 2 * width)
    radius = int(0.9 * max(tw, th))
    bottom, right, top, left = cal.seats()
    # each name just inside the middle, beside its zone's inner edge (clear of the tiles laid along the side)
    z = cal.zones()
    inner = {bottom: (s / 2, z[bottom][1] - 1.3 * radius), right: (z[right][0] - 1.3 * radius, s / 2),
             top: (s / 2, z[top][3] + 1.3 * radius), left: (z[left][2] + 1.3 * radius, s / 2)}
    for name, (x1, y1, x2, y2) in cal.zones().items():
        inset = width if name != seat else 2 * width
        cv2.rectangle(view, (int(x1) + inset, int(y1) + inset), (int(x2) - 1 - inset, int(y2) - 1 - inset),
                      ZONE_COLOURS[name], width * (2 if name == seat else 1))
        (tw, th), _ = cv2.getTextSize(name, cv2.FONT_HERSHEY_SIMPLEX, scale, 2 * width)
        centre = tuple(int(min(max(v, radius), s - radius)) for v in inner[name])
        cv2.circle(view, centre, radius, (255, 255, 255), -1)
        cv2.circle(view, centre, radius, ZONE_COLOURS[name], width)
        cv2.putText(view, name, (centre[0] - tw // 2, centre[1] + th // 2), cv2.FONT_HERSHEY_SIMPLEX, scale,
                    ZONE_COLOURS[name], 2 * width, cv2.LINE_AA)
    return view
