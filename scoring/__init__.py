"""MCR scoring engine: the Chinese Official rules (中国麻将竞赛规则), all 81 fans.

Pure functions, no I/O, stdlib only. Start with ``score_hand``::

    >>> from scoring import score_hand
    >>> r = score_hand("[EEE,1][SSSS,1]55pWWWNNN", self_drawn=True)
    >>> r.total, [f.name_en for f in r.fans][:1]
    (98, ['Big Four Winds'])

Waits and shanten of a hand in play: ``find_waits`` and ``analyse_shanten`` (``scoring.analysis``,
``scoring.shanten``). One spec per fan: ``scoring.fans``.

Source: ../shared/seeds/000_ba052a8ec20fd579.txt (第八条 winning hands, 第九条 fans, 第十条 payments).
"""

from .analysis import analyse_shanten, find_waits
from .calculator import MCR, MCR_1998, PROFILES, RuleProfile
from .errors import ScoringError
from .fans import FANS, MELDED_AND_CONCEALED_KONG, Fan, fan
from .hand import Hand, Meld, MeldKind, WinContext, check_hand, parse_flower, parse_hand
from .score import BASE_POINTS, MINIMUM_POINTS, FanResult, Payments, ScoreResult, score, score_hand
from .tiles import Flower, Wind, tile_name, tiles_to_string

__all__ = [
    "BASE_POINTS", "FANS", "MCR", "MCR_1998", "MELDED_AND_CONCEALED_KONG", "MINIMUM_POINTS", "PROFILES",
    "Fan", "FanResult", "Flower", "Hand", "Meld", "MeldKind", "Payments", "RuleProfile", "ScoreResult",
    "ScoringError", "WinContext", "Wind", "check_hand", "fan", "parse_flower", "parse_hand", "score",
    "score_hand", "tile_name", "tiles_to_string", "analyse_shanten", "find_waits",
]
