// ReduceSum / ReduceMean / ReduceMax / ReduceMin: golden values, every axis subset against plain references, the
// quantized error bound, scalar/SIMD identity, NaN and empty rules, seeds A1 A2 A3 A4, and every error rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <janus/ops/copy.hpp>
#include <janus/ops/reduction.hpp>

using namespace janus;
using namespace janus::ops;

namespace {

enum class Kind { sum, mean, max, min };
constexpr Kind kinds[] = {Kind::sum, Kind::mean, Kind::max, Kind::min};
std::string kind_name(Kind k) {
    constexpr const char* n[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"};
    return n[static_cast<int>(k)];
}

ReduceAttrs attrs(std::vector<std::int64_t> axes, std::int64_t keepdims = 1, std::int64_t noop = 0) {
    return ReduceAttrs{std::move(axes), keepdims, noop};
}

numeric::QuantParams quant(DType d, float s, std::int32_t zp) { return numeric::make_quant(d, s, zp).value(); }

/// Run one op by kind (the test's only dispatch point).
Result<Tensor> run_kind(Kind k, const Tensor& x, const ReduceAttrs& a, std::optional<TensorType> out = std::nullopt,
                        bool simd = true) {
    const OpContext ctx{simd};
    switch (k) {
        case Kind::sum: return call<ReduceSum>({x}, a, out, ctx);
        case Kind::mean: return call<ReduceMean>({x}, a, out, ctx);
        case Kind::max: return call<ReduceMax>({x}, a, out, ctx);
        case Kind::min: break;
    }
    return call<ReduceMin>({x}, a, out, ctx);
}

// ---- Plain references ------------------------------------------------------------------------------------------

/// For every output (kept-dims shape, row-major), the flat input indices it reads, in row-major input order.
std::vector<std::vector<std::int64_t>> groups(const Shape& in, const std::vector<int>& reduced_axes) {
    Shape keep = in;
    for (int a : reduced_axes) keep[a] = 1;
    std::vector<std::vector<std::int64_t>> g(static_cast<std::size_t>(element_count(keep)));
    const std::int64_t n = element_count(in);
    for (std::int64_t flat = 0; flat < n; ++flat) {
        std::int64_t rest = flat, out = 0, mul = 1;
        for (int k = in.size() - 1; k >= 0; --k) {
            const std::int64_t c = rest % in[k];
            rest /= in[k];
            out += (keep[k] == 1 ? 0 : c) * mul;
            mul *= keep[k];
        }
        g[static_cast<std::size_t>(out)].push_back(flat);
    }
    return g;
}

/// Float reference: row-major accumulation, the documented init and NaN rule.
std::vector<float> float_reference(Kind k, const std::vector<float>& x, const Shape& in,
                                   const std::vector<int>& reduced, std::int64_t count) {
    std::vector<float> out;
    for (const auto& grp : groups(in, reduced)) {
        float acc = k == Kind::max ? -INFINITY : k == Kind::min ? INFINITY : -0.0f;
        for (auto i : grp) {
            const float v = x[static_cast<std::size_t>(i)];
            if (k == Kind::sum || k == Kind::mean) acc += v;
            else if (k == Kind::max) acc = (v > acc || v != v) ? v : acc;
            else acc = (v < acc || v != v) ? v : acc;
        }
        if (k == Kind::sum) acc += count == 0 ? 0.0f : -0.0f;
        if (k == Kind::mean) acc /= static_cast<float>(count);
        out.push_back(acc);
    }
    return out;
}

/// Quantized reference: dequantize, reduce in double, quantize with round half to even.
template <class T>
std::vector<int> quant_reference(Kind k, const std::vector<T>& x, const Shape& in, const std::vector<int>& reduced,
                                 const numeric::QuantParams& qi, const numeric::QuantParams& qo) {
    std::vector<int> out;
    for (const auto& grp : groups(in, reduced)) {
        double acc = k == Kind::max ? -INFINITY : k == Kind::min ? INFINITY : 0.0;
        for (auto i : grp) {
            const int xi = x[static_cast<std::size_t>(i)];
            const double v = static_cast<double>(qi.scale()) * (xi - qi.zero_point());
            if (k == Kind::sum || k == Kind::mean) acc += v;
            else if (k == Kind::max) acc = std::max(acc, v);
            else acc = std::min(acc, v);
        }
        if (k == Kind::mean) acc /= static_cast<double>(grp.size());
        const double q = std::nearbyint(acc / static_cast<double>(qo.scale())) + qo.zero_point();
        out.push_back(static_cast<int>(std::clamp<double>(q, qmin(qo.dtype), qmax(qo.dtype))));
    }
    return out;
}

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937& rng) {
    std::vector<T> v(n);
    if constexpr (std::is_same_v<T, float>) {
        std::uniform_real_distribution<float> d(-8.0f, 8.0f);
        for (auto& e : v) e = d(rng);
    } else {
        std::uniform_int_distribution<int> d(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
        for (auto& e : v) e = static_cast<T>(d(rng));
    }
    return v;
}

std::vector<std::uint32_t> bits(const std::vector<float>& v) {
    std::vector<std::uint32_t> b;
    for (float f : v) b.push_back(std::bit_cast<std::uint32_t>(f));
    return b;
}

/// The subset `mask` of the axes of a rank-4 tensor, spelled three ways: ascending, negative, reversed.
std::vector<std::int64_t> spell(unsigned mask, int how) {
    std::vector<std::int64_t> a;
    for (int k = 0; k < 4; ++k)
        if (mask & (1u << k)) a.push_back(how == 1 ? k - 4 : k);
    if (how == 2) std::reverse(a.begin(), a.end());
    return a;
}
std::vector<int> reduced_of(unsigned mask) {
    std::vector<int> r;
    for (int k = 0; k < 4; ++k)
        if (mask == 0 || (mask & (1u << k))) r.push_back(k);  // empty axes (noop 0): every axis
    return r;
}
Shape out_shape_of(const Shape& in, const std::vector<int>& reduced, bool keep) {
    Shape s;
    for (int k = 0; k < in.size(); ++k) {
        const bool r = std::find(reduced.begin(), reduced.end(), k) != reduced.end();
        if (!r) s.push_back(in[k]);
        else if (keep) s.push_back(1);
    }
    return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------

TEST_CASE("float reductions match hand-computed values") {
    const Tensor x = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    auto y = call<ReduceSum>({x}, attrs({1}));
    CHECK(y->shape() == Shape{2, 1});
    CHECK(y->to_vector<float>() == std::vector<float>{6, 15});
    y = call<ReduceSum>({x}, attrs({1}, 0));
    CHECK(y->shape() == Shape{2});
    y = call<ReduceSum>({x}, attrs({}));
    CHECK(y->shape() == Shape{1, 1});
    CHECK(y->to_vector<float>() == std::vector<float>{21});
    y = call<ReduceSum>({x}, attrs({}, 0));
    CHECK(y->shape() == Shape{});
    CHECK(y->to_vector<float>() == std::vector<float>{21});
    CHECK(call<ReduceMean>({x}, attrs({0}))->to_vector<float>() == std::vector<float>{2.5f, 3.5f, 4.5f});
    CHECK(call<ReduceMean>({x}, attrs({0, 1}, 0))->to_vector<float>() == std::vector<float>{3.5f});
    CHECK(call<ReduceMax>({x}, attrs({-1}))->to_vector<float>() == std::vector<float>{3, 6});
    CHECK(call<ReduceMin>({x}, attrs({0}, 0))->to_vector<float>() == std::vector<float>{1, 2, 3});
    CHECK(call<ReduceMin>({x}, attrs({}, 0))->to_vector<float>() == std::vector<float>{1});
}

TEST_CASE("quantized reductions match hand-computed values") {
    // int8 s=0.5 zp=1: q [3,5,-1 | 1,9,7] is real [1,2,-1 | 0,4,3]
    const auto qi = quant(DType::i8, 0.5f, 1);
    const Tensor x = Tensor::from<std::int8_t>({2, 3}, {3, 5, -1, 1, 9, 7}, qi);
    // sums [2, 7] at s=0.25 zp=-2 -> [6, 26]
    auto y = call<ReduceSum>({x}, attrs({1}, 0), TensorType{DType::i8, {2}, quant(DType::i8, 0.25f, -2)});
    CHECK(y->to_vector<std::int8_t>() == std::vector<std::int8_t>{6, 26});
    // means [2/3, 7/3] at s=0.5 zp=0 are [1.33, 4.67]: round-half-even gives [1, 5]. The kernel computes
    // rq(acc, 1/3) with acc = [4, 14] under default_rounding (round_double): 1/3 = 1431655765 * 2^-32, a right shift of
    // 1, so 4/3 is first rounded to the half grid (1.5) and then away from zero (2): the documented 1-LSB case.
    y = call<ReduceMean>({x}, attrs({1}, 0), TensorType{DType::i8, {2}, quant(DType::i8, 0.5f, 0)});
    CHECK(y->to_vector<std::int8_t>() == std::vector<std::int8_t>{2, 5});
    const auto third = ReduceMean::plan(std::array{type_of(x)}, attrs({1}, 0), type_of(*y), janus::numeric::default_rounding_mode)->multipliers[0];
    CHECK(numeric::round_half_even::apply(4, third) == 1);
    // max over rows with the proposed (input) quantization: a selection, exact
    y = call<ReduceMax>({x}, attrs({0}, 0));
    CHECK(y->quant == qi);
    CHECK(y->to_vector<std::int8_t>() == std::vector<std::int8_t>{3, 9, 7});
    // min of rows: reals [-1, 0] at s=1 zp=10 -> [9, 10]
    y = call<ReduceMin>({x}, attrs({1}, 1), TensorType{DType::i8, {2, 1}, quant(DType::i8, 1.0f, 10)});
    CHECK(y->to_vector<std::int8_t>() == std::vector<std::int8_t>{9, 10});

    // uint8 s=0.1 zp=128: q [128,138,118,148] is real [0,1,-1,2]; sum 2 -> 148, mean 0.5 -> 133
    const auto qu = quant(DType::u8, 0.1f, 128);
    const Tensor u = Tensor::from<std::uint8_t>({4}, {128, 138, 118, 148}, qu);
    CHECK(call<ReduceSum>({u}, attrs({0}), TensorType{DType::u8, {1}, qu})->to_vector<std::uint8_t>() ==
          std::vector<std::uint8_t>{148});
    CHECK(call<ReduceMean>({u}, attrs({0}), TensorType{DType::u8, {1}, qu})->to_vector<std::uint8_t>() ==
          std::vector<std::uint8_t>{133});
    CHECK(call<ReduceMax>({u}, attrs({0}))->to_vector<std::uint8_t>() == std::vector<std::uint8_t>{148});
    CHECK(call<ReduceMin>({u}, attrs({0}))->to_vector<std::uint8_t>() == std::vector<std::uint8_t>{118});
    // saturation: sum 2.0 at s=0.005 is 400 -> uint8 255
    CHECK(call<ReduceSum>({u}, attrs({0}), TensorType{DType::u8, {1}, quant(DType::u8, 0.005f, 0)})
              ->to_vector<std::uint8_t>() == std::vector<std::uint8_t>{255});
    // the output storage type is the input's (ONNX: T -> T)
    const TensorType int8_out{DType::i8, {1}, quant(DType::i8, 0.01f, 0)};
    CHECK(ReduceSum::plan(std::array{type_of(u)}, attrs({0}), int8_out, janus::numeric::default_rounding_mode).error().rule == "output-dtype");
}

TEST_CASE("seed A3: each op has its own init, pre and post (printed kernels)") {
    // The four quantized kernels for int8 s=0.5 zp=1 -> int8 s=0.25 zp=-2 over 3 elements.
    const TensorType in{DType::i8, {2, 3}, quant(DType::i8, 0.5f, 1)};
    const TensorType out{DType::i8, {2}, quant(DType::i8, 0.25f, -2)};
    const auto a = attrs({1}, 0);
    auto sum = ReduceSum::plan(std::array{in}, a, out, janus::numeric::default_rounding_mode).value();
    auto mean = ReduceMean::plan(std::array{in}, a, out, janus::numeric::default_rounding_mode).value();
    auto max = ReduceMax::plan(std::array{in}, a, out, janus::numeric::default_rounding_mode).value();
    const expr::In<0, std::int8_t> x;
    const expr::In<0, std::int32_t> acc;
    CHECK(ReduceSum::init_quant<std::int8_t>() == 0);
    CHECK(ReduceMax::init_quant<std::int8_t>() == -128);
    CHECK(ReduceMin::init_quant<std::int8_t>() == 127);
    CHECK(ReduceMax::init_quant<std::uint8_t>() == 0);
    CHECK(ReduceMin::init_quant<std::uint8_t>() == 255);
    CHECK(std::signbit(ReduceSum::init_float()));
    CHECK(ReduceMax::init_float() == -INFINITY);
    CHECK(ReduceMin::init_float() == INFINITY);
    CHECK(expr::to_string(ReduceSum::pre_quant(x, sum)) == "sub(widen(in0:int8), 1)");
    CHECK(expr::to_string(ReduceMax::pre_quant(x, max)) == "widen(in0:int8)");
    // sum: s_in / s_out = 2 = 2^30 * 2^(2-31); mean: 2/3; max: (acc - zp_in) rescaled per channel
    CHECK(expr::to_string(ReduceSum::post_quant<std::int8_t>(acc, sum)) ==
          "sat<int8>(add(rq<double>(in0:int32, 1073741824*2^-29), -2))");
    CHECK(expr::to_string(ReduceMean::post_quant<std::int8_t>(acc, mean)) ==
          "sat<int8>(add(rq<double>(in0:int32, 1431655765*2^-31), -2))");
    CHECK(expr::to_string(ReduceMax::post_quant<std::int8_t>(acc, max)) ==
          "sat<int8>(add(rq<double>(sub(in0:int32, chan[1]), chan[1]), chan[1]))");
    // the proved accumulator ranges: sum of 3 x (q - 1) in [-129, 126]; max stays in int8
    CHECK(sum.acc_range == numeric::Interval{-387, 378});
    CHECK(max.acc_range == numeric::Interval{-128, 127});
}

TEST_CASE("every axis subset of [2,3,5,7], any spelling, keepdims 0/1: float equals the row-major reference bitwise") {
    const Shape in{2, 3, 5, 7};
    std::mt19937 rng(11);
    auto v = random_values<float>(static_cast<std::size_t>(element_count(in)), rng);
    v[17] = -0.0f;
    const Tensor x = Tensor::from<float>(in, v);
    int cases = 0;
    for (unsigned mask = 0; mask < 16; ++mask)
        for (int how = 0; how < 3; ++how)
            for (int keep = 0; keep < 2; ++keep)
                for (Kind k : kinds) {
                    CAPTURE(mask);
                    CAPTURE(how);
                    CAPTURE(keep);
                    CAPTURE(kind_name(k));
                    const auto reduced = reduced_of(mask);
                    std::int64_t count = 1;
                    for (int a : reduced) count *= in[a];
                    auto y = run_kind(k, x, attrs(spell(mask, how), keep));
                    REQUIRE(y.ok());
                    CHECK(y->shape() == out_shape_of(in, reduced, keep != 0));
                    CHECK(bits(y->to_vector<float>()) == bits(float_reference(k, v, in, reduced, count)));
                    ++cases;
                }
    CHECK(cases == 16 * 3 * 2 * 4);
}

TEST_CASE("every subset of axes, int8 and uint8: within 1 LSB of dequantize -> double reduce -> round-half-even") {
    const Shape in{2, 3, 5, 7};
    std::mt19937 rng(12);
    int max_err[4] = {0, 0, 0, 0};
    long off_by_one[4] = {0, 0, 0, 0}, total[4] = {0, 0, 0, 0};
    auto one_dtype = [&](auto tag, DType dt) {
        using T = decltype(tag);
        const auto v = random_values<T>(static_cast<std::size_t>(element_count(in)), rng);
        std::uniform_int_distribution<int> zp(qmin(dt), qmax(dt));
        std::uniform_real_distribution<float> f(0.3f, 2.0f);
        for (unsigned mask = 0; mask < 16; ++mask)
            for (int keep = 0; keep < 2; ++keep)
                for (Kind k : kinds) {
                    CAPTURE(mask);
                    CAPTURE(keep);
                    CAPTURE(kind_name(k));
                    const auto reduced = reduced_of(mask);
                    std::int64_t count = 1;
                    for (int a : reduced) count *= in[a];
                    const float s_in = 0.02f * f(rng);
                    const auto qi = quant(dt, s_in, zp(rng));
                    // output scale sized to the result's range so that most outputs do not saturate
                    const float grow = k == Kind::sum ? 2.0f * std::sqrt(static_cast<float>(count)) : 1.0f;
                    const auto qo = quant(dt, s_in * grow * f(rng), zp(rng));
                    const Tensor x = Tensor::from<T>(in, v, qi);
                    const Shape os = out_shape_of(in, reduced, keep != 0);
                    auto y = run_kind(k, x, attrs(spell(mask, 0), keep), TensorType{dt, os, qo});
                    REQUIRE(y.ok());
                    const auto got = y->template to_vector<T>();
                    const auto ref = quant_reference<T>(k, v, in, reduced, qi, qo);
                    REQUIRE(got.size() == ref.size());
                    const int ki = static_cast<int>(k);
                    for (std::size_t i = 0; i < ref.size(); ++i) {
                        const int e = std::abs(static_cast<int>(got[i]) - ref[i]);
                        max_err[ki] = std::max(max_err[ki], e);
                        off_by_one[ki] += e != 0;
                        ++total[ki];
                    }
                    if (k == Kind::max || k == Kind::min) {  // with the input's own quantization: exact selection
                        const auto exact = quant_reference<T>(k, v, in, reduced, qi, qi);
                        auto same = run_kind(k, x, attrs(spell(mask, 0), keep));
                        CHECK(same->template to_vector<T>() == std::vector<T>(exact.begin(), exact.end()));
                    }
                }
    };
    one_dtype(std::int8_t{}, DType::i8);
    one_dtype(std::uint8_t{}, DType::u8);
    for (Kind k : kinds) {
        const int ki = static_cast<int>(k);
        MESSAGE(kind_name(k) << ": max error " << max_err[ki] << " LSB, " << off_by_one[ki] << " of " << total[ki]
                             << " outputs differ from the double reference");
        CHECK(max_err[ki] <= 1);
    }
}

TEST_CASE("quantized mean: folded multiplier is within 1 LSB of round-half-even of the exact mean (measured)") {
    std::mt19937 rng(13);
    std::uniform_int_distribution<int> len(1, 600), q(-128, 127), zp(-128, 127);
    std::uniform_real_distribution<float> f(0.05f, 4.0f);
    int max_err = 0;
    long differ = 0, total = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int n = len(rng), rows = 4;
        std::vector<std::int8_t> v(static_cast<std::size_t>(n * rows));
        for (auto& e : v) e = static_cast<std::int8_t>(q(rng));
        const auto qi = quant(DType::i8, 0.03f * f(rng), zp(rng));
        const auto qo = quant(DType::i8, qi.scale() * f(rng), zp(rng));
        const Tensor x = Tensor::from<std::int8_t>({rows, n}, v, qi);
        auto y = call<ReduceMean>({x}, attrs({1}, 0), TensorType{DType::i8, {rows}, qo});
        REQUIRE(y.ok());
        const auto got = y->to_vector<std::int8_t>();
        for (int r = 0; r < rows; ++r) {
            long acc = 0;
            for (int j = 0; j < n; ++j) acc += v[static_cast<std::size_t>(r * n + j)] - qi.zero_point();
            // exact in long double: acc * s_in has <= 56 significant bits, s_out * n <= 34
            const long double exact = static_cast<long double>(acc) * qi.scale() /
                                      (static_cast<long double>(qo.scale()) * n);
            const long double ref = std::clamp(std::nearbyint(exact) + qo.zero_point(), -128.0L, 127.0L);
            const int e = std::abs(got[static_cast<std::size_t>(r)] - static_cast<int>(ref));
            max_err = std::max(max_err, e);
            differ += e != 0;
            ++total;
        }
    }
    MESSAGE("ReduceMean int8: max error " << max_err << " LSB; " << differ << " of " << total
                                          << " outputs differ from round-half-even of the exact mean");
    CHECK(max_err <= 1);
}

TEST_CASE("scalar and SIMD paths are bit-identical for every op, dtype and axis subset") {
    const Shape in{3, 5, 2, 19};  // rows longer than any batch, with tails
    std::mt19937 rng(14);
    auto fv = random_values<float>(static_cast<std::size_t>(element_count(in)), rng);
    fv[40] = NAN;  // one NaN inside a SIMD batch of one output group
    const auto iv = random_values<std::int8_t>(fv.size(), rng);
    const auto uv = random_values<std::uint8_t>(fv.size(), rng);
    const Tensor xf = Tensor::from<float>(in, fv);
    const Tensor xi = Tensor::from<std::int8_t>(in, iv, quant(DType::i8, 0.05f, 3));
    const Tensor xu = Tensor::from<std::uint8_t>(in, uv, quant(DType::u8, 0.05f, 130));
    auto raw = [](const Tensor& t) {
        return std::vector<std::byte>(t.data(), t.data() + t.layout.byte_extent().second);
    };
    for (unsigned mask = 0; mask < 16; ++mask)
        for (int keep = 0; keep < 2; ++keep)
            for (Kind k : kinds) {
                CAPTURE(mask);
                CAPTURE(keep);
                CAPTURE(kind_name(k));
                const auto a = attrs(spell(mask, 0), keep);
                const Shape os = out_shape_of(in, reduced_of(mask), keep != 0);
                const auto fs = run_kind(k, xf, a, std::nullopt, false).value();
                CHECK(raw(fs) == raw(run_kind(k, xf, a, std::nullopt, true).value()));
                const TensorType oi{DType::i8, os, quant(DType::i8, 0.3f, -5)};
                CHECK(raw(run_kind(k, xi, a, oi, false).value()) == raw(run_kind(k, xi, a, oi, true).value()));
                const TensorType ou{DType::u8, os, quant(DType::u8, 0.3f, 100)};
                CHECK(raw(run_kind(k, xu, a, ou, false).value()) == raw(run_kind(k, xu, a, ou, true).value()));
            }
}

TEST_CASE("float max and min propagate NaN wherever it sits (numpy rule)") {
    for (bool simd : {false, true})
        for (int pos : {0, 5, 8, 19}) {
            CAPTURE(simd);
            CAPTURE(pos);
            std::vector<float> v(20);
            for (int i = 0; i < 20; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i) - 7.5f;
            v[static_cast<std::size_t>(pos)] = NAN;
            const Tensor row = Tensor::from<float>({20}, v);  // horizontal (inner axis reduced)
            CHECK(std::isnan(run_kind(Kind::max, row, attrs({0}), std::nullopt, simd)->to_vector<float>()[0]));
            CHECK(std::isnan(run_kind(Kind::min, row, attrs({0}), std::nullopt, simd)->to_vector<float>()[0]));
            CHECK(std::isnan(run_kind(Kind::sum, row, attrs({0}), std::nullopt, simd)->to_vector<float>()[0]));
            const Tensor col = Tensor::from<float>({20, 1}, v);  // vertical (outer axis reduced)
            CHECK(std::isnan(run_kind(Kind::max, col, attrs({0}), std::nullopt, simd)->to_vector<float>()[0]));
            CHECK(std::isnan(run_kind(Kind::min, col, attrs({0}), std::nullopt, simd)->to_vector<float>()[0]));
        }
    // Only the group holding the NaN becomes NaN.
    const Tensor x = Tensor::from<float>({2, 9}, {1, 2, 3, 4, NAN, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    const auto m = call<ReduceMax>({x}, attrs({1}, 0))->to_vector<float>();
    CHECK(std::isnan(m[0]));
    CHECK(m[1] == 9);
    const auto c = call<ReduceMin>({x}, attrs({0}, 0))->to_vector<float>();
    CHECK(std::isnan(c[4]));
    CHECK(c[3] == 4);
}

TEST_CASE("empty reductions: float sum +0, mean NaN, max -inf, min +inf; quantized max/min/mean are refused") {
    const Tensor x = Tensor::from<float>({2, 0}, {});
    const auto s = call<ReduceSum>({x}, attrs({1}, 0))->to_vector<float>();
    REQUIRE(s.size() == 2);
    CHECK(s[0] == 0.0f);
    CHECK(!std::signbit(s[0]));
    CHECK(std::isnan(call<ReduceMean>({x}, attrs({1}, 0))->to_vector<float>()[0]));
    CHECK(call<ReduceMax>({x}, attrs({1}, 0))->to_vector<float>() == std::vector<float>{-INFINITY, -INFINITY});
    CHECK(call<ReduceMin>({x}, attrs({1}, 0))->to_vector<float>() == std::vector<float>{INFINITY, INFINITY});

    const auto qi = quant(DType::i8, 0.1f, 4);
    const Tensor q = Tensor::from<std::int8_t>({2, 0}, {}, qi);
    const TensorType out{DType::i8, {2}, quant(DType::i8, 0.2f, -7)};
    CHECK(call<ReduceSum>({q}, attrs({1}, 0), out)->to_vector<std::int8_t>() == std::vector<std::int8_t>{-7, -7});
    for (Kind k : {Kind::mean, Kind::max, Kind::min}) {
        CAPTURE(kind_name(k));
        auto r = run_kind(k, q, attrs({1}, 0), out);
        REQUIRE(!r.ok());
        CHECK(r.error().rule == "nonempty-reduction");
    }
    std::vector<TensorType> types{type_of(q)};
    CHECK(ReduceMax::infer(types, attrs({1}, 0)).error().rule == "nonempty-reduction");
    // an empty OUTPUT is fine: nothing has to be produced
    const Tensor e = Tensor::from<std::int8_t>({0, 3}, {}, qi);
    CHECK(call<ReduceMax>({e}, attrs({1}, 0))->shape() == Shape{0});
}

TEST_CASE("seed A4: an identity reduction requantizes when the quantization differs and copies exactly when equal") {
    std::mt19937 rng(15);
    const Shape in{2, 1, 3, 1};
    const auto v = random_values<std::int8_t>(6, rng);
    const auto qi = quant(DType::i8, 0.1f, 5);
    const auto qo = quant(DType::i8, 0.07f, -9);
    const Tensor x = Tensor::from<std::int8_t>(in, v, qi);
    const auto requantized =
        materialize(x, TensorType{DType::i8, in, qo}, OpContext{}).value().to_vector<std::int8_t>();
    REQUIRE(requantized != v);  // the parameters really differ
    struct Case {
        ReduceAttrs a;
        Shape out;
    };
    const Case cases[] = {
        {attrs({}, 1, 1), in},           // empty axes + noop_with_empty_axes
        {attrs({}, 0, 1), in},           // keepdims is irrelevant when nothing is reduced
        {attrs({1, 3}, 1), in},          // only unit axes, kept
        {attrs({-3, -1}, 0), {2, 3}},    // only unit axes, removed
    };
    for (const auto& c : cases)
        for (Kind k : kinds) {
            CAPTURE(kind_name(k));
            CAPTURE(c.out.str());
            auto y = run_kind(k, x, c.a, TensorType{DType::i8, c.out, qo});
            REQUIRE(y.ok());
            CHECK(y->to_vector<std::int8_t>() == requantized);  // not deleted: the same requantization as a copy
            auto same = run_kind(k, x, c.a, TensorType{DType::i8, c.out, qi});
            CHECK(same->to_vector<std::int8_t>() == v);  // equal parameters: exact copy
        }
    // float identity is a bit copy (-0 and NaN included)
    const Tensor f = Tensor::from<float>({4}, {-0.0f, NAN, 3.5f, -INFINITY});
    for (Kind k : kinds) {
        CAPTURE(kind_name(k));
        CHECK(bits(run_kind(k, f, attrs({}, 1, 1))->to_vector<float>()) == bits(f.to_vector<float>()));
    }
    // the stats say so: one read per output
    auto r = ReduceSum::run_with_stats(std::vector<Tensor>{x}, attrs({}, 1, 1), TensorType{DType::i8, in, qo}, {});
    CHECK(r->stats.reads_per_output == 1);
    CHECK(r->stats.outputs == 6);
}

TEST_CASE("seed A2: keepdims=0 renumbers the per-axis quantization axis; the reduced axis may not carry it") {
    // int8 [2,3,4] quantized per axis 1 (3 channels)
    const Shape in{2, 3, 4};
    std::mt19937 rng(16);
    const auto v = random_values<std::int8_t>(24, rng);
    const auto qi = numeric::make_quant_per_axis(DType::i8, {0.1f, 0.2f, 0.05f}, {1, -2, 3}, 1, in).value();
    const Tensor x = Tensor::from<std::int8_t>(in, v, qi);
    std::vector<TensorType> types{type_of(x)};

    auto t = ReduceMax::infer(types, attrs({0}, 0));  // axis 0 leaves: the channel axis 1 becomes 0
    REQUIRE(t.ok());
    CHECK(t->shape == Shape{3, 4});
    CHECK(t->quant->axis == 0);
    CHECK(t->quant->scales == qi.scales);
    CHECK(ReduceMax::infer(types, attrs({0}, 1))->quant->axis == 1);  // kept as extent 1: nothing moves
    CHECK(ReduceMin::infer(types, attrs({2}, 0))->quant->axis == 1);  // a later axis leaves: nothing moves

    // With the proposed quantization the max is a selection: exact, per channel.
    auto y = call<ReduceMax>({x}, attrs({0}, 0));
    REQUIRE(y.ok());
    CHECK(y->quant->axis == 0);
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 4; ++k)
            CHECK(static_cast<int>(y->at<std::int8_t>({c, k})) ==
                  std::max<int>(x.at<std::int8_t>({0, c, k}), x.at<std::int8_t>({1, c, k})));

    // A different per-axis output (axis 0 of the output = axis 1 of the kernel): per-channel requantization.
    const auto qo = numeric::make_quant_per_axis(DType::i8, {0.3f, 0.1f, 0.2f}, {0, 5, -5}, 0, Shape{3, 4}).value();
    auto z = call<ReduceMin>({x}, attrs({-3}, 0), TensorType{DType::i8, {3, 4}, qo});
    REQUIRE(z.ok());
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 4; ++k) {
            const int m = std::min<int>(x.at<std::int8_t>({0, c, k}), x.at<std::int8_t>({1, c, k}));
            const auto ch = static_cast<std::size_t>(c);
            const double real = static_cast<double>(qi.scale(ch)) * (m - qi.zero_point(ch));
            const double ref = std::clamp(std::nearbyint(real / qo.scale(ch)) + qo.zero_point(ch), -128.0, 127.0);
            CHECK(std::abs(z->at<std::int8_t>({c, k}) - ref) <= 1);
        }

    // Reducing the quantization axis itself would combine integers of different scales.
    auto bad = ReduceMax::infer(types, attrs({1}, 0));
    REQUIRE(!bad.ok());
    CHECK(bad.error().rule == "keep-quantization-axis");
    CHECK(call<ReduceMin>({x}, attrs({}, 1)).error().rule == "keep-quantization-axis");  // all axes
    // Sum and mean take per-tensor quantization only (zp_in enters pre, which sees no channel).
    CHECK(ReduceSum::infer(types, attrs({0}, 0)).error().rule == "per-tensor-quantization");
    CHECK(ReduceMean::infer(types, attrs({2}, 0)).error().rule == "per-tensor-quantization");
}

TEST_CASE("seed A1: ReduceStats report the data movement of any axis set") {
    const Tensor x = Tensor::from<float>({2, 3, 5, 7}, std::vector<float>(210, 1.0f));
    const TensorType out_a{DType::f32, {2, 5}, std::nullopt};
    auto a = ReduceMean::run_with_stats(std::vector<Tensor>{x}, attrs({1, 3}, 0), out_a, {});
    REQUIRE(a.ok());
    CHECK(a->stats.outputs == 10);
    CHECK(a->stats.reads_per_output == 21);
    CHECK(a->stats.reduced_strides == Dims{140, 4});  // byte strides, outer to inner
    CHECK(a->stats.inner_axis_reduced);
    CHECK(a->y.to_vector<float>() == std::vector<float>(10, 1.0f));
    const TensorType out_b{DType::f32, {1, 3, 5, 7}, std::nullopt};
    auto b = ReduceSum::run_with_stats(std::vector<Tensor>{x}, attrs({0}), out_b, {});
    CHECK(b->stats.reduced_strides == Dims{420});
    CHECK(!b->stats.inner_axis_reduced);
    CHECK(b->stats.outputs == 105);
    // plan: the same decisions from types alone
    auto p = ReduceMax::plan(std::array{type_of(x)}, attrs({-1, 1}, 0), out_a, janus::numeric::default_rounding_mode);
    REQUIRE(p.ok());
    CHECK(p->axes == Dims{1, 3});
    CHECK(p->keep_shape == Shape{2, 1, 5, 1});
    CHECK(p->count == 21);
    CHECK(p->outputs == 10);
}

TEST_CASE("attribute and axis errors name the rule") {
    const Tensor x = Tensor::from<float>({2, 3, 5, 7}, std::vector<float>(210, 0.0f));
    auto r = call<ReduceSum>({x}, attrs({4}));
    REQUIRE(!r.ok());
    CHECK(r.error().rule == "axis-in-range");
    CHECK(r.error().input == "ReduceSum.axes");
    CHECK(r.error().position == "index 0");
    r = call<ReduceMax>({x}, attrs({1, -3}));
    REQUIRE(!r.ok());
    CHECK(r.error().rule == "axes-unique");
    CHECK(r.error().position == "index 1");
    const std::vector<Tensor> in{x};
    CHECK(call_with<ReduceMean>(in, AttrMap{{"keepdims", std::int64_t{2}}}).error().rule == "attribute-range");
    CHECK(call_with<ReduceMean>(in, AttrMap{{"noop_with_empty_axes", std::int64_t{-1}}}).error().rule ==
          "attribute-range");
    CHECK(call_with<ReduceMin>(in, AttrMap{{"axes", std::vector<std::int64_t>{9}}}).error().rule == "attribute-range");
    CHECK(call_with<ReduceMin>(in, AttrMap{{"axis", std::int64_t{0}}}).error().rule == "known-attribute");
    CHECK(call_with<ReduceMin>(in, AttrMap{{"axes", std::int64_t{0}}}).error().rule == "attribute-kind");
    // ONNX attributes parse: axes [-1], keepdims 0
    auto ok = call_with<ReduceMax>(in, AttrMap{{"axes", std::vector<std::int64_t>{-1}}, {"keepdims", std::int64_t{0}}});
    REQUIRE(ok.ok());
    CHECK(ok->shape() == Shape{2, 3, 5});
    // wrong requested output shape
    CHECK(call<ReduceSum>({x}, attrs({1}), TensorType{DType::f32, {2, 5, 7}, std::nullopt}).error().rule ==
          "output-type-matches-inference");
    // quantized arithmetic needs the caller's output quantization (seed A10)
    const Tensor q = Tensor::from<std::int8_t>({4}, {1, 2, 3, 4}, quant(DType::i8, 0.1f, 0));
    CHECK(call<ReduceSum>({q}, attrs({0})).error().rule == "output-quantization-required");
    CHECK(call<ReduceMean>({q}, attrs({0})).error().rule == "output-quantization-required");
    // unsupported dtype
    const Tensor i32 = Tensor::from<std::int32_t>({2}, {1, 2});
    CHECK(call<ReduceSum>({i32}, attrs({0})).error().rule == "float-or-quantized");
}

TEST_CASE("the int32 accumulator is proved: counts whose worst case overflows are refused without allocating") {
    // int8 with zp 127: x - zp in [-255, 0]; 8421504 * 255 = 2147483520 fits, one more element does not.
    const auto q = quant(DType::i8, 0.01f, 127);
    const auto qo = quant(DType::i8, 100.0f, 0);
    auto plan_of = [&](std::int64_t n, const numeric::QuantParams& qi) {
        return ReduceSum::plan(std::array{TensorType{DType::i8, {3, n}, qi}}, attrs({1}, 0), TensorType{DType::i8, {3}, qo}, janus::numeric::default_rounding_mode);
    };
    auto ok = plan_of(8421504, q);
    REQUIRE(ok.ok());
    CHECK(ok->acc_range == numeric::Interval{-2147483520, 0});
    auto bad = plan_of(8421505, q);
    REQUIRE(!bad.ok());
    CHECK(bad.error().rule == "accumulator-fits-int32");
    CHECK(bad.error().detail.find("8421505") != std::string::npos);
    CHECK(bad.error().detail.find("at most 8421504") != std::string::npos);
    MESSAGE(bad.error().message());
    // ReduceMean has the same accumulator, hence the same limit
    CHECK(ReduceMean::plan(std::array{TensorType{DType::i8, {3, 8421505}, q}}, attrs({1}, 0), TensorType{DType::i8, {3}, qo}, janus::numeric::default_rounding_mode)
              .error()
              .rule == "accumulator-fits-int32");
    // the proof uses the actual zero point: zp 0 keeps x - zp in [-128, 127], up to 2^24 elements
    const auto q0 = quant(DType::i8, 0.01f, 0);
    CHECK(plan_of(8421505, q0).ok());
    CHECK(plan_of(std::int64_t{1} << 24, q0).ok());
    CHECK(plan_of((std::int64_t{1} << 24) + 1, q0).error().rule == "accumulator-fits-int32");
    // a count from several axes: [4096, 4096] reduced fully is 2^24 elements of [-255, 0]
    CHECK(ReduceSum::plan(std::array{TensorType{DType::i8, {4096, 4096}, q}}, attrs({}, 0), TensorType{DType::i8, {}, qo}, janus::numeric::default_rounding_mode)
              .error()
              .rule == "accumulator-fits-int32");
    // max / min never grow: any count is fine
    CHECK(ReduceMax::plan(std::array{TensorType{DType::i8, {4096, 4096}, q}}, attrs({}, 0), TensorType{DType::i8, {}, q}, janus::numeric::default_rounding_mode).ok());
    // round_double's left shift is proved too: s_in / s_out = 1 is 2^30 * 2^(1-31), so |acc| must stay below 2^30
    auto shift = ReduceSum::plan(std::array{TensorType{DType::i8, {1, 5000000}, q}}, attrs({1}, 0), TensorType{DType::i8, {1}, q}, janus::numeric::default_rounding_mode);
    REQUIRE(!shift.ok());
    CHECK(shift.error().rule == "requantize-left-shift-fits-int32");
}
