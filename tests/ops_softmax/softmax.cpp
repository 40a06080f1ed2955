// Softmax (ops/softmax.hpp): golden hand-computed cases per rule (uniform row, dominant element, axis 0/1/2/-1 of a
// 3-D tensor, opset 13 one-axis semantics, scale extremes), the quantized error bound derived by the plan checked and
// measured against "dequantize, softmax in double, quantize", rows summing to ~1, scalar/SIMD bit identity, strided
// views, and every error rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <janus/layout/view.hpp>
#include <janus/ops/softmax.hpp>
#include <support/check_rule.hpp>

using namespace janus;
using namespace janus::ops;

static_assert(Op<Softmax>, "Softmax must satisfy the Op concept (registry.hpp all_ops)");

namespace {

numeric::QuantParams quant(DType d, float s, std::int32_t zp) { return numeric::make_quant(d, s, zp).value(); }

Result<Tensor> softmax(const Tensor& x, std::int64_t axis, std::optional<TensorType> out = std::nullopt,
                       bool simd = true) {
    return call<Softmax>({x}, SoftmaxAttrs{axis}, std::move(out), OpContext{simd});
}

TensorType qtype(const Tensor& x, DType d, float s, std::int32_t zp) { return {d, x.shape(), quant(d, s, zp)}; }

std::vector<std::int32_t> codes(const Tensor& t) {
    std::vector<std::int32_t> v;
    if (t.dtype == DType::i8)
        for (auto c : t.to_vector<std::int8_t>()) v.push_back(c);
    else
        for (auto c : t.to_vector<std::uint8_t>()) v.push_back(c);
    return v;
}

/// Rows of a contiguous row-major shape along `axis`: for each row, the flat indices of its elements in order.
/// Written as outer x extent x inner (not through the kernel's keep-dims / stride-0 machinery).
std::vector<std::vector<std::int64_t>> rows_of(const Shape& s, int axis) {
    std::int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; ++k) outer *= s[k];
    for (int k = axis + 1; k < s.size(); ++k) inner *= s[k];
    const std::int64_t n = s[axis];
    std::vector<std::vector<std::int64_t>> rows;
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            std::vector<std::int64_t> r;
            for (std::int64_t j = 0; j < n; ++j) r.push_back((o * n + j) * inner + i);
            rows.push_back(std::move(r));
        }
    return rows;
}

/// Softmax of a row of reals, in double (max-subtracted, as the definition).
std::vector<double> softmax_double(const std::vector<double>& x) {
    const double m = *std::max_element(x.begin(), x.end());
    std::vector<double> e;
    double s = 0;
    for (double v : x) e.push_back(std::exp(v - m)), s += e.back();
    for (auto& v : e) v /= s;
    return e;
}

/// The quantized reference: dequantize, softmax in double, quantize (round half to even, saturate).
std::vector<std::int32_t> reference_quant(const std::vector<std::int32_t>& q, const Shape& shape, int axis,
                                          const numeric::QuantParams& qi, const numeric::QuantParams& qo) {
    std::vector<std::int32_t> y(q.size());
    const double lo = qo.dtype == DType::i8 ? -128 : 0, hi = qo.dtype == DType::i8 ? 127 : 255;
    for (const auto& row : rows_of(shape, axis)) {
        std::vector<double> xr;
        for (auto i : row)
            xr.push_back(static_cast<double>(qi.scale()) * (q[static_cast<std::size_t>(i)] - qi.zero_point()));
        const auto p = softmax_double(xr);
        for (std::size_t j = 0; j < row.size(); ++j) {
            const double v = std::nearbyint(p[j] / static_cast<double>(qo.scale())) + qo.zero_point();
            y[static_cast<std::size_t>(row[j])] = static_cast<std::int32_t>(std::clamp(v, lo, hi));
        }
    }
    return y;
}

