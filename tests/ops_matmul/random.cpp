// MatMul and Gemm against a plain reference on random cases: "dequantize, multiply in double with plain loops over
// flat indices, quantize (round half to even, saturate)" for quantized operands, double loops for float32. The
// documented bound is 1 LSB (quantized) and a relative 2^-20 of sum |terms| (float); the test measures and prints
// the observed error distribution. Every case also runs scalar (OpContext{.simd=false}) and SIMD: identical bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "helpers.hpp"

using namespace janus;
using namespace janus::test;

namespace {

using Rng = std::mt19937;

int uniform(Rng& r, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(r); }
double uniform_real(Rng& r, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(r); }

std::vector<std::int64_t> dims(const Shape& s) {
    std::vector<std::int64_t> v;
    for (int k = 0; k < s.size(); ++k) v.push_back(s[k]);
    return v;
}

/// Row-major coordinates of flat index f in shape s.
std::vector<std::int64_t> coords(std::vector<std::int64_t> s, std::int64_t f) {
    std::vector<std::int64_t> c(s.size());
    for (std::size_t k = s.size(); k-- > 0;) {
        c[k] = f % s[k];
        f /= s[k];
    }
    return c;
}

std::int64_t flat(const std::vector<std::int64_t>& s, const std::vector<std::int64_t>& c) {
    std::int64_t f = 0;
    for (std::size_t k = 0; k < s.size(); ++k) f = f * s[k] + c[k];
    return f;
}

std::int64_t count(const std::vector<std::int64_t>& s) {
    std::int64_t n = 1;
    for (auto e : s) n *= e;
    return n;
}

/// One operand: its tensor and its real values (row-major over its stored shape).
struct Operand {
    Tensor t;
    std::vector<double> real;
    std::vector<float> scales;  ///< per channel along `axis` (or one)
    int axis = -1;
};

/// A random quantized operand of shape s and storage d, per-axis along `axis` (-1: per-tensor).
Operand quantized_operand(Rng& r, const Shape& s, DType d, int axis) {
    Operand o;
    o.axis = axis;
    const auto sd = dims(s);
    const std::int64_t channels = axis < 0 ? 1 : sd[static_cast<std::size_t>(axis)];
    std::vector<std::int32_t> zps;
    for (std::int64_t c = 0; c < channels; ++c) {
        o.scales.push_back(static_cast<float>(uniform_real(r, 0.005, 0.05)));
        zps.push_back(uniform(r, qmin(d), qmax(d)));
    }
    const auto q = axis < 0 ? qp(d, o.scales[0], zps[0]) : qp_axis(d, o.scales, zps, axis, s);
    std::vector<int> v(static_cast<std::size_t>(count(sd)));
    for (auto& x : v) x = uniform(r, qmin(d), qmax(d));
    if (d == DType::i8) o.t = Tensor::from<std::int8_t>(s, std::vector<std::int8_t>(v.begin(), v.end()), q);
    else o.t = Tensor::from<std::uint8_t>(s, std::vector<std::uint8_t>(v.begin(), v.end()), q);
    for (std::size_t f = 0; f < v.size(); ++f) {
        const auto c = coords(sd, static_cast<std::int64_t>(f));
        const std::size_t ch = axis < 0 ? 0 : static_cast<std::size_t>(c[static_cast<std::size_t>(axis)]);
        o.real.push_back(static_cast<double>(o.scales[ch]) * (v[f] - zps[ch]));
    }
    return o;
}

Operand float_operand(Rng& r, const Shape& s) {
    Operand o;
    std::vector<float> v(static_cast<std::size_t>(count(dims(s))));
    for (auto& x : v) x = static_cast<float>(uniform_real(r, -2.0, 2.0));
    o.t = Tensor::from<float>(s, v);
    for (float x : v) o.real.push_back(x);
    return o;
}

/// ONNX's rounding of a real result: round half to even, plus zero point, saturated.
int quantize_ref(double y, double s, int zp, DType d) {
    const double q = std::nearbyint(y / s) + zp;
    return static_cast<int>(std::clamp<double>(q, qmin(d), qmax(d)));
}

/// Error statistics over every compared output.
struct Stats {
    std::int64_t outputs = 0, off_by_one = 0, worst = 0;
    void add(int got, int want) {
        const std::int64_t e = std::abs(got - want);
        ++outputs;
        off_by_one += e == 1;
        worst = std::max(worst, e);
    }
};

/// Plain matmul reference in double: a, b in their STORED shapes, broadcast and 1-D-promoted by the test's own index
/// arithmetic; returns row-major values of the ONNX output shape.
std::vector<double> reference_matmul(const std::vector<double>& a, std::vector<std::int64_t> sa,
                                     const std::vector<double>& b, std::vector<std::int64_t> sb) {
    if (sa.size() == 1) sa.insert(sa.begin(), 1);
    if (sb.size() == 1) sb.push_back(1);
    const std::int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
    const std::size_t R = std::max(sa.size(), sb.size());
    std::vector<std::int64_t> batch(R - 2, 1);
    for (std::size_t j = 0; j + 2 < R; ++j) {
        const std::ptrdiff_t ka = static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(R - sa.size());
        const std::ptrdiff_t kb = static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(R - sb.size());
        if (ka >= 0) batch[j] = std::max(batch[j], sa[static_cast<std::size_t>(ka)]);
        if (kb >= 0) batch[j] = std::max(batch[j], sb[static_cast<std::size_t>(kb)]);
    }
    std::vector<double> y;
    for (std::int64_t fb = 0; fb < count(batch); ++fb) {
        const auto bc = coords(batch, fb);
        auto index_in = [&](const std::vector<std::int64_t>& s, std::int64_t i, std::int64_t j) {
            std::vector<std::int64_t> c(s.size());
            for (std::size_t k = 0; k + 2 < s.size(); ++k) {
                const std::size_t out_axis = k + (R - s.size());
                c[k] = s[k] == 1 ? 0 : bc[out_axis];
            }
            c[s.size() - 2] = i;
            c[s.size() - 1] = j;
            return static_cast<std::size_t>(flat(s, c));
        };
        for (std::int64_t m = 0; m < M; ++m)
            for (std::int64_t n = 0; n < N; ++n) {
                double acc = 0;
                for (std::int64_t k = 0; k < K; ++k) acc += a[index_in(sa, m, k)] * b[index_in(sb, k, n)];
                y.push_back(acc);
            }
    }
    return y;
}

/// Random broadcast-compatible MatMul shapes (ranks 1..4).
void random_matmul_shapes(Rng& r, Shape& sa, Shape& sb) {
    const int nb = uniform(r, 0, 2);
    std::vector<std::int64_t> batch;
    for (int k = 0; k < nb; ++k) batch.push_back(uniform(r, 1, 3));
    const std::int64_t M = uniform(r, 1, 5), K = uniform(r, 1, 9), N = uniform(r, 1, 19);
    auto batch_part = [&](Shape& s) {
        const int keep = uniform(r, 0, nb);
        for (int k = nb - keep; k < nb; ++k) s.push_back(uniform(r, 0, 2) == 0 ? 1 : batch[static_cast<std::size_t>(k)]);
    };
    sa = Shape{};
    sb = Shape{};
    batch_part(sa);
    batch_part(sb);
    const bool a1 = sa.empty() && uniform(r, 0, 3) == 0, b1 = sb.empty() && uniform(r, 0, 3) == 0;
    if (!a1) sa.push_back(M);
    sa.push_back(K);
    sb.push_back(K);
    if (!b1) sb.push_back(N);
}

Shape onnx_matmul_shape(const Shape& sa, const Shape& sb) {
    TensorType ta{DType::f32, sa, std::nullopt}, tb{DType::f32, sb, std::nullopt};
    const TensorType in[2] = {ta, tb};
    return MatMul::infer(in, {}).value().shape;
}

}  // namespace

