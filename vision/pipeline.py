"""The picture-to-hand pipeline: detect the tiles, name each one, assemble the hand."""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import time
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from .assemble import UNREAD_FLOOR, MIN_CONFIDENCE, Assembly, DetectedTile, assemble, rows_and_groups, unread_areas
from .capture import check_image
from .confidence import ConfidenceModel
from .errors import VisionError
from .models import MODEL_DIR, TileClassifier, TileDetector, _covered, covered_shares
from .tiles import LABELS, UNKNOWN, copies_in_a_set

#: A box whose crop the classifier calls ``unknown`` with at least this probability is not a tile.
NOT_A_TILE = 0.5
#: A box read as a face-down tile (``back``) is kept only when the detector's score for it is at
#: least this: ``back`` is learned from synthetic backs only, and at the calibrated threshold
#: (0.25) the detector finds weak boxes in the felt between groups that read surely as backs.
#: Synthetic scenes with concealed kongs (tests/vision scenes, seeds 0-5): the backs scored
#: 0.43-0.77, the boxes on felt 0.26-0.39 (one 0.51); no real photo has a back labelled.
BACK_SURE = 0.4
#: A box wider than this times its height is a sideways tile ...
SIDEWAYS_RATIO = 1.15
#: ... and so is one whose width/height is this many times the picture's median (tiles upright);
#: between 1.15 times the median and these, the box is read both ways and the surer reading wins ...
SIDEWAYS_RELATIVE = 1.8
#: ... except that when both readings name the same tile (most tiles read alike both ways, so the
#: sureness says little), a clear shape decides: a box this many times as wide for its height as
#: the picture's median is sideways, one taller than wide upright. A sideways 7p in a synthetic
#: pung, 1.23 wide per 1 tall against a median of 0.69 (1.78x), had been read upright, and upright
#: 南 tiles 0.9 wide per 1 tall sideways. Against the surer reading alone, on the real photos (test,
#: held-out and valid, 5486 tiles read): 129 flags change; 83 to sideways, 59 of them on label boxes
#: wider than 1.15 per 1 and 4 on tall ones; 46 to upright, 28 on tall label boxes and none on
#: wide ones; the rest near-square or unlabelled. No hand changes. (A cut at 1 for both, wider
#: than tall sideways, changed 325, 51 of them to sideways on tall labels.)
SAME_NAME_SIDEWAYS = 1.5
#: A box of the upright shape (read upright only until December 2026) is read turned a quarter as
#: well, and the turned reading wins when it names another tile and is
#: surer by at least this much (0-1, the top probability other than ``unknown``); the tile is
#: then flagged sideways only if its box is at least as wide as tall. Tiles lying
#: turned in near-square boxes (close-ups, tiles at an angle) were read as the wrong tile upright:
#: 2m as 3m, 1m as 中. ``benchmarks/vision_eval.py --no-peer``, per tile (exact photos): held-out
#: 91.9% (65.7%) against 91.6% (65.7%), test 96.0% (91.7%) against 95.8% (87.5%), valid 91.1%
#: (54.8%) against 91.0% (53.9%); a margin of 0: held-out 91.6% (62.9%); 0.2: 91.8% (65.7%); 0.3:
#: 91.6% (65.7%). Chosen on the held-out photos. None: read upright only.
TURNED_MARGIN: float | None = 0.1
#: ... but only a box at least this many times as wide for its height as the picture's usual tile
#: (the median, 0.5-1): a far narrower one is an upright tile, or a column of tiles squeezed
#: sideways, whose turned crop misleads. Without this bound the made-up squeezed pictures lost
#: tiles (`vision_eval --band R --squeeze`: held-out R = 7 82.2% against 83.6%, valid R = 4 91.3%
#: against 91.6%); with it they read as before, and the photos as with the rule alone (valid exact
#: photos 55.3% against 54.8%).
TURNED_SHAPE = 0.8
#: Report the areas where the detector responds weakly as to several tiles that no tile read
#: covers (``assemble.unread_areas``: gaps of kind ``unread``; issue 21). The weak boxes come from
#: the same run of the networks as the tiles (``TileDetector.detect_with_weak``), no extra pass.
UNREAD = True


