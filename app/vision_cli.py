"""The camera commands of the ``mjtable`` command line (wired in by ``app/cli.py``).

* ``mjtable recognize IMAGE [--rules X] [--confirm-below T] [--json] [--annotate OUT.png]``: the tiles
  found and the hand assembled for the rule system X (its hand size and flowers; default MCR).
* ``mjtable score-photo IMAGE [IMAGE ...] [--self-drawn] [--seat-wind E] [--prevalent-wind E] [--flowers N]
  [--last-tile] [--kong-replacement] [--robbing-kong] [--fourth-tile] [--rules X [X's options]]
  [--table-camera] [--confirm-below T] [--json] [--annotate OUT.png] [--accept-uncertain]``: recognise, then score by MCR
  or by the rule system X with the options of ``mjtable score --rules X`` (17-tile hands for Taiwan,
  flowers laid out as tiles where the system writes them in the hand); 3-5 images are frames of one
  hand from a fixed camera, read as one by voting per tile (``vision.voting``); ``--table-camera``:
  read in the calibrated view of the table's camera and report the seat.
  Both list the tiles read with a confidence below T for the player to confirm: T is the table's
  ``confirm-below`` setting (``mjtable config set confirm-below 0.75``; default 0.6) unless given.
* ``mjtable camera calibrate (--empty EMPTY.jpg --hand HAND.jpg | --camera usb|picamera [--device N])
  [--bottom-seat E] [--json]``: the table camera's view (``vision.table_camera``), stored in the settings.

Wired into ``mjtable`` by ``app/cli.py`` (``add_parsers`` and ``HANDLERS``). The handlers print their own one-line error on standard error
and return 1 for an unreadable or empty image, a picture with no tiles, a hand that does not add
up or uncertain tiles (score-photo), never raising (OpenCV is imported only when they run).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, Callable

from controller import settings as ST
from scoring import PROFILES, ScoringError, WinContext, systems

from . import cli_args, rules_cli


def add_parsers(subparsers: "argparse._SubParsersAction") -> None:
    """Add ``recognize``, ``score-photo`` and ``camera`` to the ``mjtable`` sub-command parsers."""
    r = subparsers.add_parser("recognize", help="read the revealed tiles from a photo of the table",
                              description="Find and name the tiles in a photo of a revealed hand and assemble "
                              "the hand in MCR notation (melds set apart, the winning tile laid apart).")
    r.add_argument("image", help="image file (JPEG, PNG, ...)")
    r.add_argument("--rules", choices=list(systems.SYSTEMS), default="mcr",
                   help="assemble a hand of this rule system (its size and flowers; default mcr)")
    _confirm_below_option(r)
    r.add_argument("--json", action="store_true", help="print the tiles and the hand as JSON")
    r.add_argument("--annotate", metavar="OUT.png", help="write the photo with each tile's box, name, confidence")

    s = subparsers.add_parser("score-photo", help="recognise the hand in a photo and score it (MCR or --rules X)",
                              description="Recognise the hand in a photo, then score it as `mjtable score` does, "
                              "by MCR or by another rule system (--rules X with X's options, as `mjtable score "
                              "--rules X`). MCR counts the flowers in the photo unless --flowers is given; Taiwan "
                              "and Fuzhou read them into the hand.")
    s.add_argument("image", nargs="+", metavar="IMAGE",
                   help="image file (JPEG, PNG, ...); or 3-5 frames of the same hand from a fixed camera, "
                   "read as one by voting per tile (a tile whose reading changes between frames is listed)")
    cli_args.win_options(s, photo=True)
    s.add_argument("--table-camera", action="store_true",
                   help="the pictures are from the table's own camera: read them in the rectified view stored by "
                   "`mjtable camera calibrate`, and report the seat that laid the hand out")
    s.add_argument("--rules", choices=list(systems.SYSTEMS), default="mcr",
                   help="the rule system (default mcr; mjtable rules --list); each takes its own options")
    s.add_argument("--json", action="store_true", help="print the recognition and the result as JSON")
    s.add_argument("--annotate", metavar="OUT.png", help="write the annotated photo as well")
    s.add_argument("--accept-uncertain", action="store_true",
                   help="score even when some tiles were read with low confidence (they are still listed)")
    _confirm_below_option(s)
    rules_cli.add_score_options(s)
    add_camera_parser(subparsers)


def _confirm_below_option(p: argparse.ArgumentParser) -> None:
    """``--confirm-below T``: this photo's flag threshold (checked as ``config set confirm-below``)."""
    low, high = ST.CONFIRM_BELOW_RANGE
    p.add_argument("--confirm-below", type=cli_args.confirm_below, default=None, metavar="T",
                   help=f"list the tiles read with a confidence below T ({low}-{high}) for the player to confirm "
                   "(default: the table's setting, mjtable config get confirm-below; 0.6 unless set)")


