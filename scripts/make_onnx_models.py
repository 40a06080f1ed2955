#!/usr/bin/python3
"""Quantized ONNX models for Janus, built with Debian's python3-onnx (apt-get install python3-onnx).

    /usr/bin/python3 scripts/make_onnx_models.py                 # the committed fixtures: tests/onnx/fixtures/*.onnx
    /usr/bin/python3 scripts/make_onnx_models.py --full DIR      # full-size MobileNetV2-1.0 (224x224), not committed

It also writes tests/onnx/bad/ (malformed models and tensors: the reader's errors) and tests/onnx/bad_import/ (models
that decode but that the importer refuses), one broken rule each; their expected errors are in expected.txt beside
them, checked by tests/onnx/reader.cpp and tests/onnx/import.cpp.

Every model is deterministic: weights come from a seeded numpy generator, and onnx serializes fields in number
order, so the same script writes the same bytes. The fixtures cover both quantized forms:
  QDQ         QuantizeLinear / DequantizeLinear around float ops, per-tensor and per-axis (weights), int8 and uint8
  QOperator   QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger
and exercise the encodings a reader must accept: raw_data and typed fields (float_data, int32_data, int64_data),
packed and unpacked repeated fields (proto2 `dims` and attribute `ints` are unpacked; `float_data` is packed).
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "onnx" / "fixtures"
OPSET = 13


def model(nodes, inputs, outputs, inits, name, opset=OPSET):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    m = helper.make_model(g, producer_name="janus-fixtures", producer_version="1",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def tensor(name, arr, raw=True):
    """An initializer: numpy_helper writes raw_data; raw=False writes the typed field instead."""
    arr = np.array(arr, order="C")  # keeps 0-d scalars 0-d (ascontiguousarray would make them 1-d)
    if raw:
        return numpy_helper.from_array(arr, name)
    dt = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype]
    return helper.make_tensor(name, dt, arr.shape, arr.flatten().tolist(), raw=False)


class QDQ:
    """Builds a QDQ graph: float tensors between DequantizeLinear and QuantizeLinear pairs."""

    def __init__(self, rng, qtype=np.int8, raw=True):
        self.rng, self.qtype, self.raw = rng, qtype, raw
        self.nodes, self.inits, self.n = [], [], 0

    def uid(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, name, arr, raw=None):
        self.inits.append(tensor(name, arr, self.raw if raw is None else raw))
        return name

    def qparams(self, lo, hi):
        """Scale and zero point covering [lo, hi] in the activation type (0 exactly representable)."""
        qmin, qmax = (0, 255) if self.qtype == np.uint8 else (-128, 127)
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        scale = np.float32((hi - lo) / (qmax - qmin))
        zp = int(np.clip(round(qmin - lo / scale), qmin, qmax))
        return scale, zp

    def qdq(self, x, lo, hi):
        """x (float) -> QuantizeLinear -> DequantizeLinear; returns the dequantized name."""
        s, zp = self.qparams(lo, hi)
        sn = self.const(self.uid("scale"), np.array(s, np.float32))
        zn = self.const(self.uid("zp"), np.array(zp, self.qtype))
        q, dq = self.uid("q"), self.uid("dq")
        self.nodes.append(helper.make_node("QuantizeLinear", [x, sn, zn], [q], name=self.uid("Q")))
        self.nodes.append(helper.make_node("DequantizeLinear", [q, sn, zn], [dq], name=self.uid("DQ")))
        return dq, s

    def weight(self, w_float, axis=0):
        """Per-axis symmetric int8 weight with its DequantizeLinear; returns (dequantized name, scales)."""
        red = tuple(i for i in range(w_float.ndim) if i != axis)
        amax = np.maximum(np.abs(w_float).max(axis=red), 1e-6)
        s = (amax / 127.0).astype(np.float32)
        shape = [1] * w_float.ndim
        shape[axis] = -1
        q = np.clip(np.round(w_float / s.reshape(shape)), -127, 127).astype(np.int8)
        wn = self.const(self.uid("w"), q)
        sn = self.const(self.uid("w_scale"), s)
        zn = self.const(self.uid("w_zp"), np.zeros_like(s, dtype=np.int8))
        dq = self.uid("w_dq")
        self.nodes.append(helper.make_node("DequantizeLinear", [wn, sn, zn], [dq], name=self.uid("DQw"), axis=axis))
        return dq, s

    def bias(self, b_float, in_scale, w_scales):
        s = (np.float32(in_scale) * w_scales).astype(np.float32)
        q = np.round(b_float / s).astype(np.int32)
        bn = self.const(self.uid("b"), q)
        sn = self.const(self.uid("b_scale"), s)
        zn = self.const(self.uid("b_zp"), np.zeros_like(q))
        dq = self.uid("b_dq")
        self.nodes.append(helper.make_node("DequantizeLinear", [bn, sn, zn], [dq], name=self.uid("DQb"), axis=0))
        return dq

    def conv(self, x, x_scale, cin, cout, k, stride=1, group=1, act="relu6", out_range=(-4.0, 4.0)):
        fan_in = cin // group * k * k
        w = self.rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // group, k, k)).astype(np.float32)
        b = self.rng.normal(0, 0.1, cout).astype(np.float32)
        wdq, ws = self.weight(w)
        bdq = self.bias(b, x_scale, ws)
        y = self.uid("conv")
        p = k // 2
        self.nodes.append(helper.make_node("Conv", [x, wdq, bdq], [y], name=self.uid("Conv"), kernel_shape=[k, k],
                                           strides=[stride, stride], pads=[p, p, p, p], group=group))
        if act == "relu6":
            lo, hi = self.const(self.uid("zero"), np.array(0, np.float32)), self.const(self.uid("six"),
                                                                                       np.array(6, np.float32))
            r = self.uid("relu6")
            self.nodes.append(helper.make_node("Clip", [y, lo, hi], [r], name=self.uid("Clip")))
            return self.qdq(r, 0.0, 6.0)
        if act == "relu":
            r = self.uid("relu")
            self.nodes.append(helper.make_node("Relu", [y], [r], name=self.uid("Relu")))
            return self.qdq(r, 0.0, out_range[1])
        return self.qdq(y, *out_range)


def qdq_conv_relu(rng):
    """QDQ int8: Conv 3x3 (per-axis weights, int32 bias) + Relu; float graph input and output."""
    b = QDQ(rng)
    x, s = b.qdq("input", -1.0, 1.0)
    y, _ = b.conv(x, s, 3, 8, 3, act="relu", out_range=(0.0, 4.0))
    b.nodes.append(helper.make_node("Identity", [y], ["output"], name="out"))
    return model(b.nodes, [f32("input", [1, 3, 8, 8])], [f32("output", [1, 8, 8, 8])], b.inits, "qdq_conv_relu")


def qdq_conv_relu_shared(rng):
    """QDQ int8: Conv quantized to [-2, 4], then a Relu quantized with the same parameters (an exporter that shares
    one Q/DQ pair around the activation). On the codes the Relu is a clamp to [zp, 127], not the identity: the
    fuse-activation pass keeps it, and the lowering computes it in the Conv's requantization (seed B10)."""
    b = QDQ(rng)
    x, s = b.qdq("input", -1.0, 1.0)
    y, _ = b.conv(x, s, 3, 8, 3, act=None, out_range=(-2.0, 4.0))
    r = b.uid("relu")
    b.nodes.append(helper.make_node("Relu", [y], [r], name=b.uid("Relu")))
    z, _ = b.qdq(r, -2.0, 4.0)
    b.nodes.append(helper.make_node("Identity", [z], ["output"], name="out"))
    return model(b.nodes, [f32("input", [1, 3, 8, 8])], [f32("output", [1, 8, 8, 8])], b.inits,
                 "qdq_conv_relu_shared")


