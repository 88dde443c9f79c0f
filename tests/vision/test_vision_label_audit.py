"""The label audit of issue 21 (``vision/label_audit.json``) and the ``--audited`` judging of
``benchmarks/vision_eval.py``: the file is well formed against the data set's photos, and an
audit applied to a tiny fake photo turns label gaps into labels and ignored boxes as it says.
No model is run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import cv2
import pytest

import vision.data as D
from vision.data import DETECTION, LabelledBox, LabelledImage, is_holdout_session, load_split
from vision.tiles import BACK, LABELS, UNKNOWN

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ve():
    """benchmarks/vision_eval.py as a module (imported, it pins nothing to one core)."""
    spec = importlib.util.spec_from_file_location("vision_eval_bench", ROOT / "benchmarks" / "vision_eval.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_audit_file_is_well_formed(ve):
    raw = json.loads(D.AUDIT.read_text())
    assert {"what", "verdicts", "limits", "when", "label re-checks"} <= set(raw["header"])
    audit = D.load_audit()  # validates verdicts, boxes and names; raises ValueError otherwise
    assert {"test", "valid"} <= set(audit)
    if not DETECTION.is_dir():
        pytest.skip(f"{DETECTION} is not there (../shared/data must sit beside the project)")
    n = 0
    for split, photos in audit.items():
        items = {it.path.name: it for it in load_split("train" if split == "holdout" else split)}
        for name, entries in photos.items():
            assert name in items, f"{split}/{name}: no such labelled photo"
            if split == "holdout":
                assert is_holdout_session(items[name].session), f"{name}: not a held-out session"
            img = cv2.imread(str(items[name].path))
            h, w = img.shape[:2]
            assert entries, f"{split}/{name}: a photo listed with no audited box"
            for e in entries:
                x1, y1, x2, y2 = e["box"]
                assert -1 <= x1 < x2 <= w + 1 and -1 <= y1 < y2 <= h + 1, (split, name, e["box"])
                assert e["verdict"] in D.VERDICTS
                if e["verdict"] == "tile":
                    assert e["tile"] in LABELS and e["tile"] not in (BACK, UNKNOWN), (split, name, e)
                else:
                    assert e["tile"] is None
                if "label" in e:  # a re-checked label: the data set has it at that box
                    assert any(g.tile == e["label"] and max(abs(a - b) for a, b in zip(g.box, e["box"])) < 0.5
                               for g in items[name].boxes), (split, name, e)
                n += 1
            D.audited(items[name], entries)  # applies without error
    assert n >= 100


def test_load_audit_names_the_bad_entry(ve, tmp_path):
    bad = {"header": {}, "test": {"a.jpg": [{"box": [0, 0, 10, 10], "verdict": "tile", "tile": "back"}]}}
    p = tmp_path / "audit.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"test/a.jpg entry 0: tile 'back'"):
        D.load_audit(p)
    bad["test"]["a.jpg"][0] = {"box": [0, 0, 10, 10], "verdict": "maybe", "tile": None}
    p.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="verdict 'maybe', allowed: tile, partial, back, none"):
        D.load_audit(p)
    bad["test"]["a.jpg"][0] = {"box": [10, 0, 5, 10], "verdict": "none", "tile": None}
    p.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="box"):
        D.load_audit(p)
    bad["test"]["a.jpg"][0] = {"box": [0, 0, 10, 10], "label": "unknown", "verdict": "none", "tile": None}
    p.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="label 'unknown'"):
        D.load_audit(p)


def box(x: float) -> tuple[float, float, float, float]:
    """A 40x60 tile box at x."""
    return (x, 100.0, x + 40.0, 160.0)


def test_audit_relabels_a_fake_photo(ve):
    photo = LabelledImage(Path("fake.jpg"), (LabelledBox("1m", box(0)), LabelledBox("2m", box(50))), "s")
    entries = [{"box": list(box(100)), "verdict": "tile", "tile": "3m"},    # a tile nobody labelled
               {"box": list(box(150)), "verdict": "tile", "tile": "4m"},    # another, no box reads it
               {"box": list(box(200)), "verdict": "partial", "tile": None},
               {"box": list(box(250)), "verdict": "back", "tile": None},
               {"box": list(box(300)), "verdict": "none", "tile": None}]
    reading = {"tiles": [("1m", box(0), 0.99, False),      # right
                         ("5m", box(50), 0.95, False),     # wrong name, unflagged
                         ("3m", box(101), 0.97, False),    # extra, then right once audited
                         ("9p", box(199), 0.90, False),    # extra, then ignored (partial)
                         ("back", box(251), 0.5, True),    # flagged extra, then ignored (back)
                         ("8p", box(300), 0.92, False)],   # extra, and still one (none)
               "gaps": []}
    before = ve.judge(reading, photo, 0.1)
    assert (before["labels"], before["ok"], before["preds"]) == (2, 1, 6)
    assert (before["wrong"], before["extra"], before["missed"]) == (1, 3, 0)
    assert before["silent"] and before["flagged"] == 1

    labels, ignore = D.audited(photo, entries)
    assert [b.tile for b in labels.boxes] == ["1m", "2m", "3m", "4m"] and ignore == (box(200), box(250))
    after = ve.judge(reading, labels, 0.1, ignore)
    assert (after["labels"], after["ok"], after["preds"], after["hits"]) == (4, 2, 4, 3)
    # 5m on 2m stays wrong, 8p on the `none` box stays extra, the audited 4m no box reads is missed
    assert (after["wrong"], after["extra"], after["missed"]) == (1, 1, 1)
    assert after["flagged"] == 1  # the player is still asked about the flagged box on the back
    assert sorted(r for _, r in after["conf"]) == [False, False, True, True]

    # a box on an audited tile read by another name is a wrong name, not an extra
    misread = {"tiles": [("1m", box(0), 0.99, False), ("2m", box(50), 0.99, False), ("7m", box(100), 0.9, False),
                         ("4m", box(150), 0.9, False)], "gaps": []}
    r = ve.judge(misread, labels, 0.1, ignore)
    assert (r["wrong"], r["extra"], r["missed"], r["silent"]) == (1, 0, 0, True)
    misread["tiles"][2] = ("3m", box(100), 0.9, False)
    r = ve.judge(misread, labels, 0.1, ignore)
    assert (r["wrong"], r["extra"], r["missed"], r["silent"]) == (0, 0, 0, False)

    # re-checked labels: 2m renamed 5m (the reading of 5m there becomes right), 1m removed as no tile
    checks = entries + [{"box": list(box(50)), "label": "2m", "verdict": "tile", "tile": "5m"},
                        {"box": list(box(0)), "label": "1m", "verdict": "none", "tile": None}]
    labels2, ignore2 = D.audited(photo, checks)
    assert [b.tile for b in labels2.boxes] == ["5m", "3m", "4m"] and ignore2 == ignore
    r = ve.judge(reading, labels2, 0.1, ignore2)
    assert (r["labels"], r["ok"], r["wrong"], r["extra"], r["missed"]) == (3, 2, 0, 2, 1)  # 1m's box is now extra
    with pytest.raises(ValueError, match="no label 7m"):
        D.audited(photo, [{"box": list(box(0)), "label": "7m", "verdict": "none", "tile": None}])

    # the rows of the benchmark sum the kinds
    s = ve.summarise([before, after])
    assert (s["unflagged_wrong"], s["unflagged_extra"], s["unflagged_missed"]) == (2, 4, 1)


def test_score_photos_judges_the_same_reading_twice(ve, monkeypatch):
    """``--audited`` runs the reader once per photo: the audited record comes from the same reading."""
    photo = LabelledImage(Path("fake.jpg"), (LabelledBox("1m", box(0)),), "s")
    calls = []

    def predict(img):
        calls.append(1)
        return {"tiles": [("1m", box(0), 0.99, False), ("3m", box(100), 0.97, False)], "gaps": []}
    monkeypatch.setattr(ve.cv2, "imread", lambda p: None)
    out = ve.score_photos(predict, [photo], warmup=0,
                          audit={"fake.jpg": [{"box": list(box(100)), "verdict": "tile", "tile": "3m"}]})
    assert len(calls) == 1
    assert out[0]["extra"] == 1 and out[0]["silent"]
    assert out[0]["audited"]["extra"] == 0 and not out[0]["audited"]["silent"] and out[0]["audited"]["possible"]


def test_score_photos_judges_each_threshold_from_the_same_reading(ve, monkeypatch):
    """``--thresholds``: a reading's ``"at"`` readings (the same tiles assembled at other flag
    thresholds) are judged as labelled and audited, each on its own flags."""
    photo = LabelledImage(Path("fake.jpg"), (LabelledBox("1m", box(0)),), "s")
    reading = {"tiles": [("1m", box(0), 0.99, False), ("2m", box(100), 0.7, False)], "gaps": []}
    at = {0.75: {"tiles": [("1m", box(0), 0.99, False), ("2m", box(100), 0.7, True)], "gaps": []}}
    monkeypatch.setattr(ve.cv2, "imread", lambda p: None)
    out = ve.score_photos(lambda img: {**reading, "at": at}, [photo], warmup=0, audit={})
    assert out[0]["silent"] and out[0]["flagged"] == 0  # the 2m on no label, not asked at 0.6
    assert not out[0]["at"][0.75]["silent"] and out[0]["at"][0.75]["flagged"] == 1
    assert not out[0]["audited"]["at"][0.75]["silent"]
    t = ve.summarise([out[0]["at"][0.75]])
    assert t["silent_error_rate"] == 0.0 and t["flagged_per_photo"] == 1.0


def test_no_tile_is_labelled_twice_once_the_audit_is_applied(ve):
    """A second label on a tile counts a reader that boxes the tile once as missing it: every pair
    of labels of one photo overlapping by IoU over 0.5 is removed by the audit (its `label`
    re-checks with verdict `none`)."""
    if not DETECTION.is_dir():
        pytest.skip(f"{DETECTION} is not there (../shared/data must sit beside the project)")
    audit = D.load_audit()
    removed = 0
    for split in ("holdout", "test", "valid"):
        items = [i for i in load_split("train") if is_holdout_session(i.session)] if split == "holdout" \
            else load_split(split)
        for it in items:
            entries = audit.get(split, {}).get(it.path.name, [])
            labels = D.audited(it, entries)[0].boxes
            twice = [(a.tile, b.tile, a.box) for k, a in enumerate(labels) for b in labels[k + 1:]
                     if D.iou(a.box, b.box) > 0.5]
            assert not twice, (split, it.path.name, twice)
            removed += sum(e["verdict"] == "none" and "label" in e for e in entries)
    assert removed == 6  # valid: five tiles labelled twice with one name, one as 9s and 5s


def test_photo_kinds_are_as_the_readme_describes_them(ve):
    """``--by-kind``: valid's 34 squeezed uploads and 42 photos of its close-up session (7 of them
    labelled all 1p), test's one squeezed photo (vision/README.md, "Squeezed photos" and "Where
    valid is still lost")."""
    if not DETECTION.is_dir():
        pytest.skip(f"{DETECTION} is not there (../shared/data must sit beside the project)")
    from collections import Counter
    assert Counter(map(ve.photo_kind, load_split("valid"))) == {"ordinary": 143, "squeezed": 34, "close-up": 42}
    assert Counter(map(ve.photo_kind, load_split("test"))) == {"ordinary": 47, "squeezed": 1}
    wide = LabelledImage(Path("IMG_2750_JPG.rf.x.jpg"), (LabelledBox("1m", (0, 0, 400, 40)),), "IMG")
    assert ve.photo_kind(wide) == "squeezed"
    assert ve.photo_kind(LabelledImage(Path("IMG_2750_JPG.rf.x.jpg"), (LabelledBox("1m", (0, 0, 40, 55)),), "IMG")) \
        == "close-up"
    assert ve.photo_kind(LabelledImage(Path("IMG_2789_JPG.rf.x.jpg"), (LabelledBox("1m", (0, 0, 40, 55)),), "IMG")) \
        == "ordinary"
