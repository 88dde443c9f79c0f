"""Scoring at the table, the use-cases the command line and the HTTP API share:

* ``score_from_options``: a hand scored with options by name (``mjtable score`` flags, its
  ``--batch`` lines, ``POST /api/score`` bodies), read by ``scoring.WinContext.from_options``.
* ``score_photo``: a photo scored (``mjtable score-photo``, ``POST /api/score/photo`` and
  ``/api/score/capture``). The caller reads the photo its own way (the command line with
  ``vision`` in its process, the service in a worker process) and hands over the recognition as
  plain data (``vision.Recognition.to_dict()``); this module decides, the same way for both,
  whether the tiles read can be scored, and scores them.

It imports ``scoring`` only, so the service process never loads OpenCV through it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

from scoring import PROFILES, ScoreResult, ScoringError, WinContext, parse_hand, score

#: The keys of the photo's options besides the win options (``WinContext.OPTIONS``).
PHOTO_KEYS = ("rules", "accept_uncertain")


def score_from_options(hand: str, options: Mapping[str, Any], other_keys: Sequence[str] = ("rules",)) -> ScoreResult:
    """Score ``hand`` (MCR notation) by MCR with options by name.

    Args:
        hand: the hand string, e.g. ``"123m456m789m234p5s5s"``.
        options: the win options (``WinContext.OPTIONS``: ``self_drawn``, ``seat_wind``, ...) and
            ``rules`` (``mcr`` or ``mcr-1998``, default mcr); missing ones take their defaults.
        other_keys: further keys the caller reads itself (skipped; named as allowed in the error
            for an unknown key).
    Raises:
        ScoringError: an unknown option or a bad value (``bad-value``), a hand that cannot be
            scored (``syntax``, ``fifth-tile``, ``not-winning`` ...).
    """
    ctx = WinContext.from_options(options, other_keys=tuple(other_keys) + ("rules",))
    return score(parse_hand(hand), ctx, options.get("rules", "mcr"))


@dataclasses.dataclass(frozen=True)
class PhotoScore:
    """What became of a photo.

    Attributes:
        recognition: the recognition as read (``vision.Recognition.to_dict()``: ``tiles``, ``hand``,
            ``uncertain``, ``flowers``, ``problems`` ...).
        result: the score, or None when the photo could not be scored (``problem`` says why).
        problem_code: ``no-tiles``, ``layout`` (the tiles do not add up), ``uncertain`` (tiles read with
            low confidence, not accepted) or a ``ScoringError`` code (``not-winning`` ...); None when scored.
        problem_message: one line for the user; None when scored.
    """

    recognition: Mapping[str, Any]
    result: ScoreResult | None
    problem_code: str | None = None
    problem_message: str | None = None

    @property
    def problem(self) -> str | None:
        """``"code: message"`` (the command line's one line after ``mjtable: ``), or None when scored."""
        return None if self.problem_code is None else f"{self.problem_code}: {self.problem_message}"


def check_photo_options(options: Mapping[str, Any]) -> bool:
    """The photo's options checked before the photo is read: the win options (``WinContext.OPTIONS``;
    ``flowers`` left out means the flowers seen in the photo), ``rules`` (``mcr`` or ``mcr-1998``)
    and ``accept_uncertain`` (score tiles read with low confidence).

    Returns: accept_uncertain.
    Raises:
        ScoringError: ``bad-value`` naming the option and what is allowed.
    """
    WinContext.from_options(options, other_keys=PHOTO_KEYS)
    rules = options.get("rules", "mcr")
    if not isinstance(rules, str) or rules not in PROFILES:
        raise ScoringError("bad-value", f"rules {rules!r}: a photo is scored by {' or '.join(PROFILES)}")
    accept = options.get("accept_uncertain", False)
    if not isinstance(accept, bool):
        raise ScoringError("bad-value", f"accept_uncertain must be true or false, got {accept!r}")
    return accept


def reading_problem(recognition: Mapping[str, Any], *, accept_uncertain: bool,
                    name: str = "the photo") -> tuple[str, str] | None:
    """Why the tiles read from a photo cannot be scored as they are, or None when they can.

    Args:
        recognition: ``vision.Recognition.to_dict()``.
        accept_uncertain: tiles read with low confidence are taken as read.
        name: the photo as the user knows it (a file name), for the message.
    Returns:
        ``(code, message)``: ``no-tiles`` (none found), ``layout`` (the tiles do not add up to a
        hand; the message gives the assembly's problems), ``uncertain`` (tiles read with low
        confidence, each with its confidence); or None.
    """
    if not recognition["tiles"]:
        return "no-tiles", f"no mahjong tiles found in {name}: photograph the revealed hand from above"
    if recognition["hand"] is None:
        return "layout", "the tiles do not add up to a hand: " + "; ".join(recognition["problems"])
    if recognition["uncertain"] and not accept_uncertain:
        tiles = ", ".join(f"{t['tile']} ({t['confidence']:.2f})" for t in recognition["uncertain"])
        return "uncertain", (f"{len(recognition['uncertain'])} tile(s) read with low confidence ({tiles}): check "
                             "them and score the corrected hand, or accept them as read")
    return None


def score_photo(read: Callable[[], Mapping[str, Any]], options: Mapping[str, Any], name: str = "the photo") -> PhotoScore:
    """Read a photo and score the hand in it.

    Args:
        read: returns the recognition as plain data (``vision.Recognition.to_dict()``); called once,
            after the options are checked, so that bad options lose no work. Its errors (an unreadable
            image, a busy reader) pass through.
        options: the win options of ``WinContext.OPTIONS`` (``flowers`` left out: the flowers in the
            photo), ``rules`` (``mcr``, ``mcr-1998``) and ``accept_uncertain`` (default False).
        name: the photo as the user knows it (a file name), for the messages.
    Returns:
        A PhotoScore: scored, or with the reason it was not (no tiles; the tiles do not add up to a
        hand; tiles read with low confidence and not accepted; a hand that scoring refuses).
    Raises:
        ScoringError: ``bad-value`` for bad options (before ``read`` is called).
    """
    accept = check_photo_options(options)
    rec = read()

    def refuse(code: str, message: str) -> PhotoScore:
        return PhotoScore(rec, None, code, message)

    found = reading_problem(rec, accept_uncertain=accept, name=name)
    if found is not None:
        return refuse(*found)
    try:
        result = score_from_options(rec["hand"], {"flowers": list(rec["flowers"]), **options}, PHOTO_KEYS)
    except ScoringError as e:
        return refuse(e.code, f"{e.message} (hand read from the photo: {rec['hand']})")
    return PhotoScore(rec, result)