def qdq_unet_tiny(rng):
    """QDQ int8, a tiny encoder-decoder: Conv + Relu, MaxPool, Conv + Relu, nearest Resize 2x back up, Concat with
    the skip connection along the channels, Pad of H and W, ReduceMean over H and W, Reshape to a row. The data
    movement keeps its input's parameters (as exporters do), so the importer quantizes every op; the lowering runs
    the movement and the reduction on NHWC arrays (graph/lower.hpp lower_array_op)."""
    b = QDQ(rng)
    x, s = b.qdq("input", -1.0, 1.0)
    a, sa = b.conv(x, s, 3, 16, 3, act="relu", out_range=(0.0, 4.0))
    p = b.uid("pool")
    b.nodes.append(helper.make_node("MaxPool", [a], [p], name=b.uid("MaxPool"), kernel_shape=[2, 2], strides=[2, 2]))
    p, _ = b.qdq(p, 0.0, 4.0)
    c, _ = b.conv(p, sa, 16, 16, 3, act="relu", out_range=(0.0, 4.0))
    u = b.uid("up")
    scales = b.const(b.uid("scales"), np.array([1, 1, 2, 2], np.float32))
    b.nodes.append(helper.make_node("Resize", [c, "", scales], [u], name=b.uid("Resize"), mode="nearest"))
    u, _ = b.qdq(u, 0.0, 4.0)
    k = b.uid("cat")
    b.nodes.append(helper.make_node("Concat", [u, a], [k], name=b.uid("Concat"), axis=1))
    k, _ = b.qdq(k, 0.0, 4.0)
    d = b.uid("pad")
    pads = b.const(b.uid("pads"), np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))
    b.nodes.append(helper.make_node("Pad", [k, pads], [d], name=b.uid("Pad")))
    d, _ = b.qdq(d, 0.0, 4.0)
    m = b.uid("mean")
    b.nodes.append(helper.make_node("ReduceMean", [d], [m], name=b.uid("ReduceMean"), axes=[2, 3], keepdims=1))
    m, _ = b.qdq(m, 0.0, 2.0)
    shape = b.const(b.uid("shape"), np.array([1, 32], np.int64))
    b.nodes.append(helper.make_node("Reshape", [m, shape], ["output"], name=b.uid("Reshape")))
    return model(b.nodes, [f32("input", [1, 3, 8, 8])], [f32("output", [1, 32])], b.inits, "qdq_unet_tiny")


def qdq_conv_bn(rng):
    """QDQ int8: Conv 3x3 with its own output quantization, then a BatchNormalization with float statistics (as an
    exporter leaves it when it does not fold), quantized again; float graph input and output (seeds A6, A8)."""
    b = QDQ(rng)
    x, s = b.qdq("input", -1.0, 1.0)
    y, _ = b.conv(x, s, 3, 8, 3, act=None, out_range=(-3.0, 3.0))
    c = 8
    gamma = (rng.uniform(0.5, 1.5, c) * rng.choice([-1.0, 1.0], c)).astype(np.float32)
    beta = rng.normal(0, 0.2, c).astype(np.float32)
    mean = rng.normal(0, 0.3, c).astype(np.float32)
    var = rng.uniform(0.2, 1.5, c).astype(np.float32)
    names = [b.const(b.uid(n), v) for n, v in (("gamma", gamma), ("beta", beta), ("mean", mean), ("var", var))]
    bn = b.uid("bn")
    b.nodes.append(helper.make_node("BatchNormalization", [y] + names, [bn], name=b.uid("BatchNorm"), epsilon=1e-3))
    z, _ = b.qdq(bn, -4.0, 4.0)
    b.nodes.append(helper.make_node("Identity", [z], ["output"], name="out"))
    return model(b.nodes, [f32("input", [1, 3, 8, 8])], [f32("output", [1, 8, 8, 8])], b.inits, "qdq_conv_bn")


def qdq_uint8_add_sigmoid(rng):
    """QDQ uint8 with typed-field initializers: Add of two inputs (broadcast over channels), then Sigmoid."""
    b = QDQ(rng, np.uint8, raw=False)
    a, _ = b.qdq("a", -2.0, 2.0)
    c, _ = b.qdq("b", -1.0, 1.0)
    b.nodes.append(helper.make_node("Add", [a, c], ["sum"], name="add"))
    s, _ = b.qdq("sum", -3.0, 3.0)
    b.nodes.append(helper.make_node("Sigmoid", [s], ["sig"], name="sigmoid"))
    y, _ = b.qdq("sig", 0.0, 1.0)
    b.nodes.append(helper.make_node("Identity", [y], ["output"], name="out"))
    return model(b.nodes, [f32("a", [1, 4, 5, 5]), f32("b", [1, 4, 1, 1])], [f32("output", [1, 4, 5, 5])], b.inits,
                 "qdq_uint8_add_sigmoid")


