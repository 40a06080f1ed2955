#!/usr/bin/python3
"""softsign_qdq.onnx, the ONNX model examples/custom_op imports with its own type inference (Debian's python3-onnx).

    /usr/bin/python3 examples/custom_op/make_model.py

A QDQ int8 chain around ONNX Softsign, an op Janus's registry does not have: x -> Relu -> Softsign -> Sigmoid, each
tensor between a QuantizeLinear / DequantizeLinear pair. Built with scripts/make_onnx_models.py's QDQ builder, so it
is deterministic (the same script writes the same bytes). It is not one of tests/onnx/fixtures: every test there
imports with the registry's inference, which refuses Softsign.
"""

import sys
from pathlib import Path

from onnx import helper

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from make_onnx_models import QDQ, f32, model  # noqa: E402


def softsign_qdq():
    b = QDQ(rng=None)
    x, _ = b.qdq("input", -4.0, 4.0)
    b.nodes.append(helper.make_node("Relu", [x], ["relu"], name="relu"))
    r, _ = b.qdq("relu", 0.0, 4.0)
    b.nodes.append(helper.make_node("Softsign", [r], ["softsign"], name="softsign"))
    s, _ = b.qdq("softsign", -1.0, 1.0)
    b.nodes.append(helper.make_node("Sigmoid", [s], ["sigmoid"], name="sigmoid"))
    y, _ = b.qdq("sigmoid", 0.0, 1.0)
    b.nodes.append(helper.make_node("Identity", [y], ["output"], name="out"))
    return model(b.nodes, [f32("input", [1, 16, 4, 4])], [f32("output", [1, 16, 4, 4])], b.inits, "softsign_qdq")


if __name__ == "__main__":
    path = Path(__file__).resolve().parent / "softsign_qdq.onnx"
    path.write_bytes(softsign_qdq().SerializeToString())
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size} bytes")
