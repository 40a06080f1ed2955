#!/usr/bin/env python3
"""Data for examples/vnpu/fc.s: a 16 x 64 -> 16 x 32 int8 fully connected layer with per-channel weight scales.

Writes input.bin (x, 16 x 64 int8), weights.bin (W, 64 x 32 int8, then the requantization table of docs/vnpu.md at
byte 2048) and expected.bin (y, 16 x 32 int8). y is computed here in plain Python integers, independently of the
C++ code: acc = sum_k (x - zp_x) W + bias, then TFLite's double rounding (saturating rounding doubling high multiply,
then rounding divide by a power of two), + zp_y, clamped. Deterministic: same bytes every run.
"""
import pathlib
import random
import struct

M, K, N = 16, 64, 32
ZP_X, ZP_Y = -3, 5
S_X, S_Y = 0.05, 0.11


def quantize_multiplier(r):
    """(multiplier, shift) with r = multiplier * 2^(shift - 31), multiplier in [2^30, 2^31) (numeric/multiplier.hpp)."""
    import math

    if r < 2.0 ** -32:
        return 0, 0
    frac, exp = math.frexp(r)
    m = math.floor(frac * 2 ** 31 + 0.5)  # ties away from zero (r > 0)
    if m == 2 ** 31:
        m //= 2
        exp += 1
    return m, exp


def srdhm(a, b):
    if a == b == -(2 ** 31):
        return 2 ** 31 - 1
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    q = abs(ab + nudge) // 2 ** 31
    return q if ab + nudge >= 0 else -q


def rounding_divide_by_pot(x, e):
    mask = (1 << e) - 1
    rem = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> e) + (1 if rem > threshold else 0)


def round_double(x, m, shift):
    left, right = max(shift, 0), max(-shift, 0)
    x = max(-(2 ** 31), min(2 ** 31 - 1, x << left))
    return rounding_divide_by_pot(srdhm(x, m), right)


def main():
    here = pathlib.Path(__file__).resolve().parent
    rng = random.Random(2026)
    x = [[rng.randint(-128, 127) for _ in range(K)] for _ in range(M)]
    w = [[rng.randint(-127, 127) for _ in range(N)] for _ in range(K)]
    s_w = [rng.uniform(0.002, 0.02) for _ in range(N)]
    bias = [rng.randint(-3000, 3000) for _ in range(N)]
    mult = [quantize_multiplier(S_X * s_w[c] / S_Y) for c in range(N)]
    lo, hi = ZP_Y, 127  # a fused ReLU: the code of real 0 is the output zero point
    table = struct.pack("<iiii", ZP_Y, lo, hi, 0)
    for c in range(N):
        table += struct.pack("<iiB7x", bias[c], mult[c][0], 31 - mult[c][1])
    y = []
    for i in range(M):
        for c in range(N):
            acc = sum((x[i][k] - ZP_X) * w[k][c] for k in range(K)) + bias[c]
            acc = (acc + 2 ** 31) % 2 ** 32 - 2 ** 31
            v = round_double(acc, *mult[c]) + ZP_Y
            y.append(max(lo, min(hi, v)))
    (here / "input.bin").write_bytes(bytes(v & 0xFF for row in x for v in row))
    (here / "weights.bin").write_bytes(bytes(v & 0xFF for row in w for v in row) + table)
    (here / "expected.bin").write_bytes(bytes(v & 0xFF for v in y))


if __name__ == "__main__":
    main()