def qop_conv_matmul(rng):
    """QOperator: uint8 graph input, QLinearConv (int8 weights, per-tensor), Flatten, QLinearMatMul (uint8 out)."""
    inits = []

    def c(name, arr, raw=True):
        inits.append(tensor(name, arr, raw))
        return name

    w = rng.integers(-100, 101, (4, 2, 3, 3)).astype(np.int8)
    bias = rng.integers(-500, 501, 4).astype(np.int32)
    m = rng.integers(-100, 101, (64, 10)).astype(np.int8)
    nodes = [
        helper.make_node("QLinearConv", ["x", c("x_s", np.array(0.02, np.float32)), c("x_zp", np.array(128, np.uint8)),
                                         c("w", w), c("w_s", np.array(0.01, np.float32)),
                                         c("w_zp", np.array(0, np.int8)), c("y_s", np.array(0.05, np.float32)),
                                         c("y_zp", np.array(120, np.uint8)), c("bias", bias, raw=False)],
                         ["y"], name="qconv", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
        helper.make_node("Flatten", ["y"], ["flat"], name="flatten", axis=1),
        helper.make_node("QLinearMatMul", ["flat", "y_s", "y_zp", c("m", m), c("m_s", np.array(0.01, np.float32)),
                                           c("m_zp", np.array(0, np.int8)), c("z_s", np.array(0.1, np.float32)),
                                           c("z_zp", np.array(128, np.uint8))], ["logits"], name="qmatmul"),
    ]
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 4, 4])],
                 [helper.make_tensor_value_info("logits", TensorProto.UINT8, [1, 10])], inits, "qop_conv_matmul")


