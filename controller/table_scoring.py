"""Scoring at the table, the use-cases the command line and the HTTP API share:

* ``score_from_options``: a hand scored with options by name (``mjtable score`` flags, its
  ``--batch`` lines, ``POST /api/score`` bodies), read by ``scoring.WinContext.from_options``.
* ``score_photo``: a photo scored (``mjtable score-photo``, ``POST /api/score/photo`` and
  ``/api/score/capture``) by MCR or by another rule system (``rules``, with that system's own
  options, the names of ``mjtable score --rules X``). The caller reads the photo its own way (the
  command line with ``vision`` in its process, the service in a worker process), assembled for the
  system's hand size (``vision.assemble``'s ``rules``), and hands over the recognition as plain data
  (``vision.Recognition.to_dict()``); this module decides, the same way for both, whether the tiles
  read can be scored, and scores them.

It imports ``scoring`` only, so the service process never loads OpenCV through it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

from scoring import PROFILES, ScoreResult, ScoringError, WinContext, parse_hand, score, systems

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
        problem_code: ``no-tiles``, ``tile-not-in-set`` (a tile the rule system does not play),
            ``layout`` (the tiles do not add up), ``uncertain`` (tiles read with low confidence, not
            accepted) or a ``ScoringError`` code (``not-winning`` ...); None when scored.
        problem_message: one line for the user; None when scored.
    """

    recognition: Mapping[str, Any]
    result: ScoreResult | systems.SystemResult | None
    problem_code: str | None = None
    problem_message: str | None = None

    @property
    def problem(self) -> str | None:
        """``"code: message"`` (the command line's one line after ``mjtable: ``), or None when scored."""
        return None if self.problem_code is None else f"{self.problem_code}: {self.problem_message}"


def system_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a photo scored by a rule system other than MCR: all but ``PHOTO_KEYS``."""
    return {k: v for k, v in options.items() if k not in PHOTO_KEYS}


def check_photo_options(options: Mapping[str, Any]) -> bool:
    """The photo's options checked before the photo is read: ``rules`` (``mcr``, ``mcr-1998`` or another
    system of ``mjtable rules --list``), the options of those rules (MCR: the win options of
    ``WinContext.OPTIONS``, ``flowers`` left out meaning the flowers seen in the photo; another system:
    its own, ``RuleSystem.resolve_options``) and ``accept_uncertain`` (score tiles read with low confidence).

    Returns: accept_uncertain.
    Raises:
        ScoringError: ``bad-value`` naming the option and what is allowed; ``unknown-rules`` listing
            the systems; ``unknown-option`` naming the system the option belongs to.
    """
    rules = options.get("rules", "mcr")
    if not isinstance(rules, str):
        raise ScoringError("bad-value", f"rules must be a string, one of {', '.join(systems.SYSTEMS)}; got {rules!r}")
    if rules in PROFILES:
        # an option of another rule system is named with the system that takes it
        foreign = {k: v for k, v in options.items()
                   if k not in PHOTO_KEYS and k not in WinContext.OPTIONS and systems.systems_with_option(k)}
        systems.get(rules).resolve_options(foreign)
        WinContext.from_options(options, other_keys=PHOTO_KEYS)
    else:
        systems.get(rules).resolve_options(system_options(options))
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
        tiles = ", ".join(f"{t['tile']} ({t['confidence']:.3f})" for t in recognition["uncertain"])
        return "uncertain", (f"{len(recognition['uncertain'])} tile(s) not read surely ({tiles}): check "
                             "them and score the corrected hand, or accept them as read")
    return None


def outside_the_set(recognition: Mapping[str, Any], rules: str, name: str = "the photo") -> str | None:
    """Why the tiles read from a photo cannot be a hand of ``rules`` whatever their layout, or None:
    the tiles the system does not play (``TileSet.not_played``: an honour in Changsha, a flower in
    riichi), each named with what it is. MCR plays every tile the recogniser reads."""
    if rules in PROFILES:
        return None
    system = systems.get(rules)
    found = {t["tile"]: system.tile_set.not_played(t["tile"]) for t in recognition["tiles"]
             if t["tile"] not in ("back", "unknown")}
    bad = [f"{t} ({what})" for t, what in found.items() if what is not None]
    if not bad:
        return None
    return f"{name} shows {', '.join(bad)}: {system.name} plays {system.tile_set.description}"


def score_photo(read: Callable[[], Mapping[str, Any]], options: Mapping[str, Any],
                name: str = "the photo") -> PhotoScore:
    """Read a photo and score the hand in it.

    Args:
        read: returns the recognition as plain data (``vision.Recognition.to_dict()``), assembled for
            ``options["rules"]`` (its hand size and flowers); called once, after the options are
            checked, so that bad options lose no work. Its errors (an unreadable image, a busy
            reader) pass through.
        options: ``rules`` (default ``mcr``), ``accept_uncertain`` (default False) and the options of
            the rules: MCR's win options (``WinContext.OPTIONS``; ``flowers`` left out: the flowers in
            the photo), or another system's own (``mjtable rules --list``; its flowers are in the hand
            read from the photo: Taiwan ``1f``-``8f``, Fuzhou also the honours).
        name: the photo as the user knows it (a file name), for the messages.
    Returns:
        A PhotoScore: scored, or with the reason it was not (no tiles; a tile the system does not play;
        the tiles do not add up to a hand; tiles read with low confidence and not accepted; a hand
        that scoring refuses).
    Raises:
        ScoringError: ``bad-value``, ``unknown-rules``, ``unknown-option`` for bad options (before
            ``read`` is called).
    """
    accept = check_photo_options(options)
    rules = options.get("rules", "mcr")
    rec = read()

    def refuse(code: str, message: str) -> PhotoScore:
        return PhotoScore(rec, None, code, message)

    outside = outside_the_set(rec, rules, name) if rec["tiles"] else None
    if outside is not None:
        return refuse("tile-not-in-set", outside)
    found = reading_problem(rec, accept_uncertain=accept, name=name)
    if found is not None:
        return refuse(*found)
    try:
        if rules in PROFILES:
            result = score_from_options(rec["hand"], {"flowers": list(rec["flowers"]), **options}, PHOTO_KEYS)
        else:
            result = systems.score(rules, rec["hand"], system_options(options))
    except ScoringError as e:
        return refuse(e.code, f"{e.message} (hand read from the photo: {rec['hand']})")
    return PhotoScore(rec, result)