TEST_CASE("MatMul quantized: random shapes, dtypes and per-axis choices within 1 LSB of dequantize-multiply-quantize") {
    Rng r(20261202);
    Stats st;
    for (int iter = 0; iter < 300; ++iter) {
        Shape sa, sb;
        random_matmul_shapes(r, sa, sb);
        const DType da = uniform(r, 0, 1) ? DType::i8 : DType::u8, db = uniform(r, 0, 1) ? DType::i8 : DType::u8;
        const int mode = uniform(r, 0, 2);  // 0 per-tensor, 1 per-row A, 2 per-column B
        const int axis_a = mode == 1 && sa.size() >= 2 ? sa.size() - 2 : -1;
        const int axis_b = mode == 2 && sb.size() >= 2 ? sb.size() - 1 : -1;
        const Operand a = quantized_operand(r, sa, da, axis_a), b = quantized_operand(r, sb, db, axis_b);
        const Shape ys = onnx_matmul_shape(sa, sb);
        const double K = static_cast<double>(sa[sa.size() - 1]);
        const float sy = static_cast<float>(a.scales[0] * b.scales[0] * std::sqrt(K) * uniform_real(r, 20, 300));
        const int zy = uniform(r, qmin(da) + 100, qmax(da) - 100);
        const auto out = qout(da, ys, sy, zy);
        CAPTURE(sa.str());
        CAPTURE(sb.str());
        CAPTURE(mode);
        auto y = matmul(a.t, b.t, out, true);
        auto ys_scalar = matmul(a.t, b.t, out, false);
        REQUIRE(y.ok());
        REQUIRE(ys_scalar.ok());
        CHECK(y->shape() == ys);
        CHECK(ints(*y) == ints(*ys_scalar));
        const auto ref = reference_matmul(a.real, dims(sa), b.real, dims(sb));
        const auto got = ints(*y);
        REQUIRE(got.size() == ref.size());
        for (std::size_t i = 0; i < ref.size(); ++i) {
            const int want = quantize_ref(ref[i], sy, zy, da);
            st.add(got[i], want);
            CHECK(std::abs(got[i] - want) <= 1);
        }
    }
    std::printf("MatMul quantized: %lld outputs, %lld off by 1 LSB, worst %lld LSB\n",
                static_cast<long long>(st.outputs), static_cast<long long>(st.off_by_one),
                static_cast<long long>(st.worst));
    CHECK(st.worst <= 1);
}