def integer_ops(rng):
    """ConvInteger and MatMulInteger: int8 and uint8 in, int32 out. Zero points: scalars stored in the typed
    int32_data field, per output channel (ConvInteger's w_zero_point), per row and per column (MatMulInteger), and
    omitted (0 of uint8)."""
    w = rng.integers(-128, 128, (3, 2, 2, 2)).astype(np.int8)
    m = rng.integers(-128, 128, (5, 6)).astype(np.int8)
    w2 = rng.integers(0, 256, (3, 2, 3, 3)).astype(np.uint8)
    m2 = rng.integers(-128, 128, (5, 6)).astype(np.int8)
    m3 = rng.integers(0, 256, (3, 2)).astype(np.uint8)
    inits = [tensor("w", w), tensor("x_zp", np.array(3, np.int8), raw=False), tensor("m", m),
             tensor("a_zp", np.array(-2, np.int8), raw=False),
             tensor("w2", w2), tensor("xu_zp", np.array(131, np.uint8)),
             tensor("w2_zp", np.array([120, 128, 141], np.uint8)),
             tensor("m2", m2), tensor("a2_zp", np.array([5, -7, 0, 127], np.int8)),
             tensor("m2_zp", np.array([-128, 3, 0, -1, 9, 64], np.int8)), tensor("m3", m3)]
    nodes = [helper.make_node("ConvInteger", ["x", "w", "x_zp"], ["conv"], name="convint"),
             helper.make_node("MatMulInteger", ["a", "m", "a_zp"], ["mm"], name="matmulint"),
             helper.make_node("ConvInteger", ["xu", "w2", "xu_zp", "w2_zp"], ["conv2"], name="convint_u8",
                              strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("MatMulInteger", ["a2", "m2", "a2_zp", "m2_zp"], ["mm2"], name="matmulint_axes"),
             helper.make_node("MatMulInteger", ["au", "m3"], ["mm3"], name="matmulint_no_zp")]
    i8, u8, i32 = TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32
    v = helper.make_tensor_value_info
    return model(nodes, [v("x", i8, [1, 2, 5, 5]), v("a", i8, [4, 5]), v("xu", u8, [1, 2, 6, 6]),
                         v("a2", i8, [4, 5]), v("au", u8, [2, 3])],
                 [v("conv", i32, [1, 3, 4, 4]), v("mm", i32, [4, 6]), v("conv2", i32, [1, 3, 3, 3]),
                  v("mm2", i32, [4, 6]), v("mm3", i32, [2, 2])], inits, "integer_ops")


def qdq_float_tail(rng):
    """A quantized conv followed by float ops that are not quantized (Softmax over a Reshape with an int64 shape
    given as typed int64_data): they run on the host in float32."""
    b = QDQ(rng)
    x, s = b.qdq("input", -1.0, 1.0)
    y, _ = b.conv(x, s, 2, 4, 1, act="none", out_range=(-2.0, 2.0))
    shape = b.const("shape", np.array([1, 16], np.int64), raw=False)
    b.nodes.append(helper.make_node("Reshape", [y, shape], ["flat"], name="reshape"))
    b.nodes.append(helper.make_node("Softmax", ["flat"], ["output"], name="softmax", axis=-1))
    return model(b.nodes, [f32("input", [1, 2, 2, 2])], [f32("output", [1, 16])], b.inits, "qdq_float_tail")


def qdq_float_middle(rng):
    """QDQ int8 with a float part in the middle: Conv + Relu, then a Softmax over the channels and a Mul that are not
    quantized (they run on the host, between two NPU segments), then a 1x1 Conv whose output is added to the first
    Conv's (which crosses the host part in the NPU's output region)."""
    b = QDQ(rng)
    x, s = b.qdq("input", -1.0, 1.0)
    y, sy = b.conv(x, s, 4, 16, 3, act="relu", out_range=(0.0, 4.0))
    b.nodes.append(helper.make_node("Softmax", [y], ["soft"], name="softmax", axis=1))
    four = b.const("four", np.array(4.0, np.float32))
    b.nodes.append(helper.make_node("Mul", ["soft", four], ["scaled"], name="scale"))
    z, sz = b.qdq("scaled", 0.0, 4.0)
    w, _ = b.conv(z, sz, 16, 16, 1, act="none", out_range=(-2.0, 2.0))
    a = b.uid("add")
    b.nodes.append(helper.make_node("Add", [w, y], [a], name="add"))
    out, _ = b.qdq(a, -2.0, 6.0)
    b.nodes.append(helper.make_node("Identity", [out], ["output"], name="out"))
    return model(b.nodes, [f32("input", [1, 4, 8, 8])], [f32("output", [1, 16, 8, 8])], b.inits, "qdq_float_middle")


def qdq_softmax_head(rng):
    """QDQ int8: a classifier head as exporters write it: Conv + Relu, GlobalAveragePool, Flatten, Gemm, then a
    quantized Softmax (DequantizeLinear -> Softmax -> QuantizeLinear to [0, 1]). The NPU lowers no Softmax, so the
    lowering refuses it and the host runs it between the NPU part and the output's DequantizeLinear (host fallback:
    `janusc compile` places it there and says why; `--strict` refuses it)."""
    b = QDQ(rng)
    x, s = b.qdq("input", -1.0, 1.0)
    y, _ = b.conv(x, s, 3, 16, 3, act="relu", out_range=(0.0, 4.0))
    b.nodes.append(helper.make_node("GlobalAveragePool", [y], ["gap"], name="gap"))
    g, gs = b.qdq("gap", 0.0, 4.0)
    b.nodes.append(helper.make_node("Flatten", [g], ["flat"], name="flatten", axis=1))
    w = rng.normal(0, 0.25, (10, 16)).astype(np.float32)
    wdq, ws = b.weight(w, axis=0)
    bdq = b.bias(rng.normal(0, 0.1, 10).astype(np.float32), gs, ws)
    b.nodes.append(helper.make_node("Gemm", ["flat", wdq, bdq], ["logits"], name="classifier", transB=1))
    z, _ = b.qdq("logits", -8.0, 8.0)
    b.nodes.append(helper.make_node("Softmax", [z], ["probs"], name="softmax", axis=-1))
    out, _ = b.qdq("probs", 0.0, 1.0)
    b.nodes.append(helper.make_node("Identity", [out], ["output"], name="out"))
    return model(b.nodes, [f32("input", [1, 3, 8, 8])], [f32("output", [1, 10])], b.inits, "qdq_softmax_head")


def mobilenet_v2(rng, size, width, blocks, classes):
    """A MobileNetV2 in QDQ form: stem conv 3x3/2, inverted residual blocks (expand 1x1, depthwise 3x3, project 1x1,
    residual Add when shapes allow), last 1x1 conv, GlobalAveragePool, Flatten, Gemm."""
    b = QDQ(rng)

    def ch(c):
        return max(8, int(c * width + 4) // 8 * 8)

    x, s = b.qdq("input", -1.0, 1.0)
    cin = ch(32)
    x, s = b.conv(x, s, 3, cin, 3, stride=2)
    for t, c, n, stride in blocks:
        cout = ch(c)
        for i in range(n):
            st = stride if i == 0 else 1
            inp, inp_s = x, s
            hidden = cin * t
            y, ys = (x, s) if t == 1 else b.conv(x, s, cin, hidden, 1)
            y, ys = b.conv(y, ys, hidden, hidden, 3, stride=st, group=hidden)
            y, ys = b.conv(y, ys, hidden, cout, 1, act="none", out_range=(-4.0, 4.0))
            if st == 1 and cin == cout:
                r = b.uid("add")
                b.nodes.append(helper.make_node("Add", [inp, y], [r], name=b.uid("Add")))
                y, ys = b.qdq(r, -6.0, 6.0)
            x, s, cin = y, ys, cout
    last = 1280 if width >= 1.0 else ch(1280)
    x, s = b.conv(x, s, cin, last, 1)
    gap = b.uid("gap")
    b.nodes.append(helper.make_node("GlobalAveragePool", [x], [gap], name="gap"))
    g, gs = b.qdq(gap, 0.0, 6.0)
    flat = b.uid("flat")
    b.nodes.append(helper.make_node("Flatten", [g], [flat], name="flatten", axis=1))
    w = rng.normal(0, np.sqrt(1.0 / last), (classes, last)).astype(np.float32)
    wdq, ws = b.weight(w, axis=0)
    bdq = b.bias(rng.normal(0, 0.1, classes).astype(np.float32), gs, ws)
    logits = b.uid("logits")
    b.nodes.append(helper.make_node("Gemm", [flat, wdq, bdq], [logits], name="classifier", transB=1))
    y, _ = b.qdq(logits, -8.0, 8.0)
    b.nodes.append(helper.make_node("Identity", [y], ["logits"], name="out"))
    return model(b.nodes, [f32("input", [1, 3, size, size])], [f32("logits", [1, classes])], b.inits,
                 f"mobilenet_v2_{size}")


# (expansion t, channels c, repeats n, first stride s), as in the MobileNetV2 paper
V2_BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
             (6, 320, 1, 1)]
# The fixture: the same structure at 32x32, width 0.25, one block per stage, 10 classes (tiny weights).
TINY_BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 1, 2), (6, 64, 1, 2), (6, 96, 1, 1)]

FIXTURE_MODELS = {
    "qdq_conv_relu": qdq_conv_relu,
    "qdq_uint8_add_sigmoid": qdq_uint8_add_sigmoid,
    "qop_conv_matmul": qop_conv_matmul,
    "integer_ops": integer_ops,
    "qdq_float_tail": qdq_float_tail,
    "mobilenet_v2_tiny": lambda rng: mobilenet_v2(rng, 32, 0.25, TINY_BLOCKS, 10),
    "qdq_conv_bn": qdq_conv_bn,
    "qdq_conv_relu_shared": qdq_conv_relu_shared,
    "qdq_unet_tiny": qdq_unet_tiny,
    "qdq_float_middle": qdq_float_middle,
    "qdq_softmax_head": qdq_softmax_head,
}


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def f32_bits(x):
    return "0x%08x" % int(np.array(x, np.float32).view(np.uint32))


