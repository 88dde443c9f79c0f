"""Several frames of one hand, read as one: each frame is recognised, the tiles are aligned across
the frames by their place in the picture, and each tile's name is voted (issue #21, "the table's
own camera").

The table's camera sees the hand from the same place in every frame; what changes from frame to
frame is the light (glare, a hand's shadow), the sensor's noise and a shake of a few pixels. A
misreading caused by one frame's glare is outvoted by the others; a tile whose reading changes
between frames, or that some frames do not find, is listed for the player to confirm.

* Alignment: the frame with the median number of tiles is the reference; each other frame is
  moved onto it by the median offset of nearest tiles (a shake), then its tiles are paired with
  the reference's places by least total distance (``scipy.optimize.linear_sum_assignment``), a
  pair only when the centres are within ``MATCH_DISTANCE`` tile widths. A tile left over starts a
  place of its own, which later frames can join.
* Vote: a place found in more than half the frames is a tile; its name is the label most frames
  gave it (a tie: the larger summed confidence), its confidence the sum of the confidences of the
  frames that gave that label divided by the number of frames (a frame without the tile or with
  another label adds 0), its box the median of its boxes (in the reference frame's pixels),
  sideways when most of its frames say so.
* Flags: a tile whose label changed between frames (``changed``) is listed for the player to
  confirm (``Assembly.uncertain``); a tile that some frames did not find is listed when its
  confidence falls below the threshold (each missing frame takes 1/N off it: a tile seen in 4
  frames of 5 at 0.95 keeps 0.76, in 3 of 5 0.57). A place found in half the frames or fewer,
  but in at least ``GAP_FRAMES``, is no tile of the hand but is shown as a ``Gap`` of kind
  ``"some-frames"`` (the player is asked there: a tile seen in two frames of five may be real).
  Listing every tile missing from a frame as well, and a gap for a place seen once: on 16 hands
  of ``benchmarks/vision_capture.py`` (seed 7) the same silent share (12 %), 2.50 flags and 3.06
  gaps per capture against 1.69 and 1.06 (frames read by single members, ``SPREAD``).
"""

from __future__ import annotations

import dataclasses
import time
from statistics import median
from typing import Sequence

import numpy as np

from .assemble import DetectedTile, Gap, rows_and_groups
from .errors import VisionError
from .pipeline import Recognition, Recognizer

#: The number of frames a capture votes over (inclusive range).
FRAMES = (3, 5)
#: Each frame of a capture is read by one member of each ensemble (``Recognizer.member``: frame k
#: by detector k mod 4, classifier k mod 2), not by all of them: the vote over the frames averages
#: the members instead. ``benchmarks/vision_capture.py`` measures both ways; False: every frame
#: by the whole ensembles.
SPREAD = True
#: A place found in a minority of the frames is shown as a gap when found in at least this many.
GAP_FRAMES = 2
#: Two tiles of two frames are the same tile when their centres (after the frame's shift) are
#: within this many tile widths (the short side of the median tile).
MATCH_DISTANCE = 0.5


@dataclasses.dataclass(frozen=True)
class VotedTile:
    """A tile after the vote.

    Attributes:
        tile: the voted tile (name, median box in the reference frame's pixels, combined confidence).
        votes: label -> number of frames that read this place as that label.
        seen: frames in which the place was found (1..frames).
        frames: frames voted over.
    """

    tile: DetectedTile
    votes: dict[str, int]
    seen: int
    frames: int

    @property
    def changed(self) -> bool:
        """The label read changed between the frames that found the tile."""
        return len(self.votes) > 1


@dataclasses.dataclass(frozen=True)
class Capture:
    """The hand read from several frames.

    Attributes:
        recognition: the voted reading as a ``Recognition`` (its ``tiles`` are the voted tiles, in
            reading order; ``seconds`` the time of all frames and the vote).
        voted: the voted tiles, in the order of ``recognition.tiles``.
        dropped: places found in half the frames or fewer (not in the hand; shown as gaps).
        reference: index of the frame whose pixels the boxes are in.
        frame_seconds: the recognition time of each frame.
        readings: the tiles found in each frame (``Recognizer.find_tiles``), in its own pixels.
        weak: the detector's weak boxes of each frame (``Recognizer.read``), in its own pixels:
            the reference frame's give the unread areas (``assemble.unread_areas``).
    """

    recognition: Recognition
    voted: tuple[VotedTile, ...]
    dropped: tuple[VotedTile, ...]
    reference: int
    frame_seconds: tuple[float, ...]
    readings: tuple[tuple[DetectedTile, ...], ...] = ()
    weak: tuple[tuple[tuple[float, float, float, float, float], ...], ...] = ()

    def to_dict(self) -> dict:
        """``Recognition.to_dict()`` with, per tile, ``votes`` ({label: frames}), ``seen`` (frames
        that found it) and ``changed``, and ``frames`` (the number voted over) and ``dropped``
        (places found in half the frames or fewer: ``[{"tile", "box", "votes", "seen"}]``)."""
        out = self.recognition.to_dict()
        for d, v in zip(out["tiles"], self.voted):
            d["votes"] = dict(v.votes)
            d["seen"] = v.seen
            d["changed"] = v.changed
        out["frames"] = len(self.frame_seconds)
        out["dropped"] = [{**v.tile.to_dict(), "votes": dict(v.votes), "seen": v.seen} for v in self.dropped]
        return out