TEST_CASE("Gemm quantized: random transA/transB, alpha, C shapes and per-axis choices within 1 LSB") {
    Rng r(77);
    Stats st;
    const float alphas[] = {1.0f, 0.5f, 2.0f, -1.0f, -0.75f, 1.5f};
    for (int iter = 0; iter < 300; ++iter) {
        const std::int64_t M = uniform(r, 1, 6), K = uniform(r, 1, 9), N = uniform(r, 1, 19);
        GemmAttrs at;
        at.transA = uniform(r, 0, 1);
        at.transB = uniform(r, 0, 1);
        at.alpha = alphas[uniform(r, 0, 5)];
        const Shape sa = at.transA ? Shape{K, M} : Shape{M, K}, sb = at.transB ? Shape{N, K} : Shape{K, N};
        const DType da = uniform(r, 0, 1) ? DType::i8 : DType::u8, db = uniform(r, 0, 1) ? DType::i8 : DType::u8;
        const int mode = uniform(r, 0, 2);
        const int axis_a = mode == 1 ? (at.transA ? 1 : 0) : -1;
        const int axis_b = mode == 2 ? (at.transB ? 0 : 1) : -1;
        const Operand a = quantized_operand(r, sa, da, axis_a), b = quantized_operand(r, sb, db, axis_b);
        // C: none, [], [N], [1, N], [M, 1], [M, N]
        const int cs = uniform(r, 0, 5);
        const Shape c_shapes[] = {{}, {}, {N}, {1, N}, {M, 1}, {M, N}};
        const Shape csh = c_shapes[cs];
        std::vector<std::int32_t> cv(static_cast<std::size_t>(count(dims(csh))));
        for (auto& x : cv) x = uniform(r, -3000, 3000);
        at.beta = uniform(r, 0, 3) == 0 ? 0.0f : at.alpha;
        const float sy = static_cast<float>(a.scales[0] * b.scales[0] * std::sqrt(double(K)) * uniform_real(r, 20, 300));
        const int zy = uniform(r, qmin(da) + 100, qmax(da) - 100);
        const auto out = qout(da, {M, N}, sy, zy);
        std::vector<Tensor> in{a.t, b.t};
        if (cs > 0) in.push_back(i32(csh, cv));
        CAPTURE(iter);
        auto y = run_gemm(in, at, out, true);
        auto y_scalar = run_gemm(in, at, out, false);
        REQUIRE(y.ok());
        REQUIRE(y_scalar.ok());
        CHECK(ints(*y) == ints(*y_scalar));
        const auto got = ints(*y);
        for (std::int64_t m = 0; m < M; ++m)
            for (std::int64_t n = 0; n < N; ++n) {
                double acc = 0;
                for (std::int64_t k = 0; k < K; ++k) {
                    const auto ia = static_cast<std::size_t>(at.transA ? k * M + m : m * K + k);
                    const auto ib = static_cast<std::size_t>(at.transB ? n * K + k : k * N + n);
                    acc += a.real[ia] * b.real[ib];
                }
                double c = 0;
                if (cs > 0) {
                    const std::int64_t cm = csh.size() == 2 && csh[0] != 1 ? m : 0;
                    const std::int64_t cn = csh.size() >= 1 && csh[csh.size() - 1] != 1 ? n : 0;
                    const std::int64_t ci = csh.size() == 2 ? cm * csh[1] + cn : cn;
                    // implied scale of C: s_a[m] * s_b[n]
                    const double sa_m = a.scales[a.axis < 0 ? 0 : static_cast<std::size_t>(m)];
                    const double sb_n = b.scales[b.axis < 0 ? 0 : static_cast<std::size_t>(n)];
                    c = sa_m * sb_n * cv[static_cast<std::size_t>(ci)];
                }
                const double yr = static_cast<double>(at.alpha) * acc + static_cast<double>(at.beta) * c;
                const int want = quantize_ref(yr, sy, zy, da);
                const int g = got[static_cast<std::size_t>(m * N + n)];
                st.add(g, want);
                CHECK(std::abs(g - want) <= 1);
            }
    }
    std::printf("Gemm quantized: %lld outputs, %lld off by 1 LSB, worst %lld LSB\n",
                static_cast<long long>(st.outputs), static_cast<long long>(st.off_by_one),
                static_cast<long long>(st.worst));
    CHECK(st.worst <= 1);
}

