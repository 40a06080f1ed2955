#!/usr/bin/env python3
"""Deterministic seed corpora for the fuzz targets: fuzz/corpus/<target>/<name>.

    python3 fuzz/make_seeds.py              # every target
    python3 fuzz/make_seeds.py requantize   # only the named targets

One function per target returns {file name: bytes}; register it in TARGETS. The byte layout of each target is
documented at the top of fuzz/<target>.cpp. Files are (re)written, never deleted: inputs that libFuzzer found and
someone committed stay. Same script, same bytes.
"""

import math
import struct
import sys
from pathlib import Path

FUZZ_DIR = Path(__file__).resolve().parent

I32_MIN = -(2**31)
I32_MAX = 2**31 - 1


def seeds_layout_views():
    """fuzz/layout_views.cpp: rank, extents, elem-size selector, layout kind, offset, then ops (opcode byte and its
    parameter bytes, decoded as in the target). Each seed is written as the ops it performs."""
    I64_MIN, I64_MAX = -(2**63), 2**63 - 1
    extremes = {I64_MIN: 0xF8, I64_MAX: 0xF9, I64_MIN + 1: 0xFA, I64_MAX - 1: 0xFB,
                2**40: 0xFC, -(2**40): 0xFD, 2**62: 0xFE, -(2**62): 0xFF}

    def param(v):  # Reader::param: byte % 17 - 8, or an extreme for bytes >= 0xF8
        if v in extremes:
            return extremes[v]
        assert -8 <= v <= 8
        return v + 8

    def base(shape, elem=1, align=None, offset=0):
        # kind: even = contiguous; odd = padded to 1 + kind // 2 % 32 bytes; offset byte is in elements (% 4)
        kind = 0 if align is None else 2 * (align - 1) + 1
        return [len(shape), *shape, {1: 0, 2: 1, 4: 2, 8: 3}[elem], kind, offset]

    def fisher_yates(perm):  # the bytes that make random_perm() produce `perm`
        p, out = list(range(len(perm))), []
        for i in range(len(perm) - 1, 0, -1):
            b = p.index(perm[i])
            out.append(b)
            p[i], p[b] = p[b], p[i]
        return out

    def transpose(perm):
        return [0, 1, *fisher_yates(perm)]

    def transpose_raw(values):  # deliberately unchecked; entries in [-1, 7]
        return [0, 0, len(values), *[v + 1 for v in values]]

    def slice_(rank, starts, ends, axes=None, steps=None):
        mode = (1 if axes is not None else 0) | (2 if steps is not None else 0)
        out = [1, mode, len(starts), *map(param, starts), *map(param, ends)]
        if axes is not None:
            out += [a + rank + 1 for a in axes]
        if steps is not None:
            out += [param(s) for s in steps]
        return out

    def broadcast(grow, extents):  # extents[j]: None keeps the input's extent, else a literal 0..4
        literal = {0: 0, 1: 16, 2: 12, 3: 8, 4: 4}  # byte % 4 == 0 and byte % 5 == extent
        return [2, grow, 1, *[1 if e is None else literal[e] for e in extents]]

    def squeeze(rank, axes):
        return [3, len(axes), *[a + rank + 1 for a in axes]]

    def unsqueeze(rank, axes):
        out_rank = rank + len(axes)
        return [4, len(axes), *[a + out_rank + 1 for a in axes]]

    def reshape(values, allowzero=False):
        def enc(v):
            if v in (0, -1, -2):
                return {0: 0, -1: 1, -2: 2}[v]
            assert 1 <= v <= 6, "reshape seeds encode extents 1..6 (use -1 for larger)"
            return [b for b in range(256) if b % 8 >= 3 and b % 7 == v][0]
        return [5, 1 if allowzero else 0, len(values), *[enc(v) for v in values]]

    def a2(perm, removed):
        return [6, *fisher_yates(perm), sum(1 << k for k in removed)]

    def plan(extents, elem=1):  # "same" copies the view's extent; integers 0..3 are literal
        return [7, len(extents), *[1 if e == "same" else {0: 0, 1: 9, 2: 6, 3: 3}[e] for e in extents], elem - 1]

    seeds = {
        "transpose_nchw_nhwc": base([2, 3, 4, 4], elem=4) + transpose([0, 2, 3, 1]),
        "transpose_invalid_perm": base([2, 3]) + transpose_raw([1, 1]) + transpose_raw([0, 1, 2]),
        "padded_w4_align16_transpose": base([3, 4], elem=1, align=16) + transpose([1, 0]),
        "slice_onnx_neg_steps": base([4, 4, 3], elem=2) + slice_(3, [4, 4, 2], [0, 0, 0], [0, 1, 2], [-1, -3, -2]),
        "slice_int64_extremes": base([4, 3], elem=4) + slice_(2, [-1, I64_MIN], [I64_MIN, I64_MAX], [0, 1], [-1, 2]),
        "slice_out_of_range": base([3, 4]) + slice_(2, [8], [8], [1], [1]) + slice_(2, [1], [I64_MAX], [0]),
        "slice_step_zero": base([3, 4]) + slice_(2, [0], [2], [1], [0]),
        "broadcast_scalar": base([], elem=4) + broadcast(2, [3, 4]),
        "broadcast_lower_rank": base([4, 1], elem=2) + broadcast(1, [2, None, 3]),
        "broadcast_incompatible": base([3, 4]) + broadcast(0, [3, 2]),
        "squeeze_unsqueeze": base([1, 3, 1, 4], elem=4) + squeeze(4, [0, -2]) + unsqueeze(2, [0, -1]),
        "reshape_contiguous_merge_split": base([2, 3, 4], elem=4) + reshape([0, -1]) + reshape([2, 2, 3, 2]),
        "reshape_padded_refused": base([2, 4], elem=1, align=16) + reshape([-1]) + reshape([2, 4, 1]),
        "reshape_transposed_refused": base([2, 3, 4]) + transpose([0, 2, 1]) + reshape([2, -1])
        + reshape([1, 2, 4, 3]),
        "a2_keep_dims_false": base([2, 3, 4, 4]) + a2([0, 2, 3, 1], [1]) + a2([0, 3, 1, 2], [1, 2]),
        "plan_two_sided": base([2, 1, 4, 1]) + plan([1, 3, 1, 3]) + plan(["same"] * 4, elem=4),
        "padded_w3_align4_chain": base([4, 3], elem=2, align=4, offset=2) + slice_(2, [3], [I64_MIN], [0], [-2])
        + unsqueeze(2, [1]) + broadcast(0, [None, 4, None]) + plan([3], elem=1) + reshape([-1, 3]),
        "empty_tensor": base([0, 3]) + reshape([3, 0], allowzero=True) + slice_(2, [0], [1], [0], [-1]),
    }
    return {name: bytes(data) for name, data in seeds.items()}


def seeds_requantize():
    """fuzz/requantize.cpp: x:i32, multiplier:u32, shift_byte:u8 (shift = -31 + b % 62), zero_point:i32, lo:i32,
    hi:i32, little endian (21 bytes). multiplier 0 means the zero multiplier; otherwise 2^30 | (r & (2^30 - 1))."""

    def rec(x, m, shift, zp=0, lo=-128, hi=127):
        assert -31 <= shift <= 30
        return struct.pack("<iIBiii", x, m, shift + 31, zp, lo, hi)

    m_min = 2**30  # multiplier 2^30 (ratio 0.5 * 2^shift)
    m_max = 2**31 - 1
    return {
        "zero": bytes(21),
        "short_input": b"\x01\x02\x03",  # zero-padded
        "zero_multiplier": rec(I32_MAX, 0, 0),
        "tie_half_up_positive": rec(1, m_min, 0),  # 1 * 0.5: ties differ between the modes
        "tie_half_up_negative": rec(-1, m_min, 0),
        "tie_2_5": rec(5, m_min, 0),
        "min_times_smallest_ratio": rec(I32_MIN, m_min, -31),  # -1/2: round_double -1, others 0
        "max_times_smallest_ratio": rec(I32_MAX, m_min, -31),  # double rounding goes to 1, exact 0
        "min_times_largest_mantissa": rec(I32_MIN, m_max, 0),
        "largest_ratio_saturates": rec(I32_MAX, m_max, 30, zp=I32_MAX, lo=I32_MIN, hi=I32_MAX),
        "left_shift_overflow_exact_fits": rec(I32_MIN, m_min, 1),  # exact -2^31, round_double -2^30
        "left_shift_just_fits": rec(2**20 - 1, m_max, 11),
        "double_rounding_tie": rec(3 * 2**29 + 1, m_min + 1, -2),
        "clamp_zero_point_overflow": rec(I32_MAX, m_max, 0, zp=I32_MAX, lo=-128, hi=127),
        "clamp_swapped_bounds": rec(1000, m_min, 5, zp=-3, lo=255, hi=0),
        "clamp_single_value": rec(-77, m_max, -7, zp=3, lo=7, hi=7),
        "shift_byte_wraps": struct.pack("<iIBiii", 12345, 0x7FFFFFFF, 255, 0, I32_MIN, I32_MAX),
        "all_ones": b"\xff" * 21,
    }


def seeds_quantize_multiplier():
    """fuzz/quantize_multiplier.cpp: the 8 little-endian bytes of an IEEE double."""

    def d(v):
        return struct.pack("<d", v)

    below = lambda v: math.nextafter(v, 0.0)  # noqa: E731
    return {
        "zero": d(0.0),
        "negative_zero": d(-0.0),
        "one": d(1.0),
        "half": d(0.5),
        "below_one": d(below(1.0)),  # mantissa rounds up to 2^31 -> (2^30, 1)
        "tie_away": d(0.5 + 2.0**-32),  # mantissa * 2^31 = 2^30 + 1/2
        "smallest_nonzero": d(2.0**-32),  # (2^30, -31)
        "just_below_flush_boundary": d(below(2.0**-32)),  # flushed
        "tiny": d(1e-300),
        "subnormal": d(5e-324),
        "largest_representable": d(2.0**30 - 0.5),  # (2^31 - 1, 30)
        "just_below_error_boundary": d(below(2.0**30 - 0.25)),
        "error_boundary": d(2.0**30 - 0.25),  # rounds to 2^30: error
        "two_pow_30": d(2.0**30),
        "huge": d(1e300),
        "negative": d(-0.25),
        "negative_tiny": d(-5e-324),
        "inf": d(math.inf),
        "negative_inf": d(-math.inf),
        "nan": d(math.nan),
        "typical_ratio": d(0.0039215686 * 0.02 / 0.1),
        "short_input": b"\x3f",
    }