def summary(m):
    """The fixture's content as text, read back by the protobuf library: tests/onnx compares it with what Janus's
    own reader decodes (two independent decoders of the same bytes). Floats are printed as their bits."""
    names = {1: "float32", 2: "uint8", 3: "int8", 6: "int32", 7: "int64"}

    def dims(v):
        return "[" + ",".join(str(d) for d in v) + "]"

    def tensor_line(t):
        a = numpy_helper.to_array(t)
        return f"{names[t.data_type]} {dims(t.dims)} fnv={fnv1a64(a.astype(a.dtype.newbyteorder('<')).tobytes()):016x}"

    def value_info(kind, v):
        tt = v.type.tensor_type
        shape = "[" + ",".join(str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?")
                               for d in tt.shape.dim) + "]" if tt.HasField("shape") else "?"
        return f"{kind} {v.name} {names.get(tt.elem_type, tt.elem_type)} {shape}"

    def attr(a):
        kind = helper.get_attribute_value
        if a.type == onnx.AttributeProto.FLOAT:
            return f"{a.name}=f:{f32_bits(a.f)}"
        if a.type == onnx.AttributeProto.INT:
            return f"{a.name}=i:{a.i}"
        if a.type == onnx.AttributeProto.STRING:
            return f"{a.name}=s:{a.s.decode()}"
        if a.type == onnx.AttributeProto.INTS:
            return f"{a.name}=ints:" + dims(a.ints)
        if a.type == onnx.AttributeProto.FLOATS:
            return f"{a.name}=floats:[" + ",".join(f32_bits(x) for x in a.floats) + "]"
        if a.type == onnx.AttributeProto.TENSOR:
            return f"{a.name}=t:" + tensor_line(a.t)
        return f"{a.name}=?{kind(a)}"

    lines = [f"model ir_version={m.ir_version} producer={m.producer_name} {m.producer_version}",
             "opsets " + " ".join(f"{o.domain or 'ai.onnx'}:{o.version}" for o in m.opset_import),
             f"graph {m.graph.name}"]
    lines += [value_info("input", v) for v in m.graph.input]
    lines += [value_info("output", v) for v in m.graph.output]
    lines += [value_info("value_info", v) for v in m.graph.value_info]
    lines += [f"initializer {t.name} " + tensor_line(t) for t in m.graph.initializer]
    for n in m.graph.node:
        lines.append(f"node {n.name} {n.domain or 'ai.onnx'}.{n.op_type} in=[{','.join(n.input)}] "
                     f"out=[{','.join(n.output)}]" + "".join(" " + attr(a) for a in n.attribute))
    return "\n".join(lines) + "\n"


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(number, wire, payload=b""):
    """One protobuf field: key, then (for wire type 2) the length, then the payload."""
    key = varint((number << 3) | wire)
    return key + (varint(len(payload)) + payload if wire == 2 else payload)