TEST_CASE("MatMul and Gemm float: random cases match double loops; scalar and SIMD agree bit for bit") {
    Rng r(5);
    double worst_rel = 0;
    auto bits = [](const Tensor& t) {
        const auto v = t.to_vector<float>();
        std::vector<std::uint32_t> b(v.size());
        if (!v.empty()) std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
        return b;
    };
    for (int iter = 0; iter < 150; ++iter) {
        Shape sa, sb;
        random_matmul_shapes(r, sa, sb);
        const Operand a = float_operand(r, sa), b = float_operand(r, sb);
        auto y = matmul(a.t, b.t, std::nullopt, true);
        auto y_scalar = matmul(a.t, b.t, std::nullopt, false);
        REQUIRE(y.ok());
        REQUIRE(y_scalar.ok());
        CHECK(bits(*y) == bits(*y_scalar));
        const auto ref = reference_matmul(a.real, dims(sa), b.real, dims(sb));
        const auto got = y->to_vector<float>();
        REQUIRE(got.size() == ref.size());
        const double K = static_cast<double>(sa[sa.size() - 1]);
        for (std::size_t i = 0; i < ref.size(); ++i) {
            const double scale = K * 4.0;  // sum |terms| <= K * 2 * 2
            worst_rel = std::max(worst_rel, std::fabs(got[i] - ref[i]) / scale);
            CHECK(std::fabs(got[i] - ref[i]) <= scale * 0x1p-20);
        }
    }
    for (int iter = 0; iter < 150; ++iter) {
        const std::int64_t M = uniform(r, 1, 6), K = uniform(r, 1, 9), N = uniform(r, 1, 19);
        GemmAttrs at{static_cast<float>(uniform_real(r, -2, 2)), static_cast<float>(uniform_real(r, -2, 2)),
                     uniform(r, 0, 1), uniform(r, 0, 1)};
        const Shape sa = at.transA ? Shape{K, M} : Shape{M, K}, sb = at.transB ? Shape{N, K} : Shape{K, N};
        const Operand a = float_operand(r, sa), b = float_operand(r, sb);
        const int cs = uniform(r, 0, 4);
        const Shape c_shapes[] = {{}, {}, {N}, {M, 1}, {M, N}};
        const Operand c = float_operand(r, c_shapes[cs]);
        std::vector<Tensor> in{a.t, b.t};
        if (cs > 0) in.push_back(c.t);
        auto y = run_gemm(in, at, std::nullopt, true);
        auto y_scalar = run_gemm(in, at, std::nullopt, false);
        REQUIRE(y.ok());
        REQUIRE(y_scalar.ok());
        CHECK(bits(*y) == bits(*y_scalar));
        const auto got = y->to_vector<float>();
        for (std::int64_t m = 0; m < M; ++m)
            for (std::int64_t n = 0; n < N; ++n) {
                double acc = 0;
                for (std::int64_t k = 0; k < K; ++k)
                    acc += a.real[static_cast<std::size_t>(at.transA ? k * M + m : m * K + k)] *
                           b.real[static_cast<std::size_t>(at.transB ? n * K + k : k * N + n)];
                double cv = 0;
                if (cs == 1) cv = c.real[0];
                if (cs == 2) cv = c.real[static_cast<std::size_t>(n)];
                if (cs == 3) cv = c.real[static_cast<std::size_t>(m)];
                if (cs == 4) cv = c.real[static_cast<std::size_t>(m * N + n)];
                const double want = at.alpha * acc + at.beta * cv;
                const double scale = std::fabs(at.alpha) * K * 4.0 + std::fabs(at.beta) * 2.0 + 1e-30;
                const double g = got[static_cast<std::size_t>(m * N + n)];
                worst_rel = std::max(worst_rel, std::fabs(g - want) / scale);
                CHECK(std::fabs(g - want) <= scale * 0x1p-20);
            }
    }
    std::printf("MatMul/Gemm float: worst |error| / sum|terms| bound = %.3g (documented bound 2^-20 = %.3g)\n",
                worst_rel, 0x1p-20);
}