def add_camera_parser(subparsers: "argparse._SubParsersAction") -> None:
    """Add ``camera calibrate`` to the ``mjtable`` sub-command parsers."""
    c = subparsers.add_parser("camera", help="the table's own camera: calibrate its view",
                              description="The table's own camera sees the table from the same place every time.")
    sub = c.add_subparsers(dest="camera_command", required=True, metavar="calibrate")
    k = sub.add_parser("calibrate", help="find the play area and the seats' zones; store them in the settings",
                       description="From a picture of the empty table and one of a hand laid out in front of a seat "
                       "(files from the table's camera, same size): find the play area (the felt), the transform to "
                       "a square view from above, the tile size and the four seats' layout zones, and store them in "
                       "the table's settings. `mjtable score-photo --table-camera` and POST /api/score/capture then "
                       "read hands in that view and report the seat.")
    k.add_argument("--empty", metavar="EMPTY.jpg", help="picture of the empty table")
    k.add_argument("--hand", metavar="HAND.jpg", help="picture of a hand laid out in front of a seat")
    k.add_argument("--camera", choices=["usb", "picamera"],
                   help="take both pictures with the table's camera instead (at the service's frame size; Enter "
                   "on the terminal once the hand is laid out)")
    k.add_argument("--device", default="0", help="with --camera usb: an index N (/dev/videoN) or a /dev/... path")
    k.add_argument("--bottom-seat", default="E", choices=["E", "S", "W", "N"],
                   help="the seat at the bottom side of the camera's picture (default E)")
    k.add_argument("--json", action="store_true", help="print the stored calibration as JSON")


def _camera_pictures(args: argparse.Namespace, prompts: IO[str], ask: Callable[[str], str]):
    """(empty, hand) pictures: from ``--empty``/``--hand`` files, or taken with ``--camera`` at the
    service's frame size (``service.scorer.CAMERA_SIZE``), ``ask`` waiting while the hand is laid
    out, the prompts on ``prompts`` (standard error: standard output stays the result's). Raises
    VisionError (an unreadable file, a camera that cannot be opened) or ValueError (one line: what
    to give)."""
    from vision import CaptureConfig, open_camera, read_image

    if args.camera is None:
        if not args.empty or not args.hand:
            raise ValueError("give --empty EMPTY.jpg and --hand HAND.jpg, or --camera usb|picamera")
        return read_image(args.empty), read_image(args.hand)
    if args.empty or args.hand:
        raise ValueError("give either --camera or the --empty and --hand files, not both")
    from service.scorer import CAMERA_SIZE
    device = int(args.device) if args.device.isdigit() else args.device
    cam = open_camera(CaptureConfig.from_mapping({"source": args.camera, "device": device,
                                                  "width": CAMERA_SIZE[0], "height": CAMERA_SIZE[1]}))
    try:
        prompts.write("Clear the table, then press Enter to take the empty table... ")
        prompts.flush()
        ask("")
        empty = cam.read()
        prompts.write("Lay a hand out in front of one seat, then press Enter... ")
        prompts.flush()
        ask("")
        return empty, cam.read()
    finally:
        cam.close()


def cmd_camera(args: argparse.Namespace, out: IO[str] = sys.stdout, err: IO[str] = sys.stderr,
               ask: Callable[[str], str] = input) -> int:
    """``mjtable camera calibrate``: 0 when the calibration was found and stored, 1 otherwise
    (one line on ``err``). ``ask``: waits for the user between the live camera's two pictures."""
    from controller.camera_setup import calibrate_camera, store_camera
    from vision import VisionError
    from vision.pipeline import default_recognizer
    from vision.table_camera import TableCalibration

    try:
        empty, hand = _camera_pictures(args, err, ask)
        setup = calibrate_camera(empty, hand, default_recognizer(), args.bottom_seat)
        path = store_camera(setup.camera)
    except VisionError as e:
        return _fail(err, f"{e.code}: {e.message}")
    except (ST.SettingsError, ValueError) as e:
        return _fail(err, str(e))
    except EOFError:
        return _fail(err, "camera calibrate stopped: no answer on the terminal (run it interactively, or give files)")
    if args.json:
        out.write(json.dumps({**setup.summary(), "settings": str(path)}) + "\n")
        return 0
    cal, seat = TableCalibration.from_dict(setup.camera), setup.seat
    corners = "  ".join(f"({x:.0f}, {y:.0f})" for x, y in cal.corners)
    out.write(f"Play area  {corners} px in a {cal.picture[0]}x{cal.picture[1]} picture\n"
              f"View       {cal.side}x{cal.side} px from above; tile {cal.tile[0]:.0f}x{cal.tile[1]:.0f} px\n"
              f"Seats      bottom {cal.seats()[0]}, right {cal.seats()[1]}, top {cal.seats()[2]}, left {cal.seats()[3]}; "
              f"zones {cal.zones()[cal.seats()[0]][3] - cal.zones()[cal.seats()[0]][1]:.0f} px deep\n"
              f"Hand       laid out at seat {seat or '? (outside every zone: lay it in front of a seat)'}\n"
              f"Stored in  {path}\n")
    return 0