def _short_side(tiles: Sequence[DetectedTile]) -> float:
    return float(median(min(t.box[2] - t.box[0], t.box[3] - t.box[1]) for t in tiles))


def _shift(tiles: Sequence[DetectedTile], anchors: np.ndarray, reach: float) -> np.ndarray:
    """The (dx, dy) that moves ``tiles`` onto ``anchors`` (Nx2 centres): the median offset of each
    tile to its nearest anchor, over the pairs nearer than ``reach`` pixels (none: no shift)."""
    if not len(tiles) or not len(anchors):
        return np.zeros(2)
    c = np.array([t.centre for t in tiles])
    d = anchors[None, :, :] - c[:, None, :]
    dist = np.hypot(d[..., 0], d[..., 1])
    near = dist.argmin(axis=1)
    off = d[np.arange(len(c)), near]
    ok = dist[np.arange(len(c)), near] < reach
    return np.median(off[ok], axis=0) if ok.any() else np.zeros(2)


def vote(readings: Sequence[Sequence[DetectedTile]]) -> tuple[list[VotedTile], list[VotedTile], int]:
    """Align the tiles of several frames of one hand and vote each tile (module docstring).

    Args:
        readings: per frame, the tiles found (``Recognizer.find_tiles``), boxes in the frame's pixels;
            all frames from one camera position (the same picture size).

    Returns:
        (voted tiles, dropped places, index of the reference frame); voted and dropped in no
        particular order (``capture_hand`` puts them in reading order).

    Raises:
        VisionError: ``bad-image`` for fewer than 2 frames.
    """
    n = len(readings)
    if n < 2:
        raise VisionError("bad-image", f"a vote needs at least 2 frames, got {n}")
    counts = [len(r) for r in readings]
    ref = int(np.argsort(counts, kind="stable")[(n - 1) // 2]) if any(counts) else 0
    everything = [t for r in readings for t in r]
    if not everything:
        return [], [], ref
    from scipy.optimize import linear_sum_assignment

    reach = MATCH_DISTANCE * _short_side(everything)
    places: list[list[tuple[int, DetectedTile, np.ndarray]]] = [[(ref, t, np.array(t.centre))] for t in readings[ref]]
    for f in [i for i in range(n) if i != ref]:
        tiles = list(readings[f])
        anchors = np.array([np.mean([c for _, _, c in p], axis=0) for p in places]) if places else np.zeros((0, 2))
        move = _shift(tiles, anchors, 2 * reach)
        centres = np.array([t.centre for t in tiles]) + move if tiles else np.zeros((0, 2))
        paired: set[int] = set()
        if tiles and places:
            cost = np.hypot(*(centres[:, None, :] - anchors[None, :, :]).transpose(2, 0, 1))
            for i, j in zip(*linear_sum_assignment(cost)):
                if cost[i, j] <= reach:
                    places[j].append((f, tiles[i], centres[i]))
                    paired.add(int(i))
        for i, t in enumerate(tiles):
            if i not in paired:
                places.append([(f, t, centres[i])])
    voted, dropped = [], []
    for p in places:
        votes: dict[str, int] = {}
        mass: dict[str, float] = {}
        for _, t, _ in p:
            votes[t.tile] = votes.get(t.tile, 0) + 1
            mass[t.tile] = mass.get(t.tile, 0.0) + t.confidence
        name = max(votes, key=lambda k: (votes[k], mass[k]))
        centre = np.median([c for _, _, c in p], axis=0)
        w = float(median(t.box[2] - t.box[0] for _, t, _ in p))
        h = float(median(t.box[3] - t.box[1] for _, t, _ in p))
        box = (centre[0] - w / 2, centre[1] - h / 2, centre[0] + w / 2, centre[1] + h / 2)
        scores = [t.score for _, t, _ in p if t.score is not None]
        sideways = sum(t.sideways for _, t, _ in p) * 2 > len(p)
        tile = DetectedTile(name, tuple(float(v) for v in box), mass[name] / n, sideways,
                            float(median(scores)) if scores else None)
        v = VotedTile(tile, dict(sorted(votes.items(), key=lambda kv: -kv[1])), len(p), n)
        (voted if 2 * len(p) > n else dropped).append(v)
    return voted, dropped, ref


def check_frames(frames: Sequence[np.ndarray], allowed: tuple[int, int] = FRAMES) -> None:
    """Check that ``frames`` are ``allowed[0]``-``allowed[1]`` pictures of one size.

    Raises:
        VisionError: ``bad-image`` naming the count or the frame of another size.
    """
    if not allowed[0] <= len(frames) <= allowed[1]:
        raise VisionError("bad-image", f"a capture votes over {allowed[0]} to {allowed[1]} frames of the same hand, "
                          f"not {len(frames)}")
    shapes = [getattr(f, "shape", None) for f in frames]
    for i, s in enumerate(shapes[1:], 2):
        if s != shapes[0]:
            raise VisionError("bad-image", f"frame {i} is {s[1]}x{s[0]} pixels but frame 1 is "
                              f"{shapes[0][1]}x{shapes[0][0]}: the frames of a capture come from one camera position"
                              if s is not None and shapes[0] is not None and len(s) >= 2 and len(shapes[0]) >= 2
                              else f"frame {i} is not a picture like frame 1")


def capture_hand(recognizer: Recognizer, frames: Sequence[np.ndarray], spread: bool | None = None,
                 rules: str = "mcr", min_confidence: float | None = None) -> Capture:
    """Read one hand from 3-5 frames (``FRAMES``): recognise each (``Recognizer.read``), vote
    (``vote``), assemble the voted tiles (``assemble``), list changed tiles for the player; the
    reference frame's weak boxes give the unread areas (``Recognizer.recognition_of``).

    Args:
        recognizer: the loaded pipeline.
        frames: HxWx3 BGR uint8 pictures of the same hand from the same camera position.
        spread: read frame k by ensemble members k (``Recognizer.member``) rather than by all of
            them; default ``SPREAD``.
        rules: the rule system whose hand is assembled (``assemble``: hand size, tile set, flowers).
        min_confidence: the flag threshold of this capture (a table's ``confirm-below``); None:
            the recognizer's own (``Recognizer.recognition_of``).

    Returns:
        The Capture (boxes in the pixels of frame ``reference``).

    Raises:
        VisionError: ``bad-image`` for a count outside ``FRAMES``, frames of different sizes or a
            frame that is not a picture.
    """
    check_frames(frames)
    t0 = time.perf_counter()
    readings, weaks, seconds = [], [], []
    spread = SPREAD if spread is None else spread
    for k, f in enumerate(frames):
        t = time.perf_counter()
        tiles, weak = (recognizer.member(k) if spread else recognizer).read(f)
        readings.append(tiles)
        weaks.append(tuple(weak))
        seconds.append(time.perf_counter() - t)
    voted, dropped, ref = vote(readings)
    order = {id(t): i for i, t in enumerate(t for row in rows_and_groups([v.tile for v in voted])
                                            for g in row for t in g)}
    voted.sort(key=lambda v: order[id(v.tile)])
    # assembled; tiles of weak boxes listed; the reference frame's weak boxes away from the voted
    # tiles (in its pixels, as theirs) are the unread areas
    rec = recognizer.recognition_of([v.tile for v in voted], t0, rules, weaks[ref], min_confidence)
    a = rec.assembly
    listed = {id(t) for t in a.uncertain}
    more = tuple(v.tile for v in voted if v.changed and id(v.tile) not in listed)  # listed however sure the vote
    gaps = tuple(Gap(v.tile.box, "some-frames") for v in dropped if v.seen >= GAP_FRAMES)
    a = dataclasses.replace(a, uncertain=a.uncertain + more, gaps=a.gaps + gaps)
    rec = Recognition(rec.tiles, a, time.perf_counter() - t0)
    return Capture(rec, tuple(voted), tuple(dropped), ref, tuple(seconds), tuple(tuple(r) for r in readings),
                   tuple(weaks))