template <class T>
Tensor random_quant(std::mt19937& rng, const Shape& s, const numeric::QuantParams& q) {
    std::uniform_int_distribution<int> d(std::is_same_v<T, std::int8_t> ? -128 : 0,
                                         std::is_same_v<T, std::int8_t> ? 127 : 255);
    std::vector<T> v(static_cast<std::size_t>(element_count(s)));
    for (auto& e : v) e = static_cast<T>(d(rng));
    return Tensor::from<T>(s, v, q);
}

bool same_bytes(const Tensor& a, const Tensor& b) {
    return a.dtype == b.dtype && a.shape() == b.shape() && *a.storage == *b.storage;
}

}  // namespace

// ---- Golden cases --------------------------------------------------------------------------------------------

TEST_CASE("uniform row: every element is 1/n (float exact, quantized exact codes)") {
    const Tensor xf = Tensor::from<float>({2, 5}, std::vector<float>(10, 3.25f));
    for (float v : softmax(xf, -1).value().to_vector<float>()) CHECK(v == 0.2f);  // 1 / 5, one correctly rounded div

    // int8, output 1/256 zp -128: 1/4 -> 64 - 128 = -64, 1/3 -> round(85.33) - 128 = -43, 1/1 -> 256 saturates.
    const auto qi = quant(DType::i8, 0.1f, 3);
    const Tensor x4 = Tensor::from<std::int8_t>({3, 4}, std::vector<std::int8_t>(12, -7), qi);
    for (auto c : codes(softmax(x4, 1, qtype(x4, DType::i8, 1.0f / 256, -128)).value())) CHECK(c == -64);
    const Tensor x3 = Tensor::from<std::int8_t>({3}, {100, 100, 100}, qi);
    for (auto c : codes(softmax(x3, 0, qtype(x3, DType::i8, 1.0f / 256, -128)).value())) CHECK(c == -43);
    const Tensor x1 = Tensor::from<std::int8_t>({4, 1}, {1, 2, 3, 4}, qi);
    for (auto c : codes(softmax(x1, 1, qtype(x1, DType::i8, 1.0f / 256, -128)).value())) CHECK(c == 127);
    // uint8 -> uint8, 1/256 zp 0: 1/4 -> 64
    const Tensor xu = Tensor::from<std::uint8_t>({4}, {9, 9, 9, 9}, quant(DType::u8, 0.5f, 128));
    for (auto c : codes(softmax(xu, 0, qtype(xu, DType::u8, 1.0f / 256, 0)).value())) CHECK(c == 64);
}

TEST_CASE("one dominant element takes all the mass; the rest go to the output zero point") {
    const Tensor xf = Tensor::from<float>({4}, {0.0f, -50.0f, -50.0f, -50.0f});
    const auto yf = softmax(xf, 0).value().to_vector<float>();
    CHECK(yf[0] == 1.0f);
    for (int k = 1; k < 4; ++k) CHECK(yf[k] == doctest::Approx(std::exp(-50.0)).epsilon(1e-5));

    // s_x = 0.5: d = -255 gives exp(-127.5) ~ 0; p = 1 -> 256 - 128 saturates to 127, the others to -128.
    const Tensor xq = Tensor::from<std::int8_t>({1, 4}, {-128, 127, -128, -128}, quant(DType::i8, 0.5f, 0));
    CHECK(codes(softmax(xq, -1, qtype(xq, DType::i8, 1.0f / 256, -128)).value()) ==
          std::vector<std::int32_t>{-128, 127, -128, -128});
    const Tensor xu = Tensor::from<std::uint8_t>({4}, {0, 0, 255, 0}, quant(DType::u8, 0.5f, 7));
    CHECK(codes(softmax(xu, 0, qtype(xu, DType::u8, 1.0f / 256, 0)).value()) ==
          std::vector<std::int32_t>{0, 0, 255, 0});
}

