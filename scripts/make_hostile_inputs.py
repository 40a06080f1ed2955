#!/usr/bin/python3
"""Hostile inputs for janusc (issue 26), one class each: tests/hostile/, checked by tests/janusc/cli_test.sh.

    /usr/bin/python3 scripts/make_hostile_inputs.py           # rewrite the committed files (deterministic bytes)
    /usr/bin/python3 scripts/make_hostile_inputs.py --big DIR # the large generated ones (not committed), into DIR

Each file is tiny and asks for something huge; janusc must refuse it with exit 2 and the rule named here, within
bounded memory and time. tests/hostile/package_regions_12g.jpk is written by tests/package/hostile.cpp (it needs
the package writer's checksums); the hostile files the ONNX reader refuses on its own (zero_then_huge_dims.onnx / .pb,
packed_dims_100000.onnx) are in tests/onnx/bad/ with their exact errors (scripts/make_onnx_models.py).
"""

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "hostile"


def model(nodes, inputs, outputs, inits=(), opset=13):
    from onnx import helper
    g = helper.make_graph(nodes, "hostile", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m.SerializeToString()  # not checker-validated: the point is a model that lies about its sizes


def unshaped(name):
    from onnx import TensorProto, helper
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


def qdq_avgpool(n, k, pad_begin, pad_end, stride=1):
    """int8 [1, 1, n, n] -> DequantizeLinear -> AveragePool (count_include_pad=0) -> QuantizeLinear."""
    from onnx import TensorProto, helper
    scalar = lambda name, v: helper.make_tensor(name, TensorProto.FLOAT, [], [v])
    zero = helper.make_tensor("zp", TensorProto.INT8, [], [0])
    nodes = [helper.make_node("DequantizeLinear", ["x", "s_in", "zp"], ["xf"]),
             helper.make_node("AveragePool", ["xf"], ["yf"], kernel_shape=[k, k], strides=[stride, stride],
                              pads=[pad_begin, pad_begin, pad_end, pad_end], count_include_pad=0),
             helper.make_node("QuantizeLinear", ["yf", "s_out", "zp"], ["y"])]
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 1, n, n])],
                 [helper.make_tensor_value_info("y", TensorProto.INT8, None)],
                 [scalar("s_in", 0.5), scalar("s_out", 0.25), zero])


def expand_avgpool(n):
    """int8 [1, 1, 1, n] -> QDQ -> Expand to [1, 1, n, n] -> DequantizeLinear -> AveragePool 3x3 (pads 1) ->
    QuantizeLinear (the Expand moves quantized codes)."""
    from onnx import TensorProto, helper
    scalar = lambda name, v: helper.make_tensor(name, TensorProto.FLOAT, [], [v])
    nodes = [helper.make_node("DequantizeLinear", ["x", "s_in", "zp"], ["x0"]),
             helper.make_node("QuantizeLinear", ["x0", "s_in", "zp"], ["xq"]),
             helper.make_node("Expand", ["xq", "shape"], ["xe"]),
             helper.make_node("DequantizeLinear", ["xe", "s_in", "zp"], ["xf"]),
             helper.make_node("AveragePool", ["xf"], ["yf"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["yf", "s_out", "zp"], ["y"])]
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 1, 1, n])],
                 [helper.make_tensor_value_info("y", TensorProto.INT8, None)],
                 [scalar("s_in", 0.5), scalar("s_out", 0.25), helper.make_tensor("zp", TensorProto.INT8, [], [0]),
                  helper.make_tensor("shape", TensorProto.INT64, [4], [1, 1, n, n])])


def npy_int8(shape, fill):
    """A .npy file of int8 `fill` values (format 1.0, written by hand: no numpy needed)."""
    header = "{'descr': '|i1', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}, " for d in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    count = 1
    for d in shape:
        count *= d
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes([fill]) * count


def qdq_resize(rows):
    """int8 [1, 1, 2, 1] -> DequantizeLinear -> nearest Resize to [1, 1, rows, 1] -> QuantizeLinear."""
    from onnx import TensorProto, helper
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "zp"], ["xf"]),
             helper.make_node("Resize", ["xf", "", "", "sizes"], ["yf"], mode="nearest"),
             helper.make_node("QuantizeLinear", ["yf", "s", "zp"], ["y"])]
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 1, 2, 1])],
                 [helper.make_tensor_value_info("y", TensorProto.INT8, None)],
                 [helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]),
                  helper.make_tensor("zp", TensorProto.INT8, [], [0]),
                  helper.make_tensor("sizes", TensorProto.INT64, [4], [1, 1, rows, 1])])