def bad_files():
    """Malformed inputs, one broken rule each: {file name: bytes}."""
    good = qdq_conv_relu(np.random.default_rng(100)).SerializeToString()
    qop = qop_conv_matmul(np.random.default_rng(102)).SerializeToString()  # the fixture's bytes

    def small(init=None, node=None, ir=7, opset=(("", 13),), graph=True):
        g = helper.make_graph([node] if node else [helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                              [f32("x", [1, 2])], [f32("y", [1, 2])], initializer=[init] if init else [])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opset])
        m.ir_version = ir
        if not graph:
            m.ClearField("graph")
        return m.SerializeToString()

    def t(name, dt, dims, **kw):
        x = TensorProto(name=name, data_type=dt, dims=dims)
        for k, v in kw.items():
            if isinstance(v, list):
                getattr(x, k).extend(v)
            else:
                setattr(x, k, v)
        return x

    ext = t("w", TensorProto.FLOAT, [2])
    ext.data_location = TensorProto.EXTERNAL
    ext.external_data.add(key="location", value="weights.bin")
    then_g = helper.make_graph([], "then", [], [f32("a", [1])])
    if_node = helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then_g, else_branch=then_g)
    return {
        "empty.onnx": b"",
        "text.onnx": b"this is not a model\n",
        "truncated.onnx": good[: len(good) // 2],
        "varint_over_64_bits.onnx": b"\x08" + b"\xff" * 9 + b"\x02",
        "group_wire_type.onnx": varint((7 << 3) | 3) + good,
        "field_number_zero.onnx": b"\x00\x01" + good,
        "length_past_end.onnx": field(1, 0, varint(7)) + varint((7 << 3) | 2) + varint(1000) + b"\x0a\x00",
        "ir_version_as_string.onnx": field(1, 2, b"7") + good,
        "ir_version_99.onnx": small(ir=99),
        "no_graph.onnx": small(graph=False),
        "no_default_opset.onnx": small(opset=(("com.example", 1),)),
        "external_data.onnx": small(init=ext),
        "float64_initializer.onnx": small(init=t("h", TensorProto.DOUBLE, [2], double_data=[1.0, 2.0])),
        "uint16_out_of_range.onnx": small(init=t("u", TensorProto.UINT16, [2], int32_data=[5, 70000])),
        "float16_bits_out_of_range.onnx": small(init=t("h", TensorProto.FLOAT16, [1], int32_data=[-1])),
        "uint32_in_int32_data.onnx": small(init=t("u", TensorProto.UINT32, [1], int32_data=[1])),
        "raw_data_short.onnx": small(init=t("w", TensorProto.FLOAT, [2, 3], raw_data=b"\0" * 20)),
        "raw_and_typed.onnx": small(init=t("w", TensorProto.FLOAT, [1], raw_data=b"\0" * 4, float_data=[1.0])),
        "int8_out_of_range.onnx": small(init=t("q", TensorProto.INT8, [2], int32_data=[5, 300])),
        "typed_count.onnx": small(init=t("w", TensorProto.INT64, [3], int64_data=[1, 2])),
        "wrong_typed_field.onnx": small(init=t("w", TensorProto.FLOAT, [1], int32_data=[1])),
        "negative_dim.onnx": small(init=t("w", TensorProto.FLOAT, [2, -1], raw_data=b"")),
        "rank_7.onnx": small(init=t("w", TensorProto.INT8, [1] * 7, raw_data=b"\1")),
        "huge_dims.onnx": small(init=t("w", TensorProto.INT8, [1 << 21, 1 << 21], raw_data=b"\1")),
        # issue 26: a zero dim makes the tensor empty but does not exempt the others (2^124 "elements" behind a 0)
        "zero_then_huge_dims.onnx": small(init=t("w", TensorProto.FLOAT, [0, 1 << 62, 1 << 62], raw_data=b"")),
        "zero_then_huge_dims.pb": t("x", TensorProto.FLOAT, [0, 1 << 62, 1 << 62], raw_data=b"").SerializeToString(),
        # a packed dims field of 100,000 entries: counted, never stored (the decoder's memory is bounded by the file)
        "packed_dims_100000.onnx": field(1, 0, varint(7)) + field(8, 2, field(2, 0, varint(13)))
        + field(7, 2, field(5, 2, field(1, 2, b"\1" * 100000) + field(2, 0, varint(3)))),
        "no_data_type.onnx": small(init=t("w", 0, [1], raw_data=b"\1")),
        # names are text without control characters: janusc compiled this node's name (a fuzzed 'q\x0fonv') into a
        # package its own writer refused (exit 3); the reader refuses it (onnx-name), and a value name the same way
        "name_control_char.onnx": small(node=helper.make_node("Relu", ["x"], ["y"], name="q\x0fonv")),
        # the model fuzz/onnx_run made of the qop_conv_matmul fixture, one byte changed
        "fuzzed_node_name_control_char.onnx": qop.replace(b"qconv", b"q\x0fonv", 1),
        "value_name_control_char.onnx": small(node=helper.make_node("Relu", ["x"], ["y\x7f"], name="relu")),
        "graph_attribute.onnx": small(node=if_node),
        # model {ir_version 7, opset 13, graph {initializer {dims 1, data_type FLOAT, float_data: 5 packed bytes}}}
        "packed_floats_5_bytes.onnx": field(1, 0, varint(7)) + field(8, 2, field(2, 0, varint(13)))
        + field(7, 2, field(5, 2, field(1, 0, varint(1)) + field(2, 0, varint(1)) + field(4, 2, b"\0" * 5))),
        "tensor_no_type.pb": t("x", 0, [1], raw_data=b"\1").SerializeToString(),
        "tensor_truncated.pb": t("x", TensorProto.FLOAT, [4], raw_data=b"\0" * 16).SerializeToString()[:-3],
    }


def edge_imports():
    """Models that import, at the edges of the graph: {file name: bytes} (tests/onnx/import.cpp)."""
    def m(nodes, inputs, outputs, inits=()):
        g = helper.make_graph(nodes, "edge", inputs, outputs, initializer=list(inits))
        model_ = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
        model_.ir_version = 7
        onnx.checker.check_model(model_)
        return model_.SerializeToString()

    values = helper.make_tensor("values", TensorProto.FLOAT, [2, 3], [0.5, -1.0, 2.0, 3.25, 0.0, -7.5])
    return {
        # the graph output is a Constant node's output: no graph input, no node left after the import
        "constant_output.onnx": m([helper.make_node("Constant", [], ["values"], name="c", value=values)], [],
                                  [f32("values", [2, 3])]),
        # Identity of a graph input as the graph output: the output keeps its own name
        "identity_of_input.onnx": m([helper.make_node("Identity", ["x"], ["y"], name="id")], [f32("x", [1, 4])],
                                    [f32("y", [1, 4])]),
    }


def bad_imports():
    """Models that decode but that the importer refuses, one rule each: {file name: bytes}."""
    def m(nodes, inputs, outputs, inits=(), opset=OPSET):
        g = helper.make_graph(nodes, "bad", inputs, outputs, initializer=list(inits))
        model_ = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        model_.ir_version = 7
        return model_.SerializeToString()

    x, y = f32("x", [1, 4]), f32("y", [1, 4])
    relu = helper.make_node("Relu", ["x"], ["y"], name="relu")
    s = tensor("s", np.array(0.1, np.float32))
    z = tensor("z", np.array(0, np.int8))
    z2 = tensor("z2", np.array(3, np.int8))

    def i32(name, shape):
        return helper.make_tensor_value_info(name, TensorProto.INT32, shape)

    return {
        "opset_18.onnx": m([relu], [x], [y], opset=18),
        # an op that does not take plain integers (Add does): the op's own rule, named once
        "relu_uint8_input.onnx": m([helper.make_node("Relu", ["a"], ["y"], name="relu")],
                                   [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, 4])],
                                   [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4])]),
        "softmax_opset_11.onnx": m([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)], [x], [y], opset=11),
        "unknown_op.onnx": m([helper.make_node("Einsum", ["x"], ["y"], name="e", equation="ij->ij")], [x], [y]),
        "internal_op.onnx": m([helper.make_node("Requantize", ["x"], ["y"], name="rq")], [x], [y]),
        # the nodes the importer reads itself have their schema's counts (onnx-op): fuzz/onnx_run found a
        # DequantizeLinear without outputs read past the end of its output list (UBSan: a reference to null)
        "dequantize_no_output.onnx": m([helper.make_node("DequantizeLinear", ["a", "s", "z"], [], name="dq"), relu],
                                       [helper.make_tensor_value_info("a", TensorProto.INT8, [1, 4]), x], [y], [s, z]),
        "quantize_no_scale.onnx": m([helper.make_node("QuantizeLinear", ["x"], ["y"], name="q")], [x], [y]),
        "custom_domain.onnx": m([helper.make_node("Relu", ["x"], ["y"], name="r", domain="com.example")], [x], [y]),
        "undefined_input.onnx": m([helper.make_node("Relu", ["nowhere"], ["y"], name="r")], [x], [y]),
        "reshape_shape_not_constant.onnx": m([helper.make_node("Reshape", ["x", "x"], ["y"], name="reshape")],
                                            [x], [y]),
        "scale_not_constant.onnx": m([helper.make_node("QuantizeLinear", ["x", "x"], ["y"], name="q")], [x],
                                     [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4])]),
        "symbolic_dim.onnx": m([relu], [f32("x", ["batch", 4])], [y]),
        # issue 26: what ONNX forbids is refused, not accepted (a graph without outputs; a scale of rank 2)
        "no_outputs.onnx": m([relu], [x], []),
        "scale_rank_2.onnx": m(
            [helper.make_node("QuantizeLinear", ["x", "s2", "z4"], ["q"], name="q"),
             helper.make_node("DequantizeLinear", ["q", "s2", "z4"], ["y"], name="dq")],
            [x], [y], [tensor("s2", np.full((1, 4), 0.1, np.float32)), tensor("z4", np.zeros(4, np.int8))]),
        "two_quantizations.onnx": m(
            [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["a"], name="dq_a"),
             helper.make_node("QLinearMatMul", ["q", "s", "z2", "w", "s", "z", "s", "z"], ["y"], name="mm")],
            [x], [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 4])],
            [s, z, z2, tensor("w", np.eye(4, dtype=np.int8))]),
        "integer_arithmetic_on_quantized.onnx": m(
            [helper.make_node("QLinearMatMul", ["x8", "s", "z", "w", "s", "z", "s", "z"], ["q"], name="mm"),
             helper.make_node("Add", ["q", "q"], ["y"], name="add")],
            [helper.make_tensor_value_info("x8", TensorProto.INT8, [1, 4])],
            [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 4])], [s, z, tensor("w", np.eye(4, dtype=np.int8))]),
        "output_dtype_mismatch.onnx": m([relu], [x], [helper.make_tensor_value_info("y", TensorProto.INT64, [1, 4])]),
        "integer_two_zero_points.onnx": m(
            [helper.make_node("MatMulInteger", ["a", "w", "z"], ["y"], name="mm0"),
             helper.make_node("MatMulInteger", ["a", "w", "z2"], ["y2"], name="mm1")],
            [helper.make_tensor_value_info("a", TensorProto.INT8, [1, 4])], [i32("y", [1, 4]), i32("y2", [1, 4])], [z, z2, tensor("w", np.eye(4, dtype=np.int8))]),
        "integer_zero_point_type.onnx": m(
            [helper.make_node("MatMulInteger", ["a", "w", "zu"], ["y"], name="mm")], [helper.make_tensor_value_info("a", TensorProto.INT8, [1, 4])], [i32("y", [1, 4])],
            [tensor("zu", np.array(128, np.uint8)), tensor("w", np.eye(4, dtype=np.int8))]),
        "integer_float_operand.onnx": m(
            [helper.make_node("MatMulInteger", ["x", "w"], ["y"], name="mm")], [x], [i32("y", [1, 4])],
            [tensor("w", np.eye(4, dtype=np.int8))]),
        # the expansions (a node imported as its ONNX function body): their own refusals
        "layer_norm_stash_type_0.onnx": m(
            [helper.make_node("LayerNormalization", ["x", "g"], ["y", "mean", "inv"], name="ln", stash_type=0)], [x],
            [y, f32("mean", [1, 1]), f32("inv", [1, 1])], [tensor("g", np.ones(4, np.float32))], opset=17),
        "batch_norm_training_rank_1.onnx": m(
            [helper.make_node("BatchNormalization", ["v", "g", "b", "g", "g"], ["w"], name="bn", training_mode=1)],
            [f32("v", [4])], [f32("w", [4])],
            [tensor("g", np.ones(4, np.float32)), tensor("b", np.zeros(4, np.float32))], opset=15),
        "max_no_inputs.onnx": m([helper.make_node("Max", [], ["y"], name="max")], [x], [y]),
    }