TEST_CASE("axis 0, 1, 2 and -1 of a 3-D tensor normalize along that one axis (opset 13)") {
    // Values in {0, 1} with s_x = ln 3: a pair (0, 1) along the axis has softmax (1/4, 3/4), an equal pair (1/2, 1/2).
    // Output 1/256 zp -128: 1/4 -> -64, 3/4 -> 64, 1/2 -> 0. Hand-computed per axis from the pairs.
    const std::vector<std::int8_t> v{0, 1, 1, 1, 0, 0, 1, 0};  // x[i][j][k], shape [2, 2, 2]
    const Tensor xq = Tensor::from<std::int8_t>({2, 2, 2}, v, quant(DType::i8, static_cast<float>(std::log(3.0)), 0));
    const auto out = qtype(xq, DType::i8, 1.0f / 256, -128);
    const std::vector<std::int32_t> axis0{0, 64, 0, 64, 0, -64, 0, -64};
    const std::vector<std::int32_t> axis1{-64, 0, 64, 0, -64, 0, 64, 0};
    const std::vector<std::int32_t> axis2{-64, 64, 0, 0, 0, 0, 64, -64};
    CHECK(codes(softmax(xq, 0, out).value()) == axis0);
    CHECK(codes(softmax(xq, 1, out).value()) == axis1);
    CHECK(codes(softmax(xq, 2, out).value()) == axis2);
    CHECK(codes(softmax(xq, -1, out).value()) == axis2);
    CHECK(codes(softmax(xq, -3, out).value()) == axis0);

    // float: the same tensor with real values {0, ln 3}
    std::vector<float> vf;
    for (auto c : v) vf.push_back(c == 0 ? 0.0f : static_cast<float>(std::log(3.0)));
    const Tensor xf = Tensor::from<float>({2, 2, 2}, vf);
    auto prob = [](std::int32_t code) { return (code + 128) / 256.0; };
    for (auto [axis, expect] : {std::pair{0, axis0}, {1, axis1}, {2, axis2}, {-1, axis2}}) {
        const auto y = softmax(xf, axis).value().to_vector<float>();
        for (std::size_t k = 0; k < y.size(); ++k) CHECK(y[k] == doctest::Approx(prob(expect[k])).epsilon(1e-6));
    }
}

TEST_CASE("opset 13: axis 1 of a rank-3 input does not flatten the trailing axes (opset < 13 did)") {
    std::vector<float> v(24);
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = std::sin(static_cast<float>(k));
    const Tensor x = Tensor::from<float>({2, 3, 4}, v);
    const auto y = softmax(x, 1).value().to_vector<float>();
    for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 4; ++k) {  // opset 13: each (i, :, k) sums to 1
            double s = 0;
            for (int j = 0; j < 3; ++j) s += y[static_cast<std::size_t>(i * 12 + j * 4 + k)];
            CHECK(s == doctest::Approx(1.0).epsilon(1e-6));
        }
    for (int i = 0; i < 2; ++i) {  // opset < 13 would make each flattened (i, :, :) sum to 1; here it sums to 4
        double s = 0;
        for (int jk = 0; jk < 12; ++jk) s += y[static_cast<std::size_t>(i * 12 + jk)];
        CHECK(s == doctest::Approx(4.0).epsilon(1e-6));
    }
}

TEST_CASE("scale extremes: a tiny input scale flattens the row, a huge one selects the maxima") {
    const Tensor tiny = Tensor::from<std::int8_t>({5}, {-128, -3, 0, 90, 127}, quant(DType::i8, 1e-6f, 0));
    // exp(1e-6 * d) ~ 1: p = 1/5 -> round(51.2) - 128 = -77
    for (auto c : codes(softmax(tiny, 0, qtype(tiny, DType::i8, 1.0f / 256, -128)).value())) CHECK(c == -77);
    const Tensor huge = Tensor::from<std::int8_t>({4}, {3, 5, 5, 1}, quant(DType::i8, 1000.0f, 0));
    // exp(-2000) = 0: the two maxima share 1/2 -> 0; the others -> -128
    CHECK(codes(softmax(huge, 0, qtype(huge, DType::i8, 1.0f / 256, -128)).value()) ==
          std::vector<std::int32_t>{-128, 0, 0, -128});
    // A coarse output scale 0.1 (zp 0): 1/2 -> 5, 0 -> 0
    CHECK(codes(softmax(huge, 0, qtype(huge, DType::i8, 0.1f, 0)).value()) == std::vector<std::int32_t>{0, 5, 5, 0});
    // Any caller output quantization: int8 input, scale 1/128 zp -100: 1/2 -> 64 - 100 = -36
    CHECK(codes(softmax(huge, 0, qtype(huge, DType::i8, 1.0f / 128, -100)).value()) ==
          std::vector<std::int32_t>{-100, -36, -36, -100});
}

