"""Each fan in one place: the specs of ``scoring.fans`` and one small test per fan.

* Every fan of the table (1-81) and 明暗杠 has exactly one spec; its points are those of the rules
  table (``oracle.FAN_POINTS``, written from 第九条 apart from the engine); its exclusions name real
  fans; its evidence kind is known; its detector is a function (``Fan.detector_function``) that
  counts it (the fan's constant appears in the detector or in the function that calls it).
* For every fan, a hand that has it and a near miss that does not: the same hand with one or two
  tiles, a meld or a flag changed where that still wins, otherwise the nearest hand of the same kind
  (thirteen orphans, seven pairs, knitted straight: any change of one or two tiles breaks the win).
  The pairs were drawn from the generated hands of ``hand_generator`` and each was checked against
  PyMahjongGB when chosen; ``test_against_pymahjonggb`` keeps that agreement.
* In the hand that has it, the fan's evidence (what its detector recorded) is of the kind its spec
  names: the winning tile, three chows, the kongs, the whole hand...
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

from oracle import FAN_POINTS
from scoring import calculator, score_hand
from scoring import fans as fan_specs
from scoring.fans import EVIDENCE, FANS, MELDED_AND_CONCEALED_KONG

score_module = importlib.import_module("scoring.score")
SPECS = list(FANS.values()) + [MELDED_AND_CONCEALED_KONG]

#: (fan number, hand, options, near-miss hand, options); ``None`` is 明暗杠.
CASES: list[tuple] = [
    (1, '[NNN,2][EEE,1]88pSSWWWS', {'seat_wind': 'N', 'prevalent_wind': 'W'},
     '[NNN,2][EEE,1]888pSWWWS', {'seat_wind': 'N', 'prevalent_wind': 'W'}),
    (2, '[PPP,1]456pNNCCFFFC', {'seat_wind': 'W', 'prevalent_wind': 'N'},
     '[PPP,1]456pNNNCFFFC', {'seat_wind': 'W', 'prevalent_wind': 'N'}),
    (3, '22334444688sFF6s', {'seat_wind': 'N', 'prevalent_wind': 'N'},
     '11m334444688sFF6s', {'seat_wind': 'N', 'prevalent_wind': 'N'}),
    (4, '1112345678999s4s', {'seat_wind': 'W', 'prevalent_wind': 'S'},
     '1123345678999s4s', {'seat_wind': 'W', 'prevalent_wind': 'S'}),
    (5, '[5555s][1111s,2][4444m,2][2222p,3]EE', {'prevalent_wind': 'S'},
     '[456s,1][1111s,2][4444m,2][2222p,3]EE', {'prevalent_wind': 'S'}),
    (6, '3344566778899s5s', {'prevalent_wind': 'S'},
     '3445666778899s5s', {'prevalent_wind': 'S'}),
    (7, '19m19s19pESWNCFPP', {'seat_wind': 'W', 'prevalent_wind': 'W'},
     '111m999sEEECCC9p9p', {}),
    (8, '[999s,2][111m,1]99m11999p1p', {'seat_wind': 'W', 'prevalent_wind': 'W'},
     '[999s,2][111m,1]2299m999p2m', {'seat_wind': 'W', 'prevalent_wind': 'W'}),
    (9, '[SSS,3][NNN,2]EEWWPPPE', {'seat_wind': 'W', 'prevalent_wind': 'W'},
     '[SSS,3][NNN,2]EEWWWPPE', {'seat_wind': 'W', 'prevalent_wind': 'W'}),
    (10, '[FFF,3]233445mCCPPP', {'seat_wind': 'N', 'prevalent_wind': 'N'},
     '[FFF,3]11233445mCC1m', {'seat_wind': 'N', 'prevalent_wind': 'N'}),
    (11, 'ESSWWNNCCFFPPE', {'seat_wind': 'S', 'prevalent_wind': 'S'},
     '11mESSNNCCFFPPE', {'seat_wind': 'S', 'prevalent_wind': 'S'}),
    (12, '666m888s1188pNNN1p', {'self_drawn': True, 'prevalent_wind': 'S'},
     '666m888s1188pNNN1p', {'prevalent_wind': 'S'}),
    (13, '[123s,3][123s,2]5577889s9s', {'seat_wind': 'W', 'prevalent_wind': 'S'},
     '[123s,3][123s,2]5567788s9s', {'seat_wind': 'W', 'prevalent_wind': 'S'}),
    (14, '[567s,3]55566677sFF7s', {'seat_wind': 'W', 'prevalent_wind': 'N'},
     '[567s,3]55666778sFF7s', {'seat_wind': 'W', 'prevalent_wind': 'N'}),
    (15, '[555p,3]44466677pEE7p', {'seat_wind': 'S'},
     '[555p,3]4466677pEEE7p', {'seat_wind': 'S'}),
    (16, '12334567789mSS5m', {'seat_wind': 'S', 'prevalent_wind': 'W'},
     '23344567789mSS5m', {'seat_wind': 'S', 'prevalent_wind': 'W'}),
    (17, '[1111s,3][9999m,1][3333p]45mPP6m', {'prevalent_wind': 'S'},
     '[123s,1][9999m,1][3333p]45mPP6m', {'prevalent_wind': 'S'}),
    (18, '[PPP,2][999s,2]99m11pCCC1p', {'seat_wind': 'N', 'prevalent_wind': 'W'},
     '[PPP,2][999s,2]2299mCCC2m', {'seat_wind': 'N', 'prevalent_wind': 'W'}),
    (19, '11m1199s11668pNN8p', {'seat_wind': 'S'},
     '111234m556677s9p9p', {}),
    (20, '17m39s28pESWNCFP4m', {'seat_wind': 'S', 'prevalent_wind': 'W'},
     '17m369s28pSWNCFP4m', {'seat_wind': 'S', 'prevalent_wind': 'W'}),
    (21, '[444m,1][888s,3]222s2266p6p', {'seat_wind': 'S', 'prevalent_wind': 'W'},
     '[444m,1][888s,3]11m222s66p6p', {'seat_wind': 'S', 'prevalent_wind': 'W'}),
    (22, '[789s,2]2244456799s2s', {'prevalent_wind': 'S'},
     '[789s,2]11m44456799s1m', {'prevalent_wind': 'S'}),
    (23, '[678m,2]667788m88s23p1p', {'seat_wind': 'N', 'prevalent_wind': 'S'},
     '[678m,2]677889m88s23p1p', {'seat_wind': 'N', 'prevalent_wind': 'S'}),
    (24, '[333s,3]22m44455s789p5s', {'seat_wind': 'W'},
     '[333s,3]222m4455s789p5s', {'seat_wind': 'W'}),
    (25, '788889m7999s789p8s', {'seat_wind': 'S', 'prevalent_wind': 'S'},
     '78889m67999s789p8s', {'seat_wind': 'S', 'prevalent_wind': 'S'}),
    (26, '[444m,3]66m456s45666p6p', {'seat_wind': 'S', 'prevalent_wind': 'N'},
     '[444m,3]66m567s45666p6p', {'seat_wind': 'S', 'prevalent_wind': 'N'}),
    (27, '[222m,3]12333s12223p3s', {'seat_wind': 'W', 'prevalent_wind': 'N'},
     '[222m,3]23334s12223p3s', {'seat_wind': 'W', 'prevalent_wind': 'N'}),
    (28, '1112345678999m9m', {'prevalent_wind': 'N'},
     '1123445678999m9m', {'prevalent_wind': 'N'}),
    (29, '[789p,1]55m23789s123p1s', {'seat_wind': 'W', 'prevalent_wind': 'W'},
     '[789p,1]55m23678s123p1s', {'seat_wind': 'W', 'prevalent_wind': 'W'}),
    (30, '[222s,1]3455566799s4s', {'seat_wind': 'S', 'prevalent_wind': 'S'},
     '[222s,1]4555666799s4s', {'seat_wind': 'S', 'prevalent_wind': 'S'}),
    (31, '[345p,3]45556m555s67p5p', {'last_tile': True},
     '[345p,3]55566m555s67p5p', {'last_tile': True}),
    (32, '[999p,2][111s,2]11199m11p1p', {'seat_wind': 'W', 'prevalent_wind': 'S'},
     '[999p,2][111s,2]11999m11p1p', {'seat_wind': 'W', 'prevalent_wind': 'S'}),
    (33, '[234m,3]888m333s66pNN6p', {'self_drawn': True, 'seat_wind': 'S', 'prevalent_wind': 'S'},
     '[234m,3]888m333s66pNN6p', {'seat_wind': 'S', 'prevalent_wind': 'S'}),
    (34, '28m147s69pESWNCF3p', {'seat_wind': 'N'},
     '8m147s69pESWNCFP3p', {'seat_wind': 'N'}),
    (35, '[444m,1]39m147s258pEE6m', {'seat_wind': 'W', 'prevalent_wind': 'S'},
     '123m456s789p123mEE', {}),
    (36, '[777s,1]66678m666s78p9p', {'seat_wind': 'S', 'prevalent_wind': 'W'},
     '[777s,1]56667m666s78p9p', {'seat_wind': 'S', 'prevalent_wind': 'W'}),
    (37, '[123s,3][222m,1]444m34s33p2s', {'seat_wind': 'N', 'flowers': 7},
     '[123s,3][222m,1]444m34s33p5s', {'seat_wind': 'N', 'flowers': 7}),
    (38, '[CCC,2][SSS,1]EEEWWPPW', {'seat_wind': 'S', 'prevalent_wind': 'N'},
     '[CCC,2][SSS,1]EEWWPPPW', {'seat_wind': 'S', 'prevalent_wind': 'N'}),
    (39, '123345m789s45pSS6p', {'prevalent_wind': 'W'},
     '233445m789s45pSS6p', {'prevalent_wind': 'W'}),
    (40, '26688s335599pPP2s', {'seat_wind': 'S', 'prevalent_wind': 'N'},
     '1m6688s335599pPP1m', {'seat_wind': 'S', 'prevalent_wind': 'N'}),
    (41, '[234m,1]23345s234pCC4s', {'seat_wind': 'S', 'prevalent_wind': 'S'},
     '[234m,1]33455s234pCC4s', {'seat_wind': 'S', 'prevalent_wind': 'S'}),
    (42, '[777m,3][666p,1]456m55sWW5s', {'seat_wind': 'N'},
     '[777m,3][666p,1]456m5sWWW5s', {'seat_wind': 'N'}),
    (43, '[456s,3]345m23s333pWW4s', {'seat_wind': 'W', 'prevalent_wind': 'S'},
     '[456s,3]345m23s333pWW4s', {'self_drawn': True, 'seat_wind': 'W', 'prevalent_wind': 'S'}),
    (44, '258m369s14pESWFPC', {'self_drawn': True, 'seat_wind': 'N', 'prevalent_wind': 'W', 'last_tile': True},
     '258m369s14pESWFPC', {'seat_wind': 'N', 'prevalent_wind': 'W', 'last_tile': True}),
    (45, '[567s,3][888p,3]77m666pEE7m', {'prevalent_wind': 'N', 'last_tile': True},
     '[567s,3][888p,3]77m666pEE7m', {'self_drawn': True, 'prevalent_wind': 'N', 'last_tile': True}),
    (46, '[8888s,3][5555s,3]567m34sWW2s', {'self_drawn': True, 'kong_replacement': True},
     '[8888s,3][5555s,3]567m34sWW2s', {'self_drawn': True}),
    (47, '[222m,1][333s,1]567m56pSS4p', {'seat_wind': 'N', 'robbing_kong': True},
     '[222m,1][333s,1]567m56pSS4p', {'seat_wind': 'N'}),
    (48, '[666s,1][777m,3]55m222pWW5m', {'seat_wind': 'S', 'prevalent_wind': 'N'},
     '[666s,1][777m,3]34m222pWW5m', {'seat_wind': 'S', 'prevalent_wind': 'N'}),
    (49, '3388mEESWWFFPPS', {'seat_wind': 'N'},
     '3388m11sEESFFPPS', {'seat_wind': 'N'}),
    (50, '[567m,2][456p,1][678s,3]55sFF5s', {'seat_wind': 'N', 'prevalent_wind': 'N'},
     '[456m,2][456p,1][678s,3]55sFF5s', {'seat_wind': 'N', 'prevalent_wind': 'N'}),
    (51, '22m11388s33pEEFF3s', {'seat_wind': 'S', 'prevalent_wind': 'W'},
     '1122m11388s33pEE3s', {'seat_wind': 'S', 'prevalent_wind': 'W'}),
    (52, '[789p,3][123m,1][567p,3][678s,1]NN', {'prevalent_wind': 'S'},
     '[789p,3][123m,1][567p,3][678s,1]NN', {'self_drawn': True, 'prevalent_wind': 'S'}),
    (53, '[5555s][6666s]789m22pPP2p', {'prevalent_wind': 'S'},
     '[444s,1][6666s]789m22pPP2p', {'prevalent_wind': 'S'}),
    (54, '678m55s567pCCPPPC', {},
     '678m555s567pCPPPC', {}),
    (55, '[SSS,2]123999sNNPPN', {'seat_wind': 'W', 'prevalent_wind': 'W'},
     '[SSS,2]234999sNNPPN', {'seat_wind': 'W', 'prevalent_wind': 'W'}),
    (56, '56678m456s789pPP7m', {'self_drawn': True, 'seat_wind': 'N'},
     '56678m456s789pPP7m', {'seat_wind': 'N'}),
    (57, '[EEEE,3][4444s,3]88m12366p6p', {'seat_wind': 'W'},
     '[999p,1][4444s,3]88m12366p6p', {'seat_wind': 'W'}),
    (58, '9m19s199pESWNCFP1m', {'prevalent_wind': 'W', 'fourth_tile': True},
     '9m19s199pESWNCFP1m', {'prevalent_wind': 'W', 'robbing_kong': True, 'fourth_tile': True}),
    (59, '[345p,1]567m7778sCCC9s', {'seat_wind': 'N', 'prevalent_wind': 'N'},
     '[345p,1]567m77778sCC9s', {'seat_wind': 'N', 'prevalent_wind': 'N'}),
    (60, '[456s,2][123p,3]99m567pSSS', {'seat_wind': 'N', 'prevalent_wind': 'S'},
     '[456s,2][123p,3]99m567pSSS', {'seat_wind': 'N'}),
    (61, '[666m,3]234m456s66pWWW', {'seat_wind': 'W', 'prevalent_wind': 'N', 'flowers': 8},
     '[666m,3]234m456s66pWWW', {'prevalent_wind': 'N', 'flowers': 8}),
    (62, '678m234s56789pPP7p', {'seat_wind': 'N', 'prevalent_wind': 'W'},
     '678m234s56789pPP7p', {'self_drawn': True, 'seat_wind': 'N', 'prevalent_wind': 'W'}),
    (63, '[345m,2]789m88s56678p4p', {'seat_wind': 'S', 'prevalent_wind': 'N'},
     '[345m,2]789m56678pEE4p', {'seat_wind': 'S', 'prevalent_wind': 'N'}),
    (64, '[333m,1]34m567s666pNN5m', {'prevalent_wind': 'S'},
     '[333m,1]46m567s666pNN5m', {'prevalent_wind': 'S'}),
    (65, '[666m,2]456888s66pEE6p', {'seat_wind': 'W', 'prevalent_wind': 'N'},
     '[666m,2]456888s6pEEE6p', {'seat_wind': 'W', 'prevalent_wind': 'N'}),
    (66, '[456p,2]34m222333sNN2m', {'seat_wind': 'N'},
     '[456p,2]2m222333sNNN2m', {'seat_wind': 'N'}),
    (67, '[234s,1][SSSS]67m34588p5m', {},
     '[1111s,1][SSSS]67m34588p5m', {}),
    (68, '[567p,2]55m33s333456p5m', {'seat_wind': 'N', 'prevalent_wind': 'N'},
     '[567p,2]11155m33s456p5m', {'seat_wind': 'N', 'prevalent_wind': 'N'}),
    (69, '[234p,3]678m55s234pWW5s', {'seat_wind': 'S', 'prevalent_wind': 'N'},
     '[234p,3]678m55s345pWW5s', {'seat_wind': 'S', 'prevalent_wind': 'N'}),
    (70, '[567m,2]45m234s456pCC6m', {'seat_wind': 'N', 'prevalent_wind': 'N'},
     '[567m,2]57m234s456pCC6m', {'seat_wind': 'N', 'prevalent_wind': 'N'}),
    (71, '[444m,1]789s34578pWW6p', {'prevalent_wind': 'S'},
     '[444m,1]789s45678pWW6p', {'prevalent_wind': 'S'}),
    (72, '[234p,2]88m123789sNNN', {'seat_wind': 'S'},
     '[234p,2]88m234789sNNN', {'seat_wind': 'S'}),
    (73, '[678p,1]33m99s123pNNN3m', {'prevalent_wind': 'S'},
     '[678p,1]33m99s123pNNN3m', {'seat_wind': 'N', 'prevalent_wind': 'S'}),
    (74, '[8888p,1]234m12344sFF4s', {'seat_wind': 'W', 'prevalent_wind': 'N'},
     '[789p,1]234m12344sFF4s', {'seat_wind': 'W', 'prevalent_wind': 'N'}),
    (75, '2233778899m77sCC', {'seat_wind': 'S', 'prevalent_wind': 'W'},
     '22338899m77s11pCC', {'seat_wind': 'S', 'prevalent_wind': 'W'}),
    (76, '[345m,2]23m678s55888p1m', {'prevalent_wind': 'S'},
     '[345m,2]23m678s55888p4m', {'prevalent_wind': 'S'}),
    (77, '455667m89s234pWW7s', {'self_drawn': True, 'seat_wind': 'W'},
     '455667m68s234pWW7s', {'self_drawn': True, 'seat_wind': 'W'}),
    (78, '[555m,2]678m567s24pFF3p', {'seat_wind': 'W', 'prevalent_wind': 'W'},
     '[555m,2]678m567s45pFF3p', {'seat_wind': 'W', 'prevalent_wind': 'W'}),
    (79, '[678s,3]345m234456pEE', {'prevalent_wind': 'W'},
     '[678s,3]2345m234456p2m', {'prevalent_wind': 'W'}),
    (80, '[666p,2]567m22234sNN5s', {'self_drawn': True, 'seat_wind': 'N', 'prevalent_wind': 'N'},
     '[666p,2]567m22234sNN5s', {'seat_wind': 'N', 'prevalent_wind': 'N'}),
    (81, '2299m8899s399pNN3p', {'seat_wind': 'W', 'prevalent_wind': 'W', 'flowers': 5},
     '2299m8899s399pNN3p', {'seat_wind': 'W', 'prevalent_wind': 'W'}),
    (None, '[SSSS][1111s,3]234m78s99p6s', {'seat_wind': 'W'},
     '[EEE,1][1111s,3]234m78s99p6s', {'seat_wind': 'W'}),
]


def _constant(number: int | None) -> str:
    value = calculator.MIXED_KONGS if number is None else number
    names = [k for k, v in vars(calculator).items() if k.isupper() and v == value
             and k not in ("N_SLOTS", "CHOW", "PUNG", "KONG", "PAIR")]  # the last four: kinds of set
    assert len(names) == 1, (number, names)
    return names[0]


def test_every_fan_has_exactly_one_spec() -> None:
    numbers = [f.number for f in SPECS]
    assert sorted(numbers, key=lambda n: -1 if n is None else n) == [None] + list(range(1, 82))
    assert len({f.name_zh for f in SPECS}) == len({f.name_en for f in SPECS}) == 82
    # the module holds no other Fan than the 82 specs
    others = [v for k, v in vars(fan_specs).items() if isinstance(v, fan_specs.Fan) and v not in SPECS]
    assert not others


@pytest.mark.parametrize("spec", SPECS, ids=lambda f: str(f.number))
def test_spec_points_exclusions_evidence_and_detector(spec) -> None:
    assert spec.points == FAN_POINTS[spec.number]
    assert calculator.POINTS[spec.number or calculator.MIXED_KONGS] == spec.points
    assert all(g in FANS and g != spec.number for g in spec.excludes + spec.excludes_1998)
    assert spec.evidence in EVIDENCE
    detector = spec.detector_function
    assert callable(detector) and detector.__name__ == spec.detector
    module = score_module if spec.detector == "score" else calculator
    assert getattr(module, spec.detector) is detector
    name = "FLOWER_TILES" if spec.number == 81 else _constant(spec.number)
    sources = [inspect.getsource(detector)]
    if name not in sources[0]:  # a predicate: the fan is set where it is called
        sources = [inspect.getsource(f) for f in vars(calculator).values()
                   if inspect.isfunction(f) and re.search(rf"\b{spec.detector}\(", inspect.getsource(f))
                   and f is not detector]
    assert any(name in s for s in sources), f"{spec.detector} does not count {name}"


def _fans(hand: str, options: dict) -> dict:
    return score_hand(hand, **options).fan_counts()


@pytest.mark.parametrize("number, hand, options, near, near_options", CASES, ids=lambda x: str(x) if isinstance(
    x, int) or x is None else "")
def test_a_hand_with_the_fan_and_a_near_miss_without(number, hand, options, near, near_options) -> None:
    assert number in _fans(hand, options), f"{hand} {options} should have fan {number}"
    assert number not in _fans(near, near_options), f"{near} {near_options} should not have fan {number}"


def test_one_case_per_fan() -> None:
    assert sorted((c[0] for c in CASES), key=lambda n: -1 if n is None else n) == [None] + list(range(1, 82))


# --- evidence -------------------------------------------------------------------------------------

_WINDS, _DRAGONS = set("ESWN"), set("CFP")


def _tiles(text: str) -> list[str]:
    """The tiles of one evidence text (``"[123m]"``, ``"55p"``, ``"EEE"``), as tile names."""
    out, digits = [], []
    for ch in text.strip("[]"):
        if ch.isdigit():
            digits.append(ch)
        elif ch in "msp":
            out += [d + ch for d in digits]
            digits = []
        else:
            out.append(ch)
    assert not digits, text
    return out


def _is_chow(text: str) -> bool:
    t = _tiles(text)
    return len(t) == 3 and len({x[1] for x in t}) == 1 and [int(x[0]) for x in t] == list(
        range(int(t[0][0]), int(t[0][0]) + 3))


def _is_pung(text: str, size: tuple[int, ...] = (3, 4)) -> bool:
    t = _tiles(text)
    return len(t) in size and len(set(t)) == 1


def _is_pair(text: str) -> bool:
    return _is_pung(text, (2,))


#: The evidence kinds shown as sets, and what the sets must be; ``n`` is the fan's count.
_SET_KINDS = {
    "two-chows": lambda ev, n: len(ev) >= 2 and all(map(_is_chow, ev)),
    "three-chows": lambda ev, n: len(ev) == 3 and all(map(_is_chow, ev)),
    "chows-and-pair": lambda ev, n: len(ev) in (2, 5) and all(map(_is_chow, ev[:-1])) and _is_pair(ev[-1]),
    "two-pungs": lambda ev, n: len(ev) >= 2 and all(map(_is_pung, ev)),
    "three-pungs": lambda ev, n: len(ev) == 3 and all(map(_is_pung, ev)),
    "pungs": lambda ev, n: len(ev) == 4 and all(map(_is_pung, ev)),
    "winds": lambda ev, n: len(ev) == 4 and all(set(_tiles(x)) <= _WINDS for x in ev),
    "dragons": lambda ev, n: len(ev) == 3 and all(set(_tiles(x)) <= _DRAGONS for x in ev),
    "dragon-pungs": lambda ev, n: len(ev) == n and all(_is_pung(x) and set(_tiles(x)) <= _DRAGONS for x in ev),
    "terminal-pungs": lambda ev, n: len(ev) >= n and all(
        _is_pung(x) and (_tiles(x)[0] in _WINDS or _tiles(x)[0][0] in "19") for x in ev),
    "concealed-pungs": lambda ev, n: len(ev) >= 2 and all(
        _is_pung(x, (3,)) and not x.startswith("[") or _is_pung(x, (4,)) for x in ev),
    "kongs": lambda ev, n: len(ev) >= 2 and all(_is_pung(x, (4,)) for x in ev),
    "melded-kongs": lambda ev, n: len(ev) >= 1 and all(_is_pung(x, (4,)) and x.startswith("[") for x in ev),
    "concealed-kongs": lambda ev, n: len(ev) >= 1 and all(_is_pung(x, (4,)) and x.startswith("[") for x in ev),
    "melded-hand": lambda ev, n: len(ev) == 5 and all(x.startswith("[") for x in ev[:4]) and len(_tiles(ev[4])) == 1,
}


@pytest.mark.parametrize("number, hand, options, near, near_options", CASES, ids=lambda x: str(x) if isinstance(
    x, int) or x is None else "")
def test_the_evidence_is_of_the_kind_of_the_spec(number, hand, options, near, near_options) -> None:
    from scoring.tiles import tile_name
    from scoring.hand import parse_hand

    result = score_hand(hand, **options)
    found = next(f for f in result.fans if f.number == number)
    spec = MELDED_AND_CONCEALED_KONG if number is None else FANS[number]
    ev, kind = found.tiles, spec.evidence
    parsed = parse_hand(hand)
    whole = tuple(f.tiles for f in result.fans if FANS.get(f.number) and FANS[f.number].evidence == "whole-hand")
    assert ev, (number, hand)
    if kind == "win-tile":
        assert ev == (tile_name(parsed.win_tile),)
    elif kind == "flowers":
        assert ev == (f"{options['flowers']} flowers",)
    elif kind == "tile-hog":
        assert all(x.endswith("x4") and len(_tiles(x[:-2])) == 1 for x in ev) and len(ev) == found.count
    elif kind == "knitted-straight":
        assert len(ev) == 1 and len(_tiles(ev[0])) == 9
    elif kind in ("prevalent-wind", "seat-wind"):
        wind = options.get(kind.replace("-", "_"), "E")
        assert len(ev) == 1 and _is_pung(ev[0]) and _tiles(ev[0])[0] == wind
    elif kind in _SET_KINDS and result.shape not in ("nine gates", "seven pairs"):
        assert _SET_KINDS[kind](ev, found.count), (number, hand, kind, ev)
    else:  # the whole hand, as every whole-hand fan of the result shows it
        assert all(w == ev for w in whole), (number, hand, ev, whole)
        assert sum(len(_tiles(x)) for x in ev) >= 14 or result.shape == "knitted straight"


@pytest.mark.parametrize("hand, expected", [
    # fan 28 Pure Straight: its three chows, a declared one shown in brackets
    ("[789m,1]123456m234s5p5p", {28: ("[789m]", "123m", "456m"), 63: ("[789m]", "123m", "456m", "234s", "55p"),
                                 79: ("5p",)}),
    # two readings of the straight (either 789m): the first three chows in reading order (declared
    # melds first); the fourth chow combines once with one of them (套算一次), Pure Double Chow
    # showing both 789m
    ("[789m,1]123456789m5p5p", {28: ("[789m]", "123m", "456m"), 69: ("[789m]", "789m")}),
])
def test_the_evidence_names_the_sets_the_detector_used(hand: str, expected: dict) -> None:
    fans = {f.number: f.tiles for f in score_hand(hand).fans}
    assert {n: fans.get(n) for n in expected} == expected


def test_what_lies_inside_a_fan_comes_from_its_spec(monkeypatch) -> None:
    # 套算一次 and the fans concealed by definition are spec data (Fan.takes_off, Fan.concealed),
    # applied by calculator._inside: not adjustments written into the calculator
    assert FANS[38].takes_off == ((73, 3),) and FANS[4].takes_off == ((73, 1),)
    assert {f.number for f in SPECS if f.concealed} == {4, 12}
    assert all(g in FANS and g != f.number and k >= 1 for f in SPECS for g, k in f.takes_off)
    assert {n for n, _, _ in calculator._INSIDE} == {f.number for f in SPECS if f.takes_off or f.concealed}

    def fans(hand: str, **kw) -> dict:
        return {f.number: f.count for f in score_hand(hand, **kw).fans}

    # Big Three Winds with a fourth pung of a terminal: only that one is a Pung of Terminals
    three_winds = "[EEE][SSS,1][WWW,2]999m5p5p"
    assert fans(three_winds, seat_wind="N", prevalent_wind="N")[73] == 1
    # Four Concealed Pungs self-drawn: Self-Drawn, not Fully Concealed Hand
    four_concealed = "111m222p333sEEE5s5s"
    got = fans(four_concealed, self_drawn=True)
    assert 80 in got and 56 not in got
    # the same hands with those spec entries taken away count the fans inside again
    monkeypatch.setattr(calculator, "_INSIDE_OF", {**calculator._INSIDE_OF, 38: ((), False), 12: ((), False)})
    assert fans(three_winds, seat_wind="N", prevalent_wind="N")[73] == 4
    got = fans(four_concealed, self_drawn=True)
    assert 56 in got and 80 not in got
