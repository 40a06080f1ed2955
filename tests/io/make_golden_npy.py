#!/usr/bin/env python3
"""Writes the .npy test files of tests/io/ (deterministic: same numpy, same bytes).

    /usr/bin/python3 tests/io/make_golden_npy.py     # needs numpy (Debian: python3-numpy); run from anywhere

golden_npy/: arrays written by numpy itself (numpy.save, or numpy.lib.format.write_array for versions 2.0 and 3.0).
tests/io/npy.cpp knows the values and checks that read_npy reads them and that write_npy reproduces the
little-endian version 1.0 files byte for byte (the files were made with numpy 1.24.2; numpy >= 1.24 pads the
header for in-place growth of the first dimension, so an older numpy writes different bytes).

bad_npy/: malformed files, each breaking one rule; their exact error messages are in bad_npy/expected.txt (written
by hand; tests/io/npy_bad.cpp checks every file against it and that every file is listed). Most are built byte by
byte here; those that only numpy makes naturally (Fortran order, bool, float64, structured) come from numpy.save.
Files are (re)written, never deleted.
"""

import io
import struct
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def saved(array, version=None):
    """The bytes numpy writes for `array` (numpy.save when version is None)."""
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array, allow_pickle=False)
    else:
        np.lib.format.write_array(buf, array, version=version, allow_pickle=False)
    return buf.getvalue()


def golden():
    i32_4d = (np.arange(24, dtype=np.int64).reshape(1, 2, 3, 4) * 1000003 - 12000000).astype(np.int32)
    i32_4d[0, 0, 0, 0] = np.iinfo(np.int32).min
    i32_4d[0, 1, 2, 3] = np.iinfo(np.int32).max
    i32_2x3 = np.array([[-2147483648, -1, 0], [1, 65536, 2147483647]], dtype=np.int32)
    i64_3 = np.array([np.iinfo(np.int64).min, -2, np.iinfo(np.int64).max], dtype=np.int64)
    f32_2x3 = np.array([[1.5, -0.0, np.inf], [-np.inf, np.nan, 1e-45]], dtype=np.float32)
    f16_2x3 = np.array([[1.5, -0.0, np.inf], [-np.inf, np.nan, 2.0**-24]], dtype=np.float16)
    return {
        "i8_2x3.npy": saved(np.array([[-128, -1, 0], [1, 42, 127]], dtype=np.int8)),
        "u8_5.npy": saved(np.array([0, 1, 127, 128, 255], dtype=np.uint8)),
        "i32_2x3.npy": saved(i32_2x3),
        "i32_1x2x3x4.npy": saved(i32_4d),
        "i64_3.npy": saved(i64_3),
        "i64_scalar.npy": saved(np.array(-1234567890123, dtype=np.int64)),
        "f32_2x3.npy": saved(f32_2x3),
        "f32_scalar.npy": saved(np.array(3.25, dtype=np.float32)),
        "f32_0x3.npy": saved(np.zeros((0, 3), dtype=np.float32)),
        "u8_rank32.npy": saved(np.array([7, 9], dtype=np.uint8).reshape((1,) * 31 + (2,))),
        # 10 + len(header) is a multiple of 64 before padding, so numpy pads with a full 64 spaces.
        "u8_pad64_empty.npy": saved(np.zeros((0,) + (1,) * 7 + (10,) * 5, dtype=np.uint8)),
        # Big-endian and later format versions: read_npy must give the same arrays as the files above.
        "i32_2x3_be.npy": saved(i32_2x3.astype(">i4")),
        "i64_3_be.npy": saved(i64_3.astype(">i8")),
        "f32_2x3_be.npy": saved(f32_2x3.astype(">f4")),
        "i32_1x2x3x4_v2.npy": saved(i32_4d, version=(2, 0)),
        "i32_1x2x3x4_v3.npy": saved(i32_4d, version=(3, 0)),
        # int16, uint16, uint32 at their extremes; float16: 1.5, -0.0, inf, -inf, NaN, the smallest subnormal.
        "i16_3.npy": saved(np.array([-32768, -2, 32767], dtype=np.int16)),
        "u16_3.npy": saved(np.array([0, 1, 65535], dtype=np.uint16)),
        "u32_3.npy": saved(np.array([0, 2147483648, 4294967295], dtype=np.uint32)),
        "f16_2x3.npy": saved(f16_2x3),
        "f16_2x3_be.npy": saved(f16_2x3.astype(">f2")),
        "u16_3_be.npy": saved(np.array([0, 1, 65535], dtype=">u2")),
    }