TEST_CASE("the plan: table entry 255 is the unit, N * unit fits int32, and the formats of the header") {
    const Tensor x =
        Tensor::from<std::int8_t>({2, 1000}, std::vector<std::int8_t>(2000, 0), quant(DType::i8, 0.05f, 0));
    const auto p = Softmax::plan(std::array{type_of(x)}, {-1}, qtype(x, DType::i8, 1.0f / 256, -128), janus::numeric::default_rounding_mode).value();
    CHECK(p.extent == 1000);
    CHECK(p.unit == 2147483);  // floor((2^31 - 1) / 1000)
    CHECK(p.table->values[255] == p.unit);
    CHECK(p.table->values[0] == std::llround(std::exp(0.05 * -255) * 2147483));
    CHECK(p.s1 == 21 - 15);  // floor(log2 2147483) = 21
    CHECK(p.k == 36);
    CHECK(p.sum_range == numeric::Interval{2147483, 2147483000});
    CHECK(p.recip_range.hi == 32000);  // round(2^36 / 2147483)
    CHECK(p.recip_range.lo == 32);     // round(2^36 / 2147483000)
    CHECK(p.bound_lsb == 1);
    CHECK(expr::to_string(Softmax::output_expr<std::int8_t>(p)) ==
          "sat<int8>(add(rq<double>(mul(rshift(in0:int32, 6), in1:int32), 1073741824*2^-52), -128))");
}

// ---- Randomized: bound, sums, SIMD identity --------------------------------------------------------------------