def _fail(err: IO[str], message: str) -> int:
    print(f"mjtable: {message}", file=err)
    return 1


def _tile_line(t) -> str:
    x1, y1, x2, y2 = (int(round(v)) for v in t.box)
    return f"  {t.tile:<8}{t.confidence:5.2f}  {'sideways' if t.sideways else '        '}  [{x1}, {y1}, {x2}, {y2}]"


def _threshold(args: argparse.Namespace) -> float:
    """The flag threshold of this command: ``--confirm-below``, else the table's ``confirm-below``
    setting (``controller.settings``). Raises SettingsError for a settings file that cannot be read."""
    return args.confirm_below if args.confirm_below is not None else ST.load().confirm_below


def _recognise(args: argparse.Namespace, threshold: float):
    """Read, recognise, annotate ``args.image`` (a file, or a list of 1 or 3-5 frame files), the tiles
    below ``threshold`` (``_threshold``) listed for the player to confirm.
    ``args.table_camera``: read in the stored calibration's view (``vision.table_camera.seat_views``).
    Returns (recognition, None, seat) or (None, error message, None); the recognition is a
    ``vision.Recognition`` or, for several frames, a ``vision.voting.Capture``; the seat is None
    without ``--table-camera`` or when the hand lies in no seat's zone."""
    from vision import VisionError, check_output_path, read_image, write_annotated
    from vision.pipeline import default_recognizer
    from vision.voting import FRAMES, capture_hand

    paths = [args.image] if isinstance(args.image, str) else list(args.image)
    if len(paths) != 1 and not FRAMES[0] <= len(paths) <= FRAMES[1]:
        return None, (f"bad-image: give one photo, or {FRAMES[0]} to {FRAMES[1]} frames of the same hand, "
                      f"not {len(paths)} files"), None
    seat = None
    try:
        if args.annotate is not None:  # before the work, so that none is lost to a bad output path
            check_output_path(args.annotate)
        images = [read_image(p) for p in paths]
        if getattr(args, "table_camera", False):
            from vision.table_camera import TableCalibration, seat_views
            try:
                stored = ST.load().camera
            except ST.SettingsError as e:
                return None, str(e), None
            if stored is None:
                return None, "no-calibration: the table's camera is not calibrated: run mjtable camera calibrate", None
            images, seat = seat_views(TableCalibration.from_dict(stored), images, default_recognizer().detector)
        if len(images) == 1:
            rec = default_recognizer().recognize(images[0], args.rules, threshold)
            shown, picture = rec, images[0]
        else:
            rec = capture_hand(default_recognizer(), images, rules=args.rules, min_confidence=threshold)
            shown, picture = rec.recognition, images[rec.reference]
        if args.annotate is not None:
            write_annotated(args.annotate, picture, shown)
    except VisionError as e:
        return None, f"{e.code}: {e.message}", None
    return rec, None, seat


def _pixels(box) -> str:
    """``"[x1, y1, x2, y2]"``: a box (pixels, floats) rounded to whole pixels, as the text output shows it."""
    return f"[{', '.join(str(int(round(v))) for v in box)}]"


def _describe(rec, threshold: float) -> str:
    """The text output of a ``vision.Recognition``, or of a ``vision.voting.Capture`` (several
    frames: each tile whose reading changed between frames with its votes); ``threshold``: the flag
    threshold the tiles to confirm were listed by."""
    capture = rec if hasattr(rec, "voted") else None
    if capture is not None:
        rec = capture.recognition
    frames = f" in {len(capture.frame_seconds)} frames" if capture else ""
    lines = [f"{len(rec.tiles)} tiles found{frames} ({rec.seconds * 1000:.0f} ms):",
             "  tile    conf.  layout    box"]
    for i, t in enumerate(rec.tiles):
        v = capture.voted[i] if capture else None
        votes = f"  changed: {' '.join(f'{k} x{n}' for k, n in v.votes.items())} of {v.frames}" if v and v.changed else ""
        lines.append(_tile_line(t) + votes)
    a = rec.assembly
    lines.append(f"Hand     {a.hand if a.hand else '(does not add up)'}")
    if a.melds:
        lines.append(f"Melds    {' '.join(a.melds)}")
    lines.append(f"Winning  {a.win_tile or '-'}    Flowers  {' '.join(a.flowers) if a.flowers else '-'}")
    if a.uncertain:
        lines.append(f"Please confirm (not read surely: a confidence below {threshold:g}, a weak box or a box over "
                     "another tile): " + ", ".join(
            f"{t.tile} ({t.confidence:.3f}) at {_pixels(t.box)}" for t in a.uncertain))
    unread = [g for g in a.gaps if g.kind == "unread"]
    if unread:  # vision.assemble.unread_areas: the detector responds as to tiles there, none was read
        lines.append("Tiles here were not read (check the photo): " + ", ".join(_pixels(g.box) for g in unread))
    for n in a.notes:
        lines.append(f"Note: {n}")
    return "\n".join(lines)


