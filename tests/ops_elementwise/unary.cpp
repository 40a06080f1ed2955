// ops/unary.hpp: every unary elementwise op, float32 and quantized int8/uint8.
//   - golden cases for the tricky semantics (NaN, signed zeros, Clip with min > max, LeakyRelu's alpha);
//   - float32 against a double-precision std:: reference, with a tolerance per op written next to it;
//   - quantized: EXACTLY "DequantizeLinear -> the public float op -> QuantizeLinear" (the table is built from the
//     op's float expression, so this holds by construction; the test proves the construction), and within 1 LSB of
//     round_half_even(f(real) / s_out) + zp_out computed in double;
//   - the scalar reference path and the SIMD path agree byte for byte on sizes with tails;
//   - errors name their rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <janus/ops/quantize.hpp>
#include <janus/ops/unary.hpp>
#include "support/quant_plan.hpp"

// Test executables build as one unity TU per directory: this file's helpers and tests live in their own
// namespace, so their names hide (never overload) a sibling file's helpers of the same name.
namespace unary_test {

namespace {

using namespace janus;
using namespace janus::ops;
namespace num = janus::numeric;

constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_f = std::numeric_limits<float>::infinity();

Tensor f32(const Shape& s, const std::vector<float>& v) { return Tensor::from<float>(s, v); }
Tensor f32(const std::vector<float>& v) { return f32(Shape{static_cast<std::int64_t>(v.size())}, v); }

template <class O>
std::vector<float> run_f(const std::vector<float>& x, const typename O::Attrs& a = {}, const OpContext& ctx = {}) {
    auto r = call<O>({f32(x)}, a, std::nullopt, ctx);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
    return r->template to_vector<float>();
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
/// Bit identity of two float vectors, except that any two NaNs match (NaN sign and payload are not promised
/// between the scalar and SIMD paths when two NaNs meet: expr.hpp).
bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
        if (!(std::isnan(a[k]) && std::isnan(b[k])) && !same_bits(a[k], b[k])) return false;
    return true;
}

/// Float inputs: mostly [-10, 10], some [-100, 100], plus every special.
std::vector<float> float_inputs(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<float> v = {nan_f, -nan_f, inf_f, -inf_f, 0.0f, -0.0f, std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 0.5f, -0.5f, 1e-30f,
                            -1e-30f, 88.0f, 89.0f, -88.0f, -104.0f, 1e20f, -1e20f, 6.0f, -3.0f, 3.0f};
    std::uniform_real_distribution<float> small(-10.0f, 10.0f), big(-100.0f, 100.0f);
    while (v.size() < n) v.push_back(v.size() % 5 == 0 ? big(rng) : small(rng));
    return v;
}

// ---------------------------------------------------------------------------------------------------------------
// Op table: for each op configuration, the attributes and the double-precision reference.

/// Tolerance of the float32 kernel against the double reference: |got - ref| <= rtol * |ref| + atol * max(1, |x|).
struct Tol {
    double rtol = 0;
    double atol = 0;
};

template <class O>
struct Case {
    using op_type = O;
    std::string name;
    typename O::Attrs attrs;
    std::function<double(double)> ref;
    Tol tol;
};

double sigmoid_d(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double hard_sigmoid_d(double x, double a, double b) {  // NaN propagates (numpy max/min)
    return std::isnan(x) ? x : std::max(0.0, std::min(1.0, x * a + b));
}
double gelu_erf_d(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_d(double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}
double clip_d(double x, double lo, double hi) { return std::isnan(x) ? x : std::min(std::max(x, lo), hi); }
double sign_d(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }

// Tolerances (why each is what it is; "measured" = the largest error this test sees, x86-64 SSE2 and AVX-512):
//   exact (0, 0): Abs, Neg, Sign, Relu, Clip select or negate exactly; LeakyRelu's x * alpha is one correctly rounded
//     float product, which equals the double product (exact: 24 + 24 bits) rounded once to float.
//   HardSigmoid / HardSwish: x * alpha + beta rounds twice in float (each <= 2^-24 relative), then a clamp (and a
//     product for HardSwish); near the kink the result is ~0, so the bound is absolute: 4e-7 * max(1, |x|)
//     (measured 9e-8).
//   Exp, Sigmoid, Tanh, Erf: xsimd's float algorithms are accurate to about 1 ulp (measured <= 1.7e-7 relative,
//     Sigmoid included); rtol 1e-6 is ~8 ulps. atol 1e-37 admits results that underflow (xsimd flushes exp to 0 for
//     x <= -88.376, where the true value is a denormal < 4e-39).
//   Gelu: 1 + erf(x/sqrt2) and 1 + tanh(...) cancel for x << 0 (the result is tiny while the rounding error of the
//     sum is an ulp of 1, i.e. 6e-8, times 0.5 |x|): atol 2e-7 * max(1, |x|) (measured 9.3e-8), rtol 2e-6.
const std::vector<Case<Abs>> abs_cases{{"Abs", {}, [](double x) { return std::fabs(x); }, {}}};
const std::vector<Case<Neg>> neg_cases{{"Neg", {}, [](double x) { return -x; }, {}}};
const std::vector<Case<Sign>> sign_cases{{"Sign", {}, sign_d, {}}};
const std::vector<Case<Relu>> relu_cases{{"Relu", {}, [](double x) { return x < 0 ? 0.0 : x; }, {}}};
const std::vector<Case<Clip>> clip_cases{
    {"Clip()", {}, [](double x) { return x; }, {}},
    {"Relu6 = Clip(0, 6)", {0.0f, 6.0f}, [](double x) { return clip_d(x, 0, 6); }, {}},
    {"Clip(-1.5, 2.25)", {-1.5f, 2.25f}, [](double x) { return clip_d(x, -1.5, 2.25); }, {}},
    {"Clip(3, 1): min > max gives max", {3.0f, 1.0f}, [](double x) { return std::isnan(x) ? x : 1.0; }, {}}};
const std::vector<Case<LeakyRelu>> leaky_cases{
    {"LeakyRelu(0.01)", {}, [](double x) { return x < 0 ? x * double{0.01f} : x; }, {}},
    {"LeakyRelu(0.2)", {0.2f}, [](double x) { return x < 0 ? x * double{0.2f} : x; }, {}},
    {"LeakyRelu(-1.5)", {-1.5f}, [](double x) { return x < 0 ? x * -1.5 : x; }, {}}};
const std::vector<Case<HardSigmoid>> hsig_cases{
    {"HardSigmoid(0.2, 0.5)", {}, [](double x) { return hard_sigmoid_d(x, double{0.2f}, 0.5); }, {0, 4e-7}},
    {"HardSigmoid(0.3, -0.1)", {0.3f, -0.1f},
     [](double x) { return hard_sigmoid_d(x, double{0.3f}, double{-0.1f}); }, {0, 4e-7}}};
const std::vector<Case<HardSwish>> hswish_cases{
    {"HardSwish", {}, [](double x) { return x * hard_sigmoid_d(x, 1.0 / 6.0, 0.5); }, {0, 4e-7}}};
const std::vector<Case<Sigmoid>> sigmoid_cases{{"Sigmoid", {}, sigmoid_d, {1e-6, 1e-37}}};
const std::vector<Case<Tanh>> tanh_cases{{"Tanh", {}, [](double x) { return std::tanh(x); }, {1e-6, 1e-37}}};
// Exp: xsimd returns +inf from x >= 88.3762626647949 (its `maxlog`), not from ln(FLT_MAX) = 88.7228: in between the
// true value is finite (up to 3.4e38). A documented domain limit (docs/numerics.md), pinned here.
constexpr double xsimd_maxlog = 88.3762626647949;
const std::vector<Case<Exp>> exp_cases{
    {"Exp", {}, [](double x) { return x >= xsimd_maxlog ? HUGE_VAL : std::exp(x); }, {1e-6, 1e-37}}};
const std::vector<Case<Erf>> erf_cases{{"Erf", {}, [](double x) { return std::erf(x); }, {1e-6, 1e-37}}};
// Sqrt, Reciprocal: one correctly rounded IEEE operation each, and the double result rounded once to float is the
// correctly rounded float result (53 >= 2 * 24 + 2 bits), so both are exact; Sqrt of x < 0 is NaN.
const std::vector<Case<Sqrt>> sqrt_cases{{"Sqrt", {}, [](double x) { return std::sqrt(x); }, {}}};
const std::vector<Case<Reciprocal>> reciprocal_cases{{"Reciprocal", {}, [](double x) { return 1.0 / x; }, {}}};
const std::vector<Case<Gelu>> gelu_cases{{"Gelu(none)", {}, gelu_erf_d, {2e-6, 2e-7}},
                                         {"Gelu(tanh)", {"tanh"}, gelu_tanh_d, {2e-6, 2e-7}}};

/// Call f(cases) for every op's table.
template <class F>
void for_each_op(F&& f) {
    f(abs_cases);
    f(neg_cases);
    f(sign_cases);
    f(relu_cases);
    f(clip_cases);
    f(leaky_cases);
    f(hsig_cases);
    f(hswish_cases);
    f(sigmoid_cases);
    f(tanh_cases);
    f(exp_cases);
    f(erf_cases);
    f(sqrt_cases);
    f(reciprocal_cases);
    f(gelu_cases);
}

/// Compared with the reference ROUNDED TO FLOAT (so "exact" means got == float(ref), signed zeros included).
bool within(float got, double ref_d, double x, const Tol& t) {
    const float ref = static_cast<float>(ref_d);  // overflows to +-inf like the float kernel should
    if (std::isnan(ref)) return std::isnan(got);
    if (std::isnan(got)) return false;
    if (t.rtol == 0 && t.atol == 0) return same_bits(got, ref);
    if (std::isinf(got) || std::isinf(ref)) return got == ref;
    const double slack = t.atol == 0 ? 0.0 : t.atol * std::max(1.0, std::fabs(x));
    return std::fabs(static_cast<double>(got) - ref) <= t.rtol * std::fabs(static_cast<double>(ref)) + slack;
}

// ---------------------------------------------------------------------------------------------------------------
// Quantized helpers

template <class T>
Tensor all_codes() {
    std::vector<T> v(256);
    for (int k = 0; k < 256; ++k) v[static_cast<std::size_t>(k)] = static_cast<T>(std::numeric_limits<T>::min() + k);
    return Tensor::from<T>(Shape{16, 16}, v);
}

/// ONNX QuantizeLinear in double: saturate(round_half_even(y / s) + zp).
std::int32_t quantize_d(double y, double s, std::int32_t zp, DType d) {
    if (std::isnan(y)) return zp;
    const double q = std::nearbyint(y / s) + zp;
    return static_cast<std::int32_t>(std::clamp<double>(q, qmin(d), qmax(d)));
}

/// Output parameters fitted to f over the input's real range [lo, hi]: the 256 codes span [min f, max f]; `squeeze`
/// > 1 shrinks the scale so the ends saturate.
num::QuantParams fit_output(const std::function<double(double)>& f, double lo, double hi, DType d, double squeeze) {
    double ymin = 0, ymax = 0;  // include 0 so the zero point is in range
    for (int k = 0; k <= 1000; ++k) {
        const double y = f(lo + (hi - lo) * k / 1000.0);
        if (std::isfinite(y)) ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
    double s = (ymax - ymin) / 255.0 / squeeze;
    if (!(s > 0)) s = 1.0;
    const auto zp = static_cast<std::int32_t>(std::clamp<double>(std::nearbyint(qmin(d) - ymin / s), qmin(d), qmax(d)));
    return num::make_quant(d, static_cast<float>(s), zp).value();
}

/// Input parameter sets: zero point in the middle, at the low end and at the high end.
std::vector<num::QuantParams> input_params(DType d) {
    const std::int32_t lo = qmin(d), hi = qmax(d), mid = (lo + hi + 1) / 2;
    return {num::make_quant(d, 0.05f, mid).value(), num::make_quant(d, 0.1f, lo).value(),
            num::make_quant(d, 0.02f, hi).value(), num::make_quant(d, 0.0123f, mid - 37).value()};
}

struct LsbStats {
    int max_err = 0;
    long off_by_one = 0;
    long total = 0;
};

template <class O, class T>
void check_quantized_case(const Case<O>& c, LsbStats& stats) {
    const DType d = dtype_v<T>;
    const Tensor q = all_codes<T>();
    for (const auto& qi : input_params(d)) {
        const double lo = qi.scale() * (qmin(d) - qi.zero_point()), hi = qi.scale() * (qmax(d) - qi.zero_point());
        for (double squeeze : {1.0, 3.0}) {
            const num::QuantParams qo = fit_output(c.ref, lo, hi, d, squeeze);
            CAPTURE(c.name);
            CAPTURE(qi.str());
            CAPTURE(qo.str());
            Tensor qin = q;
            qin.quant = qi;
            const TensorType out{d, qin.shape(), qo};
            // the quantized kernel, both paths
            auto y_simd = call<O>({qin}, c.attrs, out, OpContext{true});
            auto y_scalar = call<O>({qin}, c.attrs, out, OpContext{false});
            REQUIRE_MESSAGE(y_simd.ok(), (y_simd.ok() ? "" : y_simd.error().message()));
            REQUIRE(y_scalar.ok());
            const auto got = y_simd->template to_vector<T>();
            CHECK(got == y_scalar->template to_vector<T>());
            CHECK(y_simd->quant == qo);  // the caller's quantization, never the input's (seed A10)
            // (a) DequantizeLinear -> the public float op -> QuantizeLinear, exactly
            auto deq = call<DequantizeLinear>({qin}, {});
            REQUIRE(deq.ok());
            auto yf = call<O>({*deq}, c.attrs);
            REQUIRE(yf.ok());
            QuantizeLinear::Attrs qa;
            qa.scale = {qo.scale()};
            qa.zero_point = {qo.zero_point()};
            qa.dtype = d == DType::i8 ? "int8" : "uint8";
            auto requant = call<QuantizeLinear>({*yf}, qa);
            REQUIRE(requant.ok());
            CHECK(got == requant->template to_vector<T>());
            // (b) within 1 LSB of the double reference
            const auto codes = q.to_vector<T>();
            int worst = 0;
            for (std::size_t k = 0; k < codes.size(); ++k) {
                const double real = static_cast<double>(qi.scale()) * (codes[k] - qi.zero_point());
                const std::int32_t want = quantize_d(c.ref(real), qo.scale(), qo.zero_point(), d);
                const int err = std::abs(static_cast<int>(got[k]) - want);
                worst = std::max(worst, err);
                stats.max_err = std::max(stats.max_err, err);
                stats.off_by_one += err == 1;
                ++stats.total;
            }
            CHECK(worst <= 1);
        }
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Golden cases

TEST_CASE("NaN propagates through every unary op (never replaced by a clamp bound or zero)") {
    const std::vector<float> x{nan_f, -nan_f};
    for_each_op([&](const auto& cases) {
        for (const auto& c : cases) {
            CAPTURE(c.name);
            for (bool simd : {false, true})
                for (float y : run_f<typename std::decay_t<decltype(cases)>::value_type::op_type>(x, c.attrs, {simd}))
                    CHECK(std::isnan(y));
        }
    });
}

TEST_CASE("Sign keeps the sign of zero and maps infinities to +-1; Abs(-0) = +0; Neg(+0) = -0") {
    const auto s = run_f<Sign>({0.0f, -0.0f, inf_f, -inf_f, 1e-45f, -3.5f});
    CHECK(same_bits(s[0], 0.0f));
    CHECK(same_bits(s[1], -0.0f));
    CHECK(s[2] == 1.0f);
    CHECK(s[3] == -1.0f);
    CHECK(s[4] == 1.0f);  // a denormal is > 0
    CHECK(s[5] == -1.0f);
    CHECK(same_bits(run_f<Abs>({-0.0f})[0], 0.0f));
    CHECK(same_bits(run_f<Neg>({0.0f})[0], -0.0f));
    CHECK(same_bits(run_f<Neg>({0.0f}, {}, {false})[0], -0.0f));
}

TEST_CASE("Clip: Relu6 is Clip(0, 6); min > max gives max everywhere; default bounds are the identity") {
    CHECK(run_f<Clip>({-1.0f, 3.0f, 7.0f, inf_f, -inf_f}, {0.0f, 6.0f}) == std::vector<float>{0, 3, 6, 6, 0});
    CHECK(run_f<Clip>({-5.0f, 0.0f, 2.0f, 5.0f}, {3.0f, 1.0f}) == std::vector<float>{1, 1, 1, 1});
    CHECK(run_f<Clip>({-inf_f, -1e30f, 1e30f, inf_f}) == std::vector<float>{-inf_f, -1e30f, 1e30f, inf_f});
    CHECK(run_f<Relu>({-2.0f, 0.5f, -inf_f, inf_f}) == std::vector<float>{0, 0.5f, 0, inf_f});
}

TEST_CASE("LeakyRelu multiplies only negative inputs by alpha (default 0.01)") {
    CHECK(run_f<LeakyRelu>({-10.0f, -0.5f, 0.0f, 3.0f}, {0.1f}) ==
          std::vector<float>{-10.0f * 0.1f, -0.5f * 0.1f, 0.0f, 3.0f});
    CHECK(run_f<LeakyRelu>({-100.0f, 2.0f}) == std::vector<float>{-100.0f * 0.01f, 2.0f});
    CHECK(run_f<LeakyRelu>({-2.0f, 2.0f}, {-1.0f}) == std::vector<float>{2.0f, 2.0f});  // negative alpha: |x|
    CHECK(run_f<LeakyRelu>({-inf_f}, {0.5f})[0] == -inf_f);
}

TEST_CASE("HardSigmoid, HardSwish, Sigmoid, Tanh, Exp, Erf, Sqrt, Reciprocal, Gelu at hand-computed points") {
    CHECK(run_f<HardSigmoid>({-3.0f, 0.0f, 1.0f, 3.0f}) == std::vector<float>{0.0f, 0.5f, 0.2f + 0.5f, 1.0f});
    CHECK(run_f<HardSwish>({-4.0f, -3.0f, 0.0f, 3.0f, 5.0f}) == std::vector<float>{-0.0f, -0.0f, 0.0f, 3.0f, 5.0f});
    CHECK(run_f<Sigmoid>({0.0f, inf_f, -inf_f}) == std::vector<float>{0.5f, 1.0f, 0.0f});
    CHECK(run_f<Tanh>({0.0f, inf_f, -inf_f, 20.0f}) == std::vector<float>{0.0f, 1.0f, -1.0f, 1.0f});
    CHECK(run_f<Exp>({0.0f, -inf_f, inf_f, 100.0f}) == std::vector<float>{1.0f, 0.0f, inf_f, inf_f});
    CHECK(run_f<Erf>({0.0f, inf_f, -inf_f, 6.0f}) == std::vector<float>{0.0f, 1.0f, -1.0f, 1.0f});
    CHECK(run_f<Sqrt>({0.0f, 4.0f, 2.0f, inf_f}) == std::vector<float>{0.0f, 2.0f, 1.41421354f, inf_f});
    CHECK(std::signbit(run_f<Sqrt>({-0.0f})[0]));
    CHECK(std::isnan(run_f<Sqrt>({-1.0f})[0]));
    CHECK(run_f<Reciprocal>({4.0f, -0.5f, inf_f, 0.0f, -0.0f}) == std::vector<float>{0.25f, -2.0f, 0.0f, inf_f, -inf_f});
    CHECK(run_f<Gelu>({0.0f, 10.0f, inf_f}) == std::vector<float>{0.0f, 10.0f, inf_f});
    CHECK(run_f<Gelu>({0.0f, 10.0f, inf_f}, {"tanh"}) == std::vector<float>{0.0f, 10.0f, inf_f});
    CHECK(run_f<Gelu>({1.0f})[0] == doctest::Approx(0.841344746).epsilon(1e-6));
    CHECK(run_f<Gelu>({1.0f}, {"tanh"})[0] == doctest::Approx(0.841191990).epsilon(1e-6));
}

// ---------------------------------------------------------------------------------------------------------------
// float32 against double

TEST_CASE("float32 kernels match the double-precision reference within the documented tolerance") {
    const auto x = float_inputs(20000, 0xF10A7);
    for_each_op([&](const auto& cases) {
        using O = typename std::decay_t<decltype(cases)>::value_type::op_type;
        for (const auto& c : cases) {
            const auto y = run_f<O>(x, c.attrs);
            long bad = 0;
            double worst_rel = 0;
            std::string first;
            for (std::size_t k = 0; k < x.size(); ++k) {
                const double ref = c.ref(x[k]);
                if (!within(y[k], ref, x[k], c.tol) && bad++ == 0)
                    first = "x = " + std::to_string(x[k]) + ": got " + std::to_string(y[k]) + ", want " +
                            std::to_string(ref);
                if (std::isfinite(ref) && ref != 0 && std::isfinite(y[k]))
                    worst_rel = std::max(worst_rel, std::fabs((y[k] - ref) / ref));
            }
            INFO(c.name << ": worst relative error " << worst_rel);
            CHECK_MESSAGE(bad == 0, bad << " elements outside the tolerance, first " << first);
        }
    });
}

// ---------------------------------------------------------------------------------------------------------------
// quantized

TEST_CASE("quantized unary ops equal DequantizeLinear -> float op -> QuantizeLinear exactly, and are within 1 LSB "
          "of the double reference (int8 and uint8)") {
    LsbStats s8, su8;
    for_each_op([&](const auto& cases) {
        for (const auto& c : cases) {
            check_quantized_case<typename std::decay_t<decltype(cases)>::value_type::op_type, std::int8_t>(c, s8);
            check_quantized_case<typename std::decay_t<decltype(cases)>::value_type::op_type, std::uint8_t>(c, su8);
        }
    });
    MESSAGE("unary int8: max error " << s8.max_err << " LSB, off by one " << s8.off_by_one << " / " << s8.total);
    MESSAGE("unary uint8: max error " << su8.max_err << " LSB, off by one " << su8.off_by_one << " / " << su8.total);
    CHECK(s8.max_err <= 1);
    CHECK(su8.max_err <= 1);
}

TEST_CASE("the quantized kernel is a 256-entry table indexed by the input code") {
    const auto qi = num::make_quant(DType::i8, 0.05f, 3).value();
    const auto qo = num::make_quant(DType::i8, 1.0f / 128, -128).value();
    const auto t = janus_test::quant_plan<Sigmoid>({qi}, qo, janus::numeric::Rounding::round_double, NoAttrs{}).value();
    CHECK(t->in == DType::i8);
    CHECK(t->out == DType::i8);
    CHECK(t->values[128 + 3] == quantize_d(0.5, qo.scale(), qo.zero_point(), DType::i8));  // code zp -> real 0
    CHECK(std::is_sorted(t->values.begin(), t->values.end()));  // a monotone op gives a monotone table
}

// ---------------------------------------------------------------------------------------------------------------
// scalar vs SIMD

TEST_CASE("every unary op: scalar and SIMD paths are bit-identical on sizes 1, 7, 13, 33, 100 (float and quantized)") {
    for_each_op([&](const auto& cases) {
        using O = typename std::decay_t<decltype(cases)>::value_type::op_type;
        for (const auto& c : cases) {
            CAPTURE(c.name);
            for (std::int64_t n : {1, 7, 13, 33, 100}) {
                CAPTURE(n);
                const auto x = float_inputs(static_cast<std::size_t>(n), static_cast<std::uint32_t>(n));
                // shuffle so that specials land in full batches and in tails
                std::vector<float> xs = x;
                std::shuffle(xs.begin(), xs.end(), std::mt19937(static_cast<std::uint32_t>(n) + 1));
                const auto a = run_f<O>(xs, c.attrs, {false}), b = run_f<O>(xs, c.attrs, {true});
                CHECK(same_floats(a, b));
                std::mt19937 rng(static_cast<std::uint32_t>(n) + 7);
                std::vector<std::uint8_t> codes(static_cast<std::size_t>(n));
                for (auto& v : codes) v = static_cast<std::uint8_t>(rng());
                const auto qi = num::make_quant(DType::u8, 0.07f, 100).value();
                const auto qo = num::make_quant(DType::u8, 0.03f, 20).value();
                const Tensor q = Tensor::from<std::uint8_t>(Shape{n}, codes, qi);
                auto ys = call<O>({q}, c.attrs, TensorType{DType::u8, Shape{n}, qo}, OpContext{false});
                auto yv = call<O>({q}, c.attrs, TensorType{DType::u8, Shape{n}, qo}, OpContext{true});
                REQUIRE(ys.ok());
                REQUIRE(yv.ok());
                CHECK(ys->template to_vector<std::uint8_t>() == yv->template to_vector<std::uint8_t>());
            }
        }
    });
}

// ---------------------------------------------------------------------------------------------------------------
// errors

TEST_CASE("a quantized unary op without an output quantization is refused: output-quantization-required") {
    const Tensor q = Tensor::from<std::int8_t>(Shape{3}, {1, 2, 3}, num::make_quant(DType::i8, 0.1f, 0).value());
    auto r = call<Relu>({q});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().rule == "output-quantization-required");
    CHECK(r.error().input == "Relu");
    auto r2 = call<Gelu>({q}, {"tanh"});
    REQUIRE_FALSE(r2.ok());
    CHECK(r2.error().rule == "output-quantization-required");
}

TEST_CASE("unary ops refuse per-axis input quantization, unquantized integers, int32 and a different output dtype") {
    const auto qo = num::make_quant(DType::i8, 0.1f, 0).value();
    const auto per_axis = num::make_quant_per_axis(DType::i8, {0.1f, 0.2f}, {0, 0}, 0, Shape{2, 3}).value();
    const Tensor q = Tensor::from<std::int8_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}, per_axis);
    auto r = call<Sigmoid>({q}, {}, TensorType{DType::i8, Shape{2, 3}, qo});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().rule == "per-tensor-quantization");
    CHECK(r.error().input == "Sigmoid.input[0]");

    const Tensor raw = Tensor::from<std::int8_t>(Shape{2}, {1, 2});
    auto r2 = call<Abs>({raw});
    REQUIRE_FALSE(r2.ok());
    CHECK(r2.error().rule == "float-or-quantized");
    const Tensor i32 = Tensor::from<std::int32_t>(Shape{2}, {1, 2});
    auto r3 = call<Neg>({i32});
    REQUIRE_FALSE(r3.ok());
    CHECK(r3.error().rule == "float-or-quantized");

    const Tensor q8 = Tensor::from<std::int8_t>(Shape{2}, {1, 2}, qo);
    auto r4 = call<Relu>({q8}, {}, TensorType{DType::u8, Shape{2}, num::make_quant(DType::u8, 0.1f, 0).value()});
    REQUIRE_FALSE(r4.ok());
    CHECK(r4.error().rule == "output-type-matches-inference");

    const Tensor x = f32({1.0f});
    auto r5 = call<Relu>({x, x});
    REQUIRE_FALSE(r5.ok());
    CHECK(r5.error().rule == "input-count");
}

TEST_CASE("bad attributes through call_with: unknown name, wrong kind, NaN clip bound, bad Gelu approximation") {
    const std::vector<Tensor> x{f32({-1.0f, 2.0f})};
    auto unknown = call_with<Relu>(x, {{"alpha", 0.1f}});
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().rule == "known-attribute");
    CHECK(unknown.error().position == "attribute alpha");

    auto kind = call_with<LeakyRelu>(x, {{"alpha", std::string("0.1")}});
    REQUIRE_FALSE(kind.ok());
    CHECK(kind.error().rule == "attribute-kind");
    CHECK(kind.error().input == "LeakyRelu");

    auto nan_min = call_with<Clip>(x, {{"min", nan_f}});
    REQUIRE_FALSE(nan_min.ok());
    CHECK(nan_min.error().rule == "attribute-range");
    CHECK(nan_min.error().position == "attribute min");
    auto nan_max = call_with<Clip>(x, {{"max", -nan_f}});
    REQUIRE_FALSE(nan_max.ok());
    CHECK(nan_max.error().position == "attribute max");

    auto gelu = call_with<Gelu>(x, {{"approximate", std::string("fast")}});
    REQUIRE_FALSE(gelu.ok());
    CHECK(gelu.error().rule == "attribute-range");
    CHECK(gelu.error().position == "attribute approximate");
    auto gelu_kind = call_with<Gelu>(x, {{"approximate", std::int64_t{1}}});
    REQUIRE_FALSE(gelu_kind.ok());
    CHECK(gelu_kind.error().rule == "attribute-kind");

    auto alpha_inf = call_with<LeakyRelu>(x, {{"alpha", inf_f}});
    REQUIRE_FALSE(alpha_inf.ok());
    CHECK(alpha_inf.error().rule == "attribute-range");

    // accepted: integer literals where floats are expected, infinite Clip bounds, both Gelu forms
    auto relu6 = call_with<Clip>(x, {{"min", std::int64_t{0}}, {"max", std::int64_t{6}}});
    REQUIRE(relu6.ok());
    CHECK(relu6->to_vector<float>() == std::vector<float>{0.0f, 2.0f});
    CHECK(call_with<Clip>(x, {{"min", -inf_f}, {"max", inf_f}}).ok());
    CHECK(call_with<Gelu>(x, {{"approximate", std::string("tanh")}}).ok());
    CHECK(call_with<Gelu>(x, {{"approximate", std::string("none")}}).ok());
}

}  // namespace unary_test