TEST_CASE("quantized error stays within the derived bound; measured maximum reported; rows sum to ~1") {
    std::mt19937 rng(20261202);
    int worst = 0, cases = 0;
    double worst_sum = 0;  // max |sum of dequantized outputs - 1| / (N * s_y)
    double worst_sum_lsb = 0;  // max |sum of dequantized outputs - 1| / s_y
    std::int64_t elements = 0, off = 0;
    const std::vector<std::int64_t> long_rows{1000, 2048, 3000, 4096, 5000};
    for (int c = 0; c < 260; ++c) {
        // shape: rank 1-3 with small extents, or one long row (structured: a max and N-1 copies of one value)
        Shape s;
        const bool long_row = c % 13 == 0;
        if (long_row) {
            s = Shape{1, long_rows[static_cast<std::size_t>(c / 13) % long_rows.size()]};
        } else {
            const int rank = 1 + c % 3;
            for (int k = 0; k < rank; ++k) s.push_back(std::uniform_int_distribution<std::int64_t>(1, 12)(rng));
        }
        const int axis = long_row ? 1 : std::uniform_int_distribution<int>(0, s.size() - 1)(rng);
        const DType din = c % 2 ? DType::i8 : DType::u8, dout = (c / 2) % 2 ? DType::i8 : DType::u8;
        const float s_x = static_cast<float>(std::pow(10.0, std::uniform_real_distribution<double>(-3, 1)(rng)));
        const auto qi = quant(din, s_x, std::uniform_int_distribution<int>(din == DType::i8 ? -128 : 0,
                                                                          din == DType::i8 ? 127 : 255)(rng));
        const bool tflite = c % 3 != 0;
        const float s_y = tflite ? 1.0f / 256 : std::uniform_real_distribution<float>(1.0f / 250, 0.05f)(rng);
        const std::int32_t zp_y = tflite ? (dout == DType::i8 ? -128 : 0)
                                         : std::uniform_int_distribution<int>(dout == DType::i8 ? -128 : 0,
                                                                              dout == DType::i8 ? 0 : 128)(rng);
        const auto qo = quant(dout, s_y, zp_y);
        Tensor x = din == DType::i8 ? random_quant<std::int8_t>(rng, s, qi) : random_quant<std::uint8_t>(rng, s, qi);
        if (long_row) {  // worst case for the table rounding: every term the same rounding error
            const int lo = din == DType::i8 ? -128 : 0;
            const int other = lo + std::uniform_int_distribution<int>(0, 254)(rng);
            for (std::int64_t j = 0; j < s[1]; ++j) {
                const int v = j == 0 ? lo + 255 : other;
                if (din == DType::i8) x.set<std::int8_t>({0, j}, static_cast<std::int8_t>(v));
                else x.set<std::uint8_t>({0, j}, static_cast<std::uint8_t>(v));
            }
        }
        const TensorType out{dout, s, qo};
        auto plan = Softmax::plan(std::array{type_of(x)}, {axis}, out, janus::numeric::default_rounding_mode);
        if (!plan.ok()) {  // only the documented refusal: the derived bound above max_error_lsb
            CHECK(plan.error().rule == "softmax-error-bound");
            CHECK(s[axis] > 3000);
            continue;
        }
        // call<> insists on the input's dtype; the kernel itself takes any int8/uint8 output.
        const Tensor y = Softmax::run(std::span<const Tensor>(&x, 1), {axis}, out, OpContext{true}).value();
        const Tensor y_scalar = Softmax::run(std::span<const Tensor>(&x, 1), {axis}, out, OpContext{false}).value();
        CHECK(same_bytes(y, y_scalar));
        const auto got = codes(y);
        const auto ref = reference_quant(codes(x), s, axis, qi, qo);
        int err = 0;
        for (std::size_t k = 0; k < got.size(); ++k) err = std::max(err, std::abs(got[k] - ref[k]));
        for (std::size_t k = 0; k < got.size(); ++k) off += got[k] != ref[k] ? 1 : 0;
        CHECK_MESSAGE(err <= plan->bound_lsb, "shape ", s.str(), " axis ", axis, " s_x ", s_x, " s_y ", s_y);
        worst = std::max(worst, err);
        for (const auto& row : rows_of(s, axis)) {
            double sum = 0;
            for (auto i : row) sum += s_y * (got[static_cast<std::size_t>(i)] - zp_y);
            const bool saturates = 1.0 / s_y + zp_y > (dout == DType::i8 ? 127 : 255);
            if (!saturates) {
                const double n = static_cast<double>(row.size());
                CHECK((std::abs(sum - 1.0) <= n * (plan->bound_lsb + 0.5) * s_y));
                worst_sum = std::max(worst_sum, std::abs(sum - 1.0) / (n * s_y));
                worst_sum_lsb = std::max(worst_sum_lsb, std::abs(sum - 1.0) / s_y);
            }
        }
        ++cases;
        elements += x.elements();
    }
    MESSAGE("quantized softmax: ", cases, " cases, ", elements, " elements, max |y - y_ref| = ", worst,
            " LSB (", off, " outputs differ from y_ref); max |sum(y) - 1| = ", worst_sum, " * N * s_y (",
            worst_sum_lsb, " * s_y)");
    CHECK(cases > 200);
}