#: Weak boxes (detector score from ``RESCUE_FLOOR`` up to its threshold) that the classifier reads
#: as one of ``RESCUE_LABELS`` with at least ``RESCUE_SURE`` are kept as tiles, when no kept box
#: covers more than ``RESCUE_OVERLAP`` of them (``models._covered``). The white dragon (白板, a
#: framed blank) is the tile the detector scores lowest: on a held-out photo of the training split
#: three of them scored 0.34-0.35 against a threshold of 0.35, each read as ``P`` at 0.85-0.96.
#: Such a tile is always listed for the player to confirm (``Recognizer.recognize``). Held-out
#: photos (training split): 637 tiles read right against 635, no box more that is not a tile.
#: Kept for every label instead: 638, but 26 boxes more that are no tile. ``RESCUE_LABELS = ()``:
#: none kept.
RESCUE_FLOOR = 0.2
RESCUE_LABELS: tuple[str, ...] = ("P",)
RESCUE_SURE = 0.8
RESCUE_OVERLAP = 0.3
#: A tile's box more than this share of which (or of the other box, the smaller of the two) a box
#: of a higher detector score covers (``models._covered``) is listed for the player to confirm:
#: tiles lie side by side, so two boxes over half on each other are two boxes on one tile (the
#: second reads it again, or straddles it and its neighbour) or a tile mostly hidden under another.
#: From the label audit of issue 21 (``vision/label_audit.json``): 3 of the 4 silent photos left
#: on ``test`` were such a second box, read at 0.66-0.93. A geometric rule, not a fitted one;
#: ``None``: no such flag.
COVERED_FLAG: float | None = 0.6
#: Both boxes of such a pair are listed (which of the two is the tile is not known: on ``test`` the
#: box of the higher detector score was the extra one once); ``False``: only the less sure box.
#: Audited labels, both against one: held-out 17.1% silent photos against 20.0% (1.43 flags per
#: photo against 1.34), test 2.1% against 4.2% (0.44 against 0.33), valid 19.6% against 21.0%
#: (1.80 against 1.70).
COVERED_PAIR = True


@dataclasses.dataclass(frozen=True)
class Recognition:
    """What a picture shows.

    Attributes:
        tiles: every tile found, in reading order (top to bottom, left to right).
        assembly: the hand read from their layout.
        seconds: wall time of detection, classification and assembly.
    """

    tiles: tuple[DetectedTile, ...]
    assembly: Assembly
    seconds: float

    def to_dict(self) -> dict:
        """``{"tiles": [...], "hand": str | None, "uncertain": [...], "gaps": [{"box", "kind"}], ...}``
        (the ``--json`` output; ``gaps``: where a tile seems to be missing, ``assemble.Gap``)."""
        a = self.assembly
        return {"tiles": [t.to_dict() for t in self.tiles], "hand": a.hand,
                "uncertain": [t.to_dict() for t in a.uncertain], "melds": list(a.melds),
                "concealed": list(a.concealed), "winning_tile": a.win_tile, "flowers": list(a.flowers),
                "problems": list(a.problems), "notes": list(a.notes), "gaps": [g.to_dict() for g in a.gaps],
                "seconds": round(self.seconds, 3)}


NORMALISE_CROPS = True
#: In a squeezed picture (most boxes far wider than tall), decide the orientation of the boxes of
#: the usual shape once for the picture, by the mean confidence of each reading.
PHOTO_ORIENTATION = True


#: Read the picture's tiles as tiles of one set (``one_set_reading``).
ONE_SET = True