def cmd_recognize(args: argparse.Namespace, out: IO[str] = sys.stdout, err: IO[str] = sys.stderr) -> int:
    """``mjtable recognize``: 0 when a hand was assembled, 1 otherwise (message on ``err``)."""
    from controller.table_scoring import reading_problem

    try:
        threshold = _threshold(args)
    except ST.SettingsError as e:
        return _fail(err, str(e))
    rec, problem, _ = _recognise(args, threshold)
    if rec is None:
        return _fail(err, problem)
    found = reading_problem(rec.to_dict(), accept_uncertain=True, name=args.image)
    if found is not None and found[0] == "no-tiles":
        return _fail(err, ": ".join(found))
    if args.json:
        out.write(json.dumps(rec.to_dict(), ensure_ascii=False) + "\n")
    else:
        out.write(_describe(rec, threshold) + "\n")
    if found is not None:  # the tiles do not add up (uncertain tiles are listed, not refused, here)
        return _fail(err, ": ".join(found))
    return 0


def cmd_score_photo(args: argparse.Namespace, out: IO[str] = sys.stdout, err: IO[str] = sys.stderr) -> int:
    """``mjtable score-photo``: 0 when the hand was recognised and scored, 1 otherwise (with
    ``--json``, stdout then has ``{"recognition": ..., "score": null, "error": "..."}``). Scored by
    ``controller.table_scoring.score_photo``, as ``POST /api/score/photo`` is."""
    from controller.table_scoring import check_photo_options, score_photo
    given = rules_cli.given_options(args)
    if args.rules in PROFILES:  # the win options as MCR takes them, and any other given (refused by name)
        given = {**cli_args.given_win_options(args), **{k: v for k, v in given.items() if k not in WinContext.OPTIONS}}
    options = {**given, "rules": args.rules, "accept_uncertain": args.accept_uncertain}
    try:
        check_photo_options(options)  # before the photo is read, so that a bad option loses no work
        threshold = _threshold(args)
    except ScoringError as e:
        return _fail(err, f"{e.code}: {e.message}")
    except ST.SettingsError as e:
        return _fail(err, str(e))
    rec, problem, seat = _recognise(args, threshold)
    if rec is None:
        return _fail(err, problem)
    extra = {"seat": seat} if args.table_camera else {}
    outcome = score_photo(lambda: {**rec.to_dict(), **extra}, options, name=", ".join(args.image))
    seat_line = f"\nSeat     {seat or '? (outside every seat zone)'} (the table's camera)" if args.table_camera else ""
    if outcome.problem_code == "no-tiles":
        return _fail(err, outcome.problem)
    if outcome.result is None:
        message = outcome.problem
        if outcome.problem_code == "uncertain":
            message += (f" (run `mjtable score '{outcome.recognition['hand']}'` with the corrected hand, or add "
                        "--accept-uncertain)")
        # what was read goes to stdout (the JSON object with "score": null and the error, or the
        # text description), the reason to stderr
        if args.json:
            out.write(json.dumps({"recognition": outcome.recognition, "score": None, "error": message},
                                 ensure_ascii=False) + "\n")
        else:
            out.write(_describe(rec, threshold) + seat_line + "\n")
        return _fail(err, message)
    if args.json:
        out.write(json.dumps({"recognition": outcome.recognition, "score": outcome.result.to_dict()},
                             ensure_ascii=False) + "\n")
    else:
        from .cli import format_result

        show = rules_cli.format_result if isinstance(outcome.result, systems.SystemResult) else format_result
        out.write(_describe(rec, threshold) + seat_line + "\n\n" + show(outcome.result) + "\n")
    return 0


HANDLERS: dict[str, Callable[..., int]] = {"recognize": cmd_recognize, "score-photo": cmd_score_photo,
                                           "camera": cmd_camera}