TEST_CASE("long rows, worst case for the table: one max and N-1 equal values at every distance d = -1..-255") {
    // Every small term carries the same table rounding error, so the sum's error is systematic (N - 1 times one
    // entry's error): the case the bound's N / (2U) term describes. Row r holds the max and N - 1 copies of
    // max - r - 1.
    for (const auto& [n, s_x] : {std::pair<std::int64_t, float>{4096, 0.02f}, {4096, 0.05f}, {2048, 0.01f}}) {
        const Shape s{255, n};
        std::vector<std::int8_t> v(static_cast<std::size_t>(255 * n));
        for (std::int64_t r = 0; r < 255; ++r)
            for (std::int64_t j = 0; j < n; ++j)
                v[static_cast<std::size_t>(r * n + j)] = static_cast<std::int8_t>(j == r % n ? 127 : 127 - r - 1);
        const auto qi = quant(DType::i8, s_x, 0), qo = quant(DType::i8, 1.0f / 256, -128);
        const Tensor x = Tensor::from<std::int8_t>(s, v, qi);
        const auto plan = Softmax::plan(std::array{type_of(x)}, {1}, TensorType{DType::i8, s, qo}, janus::numeric::default_rounding_mode).value();
        const Tensor y = softmax(x, 1, TensorType{DType::i8, s, qo}).value();
        const auto* got = reinterpret_cast<const std::int8_t*>(y.data());  // contiguous output
        // The reference in closed form (two distinct values per row): p_max = 1 / (1 + (N - 1) t),
        // p_other = t / (1 + (N - 1) t), t = exp(s_x d); quantized half to even.
        auto q = [](double p) { return static_cast<int>(std::clamp(std::nearbyint(p * 256.0) - 128, -128.0, 127.0)); };
        int err = 0;
        for (std::int64_t r = 0; r < 255; ++r) {
            const double t = std::exp(static_cast<double>(s_x) * static_cast<double>(-r - 1));
            const double den = 1.0 + static_cast<double>(n - 1) * t;
            for (std::int64_t j = 0; j < n; ++j) {
                const int ref = j == r % n ? q(1.0 / den) : q(t / den);
                err = std::max(err, std::abs(got[r * n + j] - ref));
            }
        }
        CHECK(err <= plan.bound_lsb);
        MESSAGE("N = ", n, ", s_x = ", s_x, ": unit ", plan.unit, ", eps ", plan.eps, " (", plan.eps * 256,
                " LSB), derived bound ", plan.bound_lsb, " LSB, measured ", err, " LSB");
    }
}

TEST_CASE("float32 matches the double formula; rows sum to 1; scalar and SIMD agree bit for bit") {
    std::mt19937 rng(7);
    double worst_rel = 0, worst_sum = 0;
    int bad = 0;  // elements or rows outside the tolerance (one CHECK at the end keeps the sanitizer run short)
    for (int c = 0; c < 120; ++c) {
        Shape s;
        const int rank = 1 + c % 3;
        for (int k = 0; k < rank; ++k)  // one long axis (up to 300) every tenth case
            s.push_back(std::uniform_int_distribution<std::int64_t>(1, c % 10 == 0 && k == 0 ? 300 : 11)(rng));
        const int axis = std::uniform_int_distribution<int>(-rank, rank - 1)(rng);
        const int ax = axis < 0 ? axis + rank : axis;
        const double spread = std::pow(10.0, std::uniform_real_distribution<double>(-2, 2)(rng));
        std::vector<float> v(static_cast<std::size_t>(element_count(s)));
        for (auto& e : v) e = static_cast<float>(std::uniform_real_distribution<double>(-spread, spread)(rng));
        const Tensor x = Tensor::from<float>(s, v);
        const Tensor y = softmax(x, axis).value();
        const Tensor ys = softmax(x, axis, std::nullopt, false).value();
        CHECK(same_bytes(y, ys));
        const auto got = y.to_vector<float>();
        for (const auto& row : rows_of(s, ax)) {
            std::vector<double> xr;
            for (auto i : row) xr.push_back(v[static_cast<std::size_t>(i)]);
            const auto p = softmax_double(xr);
            const double m = *std::max_element(xr.begin(), xr.end());
            const double n = static_cast<double>(row.size());
            double sum = 0;
            for (std::size_t j = 0; j < row.size(); ++j) {
                const double g = got[static_cast<std::size_t>(row[j])];
                sum += g;
                // relative: x - max rounded (|x - max| 2^-24 after exp), exp (~2 ulp), the sum (N ulp), the division
                const double d = m - xr[j];
                const double tol = p[j] * (d + n + 8) * 0x1p-23 + 0x1p-126;  // xsimd exp: no subnormal results
                if (!(std::abs(g - p[j]) <= tol)) ++bad;
                if (p[j] > 1e-30) worst_rel = std::max(worst_rel, std::abs(g - p[j]) / p[j]);
            }
            if (!(std::abs(sum - 1.0) <= (n + 8) * 0x1p-23)) ++bad;
            worst_sum = std::max(worst_sum, std::abs(sum - 1.0));
        }
    }
    CHECK(bad == 0);
    MESSAGE("float softmax: max relative error vs double ", worst_rel, ", max |row sum - 1| ", worst_sum);
}