def one_set_reading(probs: np.ndarray) -> list[int]:
    """The label index of each crop (``probs``: N x len(LABELS) probabilities): the likeliest
    reading of all the crops together in which no tile is read more often than one set holds it
    (``tiles.copies_in_a_set``: four of each hand tile, one of each flower; rules text, article 1),
    ``back`` and ``unknown`` unlimited. Without a tile read too often, that is each crop's likeliest
    label; otherwise the assignment of crops to a set's tiles with the largest sum of
    log-probabilities (``scipy.optimize.linear_sum_assignment``). The reading's confidences are those
    of the labels returned, so a crop moved to a label it is unsure of is listed for the player to
    confirm. Raises ValueError for an array of another shape, or one with a NaN or inf.

    A set can hold spare blank tiles (more than four ``P``); a photo that shows them gets its extra
    blanks read as other tiles, with low confidence (so listed for the player to confirm)."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 2 or probs.shape[1] != len(LABELS):
        raise ValueError(f"one_set_reading takes N x {len(LABELS)} probabilities, not shape {probs.shape}")
    if not np.isfinite(probs).all():
        raise ValueError("one_set_reading: the probabilities must be finite numbers (a NaN or inf was given)")
    n = len(probs)
    choice = [int(k) for k in np.argmax(probs, axis=1)] if n else []
    room = [copies_in_a_set(name) if name not in ("back", UNKNOWN) else n for name in LABELS]
    counts = np.bincount(choice, minlength=len(LABELS))
    if all(c <= r for c, r in zip(counts, room)):
        return choice
    # imported here: scipy.optimize adds about 50 MB to the process, and most photos never need it
    from scipy.optimize import linear_sum_assignment

    slots = np.repeat(np.arange(len(LABELS)), room)  # one column per copy of a label
    cost = -np.log(np.clip(probs, 1e-9, 1.0))[:, slots]
    rows, cols = linear_sum_assignment(cost)
    out = [0] * n
    for r, c in zip(rows, cols):
        out[r] = int(slots[c])
    return out


def _normalised(boxes: list, sideways: list[bool], upright: list[bool] | None = None) -> list:
    """Boxes narrower or shorter than 0.85 of the picture's usual tile size widened to it, around
    their centre (the detector's centres are surer than its sizes). The usual size is the median
    of the boxes ``upright`` (default: those not ``sideways``)."""
    upright = [not s for s in sideways] if upright is None else upright
    up = [(b[2] - b[0], b[3] - b[1]) for b, u in zip(boxes, upright) if u] or \
         [(b[2] - b[0], b[3] - b[1]) for b in boxes]
    mw, mh = float(np.median([w for w, _ in up])), float(np.median([h for _, h in up]))
    out = []
    for b, s in zip(boxes, sideways):
        tw, th = (mh, mw) if s else (mw, mh)
        w, h = b[2] - b[0], b[3] - b[1]
        cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
        w, h = (tw if w < 0.85 * tw else w), (th if h < 0.85 * th else h)
        out.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, b[4]))
    return out


class Recognizer:
    """Loads the models (both ensembles) once; ``recognize`` is then called per picture."""

    def __init__(self, model_dir: Path = MODEL_DIR, min_confidence: float | None = None,
                 backend: str | None = None, calibrated: bool = False) -> None:
        # backend: the engine that runs the models (``vision.models.BACKENDS``; default the fastest)
        self.detector = TileDetector(model_dir, backend=backend)
        self.classifier = TileClassifier(model_dir, backend=backend)
        #: the calibration of the reported confidence (``vision.confidence``; None: the classifier's
        #: probability is reported as it is): ``calibrated=False`` or no entry in metrics.json.
        #: Off by default (issue #21, partial): fitted on the training split's held-out sessions
        #: (augmented photos), it did not carry over: on valid it raised the silent-error photos
        #: from 32.4 % to 37.0 % and the calibration error from 0.033 to 0.055 (benchmarks/vision_eval.py)
        self.confidence = ConfidenceModel.load(model_dir) if calibrated else None
        #: tiles reported below this confidence are listed for the player to confirm: by default
        #: the threshold fitted with the calibration, else ``MIN_CONFIDENCE``
        self.min_confidence = float(min_confidence) if min_confidence is not None else \
            self.confidence.flag_below if self.confidence is not None else MIN_CONFIDENCE

    def member(self, k: int) -> "Recognizer":
        """This recognizer running one member of each ensemble (the networks shared, not loaded
        again): detector member ``k`` mod 4 and classifier member ``k`` mod 2 (``models.members``).
        A capture reads its frame ``k`` so (``vision.voting.SPREAD``): the vote across the frames
        stands in for the ensemble's average, at a quarter of the detector's and half the
        classifier's cost per frame."""
        out = copy.copy(self)
        out.detector = copy.copy(self.detector)
        out.detector.nets = [self.detector.nets[k % len(self.detector.nets)]]
        out.classifier = copy.copy(self.classifier)
        out.classifier.nets = [self.classifier.nets[k % len(self.classifier.nets)]]
        return out

    def find_tiles(self, image: np.ndarray) -> list[DetectedTile]:
        """Every tile in ``image`` (HxWx3 BGR uint8), reading order, each with its confidence: the
        calibrated probability that it is right (``self.confidence``), or the classifier's
        probability of its label when there is no calibration. Raises VisionError ``bad-image``."""
        return self.read(image)[0]

    def read(self, image: np.ndarray) -> tuple[list[DetectedTile], list[tuple[float, float, float, float, float]]]:
        """``(tiles, weak)``: the tiles of ``find_tiles``, and the detector's weak boxes of the same
        run (``(x1, y1, x2, y2, score)`` in pixels, scored from ``RESCUE_FLOOR`` or, with ``UNREAD``,
        ``assemble.UNREAD_FLOOR`` up to the threshold; ``recognition_of``'s ``weak_boxes``, whose
        clusters away from the tiles read are reported as unread areas).
        Raises VisionError ``bad-image``."""
        check_image(image)
        floor = min(RESCUE_FLOOR, UNREAD_FLOOR) if UNREAD else RESCUE_FLOOR
        boxes, weak = self.detector.detect_with_weak(image, floor=floor)
        rescue = [b for b in weak if b[4] >= RESCUE_FLOOR]
        if rescue and RESCUE_LABELS:
            # a weak box (below the detector's threshold) is kept when the classifier reads it
            # surely as one of RESCUE_LABELS (the white dragon's blank face scores low as a tile)
            # and it covers no kept box much (not a box between two tiles)
            q = self.classifier.classify([TileClassifier.crop(image, b[:4]) for b in rescue])
            idx = [LABELS.index(n) for n in RESCUE_LABELS]
            boxes = boxes + [b for b, p in zip(rescue, q) if max(p[idx]) >= RESCUE_SURE and
                             (not boxes or _covered(b, boxes) < RESCUE_OVERLAP)]
        if not boxes:
            return [], weak
        H, W = image.shape[:2]
        aspects = np.array([(b[2] - b[0]) / max(1e-6, b[3] - b[1]) for b in boxes])
        med = float(np.median(aspects))
        ref = float(np.clip(med, 0.5, 1.0))
        # most boxes far wider than tall: a picture squeezed sideways (or every tile turned), so
        # no box is surely sideways by its shape: each is read both ways below
        squeezed = med > SIDEWAYS_RELATIVE
        sure_ref = med if squeezed else ref
        sure = [bool(a > max(SIDEWAYS_RATIO, SIDEWAYS_RELATIVE * sure_ref)) for a in aspects]
        unsure = [i for i, a in enumerate(aspects) if not sure[i] and a > 1.15 * ref]
        # a box of the upright shape, not much narrower than the usual tile: also read turned a
        # quarter when its reading is unsure (TURNED_MARGIN, TURNED_SHAPE)
        upright_shaped = [] if TURNED_MARGIN is None else \
            [i for i, a in enumerate(aspects) if not sure[i] and TURNED_SHAPE * ref <= a <= 1.15 * ref]
        # an unsure box is read sideways from its crop normalised as a sideways tile's (upright,
        # a box short of a tile's height is grown to it: a sideways tile then reads as a square);
        # in a squeezed picture from its own box (the usual tile shape is no guide there)
        turned = list(boxes)
        if NORMALISE_CROPS:
            upright = [not s for s in sure]
            if not squeezed:
                turned = _normalised(boxes, [True] * len(boxes), upright)
            boxes = _normalised(boxes, sure, upright)
        crops = [TileClassifier.crop(image, b[:4], s) for b, s in zip(boxes, sure)]
        crops += [TileClassifier.crop(image, turned[i][:4], True) for i in unsure]
        probs = self.classifier.classify(crops)
        unk = LABELS.index(UNKNOWN)
        sideways = list(sure)
        if squeezed and unsure and PHOTO_ORIENTATION:
            # one squeeze for the whole picture: the orientation whose readings are surer on
            # average holds for every box of the usual shape (a single crop distorted that much
            # can read surely as a wrong tile, often as 9s)
            up = np.mean([np.delete(probs[i], unk).max() for i in unsure])
            turned_conf = np.mean([np.delete(probs[len(boxes) + j], unk).max() for j in range(len(unsure))])
            if turned_conf > up:
                for j, i in enumerate(unsure):
                    probs[i] = probs[len(boxes) + j]
                    sideways[i] = True
        else:
            for j, i in enumerate(unsure):  # read both ways: the surer reading tells the orientation
                q = probs[len(boxes) + j]
                turn = np.delete(q, unk).max() > np.delete(probs[i], unk).max()
                if np.argmax(q) == np.argmax(probs[i]):  # the same tile either way: a clear shape decides
                    if aspects[i] >= SAME_NAME_SIDEWAYS * ref:
                        turn = True
                    elif aspects[i] < 1.0:  # taller than wide: a sideways tile's box never is
                        turn = False
                if turn:
                    probs[i] = q
                    sideways[i] = True
        if upright_shaped:
            # only a reading less sure than 1 - TURNED_MARGIN can lose to the turned one, so the
            # others are not read turned (test: 122-129 ms per photo, against 118-127 reading none
            # turned and 164-170 reading every box turned)
            up_conf = {i: float(np.delete(probs[i], unk).max()) for i in upright_shaped}
            doubtful = [i for i in upright_shaped if up_conf[i] + TURNED_MARGIN < 1.0]
            q_turned = self.classifier.classify([TileClassifier.crop(image, turned[i][:4], True) for i in doubtful])
            for i, q in zip(doubtful, q_turned):
                if np.argmax(q) != np.argmax(probs[i]) and np.delete(q, unk).max() > up_conf[i] + TURNED_MARGIN:
                    probs[i] = q
                    # the name is the turned one; a box taller than wide is still no sideways
                    # tile's (a tile lying at an angle, not one laid sideways in a meld)
                    sideways[i] = bool(aspects[i] >= 1.0)
        keep = [i for i in range(len(boxes)) if probs[i][unk] < NOT_A_TILE]
        names = one_set_reading(probs[keep]) if ONE_SET else [int(np.argmax(probs[i])) for i in keep]
        out = []
        for i, k in zip(keep, names):
            b, p, sw = boxes[i], probs[i], sideways[i]
            if LABELS[k] == "back" and b[4] < BACK_SURE:  # read as a back (or moved to one) from a weak box
                continue
            # a box grown to the usual tile's size may reach past the picture's edge: report the
            # part of it that is in the picture
            box = (max(0.0, b[0]), max(0.0, b[1]), min(float(W), b[2]), min(float(H), b[3]))
            conf = float(p[k]) if self.confidence is None else self.confidence(float(p[k]), float(b[4]))
            out.append(DetectedTile(LABELS[k], box, conf, sw, float(b[4])))
        return [t for row in rows_and_groups(out) for g in row for t in g], weak

    def recognize(self, image: np.ndarray, rules: str = "mcr", min_confidence: float | None = None) -> Recognition:
        """Detect, classify and assemble.

        Args:
            image: HxWx3 BGR uint8 picture of the table.
            rules: the rule system whose hands are assembled (``assemble``'s ``rules``: hand size,
                tile set, flowers), default MCR.
            min_confidence: the flag threshold of this picture only (a table's ``confirm-below``
                setting, 0-1): tiles read below it are listed in ``uncertain``; None: the
                recognizer's own (``self.min_confidence``).

        Returns:
            The Recognition (an empty ``tiles`` when nothing was found: the caller decides whether
            that is an error).

        Raises:
            VisionError: ``bad-image`` for an array that is not a picture.
            RulesError: ``unknown-rules`` for a ``rules`` not registered.
        """
        t0 = time.perf_counter()
        tiles, weak = self.read(image)
        return self.recognition_of(tiles, t0, rules, weak, min_confidence)

    def recognition_of(self, tiles: list[DetectedTile], t0: float, rules: str = "mcr",
                       weak_boxes: Sequence = (), min_confidence: float | None = None) -> Recognition:
        """The Recognition of ``tiles`` found in one picture (``find_tiles``): assembled for the rule
        system ``rules`` (``assemble``), with the tiles kept from weak boxes and both boxes of a pair
        mostly over each other (``COVERED_FLAG``, ``COVERED_PAIR``) listed for the player;
        ``t0``: ``time.perf_counter()`` when the picture's reading began (``seconds`` counts from it);
        ``min_confidence``: the flag threshold of this call (None: ``self.min_confidence``; a
        per-call value, so that one recognizer serves tables or jobs with different thresholds)."""
        a = assemble(tiles, self.min_confidence if min_confidence is None else min_confidence, rules)
        # weak_boxes: the detector's weak boxes of that picture (``read``); with UNREAD, the areas
        # where they show tiles that were not read are gaps (assemble.unread_areas, kind "unread")
        unread = tuple(unread_areas(weak_boxes, tiles)) if UNREAD and len(weak_boxes) else ()
        if unread:
            a = dataclasses.replace(a, gaps=a.gaps + unread)
        # a tile kept from a box below the detector's threshold (``RESCUE_LABELS``) is always listed
        # for the player to confirm, however sure its reading: the calibration saw few such boxes
        listed = {id(t) for t in a.uncertain}
        weak = tuple(t for t in tiles if t.score is not None and t.score < self.detector.threshold
                     and id(t) not in listed)
        listed.update(id(t) for t in weak)
        # two boxes mostly on each other: two boxes on one tile (COVERED_FLAG), asked about too
        covered: tuple[DetectedTile, ...] = ()
        scored = [t for t in tiles if t.score is not None]
        if COVERED_FLAG is not None and len(scored) > 1:
            share = covered_shares([t.box for t in scored], [u.box for u in tiles])  # one numpy pass
            pairs = [(t, u) for i, t in enumerate(scored) for j in np.flatnonzero(share[i] > COVERED_FLAG)
                     if (u := tiles[j]) is not t and (u.score or 0.0) > t.score]
            # which box of the pair is the tile is not known: the player is asked about both
            # (COVERED_PAIR), or only about the less sure one
            both = [x for pair in pairs for x in (pair if COVERED_PAIR else pair[:1])]
            covered = tuple({id(t): t for t in both if id(t) not in listed}.values())
        if weak or covered:
            a = dataclasses.replace(a, uncertain=a.uncertain + weak + covered)
        return Recognition(tuple(tiles), a, time.perf_counter() - t0)


_DEFAULT: Recognizer | None = None


def default_recognizer() -> Recognizer:
    """``Recognizer()`` with the committed models, loaded once per process. Raises VisionError ``model``."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Recognizer()
    return _DEFAULT


def recognize(image: np.ndarray, rules: str = "mcr") -> Recognition:
    """``Recognizer().recognize(image, rules)`` with the committed models, loaded once per process."""
    return default_recognizer().recognize(image, rules)


def _latin(text: str) -> str:
    """``text`` without its Chinese words, which OpenCV's Hershey fonts cannot draw (they come out
    as ``?``): "apart from the hand (单放, 第五条 term 28)" -> "apart from the hand (term 28)"."""
    text = re.sub(f"[{_CJK}]+[,;{_CJK}]?\\s*", "", text)
    text = re.sub(r"\s*\(\s*\)", "", text)
    return re.sub(r"\s{2,}", " ", text).strip().encode("ascii", "replace").decode()


#: Chinese characters and the full-width punctuation written with them (CJK radicals to unified
#: ideographs, compatibility ideographs, half- and full-width forms)
_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"


#: The colours (BGR) of the places the player is asked to look at, drawn dashed: where a tile
#: seems to be missing (red, as the page's ``div.gap``) and where tiles were not read (orange, as
#: the page's ``div.gap.unread``); ``assemble.Gap.kind``.
GAP_COLOURS = {"missing": (0, 0, 213), "unread": (0, 108, 239)}


def _dashed_rectangle(out: np.ndarray, box: tuple, colour: tuple, th: int) -> None:
    """Draw ``box`` (x1, y1, x2, y2 px) on ``out`` in place as a dashed rectangle of line width ``th``."""
    x1, y1, x2, y2 = (int(round(v)) for v in box)
    dash = max(4, 4 * th)
    for a, b in (((x1, y1), (x2, y1)), ((x2, y1), (x2, y2)), ((x2, y2), (x1, y2)), ((x1, y2), (x1, y1))):
        length = max(abs(b[0] - a[0]), abs(b[1] - a[1]), 1)  # an edge is horizontal or vertical
        dx, dy = b[0] - a[0], b[1] - a[1]
        for s in range(0, length, 2 * dash):
            e = min(length, s + dash)
            cv2.line(out, (a[0] + dx * s // length, a[1] + dy * s // length),
                     (a[0] + dx * e // length, a[1] + dy * e // length), colour, th, cv2.LINE_AA)


def annotate(image: np.ndarray, recognition: Recognition, gaps: bool = True) -> np.ndarray:
    """A copy of ``image`` (HxWx3 BGR uint8) with each tile's box, name and confidence drawn:
    green when sure, red when the player should confirm it; sideways tiles marked ``~``; the
    assembled hand (or the problem) written at the top. ``gaps``: also the layout check's places
    (``Assembly.gaps``), dashed (``GAP_COLOURS``): ``?`` where a tile seems to be missing,
    ``tiles not read`` where tiles were not read (the page draws them itself, over the picture, and
    passes False)."""
    out = image.copy()
    H, W = out.shape[:2]
    scale = max(0.4, min(W, H) / 1000)
    th = max(1, int(round(2 * scale)))
    for g in recognition.assembly.gaps if gaps else ():
        colour = GAP_COLOURS["unread" if g.kind == "unread" else "missing"]
        _dashed_rectangle(out, g.box, colour, th + 1)
        label = "tiles not read" if g.kind == "unread" else "?"
        (tw, tht), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.5 * scale, th)
        # inside the box's lower left corner (its top may lie under the hand written at the top)
        x, y = int(round(g.box[0])) + th + 3, int(round(g.box[3])) - base - th - 2
        cv2.rectangle(out, (x - 1, y - tht - 2), (x + tw + 1, y + base), (255, 255, 255), -1)
        cv2.putText(out, label, (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5 * scale, colour, th, cv2.LINE_AA)
    unsure = {id(t) for t in recognition.assembly.uncertain}
    for t in recognition.tiles:
        x1, y1, x2, y2 = (int(round(v)) for v in t.box)
        colour = (0, 0, 255) if id(t) in unsure else (0, 200, 0)
        cv2.rectangle(out, (x1, y1), (x2, y2), colour, th)
        label = f"{t.tile}{'~' if t.sideways else ''} {t.confidence:.2f}"
        (tw, tht), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.5 * scale, th)
        ty = y1 - 3 if y1 - tht - 6 > 0 else y2 + tht + 3
        cv2.rectangle(out, (x1, ty - tht - 3), (x1 + tw + 2, ty + base), (255, 255, 255), -1)
        cv2.putText(out, label, (x1 + 1, ty), cv2.FONT_HERSHEY_SIMPLEX, 0.5 * scale, colour, th, cv2.LINE_AA)
    a = recognition.assembly
    head = f"hand: {a.hand}" if a.hand else ("hand: ? " + (_latin(a.problems[0]) if a.problems else ""))
    if a.flowers:
        head += f"   flowers: {' '.join(a.flowers)}"
    (tw, tht), base = cv2.getTextSize(head, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, th)
    cv2.rectangle(out, (0, 0), (min(W, tw + 10), tht + base + 10), (255, 255, 255), -1)
    cv2.putText(out, head, (5, tht + 5), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, (0, 0, 0), th, cv2.LINE_AA)
    return out


def check_output_path(path: str | Path) -> None:
    """Check, before any work, that a picture can be written to ``path``: its folder exists and
    is writable, and OpenCV has a writer for its suffix (``.png``, ``.jpg``, ...).

    Raises:
        VisionError: ``unwritable-output`` naming what is wrong.
    """
    p = Path(path)
    if not str(path).strip() or not p.suffix or not cv2.haveImageWriter(str(p)):
        raise VisionError("unwritable-output", f"cannot write a picture named {str(path)!r}: "
                          "use a file name ending in a suffix such as .png or .jpg")
    folder = p.parent
    try:
        if not folder.is_dir():
            raise VisionError("unwritable-output", f"cannot write the annotated picture to {path}: "
                              f"the folder {folder} does not exist")
        if p.is_dir() or not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
            raise VisionError("unwritable-output", f"cannot write the annotated picture to {path}: not writable")
    except OSError as e:  # a name too long, a loop of links, ...
        raise VisionError("unwritable-output", f"cannot write the annotated picture to {path}: {e.strerror}") from None


def write_annotated(path: str | Path, image: np.ndarray, recognition: Recognition) -> None:
    """Write ``annotate(image, recognition)`` to ``path`` (format from its suffix, e.g. ``.png``).

    Raises:
        VisionError: ``unwritable-output`` when the file cannot be written (``check_output_path``
        says why before the work, where it can).
    """
    check_output_path(path)
    try:
        ok = cv2.imwrite(str(path), annotate(image, recognition))
    except cv2.error:
        ok = False
    if not ok:
        raise VisionError("unwritable-output", f"cannot write the annotated picture to {path}: check the folder "
                          "and use a suffix such as .png or .jpg")