def v1(header, data=b"", pad_to=64):
    """A version 1.0 file with `header` (str) padded like numpy, then `data`."""
    h = header.encode("latin1")
    padded = h + b" " * ((-(10 + len(h) + 1)) % pad_to) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(padded)) + padded + data


def v1_raw(header, data=b""):
    """A version 1.0 file whose header is exactly `header` (bytes), no padding."""
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data


def v3_raw(header):
    """A version 3.0 file (UTF-8 header) whose header is exactly `header` (bytes)."""
    return b"\x93NUMPY\x03\x00" + struct.pack("<I", len(header)) + header


def d(descr="'<i4'", fortran="False", shape="(2, 3)"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


def bad():
    good = saved(np.arange(6, dtype=np.int32).reshape(2, 3))
    return {
        "empty.npy": b"",
        "bad_magic.npy": b"\x93NUMPZ" + good[6:],
        "text_file.npy": b"descr,shape\n<i4,2 3\n",
        "short_preamble.npy": b"\x93NUMPY\x01",
        "short_length_v2.npy": b"\x93NUMPY\x02\x00\x10\x00",
        "version_4.npy": b"\x93NUMPY\x04\x00" + good[8:],
        "version_1_1.npy": b"\x93NUMPY\x01\x01" + good[8:],
        "header_past_end.npy": good[:8] + struct.pack("<H", 0x7676) + good[10:40],
        "header_past_end_v2.npy": b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFFF) + b"{'descr'",
        "empty_header.npy": v1_raw(b""),
        "header_not_dict.npy": v1("[('descr', '<i4')]"),
        "unterminated_dict.npy": v1("{'descr': '<i4', 'fortran_order': False"),
        "missing_colon.npy": v1("{'descr' '<i4', 'fortran_order': False, 'shape': (2, 3), }"),
        "missing_comma.npy": v1("{'descr': '<i4' 'fortran_order': False, 'shape': (2, 3), }"),
        "unterminated_string.npy": v1("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), 'shape}"),
        "escape_in_string.npy": v1("{'descr': '<i\\x34', 'fortran_order': False, 'shape': (2, 3), }"),
        "trailing_garbage.npy": v1(d() + " x"),
        "unknown_key.npy": v1("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), 'order': 'C', }"),
        "unknown_key_utf8_v3.npy": v3_raw("{'d\u00e9scr': '<i4'}\n".encode("utf8")),
        "duplicate_key.npy": v1("{'descr': '<i4', 'shape': (2, 3), 'fortran_order': False, 'shape': (2, 3), }"),
        "missing_shape.npy": v1("{'descr': '<i4', 'fortran_order': False, }"),
        "missing_descr.npy": v1("{'fortran_order': False, 'shape': (), }"),
        "fortran_order.npy": saved(np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3))),
        "fortran_not_bool.npy": v1(d(fortran="0")),
        "fortran_lowercase.npy": v1(d(fortran="false")),
        "bool.npy": saved(np.array([True, False])),
        "float64.npy": saved(np.array([1.0, 2.0])),
        "uint64.npy": saved(np.array([1, 2], dtype=np.uint64)),
        "unicode.npy": saved(np.array(["ab"])),
        "structured.npy": saved(np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")])),
        "descr_not_string.npy": v1(d(descr="4")),
        "no_byte_order.npy": v1(d(descr="'i4'"), bytes(24)),
        "pipe_i4.npy": v1(d(descr="'|i4'"), bytes(24)),
        "shape_int.npy": v1(d(shape="(3)"), bytes(12)),
        "shape_list.npy": v1(d(shape="[2, 3]"), bytes(24)),
        "shape_empty_comma.npy": v1(d(shape="(,)"), bytes(4)),
        "shape_float.npy": v1(d(shape="(2.0, 3)"), bytes(24)),
        "shape_leading_zero.npy": v1(d(shape="(02, 3)"), bytes(24)),
        "negative_dim.npy": v1(d(shape="(2, -3)")),
        "dim_overflow.npy": v1(d(shape="(99999999999999999999,)")),
        "size_overflow.npy": v1(d(shape="(4611686018427387904, 2)")),
        "size_overflow_empty.npy": v1(d(shape="(0, 4294967296, 4294967296)")),
        "data_too_short.npy": good[:-1],
        "data_too_long.npy": good + b"\x00\x00\x00\x00\x00",
        "data_missing_huge.npy": v1(d(descr="'|u1'", shape="(1000000000000,)"), b"\x01\x02"),
    }


def write(folder, files):
    out = HERE / folder
    out.mkdir(exist_ok=True)
    for name, data in sorted(files.items()):
        (out / name).write_bytes(data)
    print(f"{len(files)} files in {out}")


if __name__ == "__main__":
    write("golden_npy", golden())
    write("bad_npy", bad())