TEST_CASE("NaN or +inf in a row makes that row NaN (numpy's formula); other rows are unaffected") {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const Tensor x = Tensor::from<float>({3, 2}, {1.0f, nan, inf, 0.0f, 0.0f, 0.0f});
    const auto y = softmax(x, 1).value().to_vector<float>();
    for (int k = 0; k < 4; ++k) CHECK(std::isnan(y[static_cast<std::size_t>(k)]));
    CHECK(y[4] == 0.5f);
    CHECK(y[5] == 0.5f);
}

TEST_CASE("strided and transposed input views give the same bytes as a contiguous copy") {
    std::mt19937 rng(3);
    const auto qi = quant(DType::i8, 0.07f, -5);
    const Tensor x = random_quant<std::int8_t>(rng, {5, 19, 3}, qi);
    const Tensor xt = x.view(transpose(x.layout, Dims{2, 0, 1}).value());  // shape [3, 5, 19], non-contiguous
    for (int axis : {0, 1, 2}) {
        const auto out = qtype(xt, DType::i8, 1.0f / 256, -128);
        CHECK(same_bytes(softmax(xt, axis, out).value(), softmax(xt.clone(), axis, out).value()));
        CHECK(same_bytes(softmax(xt, axis, out, false).value(), softmax(xt.clone(), axis, out).value()));
    }
    std::vector<float> v(60);
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(k % 7) * 0.3f;
    const Tensor f = Tensor::from<float>({4, 15}, v);
    const Tensor ft = f.view(transpose(f.layout, Dims{1, 0}).value());
    CHECK(same_bytes(softmax(ft, 1).value(), softmax(ft.clone(), 1).value()));
}

TEST_CASE("empty input gives an empty output") {
    const Tensor x = Tensor::from<std::int8_t>({3, 0}, std::vector<std::int8_t>{}, quant(DType::i8, 0.1f, 0));
    CHECK(softmax(x, 1, qtype(x, DType::i8, 1.0f / 256, -128)).value().elements() == 0);
    CHECK(softmax(Tensor::from<float>({0, 4}, std::vector<float>{}), 1).value().elements() == 0);
}

// ---- Errors ------------------------------------------------------------------------------------------------------

TEST_CASE("input-count: Softmax takes exactly one input") {
    const Tensor x = Tensor::from<float>({2}, {1.0f, 2.0f});
    CHECK_RULE(call<Softmax>({x, x}, SoftmaxAttrs{}), "input-count");
    CHECK_RULE(call<Softmax>(std::span<const Tensor>{}, SoftmaxAttrs{}), "input-count");
}

TEST_CASE("attribute-range and axis-in-range: the axis must name an axis of the input") {
    const Tensor x = Tensor::from<float>({2, 3}, std::vector<float>(6, 0.0f));
    CHECK_RULE(softmax(x, 6), "attribute-range");   // outside every rank's range: the schema refuses
    CHECK_RULE(softmax(x, 2), "axis-in-range");     // valid for rank 3, not for rank 2
    CHECK_RULE(softmax(x, -3), "axis-in-range");
    CHECK_RULE(softmax(Tensor::from<float>({}, {1.0f}), -1), "axis-in-range");  // rank 0 has no axis
    CHECK_RULE(infer_with<Softmax>(std::vector<TensorType>{type_of(x)}, AttrMap{{"axis", std::int64_t{5}}}),
               "axis-in-range");
    CHECK_RULE(infer_with<Softmax>(std::vector<TensorType>{type_of(x)}, AttrMap{{"axes", std::int64_t{0}}}),
               "known-attribute");
}

