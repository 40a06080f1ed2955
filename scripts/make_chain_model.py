#!/usr/bin/python3
"""A chain of N Relu nodes as an ONNX model, for the compiler's growth check (tests/janusc/chain_growth.sh) and its
benchmark (bench/RESULTS.md "janusc on long chains").

    /usr/bin/python3 scripts/make_chain_model.py N OUT.onnx [--kind float|qdq|reshape]

float: input float32[1,16] -> Relu -> ... -> Relu (N nodes) -> output; no quantization covers them, so every node
       runs on the host and `janusc compile` puts all N into the package's host section.
qdq:   input float32[1,16] -> QuantizeLinear -> DequantizeLinear -> Relu -> QuantizeLinear -> DequantizeLinear ...
       (N Relu nodes between QDQ pairs of one int8 quantization), which imports as N quantized Relu nodes for the NPU.
reshape: the qdq chain with Reshape to the same shape in place of Relu: N quantized identity Reshapes, which the
       remove-identity pass removes one by one (each removal rewires the next node's input).
Deterministic: the same N gives the same bytes.
"""

import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--kind", choices=["float", "qdq", "reshape"], default="float")
    a = ap.parse_args()
    nodes, inits = [], []
    x = "input"
    quantized = a.kind in ("qdq", "reshape")
    if quantized:
        inits += [numpy_helper.from_array(np.array(0.05, np.float32), "s"),
                  numpy_helper.from_array(np.array(-10, np.int8), "zp")]
    if a.kind == "reshape":
        inits.append(numpy_helper.from_array(np.array([1, 16], np.int64), "shape"))
    for k in range(a.n):
        if quantized:
            nodes.append(helper.make_node("QuantizeLinear", [x, "s", "zp"], [f"q{k}"], name=f"Q{k}"))
            nodes.append(helper.make_node("DequantizeLinear", [f"q{k}", "s", "zp"], [f"d{k}"], name=f"DQ{k}"))
            x = f"d{k}"
        y = "output" if k == a.n - 1 and a.kind == "float" else f"r{k}"
        if a.kind == "reshape":
            nodes.append(helper.make_node("Reshape", [x, "shape"], [y], name=f"Reshape{k}"))
        else:
            nodes.append(helper.make_node("Relu", [x], [y], name=f"Relu{k}"))
        x = y
    if quantized:
        nodes.append(helper.make_node("QuantizeLinear", [x, "s", "zp"], ["qout"], name="Qout"))
        nodes.append(helper.make_node("DequantizeLinear", ["qout", "s", "zp"], ["output"], name="DQout"))
    g = helper.make_graph(nodes, f"{a.kind}_chain_{a.n}",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 16])], initializer=inits)
    m = helper.make_model(g, producer_name="janus-chain", producer_version="1",
                          opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, a.out)


if __name__ == "__main__":
    main()