def registry_op_names():
    """The op type names of ops::all_ops, in table order, read from include/janus/ops/registry.hpp (the one list)."""
    import re

    text = (FUZZ_DIR.parent / "include/janus/ops/registry.hpp").read_text()
    body = re.search(r"all_ops\s*=\s*boost::hana::tuple_t<(.*?)>;", text, re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    return [n.strip() for n in body.split(",") if n.strip()]


def seeds_op_infer():
    """fuzz/op_infer.cpp: op index, input count, family (even = quantized), storage (odd = int8), then per input
    rank, extents (byte % 6 == 0 picks 0 or 1, else 1 + next byte % 5), dtype or quantization bytes, then the
    attribute count and attributes (name pick, kind, value bytes). One float and one quantized seed per op, plus
    hand-written valid calls of the ops that need rank-4 inputs, several operands or string attributes."""
    names = registry_op_names()
    op = {n: i for i, n in enumerate(names)}

    def extents(shape):
        out = []
        for d in shape:
            out += [1, d - 1] if d >= 1 else [0, 0]
        return out

    def f32_in(shape, int32=False):  # float family: dtype byte % 16 == 0 is int32
        return [len(shape), *extents(shape), 0 if int32 else 1]

    def q_in(shape, axis0=False):  # quantized family: mode 1 per-tensor, 3 per-channel on axis 0; scale 0.25, zp 0
        channels = shape[0] if axis0 else 1
        return [len(shape), *extents(shape), 3 if axis0 else 1] + [2, 128] * channels

    def q_plain(shape, mode):  # quantized family, unquantized operand: mode 10 int32, 9 float32
        return [len(shape), *extents(shape), {"i32": 10, "f32": 9}[mode]]

    STRINGS = ["none", "tanh", "constant", "reflect", "edge", "int8", "uint8", "bogus", "", "NOTSET", "SAME_UPPER",
               "SAME_LOWER", "VALID", "nearest", "linear", "cubic", "half_pixel", "asymmetric", "align_corners",
               "pytorch_half_pixel", "tf_half_pixel_for_nn", "tf_crop_and_resize", "round_prefer_floor",
               "round_prefer_ceil", "floor", "ceil", "stretch"]  # read_value's list in fuzz/op_infer.cpp

    def a_int(pick, v):  # kind 0, selector 3 (small), then -9 + byte % 19
        assert -9 <= v <= 9
        return [pick, 0, 3, v + 9]

    def a_ints(pick, vs):  # kind 3, count, then per value: selector 1 (small), -5 + byte % 11
        assert all(-5 <= v <= 5 for v in vs)
        return [pick, 3, len(vs)] + [b for v in vs for b in (1, v + 5)]

    def a_floats(pick, vs):  # kind 4, count, then per value: selector 4, int8 byte / 16
        return [pick, 4, len(vs)] + [b for v in vs for b in (4, int(v * 16) & 0xFF)]

    def a_str(pick, text):  # kind 2, index into read_value's string list
        return [pick, 2, STRINGS.index(text)]

    def call(name, quantized, inputs, attrs=()):
        head = [op[name], len(inputs), 0 if quantized else 1, 1]
        body = [b for i in inputs for b in i]
        return bytes(head + body + [len(attrs)] + [b for a in attrs for b in a])

    seeds = {}
    for i, name in enumerate(names):
        f = [i, 2, 1, 0]
        for shape in ([2, 3], [3]):
            f += f32_in(shape)
        seeds[f"op{i:02d}_float"] = bytes(f + [0])
        q = [i, 2, 0, 1]
        for shape in ([2, 3], [1, 3]):
            q += q_in(shape)
        # one attribute: the op's first attribute name, kind 3 (ints) with two small values
        seeds[f"op{i:02d}_quant_attr"] = bytes(q + [1] + a_ints(0, [1, 2]))

    # Conv schema order: auto_pad, dilations, group, kernel_shape, pads, strides
    seeds["conv_float_pads_strides"] = call("Conv", False, [f32_in([1, 2, 4, 4]), f32_in([2, 2, 3, 3]), f32_in([2])],
                                            [a_ints(4, [1, 1, 1, 1]), a_ints(5, [2, 2])])
    seeds["conv_quant_grouped_per_channel"] = call(
        "Conv", True, [q_in([1, 2, 4, 4]), q_in([4, 1, 3, 3], axis0=True), q_plain([4], "i32")], [a_int(2, 2)])
    seeds["conv_float_same_upper"] = call("Conv", False, [f32_in([1, 1, 5, 5]), f32_in([1, 1, 2, 2])],
                                          [a_str(0, "SAME_UPPER"), a_ints(5, [2, 2])])
    # ConvTranspose: auto_pad, dilations, group, kernel_shape, output_padding, output_shape, pads, strides
    seeds["conv_transpose_float_output_padding"] = call(
        "ConvTranspose", False, [f32_in([1, 2, 3, 3]), f32_in([2, 2, 3, 3])],
        [a_ints(7, [2, 2]), a_ints(4, [1, 1])])
    seeds["conv_transpose_quant"] = call("ConvTranspose", True, [q_in([1, 2, 3, 3]), q_in([2, 1, 2, 2])],
                                         [a_int(2, 2)])
    seeds["matmul_float_batched"] = call("MatMul", False, [f32_in([2, 2, 3]), f32_in([3, 4])])
    seeds["matmul_quant"] = call("MatMul", True, [q_in([2, 3]), q_in([3, 4])])
    # Gemm: alpha, beta, transA, transB
    seeds["gemm_float_transB"] = call("Gemm", False, [f32_in([2, 3]), f32_in([4, 3]), f32_in([4])],
                                      [a_int(3, 1)])
    seeds["gemm_quant_bias"] = call("Gemm", True, [q_in([2, 3]), q_in([3, 4]), q_plain([4], "i32")])
    # AveragePool: auto_pad, ceil_mode, count_include_pad, dilations, kernel_shape, pads, strides
    seeds["average_pool_ceil_pads"] = call(
        "AveragePool", True, [q_in([1, 2, 4, 4])],
        [a_ints(4, [2, 2]), a_int(1, 1), a_ints(5, [0, 0, 1, 1]), a_int(2, 1)])
    # MaxPool: auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order, strides
    seeds["max_pool_dilated"] = call("MaxPool", True, [q_in([1, 2, 5, 5])],
                                     [a_ints(3, [2, 2]), a_ints(2, [2, 2]), a_ints(6, [2, 1])])
    seeds["global_average_pool"] = call("GlobalAveragePool", True, [q_in([1, 2, 3, 3])])
    seeds["global_max_pool"] = call("GlobalMaxPool", False, [f32_in([1, 2, 3, 3])])
    # ArgMax/ArgMin: axis, keepdims, select_last_index
    seeds["argmax_axis1_last"] = call("ArgMax", True, [q_in([2, 3, 4])], [a_int(0, 1), a_int(1, 0), a_int(2, 1)])
    seeds["argmin_float_negative_axis"] = call("ArgMin", False, [f32_in([2, 3, 4])], [a_int(0, -1)])
    # Resize: scales, sizes, mode, coordinate_transformation_mode, nearest_mode, ...
    seeds["resize_linear_scales"] = call("Resize", True, [q_in([1, 2, 3, 3])],
                                         [a_floats(0, [1, 1, 2, 2]), a_str(2, "linear"),
                                          a_str(3, "align_corners")])
    seeds["resize_nearest_sizes"] = call("Resize", True, [q_in([1, 2, 3, 3])],
                                         [a_ints(1, [1, 2, 5, 5]), a_str(4, "ceil"),
                                          a_str(3, "tf_half_pixel_for_nn")])
    # BatchNormalization: X, scale, B, mean, var
    seeds["batch_norm_float"] = call("BatchNormalization", False, [f32_in([1, 2, 3, 3])] + [f32_in([2])] * 4)
    seeds["batch_norm_quant"] = call("BatchNormalization", True,
                                     [q_in([1, 2, 3, 3])] + [q_plain([2], "f32")] * 4)
    seeds["instance_norm_quant"] = call("InstanceNormalization", True,
                                        [q_in([1, 2, 3, 3]), q_plain([2], "f32"), q_plain([2], "f32")])
    seeds["layer_norm_quant_axis"] = call("LayerNormalization", True,
                                          [q_in([2, 3, 4]), q_plain([4], "f32"), q_plain([4], "f32")],
                                          [a_int(0, -1)])
    seeds["softmax_axis1"] = call("Softmax", True, [q_in([2, 3, 4])], [a_int(0, 1)])
    return seeds


def seeds_contract_engine():
    """fuzz/contract_engine.cpp: kind, geometry bytes (value = base + byte % modulo), bias flag, value mode, data
    seed, zero points. Each seed names the engine path it reaches: direct stride-1 conv, im2col (stride 2, 3-D),
    depthwise, 1-D, register-block tails, broadcast batched matmul, float specials."""

    def conv(kind, groups, depthwise, cin_g, cout_g, batch, axes, bias=1, mode=0, seed=1):
        # axes: (length, kernel, stride, dilation, pad_begin, pad_end) per spatial axis; bytes store value - base
        out = [kind, len(axes) - 1, groups - 1]
        if groups > 1:
            out.append(1 if depthwise else 0)
        if not depthwise:
            out += [cin_g - 1, cout_g - 1]
        out.append(batch - 1)
        for length, k, s, d, pb, pe in axes:
            out += [length - 1, k - 1, s - 1, d - 1, pb, pe]
        return bytes(out + [bias, mode, *seed.to_bytes(4, "little")] + [128] * 64)

    def matmul(kind, ba, bb, m, k, n, rank2=False, bias=1, mode=0, seed=1):
        out = [kind, ba - 1, bb - 1]
        if ba == 1 and bb == 1:
            out.append(0 if rank2 else 1)
        return bytes(out + [m - 1, k - 1, n - 1, bias, mode, *seed.to_bytes(4, "little")] + [128] * 80)

    return {
        "conv_int8_3x3_direct": conv(0, 1, False, 3, 17, 1, [(9, 3, 1, 1, 1, 1), (12, 3, 1, 1, 1, 1)]),
        "conv_uint8_stride2_im2col": conv(1, 1, False, 2, 33, 2, [(11, 3, 2, 1, 0, 2), (13, 2, 2, 2, 1, 0)]),
        "conv_int8_depthwise": conv(0, 4, True, 1, 1, 1, [(10, 3, 1, 1, 1, 1), (7, 3, 1, 1, 1, 1)]),
        "conv_int8_grouped_extremes": conv(0, 3, False, 2, 5, 1, [(8, 3, 1, 2, 4, 0), (6, 1, 3, 1, 0, 0)], mode=1),
        "conv_float_1d": conv(2, 1, False, 4, 9, 2, [(13, 3, 1, 2, 2, 2)]),
        "conv_float_specials": conv(2, 2, False, 2, 3, 1, [(5, 2, 1, 1, 1, 1), (6, 3, 1, 1, 0, 2)], mode=2),
        "conv_int8_3d": conv(0, 1, False, 2, 4, 1, [(4, 2, 1, 1, 0, 1), (5, 2, 2, 1, 1, 0), (3, 1, 1, 1, 0, 0)]),
        "conv_window_too_large": conv(0, 1, False, 1, 1, 1, [(1, 3, 1, 2, 0, 0), (2, 1, 1, 1, 0, 0)]),
        "matmul_int8_rank2_tails": matmul(3, 1, 1, 9, 33, 37, rank2=True),
        "matmul_uint8_broadcast_batch": matmul(4, 3, 1, 5, 17, 64, bias=0),
        "matmul_int8_extremes": matmul(3, 2, 2, 8, 40, 32, mode=1),
        "matmul_float_specials": matmul(5, 1, 3, 4, 7, 69, mode=2),
        "matmul_batch_mismatch": matmul(3, 2, 3, 2, 3, 4),
    }


def seeds_vnpu_decode():
    """fuzz/vnpu_decode.cpp: little-endian 64-bit words. One valid word per instruction row (the golden words of
    tests/vnpu/isa.cpp), a program of several, and the decoder's refusals (unknown opcode, ALU function 11, reserved
    bits, an event without its flag, a partial word)."""

    def words(*ws):
        return b"".join(w.to_bytes(8, "little") for w in ws)

    valid = {
        "nop": 0x0000000000000000, "halt": 0x0400000000000000, "li": 0x0800F00080000000,
        "addi": 0x0C001200FFFFFFFF, "alu_max": 0x1000AFED00000000, "loop": 0x1400000000FFFFFF,
        "sync": 0x18000000FFFF0001, "nop_events": 0x03F0000000000000,
        "dma_cfg": 0x2000FFFFFFFFFFFF, "dma_load": 0x241203F00000FFFF, "dma_store": 0x2A20234000000001,
        "dma_move": 0x2C0012000000FFFF, "dma_fill": 0x3000100000800000, "mac_cfg": 0x4000FFFFFFFFFFFF,
        "mac_mma": 0x44008123000000FF, "vec_rq": 0x50001230003FFFFF, "vec_ew_max": 0x54004FEDC0003FFF,
        "vec_acc": 0x5800120001000000, "vec_mac": 0x5C00123000FF3FFF, "vec_min": 0x6000812300000000,
        "lut_apply": 0x73FF123000003FFF,
    }
    seeds = {f"valid_{k}": words(v) for k, v in valid.items()}
    seeds["program"] = words(*valid.values())
    seeds["bad_opcode"] = words(63 << 58)
    seeds["bad_alu_function"] = words(4 << 58 | 11 << 44)
    seeds["bad_reserved"] = words(2 << 58 | 1 << 32)
    seeds["bad_event_flag"] = words(3 << 53)
    seeds["partial_word"] = b"\x01\x02\x03"
    return seeds


def vnpu_mnemonics():
    """The mnemonics of include/janus/vnpu/isa.hpp's instruction_table, in table order (the one list)."""
    import re

    text = (FUZZ_DIR.parent / "include/janus/vnpu/isa.hpp").read_text()
    body = text[text.index("instruction_table = {"):]
    body = body[: body.index("};")]
    return re.findall(r'^ *detail::[a-z_0-9]+\("([a-z0-9.]+)"', body, re.M)  # one row per line


def vnpu_max_fields():
    """max_fields of include/janus/vnpu/isa.hpp (operand slots per fuzz record)."""
    import re

    text = (FUZZ_DIR.parent / "include/janus/vnpu/isa.hpp").read_text()
    return int(re.search(r"inline constexpr int max_fields = (\d+);", text).group(1))


ASM_SEEDS = {
    "canonical": "li r1, -5\naddi r2, r1, 2147483647\nalu.xor r3, r2, r1 wait(e2)\nloop 16, 2 signal(e15)\n"
                 "alu.add r4, r4, r3\nalu.srl r5, r4, r0\nsync 0x8001, 0x0002\nnop wait(e0) signal(e1)\nhalt\n",
    "labels_aliases": "; sum\n.reg acc = r1\n.reg step = r2\n.event done = e7\n        li acc, 0\n"
                      "        li step, 0x10\n        loop 8, after\nbody:   alu.add acc, acc, step\n"
                      "        addi step, step, -1\nafter:  halt signal(done)\n",
    "crlf": "nop\r\nhalt\r\n",
    "units": "li r1, 0x100\nli r2, 0x80000\ndma.cfg 4, 64, 16\ndma.load r1, input, r0, 16 signal(e0)\n"
             "mac.cfg 4, 16, 16, 16\nmac.mm r2, r1, r1, -3 wait(e0)\nmac.mma r2, r1, r1, 0 signal(e1)\n"
             "vec.rq r1, r2, r1, 16, 4 wait(e1)\nvec.ew.add r1, r1, r1, r1, 64\nvec.acc r2, r1, 5, 16\n"
             "vec.mac r2, r1, r1, -1, 16\nvec.max r1, r1, r1, 16\nlut.apply r1, r1, 3, 64 signal(e2)\n"
             "dma.store output, r0, r1, 64 wait(e2)\ndma.fill r1, -1, 32\ndma.move r1, r1, 16\n"
             "vec.shl32 r2, r2, 3, 16\nvec.rshr32 r2, r2, 31, 16\nvec.abs32 r2, r2, 32\nvec.add32 r2, r2, r2, 16\n"
             "vec.sel r1, r1, r1, r1, 16\nhalt\n",
    "bad_region": "dma.load r1, dram, r2, 16\n",
    "bad_alignment": "dma.move r1, r2, 24\n",
    "bad_trailing_digits": "li r1, 12abc\n",
    "bad_sign": "loop -3, 1\n",
    "bad_plus": "li r1, +1\n",
    "bad_range": "li r1, 2147483648\n",
    "bad_huge": "li r1, 99999999999999999999999\n",
    "bad_hex": "sync 0x, 0\n",
    "bad_register": "li r16, 0\n",
    "bad_mnemonic": "  mov r1, r2\n",
    "bad_operands": "addi r1, r2\n",
    "bad_event": "nop wait(e16)\n",
    "bad_label": "loop 2, nowhere\nhalt\n",
    "bad_label_before": "back: nop\nloop 2, back\n",
    "bad_directive": ".macro x\n",
}


def seeds_vnpu_asm():
    """fuzz/vnpu_asm.cpp: assembly text. A canonical program, labels and aliases, CRLF line ends, and one text per
    diagnostic of tests/vnpu/asm.cpp. The dictionary (fuzz/vnpu_asm.dict, written alongside) holds every mnemonic
    of the instruction table and the syntax's keywords."""
    dictionary = [f'"{m}"' for m in vnpu_mnemonics()]
    dictionary += [f'"{r}"' for r in ("weights", "scratch", "input", "output")]
    dictionary += ['".reg"', '".event"', '"wait("', '"signal("', '"0x"', '"r15"', '"e15"', '":"', '","', '"\\x0A"']
    (FUZZ_DIR / "vnpu_asm.dict").write_text(
        "# generated by fuzz/make_seeds.py from include/janus/vnpu/isa.hpp; do not edit\n" + "\n".join(dictionary) + "\n")
    return {k: v.encode() for k, v in ASM_SEEDS.items()}


def seeds_vnpu_roundtrip():
    """fuzz/vnpu_roundtrip.cpp: records of row index, max_fields 8-byte operand values and wait/signal bytes. One record
    per row at its field minimums, one at its maximums (0xff bytes), and a three-record program."""
    rows = len(vnpu_mnemonics())
    ops = 8 * vnpu_max_fields()
    seeds = {}
    for i in range(rows):
        seeds[f"row{i:02d}_min"] = bytes([i] + [0] * ops + [16, 16])
        seeds[f"row{i:02d}_max"] = bytes([i] + [0xFF] * ops + [15, 0])
    seeds["program"] = b"".join(bytes([i] + [7] * ops + [i % 17, (i * 5) % 17]) for i in (2, 15, 16, 20, 30))
    return seeds


def seeds_vnpu_sim():
    """fuzz/vnpu_sim.cpp: 4 DRAM region sizes (x 16 B), a content seed, then instruction words. Programs from the
    assembler seeds' instruction mix: DMA in and out with events, MAC + VEC.RQ (its table is whatever LMEM holds,
    so mostly an rq-table fault), VEC / LUT lanes, a race, a deadlock and a loop."""

    def prog(sizes, *ws):
        return bytes(sizes) + bytes([7]) + b"".join(w.to_bytes(8, "little") for w in ws)

    li = lambda rd, imm: 2 << 58 | rd << 44 | (imm & 0xFFFFFFFF)
    halt = 1 << 58
    sig = lambda e: 1 << 52 | e << 48
    wait = lambda e: 1 << 57 | e << 53
    dma_cfg = lambda rows, ss, ds: 8 << 58 | (rows - 1) | (ss // 16) << 12 | (ds // 16) << 30
    dma_load = lambda rd, region, rs, n: 9 << 58 | rd << 44 | region << 40 | rs << 36 | (n // 16 - 1)
    dma_store = lambda region, rd, rs, n: 10 << 58 | region << 44 | rd << 40 | rs << 36 | (n // 16 - 1)
    mac_cfg = lambda m, k, n, st: 16 << 58 | (m - 1) | (k // 16 - 1) << 10 | (n // 16 - 1) << 20 | (st // 16) << 30
    mac_mm = lambda acc, ra, rb, zp: 17 << 58 | acc << 40 | ra << 36 | rb << 32 | (zp & 0x1FF)
    vec_rq = lambda rd, rs, rp, c, rows: 20 << 58 | rd << 44 | rs << 40 | rp << 36 | (c // 16 - 1) | (rows - 1) << 10
    vec_max = lambda rd, ra, rb, n: 24 << 58 | rd << 40 | ra << 36 | rb << 32 | (n // 16 - 1)
    vec_acc = lambda acc, rx, zp, n: 22 << 58 | acc << 44 | rx << 40 | (zp & 0x1FF) << 16 | (n // 16 - 1)
    vec_i32 = lambda func, rd, rs, sh, n: 25 << 58 | func << 44 | rd << 40 | rs << 36 | sh << 16 | (n // 16 - 1)
    vec_sel = lambda rd, rc, ra, rb, n: 26 << 58 | rd << 40 | rc << 36 | ra << 32 | rb << 28 | (n // 16 - 1)
    lut = lambda rd, rs, t, n: 28 << 58 | rd << 44 | rs << 40 | t << 36 | (n // 16 - 1)
    loop = lambda count, body: 5 << 58 | (count - 1) | (body - 1) << 14
    return {
        "copy_through": prog([4, 4, 4, 4], li(1, 0x100), dma_load(1, 2, 0, 64) | sig(0),
                             lut(1, 1, 0, 64) | wait(0) | sig(1), dma_store(3, 0, 1, 64) | wait(1) | sig(2),
                             6 << 58 | 1 << 2 << 16, halt),
        "mac_rq": prog([2, 0, 8, 4], li(1, 0x100), li(2, 0x80000), dma_cfg(4, 16, 16), dma_load(1, 2, 0, 16) | sig(0),
                       mac_cfg(4, 16, 16, 16), mac_mm(2, 1, 1, -3) | wait(0) | sig(1),
                       vec_rq(1, 2, 0, 16, 4) | wait(1), halt),
        "lanes": prog([0, 0, 0, 0], li(1, 0x80000), vec_acc(1, 0, 5, 32), vec_max(0, 0, 0, 64), halt),
        "acc_ops": prog([0, 0, 0, 0], li(1, 0x80000), vec_acc(1, 0, 5, 64), vec_i32(0, 1, 1, 4, 64),
                        vec_i32(1, 1, 1, 3, 64), vec_i32(2, 1, 1, 0, 64), 25 << 58 | 3 << 44 | 1 << 40 | 1 << 36 | 1 << 32 | 3,
                        vec_sel(0, 0, 0, 0, 64), halt),
        "race": prog([1, 0, 1, 1], li(1, 0x100), dma_load(1, 2, 0, 16), vec_max(1, 1, 1, 16), halt),
        "deadlock": prog([0, 0, 0, 0], vec_max(0, 0, 0, 16) | wait(3), halt),
        "loop": prog([0, 0, 0, 0], li(1, 0), loop(100, 1), 3 << 58 | 1 << 44 | 1 << 40 | 1, halt),
        "unmapped": prog([0, 0, 0, 0], li(1, 0x50000), vec_max(1, 1, 1, 16), halt),
        # issue 26: nested loops around one large fill and one large mac.mm (the work limits stop them)
        "hostile_fill_loop": prog([0, 0, 0, 0], loop(16384, 2), loop(16384, 1), 12 << 58 | (65536 // 16 - 1), halt),
        "hostile_mac_loop": prog([0, 0, 0, 0], li(1, 0x80000), li(3, 0x10000), mac_cfg(16, 256, 256, 256),
                                 loop(16384, 2), loop(16384, 1), mac_mm(1, 0, 3, 0), halt),
        "hostile_vec_loop": prog([0, 0, 0, 0], li(2, 0x10000), loop(16384, 2), loop(16384, 1),
                                 vec_max(1, 1, 2, 65536), halt),
    }


def seeds_emit_elementwise():
    """emit_diff family 0 (elementwise): op, element count (LE16), three (scale nibbles, zero point) pairs, tile / 16, data
    seed. One seed per op with a different size and tile; zero points at both ends of int8 in some."""
    seeds = {}
    sizes = [1, 7, 13, 16, 100, 1000, 4095, 33, 250, 17, 64, 999]
    for op in range(12):
        n = sizes[op] - 1
        params = [0x95, (op * 37) & 0xFF, 0xA3, 0x80 if op % 2 else 0x7F, 0x88, (256 - op * 11) & 0xFF]
        tile = [0, 1, 4, 0, 2, 0, 8, 3, 0, 1, 5, 0][op]
        seeds[f"op{op:02d}"] = bytes([op, n & 0xFF, n >> 8] + params + [tile, op, 42, 7])
    return seeds


def seeds_emit_matmul():
    """emit_diff family 1 (matmul): M, K, N bytes, A's zero point, per-column flag, two scale exponents, M / N tile caps,
    data seed. Odd shapes, both zero-point ends, forced tiles, per-tensor and per-column weights."""
    cases = {
        "tiny": [0, 0, 0, 0, 0, 10, 8, 0, 0],
        "odd_per_column": [6, 10, 4, 0x80, 1, 10, 9, 0, 0],
        "zp_top_tiles": [36, 40, 69, 0x7F, 3, 9, 10, 5, 1],
        "wide_k": [2, 255, 150, 5, 1, 8, 12, 0, 0],
        "tall_m": [63, 60, 33, 0xF0, 0, 10, 11, 7, 2],
    }
    return {name: bytes(v + [1, 2, 3]) for name, v in cases.items()}


def seeds_emit_depthwise():
    """emit_diff family 2 (depthwise): C, H, W, kh, kw, four pads, input zero point, bias flag, output scale exponent, data
    seed. 3x3 pad 1, asymmetric pads, a 1x1, wide pads on a tiny image, C not a multiple of 16."""
    cases = {
        "k3_pad1": [15, 7, 7, 2, 2, 1, 1, 1, 1, 0, 1, 4],
        "asymmetric": [12, 6, 9, 2, 4, 0, 2, 1, 0, 0x80, 1, 3],
        "k1": [39, 3, 3, 0, 0, 0, 0, 0, 0, 0x7F, 0, 2],
        "tiny_wide_pads": [0, 0, 1, 2, 2, 2, 2, 2, 2, 5, 1, 5],
    }
    return {name: bytes(v + [9, 8, 7]) for name, v in cases.items()}


def seeds_emit_conv():
    """emit_diff families 3 (Conv) and 4 (ConvTranspose): C, H, W, Co, kh, kw, sh, sw, dh, dw, group pick, four pads,
    input zero point, bias flag, output scale exponent, data seed. 3x3 pad 1, stride 2 with C = 3, grouped, dilated,
    a 1x1, asymmetric pads."""
    cases = {
        "k3_pad1": [15, 6, 7, 15, 2, 2, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 4],
        "s2_c3": [2, 8, 8, 15, 2, 2, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0x80, 1, 3],
        "grouped": [11, 4, 5, 23, 2, 1, 0, 1, 0, 0, 3, 1, 0, 0, 1, 0x7F, 1, 5],
        "dilated": [7, 7, 9, 8, 2, 2, 0, 0, 1, 1, 0, 2, 2, 1, 0, 9, 0, 4],
        "k1_s3": [39, 9, 10, 5, 0, 0, 2, 2, 0, 0, 1, 0, 0, 0, 0, 0xF0, 1, 2],
    }
    return {name: bytes(v + [4, 5, 6]) for name, v in cases.items()}


def seeds_emit_pool():
    """emit_diff family 5 (pools): kind (0 MaxPool, 1 AveragePool, 2 GlobalMaxPool, 3 GlobalAveragePool), C, H, W, kh,
    kw, sh, sw, flags (bits: dh, dw, ceil_mode, count_include_pad, output quantization = input's, wider pitch), four
    pads, input zero point, output scale ratio, output zero point, global tile, data seed. 3x3 / 2 pad 1, a dilated
    ceil-mode max, an average with one count, one whose count varies (refused: lower-pool-count), a tiled global max,
    a global average whose clamp acts."""
    cases = {
        "max_k3s2_pad1": [0, 15, 8, 8, 2, 2, 1, 1, 0x10, 1, 1, 1, 1, 0x80, 0x20, 5, 0],
        "max_dilated_ceil": [0, 12, 9, 10, 2, 1, 0, 2, 0x27, 2, 1, 0, 1, 3, 0x1B, 0x9C, 0],
        "avg_include_pad": [1, 39, 6, 8, 2, 1, 1, 1, 0x08, 1, 1, 1, 1, 0x7F, 0x2A, 0xFD, 0],
        "avg_count_varies": [1, 15, 5, 5, 2, 2, 0, 0, 0x00, 1, 1, 1, 1, 0, 0x20, 0, 0],
        "global_max_tiled": [2, 12, 4, 6, 0, 0, 0, 0, 0x00, 0, 0, 0, 0, 0x80, 0x10, 0x0A, 3],
        "global_avg_clamp": [3, 39, 4, 6, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0x00, 0, 0],
    }
    return {name: bytes(v + [3, 1, 4]) for name, v in cases.items()}


def seeds_emit_reduce():
    """emit_diff family 6 (reductions): op (0 ReduceSum, 1 ReduceMean, 2 ReduceMax, 3 ReduceMin), rank - 2, four extent
    bytes (outer 1..6, innermost 1..40), axes mask, negative-axes mask, flags (bits: keepdims, noop_with_empty_axes,
    wider pitch, per-axis input (2: innermost axis, 3: axis 0), output quantization = input's), tile cap, chunk width
    in rows, input zero point, output zero point, scale ratio, data seed. Spatial sums of NHWC, an innermost mean with
    keepdims 0, per-channel max, forced tiles and chunks, and two refusals (inner max, two reduced blocks)."""
    cases = {
        "sum_spatial": [0, 2, 0, 4, 6, 12, 0x06, 0x00, 0x01, 0, 0, 0x80, 20, 0x20],
        "mean_inner_keep0": [1, 1, 2, 3, 39, 0, 0x04, 0x04, 0x00, 2, 0, 0x7F, 0xEC, 0x18],
        "max_per_channel": [2, 1, 1, 4, 12, 0, 0x02, 0x00, 0x11, 0, 0, 7, 0xF7, 0x28],
        "min_tiles_chunks": [3, 2, 1, 2, 3, 15, 0x02, 0x02, 0x24, 3, 1, 0x80, 0, 0x20],
        "max_inner_refused": [2, 0, 3, 15, 0, 0, 0x02, 0x00, 0x01, 0, 0, 0, 0, 0x20],
        "sum_two_blocks": [0, 2, 1, 2, 3, 15, 0x05, 0x00, 0x01, 0, 0, 9, 1, 0x1C],
    }
    return {name: bytes(v + [2, 7, 1]) for name, v in cases.items()}


def seeds_emit_movement():
    """emit_diff family 7 (data movement and Resize): op (0 Slice, 1 Transpose, 2 Pad, 3 Concat, 4 Expand, 5 Reshape,
    6 Resize), rank - 2, four extent bytes (outer 1..5; innermost: odd bytes 16, 32, 48, even 1..40), flags (bits: x
    pitch + 16, y pitch + 16, output quantization = input's), input zero point, output scale ratio, output zero point,
    12 op bytes (see emit_diff.cpp), data seed. Stepped slices, an outer transpose, constant and reflect pads, concats
    along the innermost and an outer axis, an expand, an in-place reshape view and a repacking merge, resizes by
    scales and sizes, and a linear resize (refused: lower-resize-mode)."""
    op_bytes = {
        "slice_steps": (0, [1, 3, 4, 24, 0], 0x01, [5, 0x15, 13, 0x04, 0, 0]),
        "transpose_outer": (1, [2, 1, 2, 3, 24], 0x02, [1, 5, 0]),
        "pad_constant": (2, [1, 1, 2, 1, 0], 0x04, [3, 2, 1, 2, 4, 0, 0, 0, 0, 0x10]),
        "pad_reflect": (2, [1, 2, 3, 12, 0], 0x00, [4, 3, 0, 2, 5, 0, 0, 0, 3, 0]),
        "concat_inner": (3, [0, 2, 1, 0, 0], 0x00, [3, 0x81, 1, 3, 12]),
        "concat_outer": (3, [1, 1, 2, 24, 0], 0x01, [0, 1, 3, 1]),
        "expand": (4, [1, 2, 1, 24, 0], 0x00, [0x02, 1, 1, 0x12, 0, 3, 0]),
        "reshape_view": (5, [1, 1, 2, 3, 0], 0x04, [2, 1]),
        "reshape_merge": (5, [1, 3, 2, 24, 0], 0x02, [1, 0]),
        "resize_x2": (6, [0, 0, 24, 0, 0], 0x02, [4, 5, 0, 3, 3, 0, 0, 0]),
        "resize_sizes": (6, [0, 0, 78, 0, 0], 0x00, [2, 4, 1, 6, 10, 2, 3, 0]),
        "resize_linear": (6, [0, 0, 1, 0, 0], 0x00, [3, 3, 0, 3, 3, 0, 0, 7]),
    }
    seeds = {}
    for name, (op, shape, flags, params) in op_bytes.items():
        quant = [0x80 if op % 2 else 5, 0x21, 0x7F if op % 3 else 0xF0]
        seeds[name] = bytes([op] + shape[:5] + [flags] + quant + (params + [0] * 12)[:12] + [6, 2, 8])
    return seeds


def seeds_emit_diff():
    """fuzz/emit_diff.cpp: a family byte (0 elementwise, 1 matmul, 2 depthwise, 3 conv, 4 ConvTranspose), then that
    family's input."""
    seeds = {}
    for prefix, family, gen in (("ew", 0, seeds_emit_elementwise), ("mm", 1, seeds_emit_matmul),
                                ("dw", 2, seeds_emit_depthwise), ("cv", 3, seeds_emit_conv),
                                ("ct", 4, seeds_emit_conv)):
        for name, data in gen().items():
            seeds[f"{prefix}_{name}"] = bytes([family]) + data
    return seeds


def seeds_emit_diff_data():
    """fuzz/emit_diff_data.cpp: a family byte (0 pools, 1 reductions, 2 data movement and Resize), then that family's
    input."""
    seeds = {}
    for prefix, family, gen in (("pl", 0, seeds_emit_pool), ("rd", 1, seeds_emit_reduce),
                                ("mv", 2, seeds_emit_movement)):
        for name, data in gen().items():
            seeds[f"{prefix}_{name}"] = bytes([family]) + data
    return seeds


def seeds_onnx_reader():
    """fuzz/onnx_reader.cpp: any bytes. The committed ONNX fixtures (tests/onnx/fixtures/*.onnx, written by
    scripts/make_onnx_models.py with the protobuf library) up to 4 KB, the TensorProto input files written beside
    them (*.pb), and every malformed file of tests/onnx/bad/, so libFuzzer mutates real models and tensors from the
    first run."""
    root = FUZZ_DIR.parent / "tests" / "onnx"
    seeds = {}
    for pattern in ("*.onnx", "*.pb"):
        for p in sorted((root / "fixtures").glob(pattern)):
            if p.stat().st_size <= 4096:
                seeds[p.name] = p.read_bytes()
    for p in sorted((root / "bad").iterdir()):
        if p.name != "expected.txt":
            seeds["bad_" + p.name] = p.read_bytes()
    for p in sorted((FUZZ_DIR.parent / "tests" / "hostile").glob("*.onnx")):  # issue 26: tiny files, huge sizes
        seeds["hostile_" + p.name] = p.read_bytes()
    return seeds


def seeds_npy_reader():
    """fuzz/npy_reader.cpp: whole .npy files. Valid files of every dtype (int8 as '|i1' and 'i1', uint8, int32,
    int64, float32), of format versions 1.0, 2.0 and 3.0, big-endian, 0-d and zero-size, and headers in the other
    literal forms the reader accepts (double quotes, key order, no padding, trailing comma in the tuple); then near
    misses, one per reader rule: Fortran order, bool and float64, data one byte short and one byte long, a header
    length past the end, version 4.0, a negative, an overflowing and a size-overflowing shape, duplicate / unknown /
    missing keys, (3) for (3,)."""

    def header_dict(descr, shape, fortran="False"):
        text = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
        first = shape.strip("()").split(",")[0].strip()
        return text + " " * (21 - len(first)) if first else text  # numpy's growth room for the first axis

    def npy(header, data=b"", version=1, pad=True):
        h = header.encode("utf8" if version == 3 else "latin1")
        field = 2 if version == 1 else 4
        if pad:  # numpy's padding: 1..64 spaces and '\n', so that the data starts at a multiple of 64
            h += b" " * (64 - (8 + field + len(h) + 1) % 64) + b"\n"
        length = struct.pack("<H" if version == 1 else "<I", len(h))
        return b"\x93NUMPY" + bytes([version, 0]) + length + h + data

    def le(fmt, *values):
        return struct.pack("<" + fmt * len(values), *values)

    i32_2x3 = le("i", -(2**31), -1, 0, 1, 65536, 2**31 - 1)
    seeds = {
        "valid_i8_v1": npy(header_dict("|i1", "(2, 3)"), bytes([0x80, 0xFF, 0, 1, 42, 0x7F])),
        "valid_i1_no_order": npy(header_dict("i1", "(3,)"), bytes([1, 2, 3])),
        "valid_u8_scalar": npy(header_dict("|u1", "()"), b"\xfe"),
        "valid_i32_4d": npy(header_dict("<i4", "(1, 2, 2, 2)"), le("i", *range(-4, 4))),
        "valid_i64_v2": npy(header_dict("<i8", "(2,)"), le("q", -(2**63), 2**63 - 1), version=2),
        "valid_f32_v3": npy(header_dict("<f4", "(2, 2)"), le("f", 1.5, -0.0, math.inf, 1e-45), version=3),
        "valid_i32_be": npy(header_dict(">i4", "(2, 3)"), struct.pack(">6i", -(2**31), -1, 0, 1, 65536, 2**31 - 1)),
        "valid_i64_be": npy(header_dict(">i8", "(1,)"), struct.pack(">q", -3)),
        "valid_f32_be": npy(header_dict(">f4", "()"), struct.pack(">f", 0.25)),
        "valid_f32_zero_size": npy(header_dict("<f4", "(0, 3)")),
        "literal_double_quotes_reordered": npy('{"shape": (2,3,), "fortran_order": False, "descr": "<i4"}', i32_2x3),
        "literal_unpadded_whitespace": npy("{ 'descr' :'<i4',\n\t'fortran_order':False ,'shape':( 2 , 3 ) }", i32_2x3,
                                           pad=False),
        "bad_fortran_order": npy(header_dict("<i4", "(2, 3)", fortran="True"), i32_2x3),
        "bad_bool": npy(header_dict("|b1", "(2,)"), b"\x01\x00"),
        "bad_float64": npy(header_dict("<f8", "(1,)"), le("d", 1.0)),
        "bad_data_short": npy(header_dict("<i4", "(2, 3)"), i32_2x3[:-1]),
        "bad_data_long": npy(header_dict("<i4", "(2, 3)"), i32_2x3 + b"\x00"),
        "bad_header_length": b"\x93NUMPY\x01\x00\xff\xff{'descr': '<i4'",
        "bad_version": b"\x93NUMPY\x04\x00" + npy(header_dict("|u1", "()"), b"\x00")[8:],
        "bad_negative_dim": npy(header_dict("<i4", "(2, -3)")),
        "bad_dim_overflow": npy(header_dict("|u1", "(9223372036854775808,)")),
        "bad_size_overflow": npy(header_dict("<i8", "(0, 4294967296, 4294967296)")),
        "bad_duplicate_key": npy("{'descr': '<i4', 'shape': (), 'fortran_order': False, 'shape': (), }", le("i", 7)),
        "bad_unknown_key": npy("{'descr': '<i4', 'fortran_order': False, 'shape': (), 'order': 'C', }", le("i", 7)),
        "bad_missing_key": npy("{'descr': '<i4', 'fortran_order': False, }", le("i", 7)),
        "bad_shape_int": npy(header_dict("<i4", "(3)"), le("i", 1, 2, 3)),
    }
    return seeds


def seeds_ir_parse():
    """fuzz/ir_parse.cpp: IR text. The golden texts of tests/graph/text/ (imported fixtures with their constants in
    hex, written by tests/graph/ir_text.cpp) and the malformed texts of tests/graph/bad_ir/ (one rule each)."""
    root = FUZZ_DIR.parent / "tests" / "graph"
    seeds = {p.name: p.read_bytes() for p in sorted((root / "text").glob("*.ir"))}
    for p in sorted((root / "bad_ir").glob("*.ir")):
        seeds["bad_" + p.name] = p.read_bytes()
    return seeds


def seeds_conformance_results():
    """fuzz/conformance_results.cpp: janusc conform's result lines. The committed tests/conformance/expected.txt in
    pieces of 40 lines, a few lines of every shape (npu=, bound=N+M), and malformed lines, one rule each."""
    lines = (FUZZ_DIR.parent / "tests" / "conformance" / "expected.txt").read_bytes().splitlines(keepends=True)
    seeds = {f"expected_{k // 40:02d}.txt": b"".join(lines[k:k + 40]) for k in range(0, len(lines), 40)}
    seeds["shapes.txt"] = (b"test_a ops=Abs ref=pass\n"
                           b"test_b ops=Conv,DequantizeLinear ref=pass npu=host bound=2+1\n"
                           b"test_c ops=Relu ref=refused(onnx-opset) npu=fail(values) bound=0+1\n")
    bad = {
        "no_newline": b"test_a ops=Abs ref=pass",
        "unsorted": b"test_b ops=Abs ref=pass\ntest_a ops=Abs ref=pass\n",
        "no_ops": b"test_a ref=pass\n",
        "ops_unsorted": b"test_a ops=Relu,Abs ref=pass\n",
        "ref_host": b"test_a ops=Abs ref=host\n",
        "empty_rule": b"test_a ops=Abs ref=fail()\n",
        "bound_zero": b"test_a ops=Abs ref=pass bound=0\n",
        "bound_plus_zero": b"test_a ops=Abs ref=pass bound=1+0\n",
        "extra_field": b"test_a ops=Abs ref=pass color=red\n",
        "double_space": b"test_a  ops=Abs ref=pass\n",
    }
    for name, data in bad.items():
        seeds["bad_" + name + ".txt"] = data
    return seeds


def seeds_graph_diff():
    """fuzz/graph_diff.cpp: IR text run through the default passes, the lowering and the simulator. The pass tests of
    tests/graph/passes/ (not their .after.ir goldens, and not the 64-channel BatchNorm, whose bias search is slow),
    the imported fixtures of tests/graph/text/, and two graphs of the ops the lowering takes: a depthwise Conv,
    MaxPool, a LUT, GlobalAveragePool, Flatten and MatMul; a 1x1 Conv, Relu, a squeeze-and-excite Mul by its own
    [1, C, 1, 1] GlobalAveragePool, a residual Add and AveragePool; and the data movement, reductions and Resize
    (Pad, Transpose, Slice, ReduceMax, Resize, Concat, ReduceMin, Expand, ReduceMean, ReduceSum); a ConvTranspose;
    host nodes between NPU nodes (three segments)."""
    root = FUZZ_DIR.parent / "tests" / "graph"
    seeds = {}
    for p in sorted((root / "passes").glob("*.ir")):
        if not p.name.endswith(".after.ir") and p.name != "batch_norm_to_conv_1lsb.ir":
            seeds["pass_" + p.name] = p.read_bytes()
    for p in sorted((root / "text").glob("*.ir")):
        seeds["fixture_" + p.name] = p.read_bytes()

    def hx(n, f):
        return "0x" + "".join("%02x" % (f(i) & 255) for i in range(n))

    def fx(n, f):  # float32 constants, little-endian
        return "0x" + b"".join(struct.pack("<f", f(i)) for i in range(n)).hex()

    seeds["pools_matmul.ir"] = f"""graph pools {{
  input %x: int8[1,8,8,8] q(int8 s=0.05 zp=-3)
  const %dw: int8[8,1,3,3] q(int8 s=0.02 zp=0) = {hx(72, lambda i: (i * 29 + 3) % 41 - 20)}
  %d: int8[1,8,8,8] q(int8 s=0.07 zp=2) = Conv(%x, %dw) {{group=8, kernel_shape=[3, 3], pads=[1, 1, 1, 1]}}
  %m: int8[1,8,4,4] q(int8 s=0.07 zp=2) = MaxPool(%d) {{kernel_shape=[2, 2], strides=[2, 2]}}
  %s: int8[1,8,4,4] q(int8 s=0.004 zp=-128) = Sigmoid(%m)
  %g: int8[1,8,1,1] q(int8 s=0.003 zp=-100) = GlobalAveragePool(%s)
  %f: int8[1,8] q(int8 s=0.003 zp=-100) = Flatten(%g) {{axis=1}}
  const %w: int8[8,4] q(int8 s=0.01 zp=0) = {hx(32, lambda i: (i * 37 + 11) % 51 - 25)}
  %y: int8[1,4] q(int8 s=0.02 zp=1) = MatMul(%f, %w)
  output %y
}}
""".encode()
    seeds["movement.ir"] = f"""graph movement {{
  input %x: int8[1,16,4,4] q(int8 s=0.05 zp=-3)
  const %w: int8[16,16,1,1] q(int8 s=0.02 zp=0) = {hx(256, lambda i: (i * 41 + 5) % 57 - 28)}
  %c: int8[1,16,4,4] q(int8 s=0.1 zp=0) = Conv(%x, %w) {{kernel_shape=[1, 1]}}
  %p: int8[1,16,6,6] q(int8 s=0.1 zp=0) = Pad(%c) {{pads=[0, 0, 1, 1, 0, 0, 1, 1]}}
  %t: int8[1,16,6,6] q(int8 s=0.1 zp=0) = Transpose(%p) {{perm=[0, 1, 3, 2]}}
  %s: int8[1,16,3,6] q(int8 s=0.1 zp=0) = Slice(%t) {{starts=[0], ends=[6], axes=[2], steps=[2]}}
  %e: int8[1,16,4,1] q(int8 s=0.05 zp=-3) = ReduceMax(%x) {{axes=[3], keepdims=1}}
  %r: int8[1,16,3,6] q(int8 s=0.05 zp=-3) = Resize(%e) {{mode="nearest", sizes=[1, 16, 3, 6]}}
  %r2: int8[1,16,3,6] q(int8 s=0.1 zp=0) = Requantize(%r) {{dtype="int8"}}
  %k: int8[1,32,3,6] q(int8 s=0.1 zp=0) = Concat(%s, %r2) {{axis=1}}
  %g: int8[1,32,1,6] q(int8 s=0.1 zp=0) = ReduceMin(%k) {{axes=[2]}}
  %x2: int8[1,32,3,6] q(int8 s=0.1 zp=0) = Expand(%g) {{shape=[1, 32, 3, 6]}}
  %m: int8[1,32] q(int8 s=0.07 zp=4) = ReduceMean(%x2) {{axes=[2, 3], keepdims=0}}
  %q: int8[1,32,1,1] q(int8 s=0.3 zp=-2) = ReduceSum(%k) {{axes=[2, 3]}}
  output %m
  output %q
}}
""".encode()
    seeds["elementwise_chain.ir"] = f"""graph elementwise_chain {{
  input %x: int8[1,16,4,4] q(int8 s=0.05 zp=-3)
  input %z: int8[1,16,4,4] q(int8 s=0.03 zp=7)
  %a: int8[1,16,4,4] q(int8 s=0.05 zp=-3) = Abs(%x)
  %b: int8[1,16,4,4] q(int8 s=0.05 zp=-3) = Sign(%a)
  %c: int8[1,16,4,4] q(int8 s=0.04 zp=0) = LeakyRelu(%x) {{alpha=0.125f}}
  %d: int8[1,16,4,4] q(int8 s=0.004 zp=-128) = HardSigmoid(%c)
  %e: int8[1,16,4,4] q(int8 s=0.05 zp=-10) = HardSwish(%z)
  %f: int8[1,16,4,4] q(int8 s=0.0078125 zp=0) = Tanh(%e)
  %g: int8[1,16,4,4] q(int8 s=0.02 zp=-100) = Exp(%f)
  %h: int8[1,16,4,4] q(int8 s=0.0078125 zp=0) = Erf(%c)
  %i: int8[1,16,4,4] q(int8 s=0.05 zp=-20) = Gelu(%x)
  %j: int8[1,16,4,4] q(int8 s=0.05 zp=0) = Min(%i, %h)
  %k: int8[1,16,4,4] q(int8 s=0.05 zp=0) = Max(%j, %b)
  %l: int8[1,16,1,1] q(int8 s=0.05 zp=0) = GlobalMaxPool(%k)
  %m: int8[1,16,4,4] q(int8 s=0.05 zp=0) = Mul(%g, %l)
  output %m
  output %d
}}
""".encode()
    seeds["sqrt_reciprocal.ir"] = b"""graph sqrt_reciprocal {
  input %x: int8[1,16,4,4] q(int8 s=0.05 zp=-3)
  %a: int8[1,16,4,4] q(int8 s=0.02 zp=-128) = Sqrt(%x)
  %b: int8[1,16,4,4] q(int8 s=0.25 zp=-100) = Reciprocal(%a)
  output %b
}
"""
    seeds["plain_float16_int16.ir"] = b"""graph plain_float16_int16 {
  input %h: float16[2,8]
  input %g: float16[8]
  input %i: int16[3,1]
  input %u: uint32[4]
  %m: float16[2,8] = Max(%h, %g)
  %a: float16[2,8] = Add(%m, %h)
  %n: int16[3,1] = Min(%i, %i)
  %p: uint32[4] = Mul(%u, %u)
  output %a
  output %n
  output %p
}
"""
    seeds["matrix_tail.ir"] = f"""graph matrix_tail {{
  input %x: int8[4,24] q(int8 s=0.05 zp=-3)
  const %w: int8[16,24] q(int8 s=0.01 zp=0) = {hx(384, lambda i: (i * 31 + 3) % 53 - 26)}
  const %c: int32[16] q(int32 s=0.0005 zp=0) = {hx(64, lambda i: (i * 7) % 13 if i % 4 == 0 else 0)}
  const %s1: float32[16] = {fx(16, lambda i: 0.5 + (i % 5) / 4.0)}
  const %s2: float32[16] = {fx(16, lambda i: (i % 7 - 3) / 8.0)}
  const %s3: float32[4] = {fx(4, lambda i: 1.0 - i / 8.0)}
  const %s4: float32[4] = {fx(4, lambda i: i / 16.0)}
  %y: int8[4,16] q(int8 s=0.06 zp=2) = Gemm(%x, %w, %c) {{transB=1}}
  %n: int8[4,16] q(int8 s=0.06 zp=2) = LayerNormalization(%y, %s1, %s2) {{axis=-1}}
  %t: int8[1,4,4,4] q(int8 s=0.06 zp=2) = Reshape(%n) {{shape=[1, 4, 4, 4]}}
  %v: int8[1,4,4,4] q(int8 s=0.05 zp=0) = InstanceNormalization(%t, %s3, %s4)
  %w2: int8[4,16] q(int8 s=0.05 zp=0) = Reshape(%v) {{shape=[4, 16]}}
  %u: int8[1,4,16] q(int8 s=0.05 zp=0) = Unsqueeze(%w2) {{axes=[0]}}
  %q: int8[4,16] q(int8 s=0.05 zp=0) = Squeeze(%u) {{axes=[0]}}
  %a: int64[4,1] = ArgMax(%q) {{axis=1, keepdims=1}}
  %b: int64[1,16] = ArgMin(%q) {{axis=0, keepdims=1}}
  output %a
  output %b
}}
""".encode()
    seeds["conv_transpose.ir"] = f"""graph conv_transpose {{
  input %x: int8[1,16,3,3] q(int8 s=0.05 zp=-3)
  const %w: int8[16,8,3,3] q(int8 s=0.01 zp=0) = {hx(1152, lambda i: (i * 23 + 9) % 45 - 22)}
  %a: int8[1,8,6,6] q(int8 s=0.2 zp=1) = ConvTranspose(%x, %w) {{kernel_shape=[3, 3], pads=[1, 1, 0, 0], strides=[2, 2]}}
  %r: int8[1,8,6,6] q(int8 s=0.2 zp=1) = Relu(%a)
  output %r
}}
""".encode()
    seeds["residual.ir"] = f"""graph residual {{
  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=3)
  const %w: int8[16,16,1,1] q(int8 s=0.01 zp=0) = {hx(256, lambda i: (i * 53 + 7) % 61 - 30)}
  %c: int8[1,16,4,4] q(int8 s=0.08 zp=-4) = Conv(%x, %w) {{kernel_shape=[1, 1]}}
  %r: int8[1,16,4,4] q(int8 s=0.08 zp=-4) = Relu(%c)
  %k: int8[1,16,1,1] q(int8 s=0.05 zp=0) = GlobalAveragePool(%r)
  %m: int8[1,16,4,4] q(int8 s=0.12 zp=0) = Mul(%r, %k)
  %a: int8[1,16,4,4] q(int8 s=0.15 zp=-2) = Add(%m, %x)
  %p: int8[1,16,2,2] q(int8 s=0.15 zp=-2) = AveragePool(%a) {{kernel_shape=[2, 2], strides=[2, 2]}}
  output %p
}}
""".encode()
    # host nodes between NPU nodes: three segments, a value crossing two of them in scratch (tests/graph/segments.cpp)
    seeds["segments.ir"] = """graph seg {
  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=3)
  %a: int8[1,16,4,4] q(int8 s=0.1 zp=3) = Relu(%x)
  %b: int8[1,16,4,4] q(int8 s=0.05 zp=-2) = Neg(%a)
  %h: int8[1,16,4,4] q(int8 s=0.05 zp=-2) = Neg(%b) @host
  %c: int8[1,16,4,4] q(int8 s=0.1 zp=-20) = Add(%h, %a)
  %f: float32[1,16,4,4] = DequantizeLinear(%c)
  %s: float32[1,16,4,4] = Sigmoid(%f)
  %q: int8[1,16,4,4] q(int8 s=0.00390625 zp=-128) = QuantizeLinear(%s) {dtype="int8", scale=[0.00390625f], zero_point=[-128]}
  %d: int8[1,16,4,4] q(int8 s=0.1 zp=-10) = Add(%q, %c)
  output %d
}
""".encode()
    return seeds


def crc32c(data):
    """CRC-32C (Castagnoli, reflected), the package format's checksum (docs/package.md)."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def reseal(b):
    """A package's bytes with every section checksum, the table's and the header's recomputed (tests/package/
    craft.hpp's reseal; tests/janusc/cli_test.sh imports it to patch a compiled package)."""
    b = bytearray(b)
    count = struct.unpack_from("<I", b, 32)[0]
    for i in range(count):
        at = 96 + 32 * i
        kind, flags, offset, length, align, _ = struct.unpack_from("<IIQQII", b, at)
        struct.pack_into("<I", b, at + 28, crc32c(b[offset:offset + length]))
    struct.pack_into("<I", b, 36, crc32c(b[96:96 + 32 * count]))
    struct.pack_into("<I", b, 92, crc32c(b[:92]))
    return bytes(b)


def seeds_package_reader():
    """fuzz/package_reader.cpp: byte 0 picks the mode (even: a package file follows; odd: generator bytes, bit 1 set:
    no resealing). Raw seeds: the two golden packages of tests/package/golden/, valid packages of other shapes
    written by a small writer of docs/package.md's layout (it must reproduce golden minimal.jpk exactly, checked
    here), and near misses (one rule each, checksums recomputed where the rule lies behind them). The packages carry
    the instruction-set hash of golden sample.jpk (bytes 40..47), so they pass this build's toolchain check.
    Structured seeds: generator inputs for small and larger packages, with and without resealing."""
    golden = FUZZ_DIR.parent / "tests/package/golden"
    sample = (golden / "sample.jpk").read_bytes()
    minimal = (golden / "minimal.jpk").read_bytes()
    isa = sample[40:48]

    def name(s):
        b = s.encode()
        return struct.pack("<I", len(b)) + b

    dtypes = {"float32": 1, "uint8": 2, "int8": 3, "int32": 6, "int64": 7}
    kinds = {"scratch": 1, "state": 2, "weights": 3, "bias": 4, "lut": 5, "rq-table": 6, "ew-table": 7, "constant": 8}

    def buffer(n, kind, offset, size):
        return name(n) + struct.pack("<BQQ", kinds[kind], offset, size)

    def io(n, dtype, storage, dims, strides, offset, size, scales=(), zps=(), axis=0):
        return (name(n) + struct.pack("<BBBQQ", dtypes[dtype], dtypes[storage], len(dims), offset, size)
                + b"".join(struct.pack("<q", d) for d in dims) + b"".join(struct.pack("<q", s) for s in strides)
                + struct.pack("<Ii", len(scales), axis) + b"".join(struct.pack("<f", s) for s in scales)
                + b"".join(struct.pack("<i", z) for z in zps))

    def debug(first, last, node, op):
        return struct.pack("<II", first, last) + name(node) + name(op)

    def listing(items):
        return struct.pack("<I", len(items)) + b"".join(items)

    def header(size, table, count, version=3, isa_hash=isa, tool=b"0.1.0"):
        h = (b"JANUSPKG" + struct.pack("<IIQQII", version, 96, size, 96, count, crc32c(table)) + isa_hash
             + tool.ljust(32, b"\0") + bytes(12))
        return h + struct.pack("<I", crc32c(h))

    def package(code, weights=b"", regions=(0, 0, 0), buffers=(), inputs=(), outputs=(), entries=(), extra=(),
                version=3, isa_hash=isa, optional=True, host=None, segments=None, placement=None, rounding=None):
        sections = [(1, 0, b"".join(struct.pack("<Q", w) for w in code)), (2, 0, weights),
                    (3, 0, struct.pack("<QQQ", *regions) + listing(buffers)),
                    (4, 0, listing(inputs) + listing(outputs)), (5, 0, listing(entries))]
        if host is not None:  # (prologue node count, graph IR text)
            sections.append((6, 0, struct.pack("<I", host[0]) + host[1].encode()))
        if segments is not None:  # [(entry pc, host nodes before, first input, first output)] of segments 1..
            sections.append((7, 0, struct.pack("<I", len(segments)) +
                             b"".join(struct.pack("<IIII", *r) for r in segments)))
        if placement is not None:  # (node count, [(index, quantized, node, op type, rule, reason)]): version 2
            sections.append((8, 0, struct.pack("<II", placement[0], len(placement[1])) +
                             b"".join(struct.pack("<IB", i, q) + name(n) + name(o) + name(r) + name(w)
                                      for i, q, n, o, r, w in placement[1])))
        if rounding is not None:  # the numerics section (version 3): the rounding code
            sections.append((9, 0, struct.pack("<I", rounding)))
        sections += [(k, 1 if optional else 0, b) for k, b in extra]
        out = bytearray(96 + 32 * len(sections))
        table = b""
        for kind, flags, body in sections:
            out += bytes(-len(out) % 64)
            table += struct.pack("<IIQQII", kind, flags, len(out), len(body), 64, crc32c(body))
            out += body
        out[96:96 + len(table)] = table
        out[0:96] = header(len(out), table, len(sections), version, isa_hash)
        return bytes(out)

    halt, nop = 1 << 58, 0
    li = lambda rd, imm: 2 << 58 | rd << 44 | (imm & 0xFFFFFFFF)
    dma_load = lambda rd, region, rs, n: 9 << 58 | rd << 44 | region << 40 | rs << 36 | (n // 16 - 1)
    lut = lambda rd, rs, t, n: 28 << 58 | rd << 44 | rs << 40 | t << 36 | (n // 16 - 1)
    signal = lambda e: 1 << 52 | e << 48
    wait = lambda e: 1 << 57 | e << 53

    assert package([halt]) == minimal, "the seed writer no longer matches the package format (golden minimal.jpk)"

    program = [li(1, 0x100), dma_load(1, 2, 0, 64) | signal(0), lut(1, 1, 0, 64) | wait(0), halt]
    lut_table = bytes(range(256))
    convnet = dict(
        code=program, weights=lut_table + bytes(48) + bytes(16),
        regions=(128, 64, 32),
        buffers=[buffer("lut", "lut", 0, 256), buffer("rq", "rq-table", 256, 48), buffer("bias", "bias", 304, 16),
                 buffer("h", "state", 0, 32), buffer("t0", "scratch", 32, 96), buffer("t1", "scratch", 64, 64)],
        inputs=[io("x", "float32", "int8", [1, 3, 2, 2], [64, 1, 32, 16], 0, 64, [0.5], [-1])],
        outputs=[io("y", "int8", "int8", [1, 3], [16, 1], 0, 16, [0.25, 0.5, 1.0], [0, 1, 2], 1)],
        entries=[debug(0, 2, "load", "Identity"), debug(2, 3, "", "Sigmoid")])

    def with_(base, **changes):
        d = dict(base)
        d.update(changes)
        return package(**d)

    def patch(b, at, data, seal=True):
        b = bytearray(b)
        b[at:at + len(data)] = data
        return reseal(b) if seal else bytes(b)

    valid = {
        "golden_minimal": minimal,
        "golden_sample": sample,
        "convnet": package(**convnet),
        "rank8_per_axis_uint8": package(
            [halt], regions=(0, 64, 16),
            inputs=[io("u", "float32", "uint8", [2, 1, 1, 1, 1, 1, 1, 3], [16, 0, 0, 0, 0, 0, 0, 1], 0, 32,
                       [0.5, 0.25], [0, 255], 0)],
            outputs=[io("i", "int64", "int32", [3], [4], 0, 16)]),
        # format version 1 (still read): kind 8 is an optional extra section there, not the placement section
        "empty_tensor_and_extras": package(
            [nop, halt], regions=(16, 16, 0), inputs=[io("e", "int8", "int8", [0, 7], [0, 0], 0, 0)],
            entries=[debug(0, 1, "n", "Nop")], extra=[(8, b"abc"), (1000, b""), (0xFFFFFFFF, bytes(70))], version=1),
        # the placement section (docs/package.md section 8): one host node refused by the lowering
        "placement_section": package(
            [halt], entries=[debug(0, 1, "r", "Relu")],
            placement=(3, [(1, 1, "sm", "Softmax", "lower-op", "Softmax on int8 is not lowered")])),
        # the numerics section (docs/package.md section 9): rounding half-even
        "numerics_section": package([halt], rounding=2),
        # issue 26: a small valid package whose scratch, input and output regions ask for 3 x 4 GiB (janusc refuses
        # to run it by its memory budget; the reader accepts it)
        "regions_12g": package([halt], regions=(1 << 32, 1 << 32, 1 << 32)),
        # format version 2 (still read): kind 9 is an optional extra section there, not the numerics section
        "version2_kind9_extra": package([halt], extra=[(9, b"\x07")], version=2),
        # a host section (docs/package.md section 6) whose graph feeds the program's input and reads its output
        "host_section": package(
            [halt], regions=(0, 16, 16),
            inputs=[io("q", "int8", "int8", [4], [1], 0, 16, [0.5], [0])],
            outputs=[io("y", "int8", "int8", [4], [1], 0, 16, [0.5], [0])],
            host=(1, "graph h {\n  input %x: float32[4]\n  input %y: int8[4] q(int8 s=0.5 zp=0)\n"
                     "  %q: int8[4] q(int8 s=0.5 zp=0) = QuantizeLinear(%x) {dtype=\"int8\", scale=[0.5f], "
                     "zero_point=[0]} @host\n"
                     "  %d: float32[4] = DequantizeLinear(%y) @host\n  output %d\n}\n")),
        # two segments (docs/package.md section 7) with the host's Relu between them
        "segments_section": package(
            [halt, halt], regions=(0, 0, 0),
            host=(0, "graph h {\n  input %x: float32[4]\n  %r: float32[4] = Relu(%x) @host\n  output %r\n}\n"),
            segments=[(1, 1, 0, 0)]),
        # valid bytes whose host graph reads the program's output in its prologue (graph::host_plan: host-order)
        "host_order_refused_by_host_plan": package(
            [halt], regions=(0, 0, 16), outputs=[io("y", "int8", "int8", [4], [1], 0, 16, [0.5], [0])],
            host=(1, "graph h {\n  input %y: int8[4] q(int8 s=0.5 zp=0)\n"
                     "  %d: float32[4] = DequantizeLinear(%y) @host\n  output %d\n}\n")),
    }
    seeds = {f"valid_{k}": b"\x00" + v for k, v in valid.items()}
    conv = package(**convnet)
    code_at, code_len = struct.unpack_from("<QQ", conv, 96 + 8)
    io_at = struct.unpack_from("<Q", conv, 96 + 3 * 32 + 8)[0]
    near = {
        "bad_magic": patch(conv, 0, b"JANUSPKX", seal=False),
        "newer_version": patch(conv, 8, struct.pack("<I", 4)),
        "truncated": conv[:-1],
        "truncated_header": conv[:50],
        "section_corrupted": patch(conv, code_at + 3, b"\xff", seal=False),
        "toolchain_mismatch": package([halt], isa_hash=bytes(8)),
        "unknown_required_section": package([halt], extra=[(10, b"x")], optional=False),
        "numerics_rounding": package([halt], rounding=3),
        "numerics_in_version_2": package([halt], rounding=0, version=2),
        "placement_index_order": package([halt], placement=(3, [(2, 0, "a", "Relu", "place-type", "float"),
                                                                (1, 0, "b", "Relu", "place-type", "float")])),
        "segments_without_host": package([halt, halt], segments=[(1, 0, 0, 0)]),
        # issue 26: a zero dim does not exempt the others (io-dim: more than 2^40 elements behind the 0)
        "io_zero_then_huge": package([halt], inputs=[io("e", "int8", "int8", [0, 1 << 32, 1 << 32], [0, 0, 0], 0, 0)]),
        "padding_nonzero": patch(conv, code_at + code_len + 1, b"\x01", seal=False),
        "section_moved": patch(conv, 96 + 3 * 32 + 8, struct.pack("<Q", io_at + 64)),
        "io_alias": with_(convnet, inputs=[io("x", "float32", "int8", [1, 3, 2, 2], [64, 1, 1, 16], 0, 64, [0.5],
                                             [-1])]),
        "state_overlap": with_(convnet, buffers=[buffer("h", "state", 0, 64), buffer("t0", "scratch", 32, 96)]),
        "debug_past_end": with_(convnet, entries=[debug(0, 9, "x", "Conv")]),
        "count_bounds": patch(conv, io_at, struct.pack("<I", 0x7FFFFFFF)),
        "no_halt": package([nop]),
        "host_control_char": package([halt], host=(0, "graph h {\n\t}\n")),
    }
    seeds.update({f"bad_{k}": b"\x00" + v for k, v in near.items()})
    generated = {
        "small": [1, 3, 2, 0, 5, 7, 2, 9, 1, 3, 4, 1, 2, 3],
        "buffers_io": [1, 11, 4, 1, 2, 3, 200, 5, 7, 9, 30, 5, 12, 3, 4, 5, 6, 7, 8, 9, 1, 2, 2, 1, 0, 4, 3, 2, 1, 2,
                       9, 2, 3, 1, 0, 2, 3, 4, 2, 1, 1, 3, 0, 2, 1, 1, 2, 2, 1, 0],
        "mutated": [1, 6, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 2, 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3,
                    2, 3, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5],
        "unsealed": [3, 5, 1, 2, 3, 4, 5, 6, 20, 2, 1, 3, 1, 2, 1, 1, 2, 3, 4, 4, 100, 0, 7, 3],
        "long": [1] + [(i * 37 + 11) % 256 for i in range(200)],
    }
    seeds.update({f"gen_{k}": bytes(v) for k, v in generated.items()})
    return seeds


def seeds_onnx_run():
    """fuzz/onnx_run.cpp: any bytes, a model. The committed ONNX fixtures (all of them: each imports and runs), the
    importer's refusals (tests/onnx/bad_import/) and the hostile models (tests/hostile/*.onnx: zero extents next to
    huge ones, 2^64 and 2^40 elements, a 4 GiB intermediate) and the names with control characters of tests/onnx/bad/,
    so mutations start from models that run and from the edges of the size policy and the memory budget."""
    root = FUZZ_DIR.parent / "tests"
    seeds = {}
    for p in sorted((root / "onnx" / "fixtures").glob("*.onnx")):
        seeds[p.name] = p.read_bytes()
    for p in sorted((root / "onnx" / "bad_import").glob("*.onnx")):
        seeds["bad_import_" + p.name] = p.read_bytes()
    for p in sorted((root / "hostile").glob("*.onnx")):
        seeds["hostile_" + p.name] = p.read_bytes()
    # names with a control character: this target found the first (a fuzzed qop_conv_matmul.onnx whose node name
    # reached the package writer, which refused it: exit 3); the reader refuses them now (onnx-name)
    for p in sorted((root / "onnx" / "bad").glob("*control_char.onnx")):
        seeds["bad_" + p.name] = p.read_bytes()
    return seeds


def seeds_package_run():
    """fuzz/package_run.cpp: any bytes, a package. The packages Janus compiled and keeps as goldens (tests/package/
    golden, v1, v2: programs with host sections and segments), the valid packages of the package_reader corpus
    (raw mode: without its mode byte) and the hostile package of tests/hostile/ (12 GiB of regions)."""
    root = FUZZ_DIR.parent / "tests"
    seeds = {}
    for sub in ("golden", "v1", "v2"):
        for p in sorted((root / "package" / sub).glob("*.jpk")):
            seeds[f"{sub}_{p.name}"] = p.read_bytes()
    for name, data in seeds_package_reader().items():
        if name.startswith("valid_") and data[:1] == b"\x00" and data[1:] not in seeds.values():
            seeds["reader_" + name] = data[1:]
    for p in sorted((root / "hostile").glob("*.jpk")):
        seeds["hostile_" + p.name] = p.read_bytes()
    return seeds


TARGETS = {
    "layout_views": seeds_layout_views,
    "requantize": seeds_requantize,
    "quantize_multiplier": seeds_quantize_multiplier,
    "op_infer": seeds_op_infer,
    "contract_engine": seeds_contract_engine,
    "vnpu_decode": seeds_vnpu_decode,
    "vnpu_asm": seeds_vnpu_asm,
    "vnpu_roundtrip": seeds_vnpu_roundtrip,
    "vnpu_sim": seeds_vnpu_sim,
    "emit_diff": seeds_emit_diff,
    "emit_diff_data": seeds_emit_diff_data,
    "onnx_reader": seeds_onnx_reader,
    "npy_reader": seeds_npy_reader,
    "ir_parse": seeds_ir_parse,
    "package_reader": seeds_package_reader,
    "onnx_run": seeds_onnx_run,
    "package_run": seeds_package_run,
    "graph_diff": seeds_graph_diff,
    "conformance_results": seeds_conformance_results,
}


def write_corpus(target, seeds):
    out = FUZZ_DIR / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(seeds.items()):
        (out / name).write_bytes(data)
    print(f"{target}: {len(seeds)} seeds in {out.relative_to(FUZZ_DIR.parent)}")


def main(argv):
    names = argv[1:] or list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        print(f"unknown target(s): {', '.join(unknown)}; known: {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    for name in names:
        write_corpus(name, TARGETS[name]())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