TEST_CASE("float-or-quantized: int32 or unquantized int8 inputs are refused") {
    CHECK_RULE(softmax(Tensor::from<std::int32_t>({2}, {1, 2}), 0), "float-or-quantized");
    CHECK_RULE(softmax(Tensor::from<std::int8_t>({2}, {1, 2}), 0), "float-or-quantized");
}

TEST_CASE("quantized-input: quantization parameters on a non-8-bit storage type are refused") {
    CHECK_RULE(softmax(Tensor::from<std::int32_t>({2}, {1, 2}, quant(DType::i32, 0.1f, 0)), 0), "quantized-input");
}

TEST_CASE("per-tensor-quantization: a per-axis quantized input is refused") {
    const auto qa = numeric::make_quant_per_axis(DType::i8, {0.1f, 0.2f}, {0, 0}, 0, Shape{2, 3}).value();
    const Tensor x = Tensor::from<std::int8_t>({2, 3}, std::vector<std::int8_t>(6, 1), qa);
    CHECK_RULE(softmax(x, 1, qtype(x, DType::i8, 1.0f / 256, -128)), "per-tensor-quantization");
}

TEST_CASE("quant-dtype-matches: int8 storage with uint8 parameters is refused") {
    const Tensor x = Tensor::from<std::int8_t>({3}, {1, 2, 3}, quant(DType::u8, 0.1f, 128));
    CHECK_RULE(softmax(x, 0, qtype(x, DType::i8, 1.0f / 256, -128)), "quant-dtype-matches");
}

TEST_CASE("output-quantization-required: the quantized output needs the caller's parameters (seed A10)") {
    const Tensor x = Tensor::from<std::int8_t>({3}, {1, 2, 3}, quant(DType::i8, 0.1f, 0));
    CHECK_RULE(softmax(x, 0), "output-quantization-required");
    CHECK_RULE(softmax(x, 0, TensorType{DType::i8, x.shape(), std::nullopt}), "output-quantization-required");
}

TEST_CASE("output-dtype, output-shape, output-type-matches-inference") {
    const Tensor xq = Tensor::from<std::int8_t>({3}, {1, 2, 3}, quant(DType::i8, 0.1f, 0));
    const Tensor xf = Tensor::from<float>({3}, {1.0f, 2.0f, 3.0f});
    const std::span<const Tensor> q(&xq, 1), f(&xf, 1);
    CHECK_RULE(Softmax::run(q, {0}, TensorType{DType::f32, xq.shape(), std::nullopt}, {}), "output-dtype");
    CHECK_RULE(Softmax::run(f, {0}, qtype(xf, DType::i8, 1.0f / 256, -128), {}), "output-dtype");
    CHECK_RULE(Softmax::run(f, {0}, TensorType{DType::f32, Shape{4}, std::nullopt}, {}), "output-shape");
    CHECK_RULE(softmax(xq, 0, qtype(xq, DType::u8, 1.0f / 256, 0)), "output-type-matches-inference");
}

TEST_CASE("softmax-error-bound: rows too long (or output scales too fine) for the int32 sum are refused") {
    const auto qi = quant(DType::i8, 0.1f, 0);
    const Tensor ok = Tensor::from<std::int8_t>({1, 5402}, std::vector<std::int8_t>(5402, 0), qi);
    CHECK(softmax(ok, 1, qtype(ok, DType::i8, 1.0f / 256, -128)).ok());  // derived bound 2 LSBs
    const Tensor longer = Tensor::from<std::int8_t>({1, 5403}, std::vector<std::int8_t>(5403, 0), qi);
    CHECK_RULE(softmax(longer, 1, qtype(longer, DType::i8, 1.0f / 256, -128)), "softmax-error-bound");
    // the same row is accepted along an axis of extent 1 (each row has one element)
    CHECK(softmax(longer, 0, qtype(longer, DType::i8, 1.0f / 256, -128)).ok());
    const Tensor small = Tensor::from<std::int8_t>({8}, std::vector<std::int8_t>(8, 0), qi);
    CHECK_RULE(softmax(small, 0, qtype(small, DType::i8, 1e-7f, 0)), "softmax-error-bound");
}