def files():
    """The committed files (python3-onnx: /usr/bin/python3 on Debian)."""
    from onnx import TensorProto, helper
    p62, p32, p20, p15 = 1 << 62, 1 << 32, 1 << 20, 1 << 15
    empty_huge = helper.make_tensor("w", TensorProto.FLOAT, [0, p62, p62], vals=b"", raw=True)
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [0])
    return {
        # issue 26: a zero dim exempted the others; ReduceSum over axis 0 then sized [1, 2^62, 2^62] (SIGSEGV)
        "reduce_zero_huge.onnx": model([helper.make_node("ReduceSum", ["w", "axes"], ["y"], keepdims=1)], [],
                                       [unshaped("y")], [empty_huge, axes]),
        # a graph input of 2^64 elements: the element count wrapped to 0 and verify read past a 0-byte buffer
        "input_2e64.onnx": model([helper.make_node("Relu", ["x"], ["y"])],
                                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [p32, p32])], [unshaped("y")]),
        # a graph input of 2^40 elements (4 TiB of float32): valid shape, but verify must not synthesize it
        "input_4tib.onnx": model([helper.make_node("Relu", ["x"], ["y"])],
                                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [p20, p20])], [unshaped("y")]),
        # an intermediate of 2^30 float32 elements (4 GiB) within the size policy, made by a 1-element constant and an
        # Expand: run --engine ref and verify allocated it (the reference engine holds every value)
        "expand_4gib.onnx": model([helper.make_node("Expand", ["c", "shape"], ["y"])], [], [unshaped("y")],
                                  [helper.make_tensor("c", TensorProto.FLOAT, [1], [1.0]),
                                   helper.make_tensor("shape", TensorProto.INT64, [2], [p15, p15])]),
        # a QDQ AveragePool over a 16384 x 16384 int8 input: its plan needs only the denominators 4, 6 and 9, but it
        # allocated one per output position (2 GB and 11 s in janusc compile); compile must stay small and fast
        "avgpool_16k.onnx": qdq_avgpool(16384, 3, 1, 1),
        # per axis, windows holding 1 and 2^15 - 1 input positions: counts 1 .. 2^30 would need an 8 GiB multiplier
        # table (rule pool-count-table)
        "avgpool_table_2e30.onnx": qdq_avgpool(1 << 15, 1 << 15, (1 << 15) - 1, 1, stride=1 << 15),
        # an 11 KB input expanded to 11264 x 11264 int8 (121 MiB) and average-pooled: the values fit the 1 GiB budget,
        # but the pool's kernel scratch (count and accumulator tensors, 4 bytes an element) took the run to 1.3 GB;
        # the budget now charges the largest kernel's scratch bound (ops::kernel_scratch_bound)
        "avgpool_expand_11k.onnx": expand_avgpool(11264),
        "avgpool_expand_11k.x.npy": npy_int8([1, 1, 1, 11264], 5),
        # a nearest Resize to 2^22 rows: one pixel copy per row, 25 M instructions (4 GB, 25 s, a 200 MB package);
        # the lowering refuses an output extent above the program cap before making its tables (program-size)
        "resize_4m_rows.onnx": qdq_resize(1 << 22),
        # 2^20 rows pass that first check: the builder's own cap stops the emission at 2^20 instructions
        "resize_1m_rows.onnx": qdq_resize(1 << 20),
        # 4 instructions: 2^28 fills of 64 KiB (16 TiB of memset, 10^12 cycles)
        "sim_dma_loop.s": "; issue 26: nested loops around one large dma.fill (janusc sim: cycle-limit / work-limit)\n"
                          "loop 16384, 2\nloop 16384, 1\ndma.fill r0, 0, 65536\nhalt\n",
        # 2^28 matrix products of 16 x 256 x 256 (2^48 MACs)
        "sim_mac_loop.s": "; issue 26: nested loops around one large mac.mm (janusc sim: work-limit)\n"
                          "li r1, 0x80000\nli r3, 0x10000\nmac.cfg 16, 256, 256, 256\nloop 16384, 2\nloop 16384, 1\n"
                          "mac.mm r1, r0, r3, 0\nhalt\n",
        # 2^28 vector maxima of 65536 lanes (2^44 VEC element operations)
        "sim_vec_loop.s": "; issue 26: nested loops around one large vec.max (janusc sim: cycle-limit, work-limit)\n"
                          "li r2, 0x10000\nloop 16384, 2\nloop 16384, 1\nvec.max r1, r1, r2, 65536\nhalt\n",
        # 2^28 SEQ steps that dispatch nothing: only the cycle limit stops them
        "sim_seq_loop.s": "; issue 26: nested loops of SEQ steps alone (janusc sim: cycle-limit)\n"
                          "loop 16384, 2\nloop 16384, 1\nnop\nhalt\n",
    }


def big_files():
    """Files of about 1 MiB, generated where they are needed (tests/janusc/cli_test.sh), not committed; plain bytes,
    so any python3 writes them."""
    # a node with 150,000 small named attributes (7 bytes each, decoded into about 260 bytes each): more than the
    # decoder's budget of 16 x the file size + 16 MiB
    attr = b"\x2a\x05" + b"\x0a\x01a" + b"\x18\x01"  # NodeProto.attribute {name "a", i 1} (IR-1 style: no type)
    node = b"\x22\x04Relu" + attr * 150_000
    graph = b"\x0a" + _varint(len(node)) + node  # GraphProto.node
    opset = b"\x42\x02\x10\x0d"  # ModelProto.opset_import {version 13}
    return {"many_attributes.onnx": b"\x08\x07" + b"\x3a" + _varint(len(graph)) + graph + opset}


def _varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big", metavar="DIR", help="write the large generated files to DIR instead")
    args = ap.parse_args()
    out, made = (Path(args.big), big_files()) if args.big else (OUT, files())
    out.mkdir(parents=True, exist_ok=True)
    for name, data in made.items():
        (out / name).write_bytes(data.encode() if isinstance(data, str) else data)


if __name__ == "__main__":
    main()
