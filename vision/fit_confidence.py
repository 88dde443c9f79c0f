"""Fit the calibrated tile confidence and the flag threshold (``vision.confidence``) on the training
split's held-out sessions and write them into ``metrics.json`` (``confidence``); ``make train`` runs
it after the detectors' calibration. Usage: ``python -m vision.fit_confidence [--models DIR] [--dry-run]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path

from . import data as D
from .confidence import MAX_FLAGS, collect, fit
from .errors import VisionError
from .models import MODEL_DIR, _metrics
from .pipeline import Recognizer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Fit the tile confidence calibration and flag threshold on the "
                                 "training split's held-out sessions; write them into metrics.json")
    ap.add_argument("--models", type=Path, default=None, help="folder of the models (default: vision/models)")
    ap.add_argument("--dry-run", action="store_true", help="print the fit, write nothing")
    args = ap.parse_args(argv)
    folder = args.models or MODEL_DIR
    if not folder.is_dir():
        ap.error(f"--models {folder}: not a folder")
    try:
        rec = Recognizer(folder, calibrated=False)
    except VisionError as e:
        ap.error(f"--models {folder}: {e.message}")
    items = [i for i in D.load_split("train") if D.is_holdout_session(i.session)]
    model, figures = fit(collect(rec, items))
    entry = {**dataclasses.asdict(model), "fitted_on": "train split, held-out sessions (vision.data.is_holdout_session)",
             "max_flags_per_photo": MAX_FLAGS, "figures": figures}
    print(json.dumps(entry, indent=1))
    if not args.dry_run:
        metrics = _metrics(folder)
        metrics["confidence"] = entry
        tmp = folder / f".metrics.json.{os.getpid()}"
        tmp.write_text(json.dumps(metrics, indent=2) + "\n")
        os.replace(tmp, folder / "metrics.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
