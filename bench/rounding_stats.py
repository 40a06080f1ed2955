#!/usr/bin/python3
"""The statistics of bench/rounding_vs_ort.sh: janusc's logits against ONNX Runtime's, in output LSB.

    rounding_stats.py MODEL.onnx OUTDIR IMAGES MODE...

OUTDIR holds ort-disabled/<i>/, ort-all/<i>/ and ref-<MODE>/<i>/ (i = 1..IMAGES), each with the graph output as
<name>.npy. The output LSB is the scale of the DequantizeLinear that produces the graph output (through Identity,
Reshape, Flatten or Squeeze). Prints one markdown table per mode, then ORT's two modes against each other.
"""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

PASS_THROUGH = {"Identity", "Reshape", "Flatten", "Squeeze"}


def output_scale(model):
    """The graph output's name and the (per-tensor) scale of the DequantizeLinear that produces it."""
    if len(model.graph.output) != 1:
        sys.exit(f"expected one graph output, found {len(model.graph.output)}")
    name = model.graph.output[0].name
    producer = {o: n for n in model.graph.node for o in n.output}
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    v = name
    while v in producer and producer[v].op_type in PASS_THROUGH:
        v = producer[v].input[0]
    n = producer.get(v)
    if n is None or n.op_type != "DequantizeLinear":
        sys.exit(f"graph output {name} is not produced by a DequantizeLinear (found {n.op_type if n else 'none'})")
    scale = init.get(n.input[1])
    if scale is None or scale.size != 1:
        sys.exit(f"{n.name}: the scale {n.input[1]} is not a constant scalar")
    return name, float(scale.reshape(()))


def load(out, run, images, name):
    """The logits of every image as one float64 array [images, ...]."""
    arrays = []
    for i in range(1, images + 1):
        f = out / run / str(i) / f"{name}.npy"
        if not f.is_file():
            sys.exit(f"{f}: missing")
        arrays.append(np.load(f).astype(np.float64))
    return np.stack(arrays)


def row(label, a, b, lsb):
    """One table row: a against b."""
    d = np.abs(a - b) / lsb
    top_a = a.reshape(len(a), -1).argmax(axis=1)
    top_b = b.reshape(len(b), -1).argmax(axis=1)
    bias = np.mean(a - b) / lsb
    return (f"| {label} | {d.max():.2f} | {100.0 * np.mean(a != b):.2f}% | {d.mean():.4f} | {bias:+.4f} | "
            f"{int(np.sum(top_a == top_b))}/{len(a)} |")


def tied(a):
    """How many images have more than one largest logit (argmax then takes the first)."""
    flat = a.reshape(len(a), -1)
    return int(np.sum((flat == flat.max(axis=1, keepdims=True)).sum(axis=1) > 1))


HEADER = ("| against | max \\|diff\\| (LSB) | logits that differ | mean \\|diff\\| (LSB) | mean diff (LSB, signed) | "
          "top-1 agreement |\n|---|---:|---:|---:|---:|---:|")


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1])
    out, images, modes = Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    name, lsb = output_scale(model)
    ort = {opt: load(out, f"ort-{opt}", images, name) for opt in ("disabled", "all")}
    count = ort["disabled"][0].size
    print(f"Output `{name}`: {count} logits per image, LSB = {lsb:.9g} (the scale of its DequantizeLinear). "
          "Each row compares the table's logits (janusc's, or ORT --opt all's in the last table) with the row's "
          "over all images; the signed mean is the table's minus the row's.")
    for mode in modes:
        j = load(out, f"ref-{mode}", images, name)
        print(f"\n### janusc --rounding {mode}\n" if mode != "default" else "\n### janusc (default rounding)\n")
        print(HEADER)
        print(row("ORT --opt disabled (float QDQ)", j, ort["disabled"], lsb))
        print(row("ORT --opt all (fused integer kernels)", j, ort["all"], lsb))
        print(f"\nTop-1 is the first largest logit; images with tied largest logits: {tied(j)} of {images} "
              f"(ORT --opt disabled {tied(ort['disabled'])}, --opt all {tied(ort['all'])}).")
    if len(modes) > 1:  # what each mode changes against the first (a mode that changes nothing shows as 0)
        first = load(out, f"ref-{modes[0]}", images, name)
        print(f"\n### janusc's modes against --rounding {modes[0]}\n")
        print(HEADER.replace("| against |", "| mode |"))
        for mode in modes[1:]:
            print(row(f"--rounding {mode}", load(out, f"ref-{mode}", images, name), first, lsb))
    print("\n### ORT --opt all against ORT --opt disabled\n")
    print(HEADER)
    print(row("ORT --opt disabled (float QDQ)", ort["all"], ort["disabled"], lsb))
    return 0


if __name__ == "__main__":
    sys.exit(main())
