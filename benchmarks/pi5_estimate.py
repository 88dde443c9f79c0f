"""An estimate of a captured hand's latency on a Raspberry Pi 5 (4x Cortex-A76, 2.4 GHz) from a
published ONNX Runtime figure on that board, scaled by arithmetic (no Pi 5 at hand to measure).

What is measured here: the floating-point work of our models (2 x the multiply-adds of every
Conv, Gemm and MatMul, at the input sizes the pipeline runs them: the detector at the size of
``vision/models/metrics.json``, the classifier on a batch of ``--batch`` crops) and their speed
on one core of this machine (onnxruntime, one intra-op thread, CPU time, median of 20 runs):
GFLOP/s here.

The reference, the same figure on the Pi 5: YOLOX-Nano (416x416, 1.08 GFLOPs: the YOLOX model
zoo, github.com/Megvii-BaseDetection/YOLOX, docs/model_zoo.md) runs at 21.3 frames/s under ONNX
Runtime FP32 on a Raspberry Pi 5 CPU (visionanalysis.org, "ncnn FP32 vs ONNX FP32 on Raspberry
Pi 5"; its thread count is not stated, ONNX Runtime's default is one thread per core): 23
GFLOP/s. The vendor's own page (huggingface.co/Arm/Arm-Runtime-for-YOLO26-on-Raspberry-Pi-5)
gives ONNX Runtime 126.9 ms for YOLO26n at 640 on the Pi 5, but no FLOPs count for YOLO26n to
scale from. onnxruntime itself publishes no Arm figures.

The estimate: the engine's CPU time per captured hand here (``--engine-ms``, from
``benchmarks/vision_capture.py``: 362 ms on 1 December 2026) x GFLOP/s here / GFLOP/s on the
Pi 5, and the rest of the capture (``--other-ms``: decoding, crops, the vote, the assembly; 82
ms) x ``--other-ratio`` (how much slower a Cortex-A76 core runs plain numpy/OpenCV code than a
core here: an assumption, 2.5 by default, not a measurement). Depthwise-heavy YOLOX-Nano reaches
a lower share of the board's peak than plain convolutions would: the estimate leans slow.

Needs the ``onnx`` package for the FLOPs count (``pip install onnx``; not a dependency of mjtable).
Usage: ``python benchmarks/pi5_estimate.py [--engine-ms 362] [--other-ms 82] [--batch 16]``.
The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "vision" / "models"
#: YOLOX-Nano on the Raspberry Pi 5 under ONNX Runtime FP32 (see the module docstring)
REF_GFLOPS, REF_FPS = 1.08, 21.3


def flops(model, shape: tuple[int, ...]) -> float:
    """2 x multiply-adds of the Conv, Gemm and MatMul nodes of ``model`` (an onnx ModelProto) for
    an input of ``shape``."""
    import onnx
    from onnx import shape_inference
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for d, v in zip(m.graph.input[0].type.tensor_type.shape.dim, shape):
        d.ClearField("dim_param")
        d.dim_value = v
    m = shape_inference.infer_shapes(m)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
              for vi in list(m.graph.value_info) + list(m.graph.output) + list(m.graph.input)}
    weights = {i.name: list(i.dims) for i in m.graph.initializer}
    weights.update({n.output[0]: list(n.attribute[0].t.dims) for n in m.graph.node if n.op_type == "Constant"})
    total = 0
    for n in m.graph.node:
        w = weights.get(n.input[1]) if len(n.input) > 1 else None
        w = w or shapes.get(n.input[1]) if len(n.input) > 1 else w
        if n.op_type == "Conv":
            total += 2 * int(np.prod(shapes[n.output[0]])) * int(np.prod(w[1:]))
        elif n.op_type in ("Gemm", "MatMul") and w:
            total += 2 * int(np.prod(shapes[n.output[0]])) * w[0]
    return float(total)


def speed(path: Path, shape: tuple[int, ...], runs: int = 20) -> float:
    """Median CPU seconds of one forward pass, onnxruntime with one thread."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    name = s.get_inputs()[0].name
    x = (np.random.default_rng(0).random(shape, dtype=np.float32) * 255)
    s.run(None, {name: x})
    times = []
    for _ in range(runs):
        t = time.process_time()
        s.run(None, {name: x})
        times.append(time.process_time() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine-ms", type=float, default=362.0, help="engine CPU ms per captured hand here")
    ap.add_argument("--other-ms", type=float, default=82.0, help="the rest of the capture's CPU ms here")
    ap.add_argument("--other-ratio", type=float, default=2.5, help="Cortex-A76 core / core here for that rest")
    ap.add_argument("--batch", type=int, default=16, help="classifier crops per batch")
    args = ap.parse_args(argv)
    try:
        import onnx
    except ImportError:
        ap.error("the FLOPs count needs the onnx package: pip install onnx")
    size = json.loads((MODELS / "metrics.json").read_text()).get("detector", {}).get("size", 416)
    rows = {}
    for name, shape in (("detector.onnx", (1, 3, size, size)), ("classifier.onnx", None)):
        model = onnx.load(str(MODELS / name))
        if shape is None:
            dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
            shape = (args.batch, *dims[1:])
        f, s = flops(model, shape), speed(MODELS / name, shape)
        rows[name] = {"shape": list(shape), "gflops": round(f / 1e9, 3), "ms": round(1000 * s, 1),
                      "gflops_per_s": round(f / 1e9 / s, 1)}
        print(f"{name:<16} input {'x'.join(map(str, shape)):<12} {f / 1e9:6.3f} GFLOPs  {1000 * s:6.1f} ms  "
              f"{f / 1e9 / s:5.1f} GFLOP/s (one core here)")
    here = statistics.mean(r["gflops_per_s"] for r in rows.values())
    pi5 = REF_GFLOPS * REF_FPS
    print(f"reference   YOLOX-Nano 416: {REF_GFLOPS} GFLOPs at {REF_FPS} frames/s = {pi5:.1f} GFLOP/s "
          "(ONNX Runtime FP32, Raspberry Pi 5, published)")
    work = args.engine_ms / 1000 * here
    engine_pi5 = 1000 * work / pi5
    total = engine_pi5 + args.other_ms * args.other_ratio
    print(f"a captured hand of 5 frames: {work:.1f} GFLOP in the engine ({args.engine_ms:.0f} ms here); on a Pi 5 "
          f"about {engine_pi5:.0f} ms engine + {args.other_ms * args.other_ratio:.0f} ms the rest = {total:.0f} ms "
          f"(against {args.engine_ms + args.other_ms:.0f} ms CPU here)")
    print(json.dumps({"models": rows, "here_gflops_per_s": round(here, 1), "pi5_gflops_per_s": round(pi5, 1),
                      "hand_gflop": round(work, 2), "pi5_engine_ms": round(engine_pi5), "pi5_total_ms": round(total)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