# ---- ONNX semantics in numpy: the independent oracle of tests/onnx/semantics.cpp ----------------------------------
# Each op follows the ONNX specification literally, in float64 where ONNX computes in float: DequantizeLinear,
# the float op, QuantizeLinear (round half to even, saturate). Only what the fixtures use is implemented.

def _conv(x, w, b, strides, pads, group, dilations):
    n, c, h, wd = x.shape
    co, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (x.shape[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (x.shape[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    y = np.zeros((n, co, oh, ow))
    cog = co // group
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilations[0]:i * dilations[0] + strides[0] * (oh - 1) + 1:strides[0],
                           j * dilations[1]:j * dilations[1] + strides[1] * (ow - 1) + 1:strides[1]]
                y[:, g * cog:(g + 1) * cog] += np.einsum("nchw,oc->nohw", patch, w[g * cog:(g + 1) * cog, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def run_onnx_semantics(m, feeds):
    env = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    env.update(feeds)

    def qaxis(arr, p, axis):
        p = np.asarray(p)
        if p.ndim == 0 or p.size == 1:
            return p.reshape(())
        shape = [1] * arr.ndim
        shape[axis] = -1
        return p.reshape(shape)

    for n in m.graph.node:
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        i = [env[x] if x else None for x in n.input]
        op = n.op_type
        if op == "QuantizeLinear":
            zp = i[2]
            y = np.round(i[0].astype(np.float64) / qaxis(i[0], i[1], a.get("axis", 1))) + qaxis(i[0], zp, a.get("axis", 1))
            info = np.iinfo(zp.dtype)
            r = np.clip(y, info.min, info.max).astype(zp.dtype)
        elif op == "DequantizeLinear":
            ax = a.get("axis", 1)
            r = (i[0].astype(np.float64) - qaxis(i[0], i[2], ax)) * qaxis(i[0], i[1].astype(np.float64), ax)
        elif op == "Conv":
            r = _conv(i[0], i[1], i[2] if len(i) > 2 else None, a.get("strides", [1, 1]), a.get("pads", [0, 0, 0, 0]),
                      a.get("group", 1), a.get("dilations", [1, 1]))
        elif op == "Relu":
            r = np.maximum(i[0], 0)
        elif op == "Clip":
            r = np.clip(i[0], i[1], i[2])
        elif op == "Add":
            r = i[0] + i[1]
        elif op == "Mul":
            r = i[0] * i[1]
        elif op == "Sigmoid":
            r = 1.0 / (1.0 + np.exp(-i[0]))
        elif op == "GlobalAveragePool":
            r = i[0].mean(axis=(2, 3), keepdims=True)
        elif op == "Flatten":
            r = i[0].reshape(i[0].shape[0], -1)
        elif op == "Reshape":
            r = i[0].reshape(i[1])
        elif op == "Gemm":
            b = i[1].T if a.get("transB", 0) else i[1]
            r = i[0] @ b + (i[2] if len(i) > 2 else 0)
        elif op == "Softmax":
            e = np.exp(i[0] - i[0].max(axis=a.get("axis", -1), keepdims=True))
            r = e / e.sum(axis=a.get("axis", -1), keepdims=True)
        elif op == "BatchNormalization":
            shape = (1, -1) + (1,) * (i[0].ndim - 2)
            inv = i[1].astype(np.float64) / np.sqrt(i[4].astype(np.float64) + a.get("epsilon", 1e-5))
            r = (i[0] - i[3].reshape(shape)) * inv.reshape(shape) + i[2].reshape(shape)
        elif op == "ConvInteger":  # exact: integer products summed in float64 stay far below 2^53
            zx = i[2] if len(i) > 2 and i[2] is not None else 0
            zw = qaxis(i[1], i[3], 0) if len(i) > 3 and i[3] is not None else 0
            r = _conv(i[0].astype(np.int64) - zx, i[1].astype(np.int64) - zw, None, a.get("strides", [1, 1]),
                      a.get("pads", [0, 0, 0, 0]), a.get("group", 1), a.get("dilations", [1, 1])).astype(np.int32)
        elif op == "MatMulInteger":
            za = np.asarray(i[2]).astype(np.int64).reshape(-1, 1) if len(i) > 2 and i[2] is not None else 0
            zb = np.asarray(i[3]).astype(np.int64) if len(i) > 3 and i[3] is not None else 0
            r = ((i[0].astype(np.int64) - za) @ (i[1].astype(np.int64) - zb)).astype(np.int32)
        elif op == "MaxPool":  # no padding, no dilation: what the fixtures use
            (kh, kw), (sh, sw) = a["kernel_shape"], a.get("strides", [1, 1])
            oh, ow = (i[0].shape[2] - kh) // sh + 1, (i[0].shape[3] - kw) // sw + 1
            r = np.full(i[0].shape[:2] + (oh, ow), -np.inf)
            for y in range(kh):
                for x in range(kw):
                    r = np.maximum(r, i[0][:, :, y:y + sh * (oh - 1) + 1:sh, x:x + sw * (ow - 1) + 1:sw])
        elif op == "Resize":  # nearest, half_pixel, round_prefer_floor (the opset 13 defaults), from scales
            assert a.get("mode", b"nearest") == b"nearest"
            r = i[0]
            for ax, sc in enumerate(i[2]):
                n_in = r.shape[ax]
                n_out = int(np.floor(n_in * sc))
                src = np.ceil((np.arange(n_out) + 0.5) / sc - 0.5 - 0.5).astype(np.int64)  # round half down
                r = np.take(r, np.clip(src, 0, n_in - 1), axis=ax)
        elif op == "Concat":
            r = np.concatenate(i, axis=a["axis"])
        elif op == "Pad":  # constant mode
            p = i[1]
            h = len(p) // 2
            v = i[2] if len(i) > 2 and i[2] is not None else 0
            r = np.pad(i[0], [(p[k], p[h + k]) for k in range(h)], constant_values=v)
        elif op == "ReduceMean":
            r = i[0].mean(axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))
        elif op == "Identity":
            r = i[0]
        else:
            raise ValueError(f"run_onnx_semantics: {op} is not implemented")
        env[n.output[0]] = r
    return [env[o.name] for o in m.graph.output]


def semantics_files(name, m, rng):
    """<name>.in<k>.npy (seeded inputs) and <name>.out<k>.npy (their outputs under ONNX semantics, float32 for float
    outputs): tests/onnx/semantics.cpp runs the reference engine on the inputs and bounds the difference."""
    feeds = {}
    for k, v in enumerate(m.graph.input):
        shape = [d.dim_value for d in v.type.tensor_type.shape.dim]
        elem = v.type.tensor_type.elem_type
        if elem in (TensorProto.INT8, TensorProto.UINT8):
            info = np.iinfo(np.int8 if elem == TensorProto.INT8 else np.uint8)
            feeds[v.name] = rng.integers(info.min, info.max + 1, shape).astype(info.dtype)
        else:
            feeds[v.name] = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
        np.save(FIXTURES / f"{name}.in{k}.npy", feeds[v.name])
        if name in PB_INPUTS:  # the same input as an ONNX TensorProto (janusc run -i NAME=FILE.pb)
            pb = numpy_helper.from_array(feeds[v.name], v.name).SerializeToString()
            (FIXTURES / f"{name}.in{k}.pb").write_bytes(pb)
    for k, r in enumerate(run_onnx_semantics(m, feeds)):
        np.save(FIXTURES / f"{name}.out{k}.npy", r.astype(np.float32) if r.dtype.kind == "f" else r)


# Fixtures whose inputs are also written as TensorProto files (float32, int8 and uint8 inputs).
PB_INPUTS = ("qdq_conv_relu", "integer_ops")

# janusc's golden outputs (tests/janusc/golden/*.npy) written by the onnx package as TensorProto files: janusc run
# --output-format pb must write the same bytes.
PB_GOLDENS = {"qdq_conv_relu.output": "output"}

SEMANTICS = ("qdq_conv_relu", "qdq_uint8_add_sigmoid", "qdq_float_tail", "mobilenet_v2_tiny", "qdq_conv_bn",
             "integer_ops", "qdq_conv_relu_shared", "qdq_unet_tiny", "qdq_float_middle", "qdq_softmax_head")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", metavar="DIR", help="write the full-size MobileNetV2-1.0 (224x224) to DIR instead")
    args = ap.parse_args()
    if args.full:
        out = Path(args.full)
        out.mkdir(parents=True, exist_ok=True)
        m = mobilenet_v2(np.random.default_rng(2), 224, 1.0, V2_BLOCKS, 1000)
        onnx.save(m, out / "mobilenet_v2_224.onnx")
        print(out / "mobilenet_v2_224.onnx")
        return 0
    bad = ROOT / "tests" / "onnx" / "bad"
    bad.mkdir(parents=True, exist_ok=True)
    for name, data in bad_files().items():
        (bad / name).write_bytes(data)
    edge = ROOT / "tests" / "onnx" / "edge"
    edge.mkdir(parents=True, exist_ok=True)
    for name, data in edge_imports().items():
        (edge / name).write_bytes(data)
    bad = ROOT / "tests" / "onnx" / "bad_import"
    bad.mkdir(parents=True, exist_ok=True)
    for name, data in bad_imports().items():
        (bad / name).write_bytes(data)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for i, (name, build) in enumerate(FIXTURE_MODELS.items()):
        m = build(np.random.default_rng(100 + i))
        path = FIXTURES / f"{name}.onnx"
        onnx.save(m, path)
        (FIXTURES / f"{name}.txt").write_text(summary(onnx.load(path)))
        if name in SEMANTICS:
            semantics_files(name, m, np.random.default_rng(200 + i))
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size} bytes, {len(m.graph.node)} nodes")
    golden = ROOT / "tests" / "janusc" / "golden"
    for stem, tensor_name in PB_GOLDENS.items():
        arr = np.load(golden / f"{stem}.npy")
        (golden / f"{stem}.pb").write_bytes(numpy_helper.from_array(arr, tensor_name).SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main())
