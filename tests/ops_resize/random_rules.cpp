// Resize, part 2: randomized comparison against a plain double reference written from the ONNX reference
// implementation (edge padding and neighbour coefficients, not the kernel's clamp-then-floor), the measured error
// bounds of docs/numerics.md "Resize", scalar vs SIMD bit identity, and one test per error rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <janus/ops/resize.hpp>
#include <support/check_rule.hpp>

using namespace janus;
using ops::Resize;
using ops::TensorType;
using A = Resize::Attrs;

namespace {

const std::vector<std::string> coord_modes{"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                           "align_corners", "asymmetric",           "tf_half_pixel_for_nn"};
const std::vector<std::string> nearest_modes{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

/// Input coordinate of output coordinate j (the ONNX formulas, restated; `scale` as the op sees it).
double ref_coord(const std::string& m, std::int64_t j, double scale, std::int64_t in, std::int64_t out) {
    const double x = static_cast<double>(j), li = static_cast<double>(in), lo = static_cast<double>(out);
    if (m == "asymmetric") return x / scale;
    if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
    if (m == "align_corners") return out == 1 ? 0.0 : x * (li - 1) / (lo - 1);
    if (m == "pytorch_half_pixel" && out == 1) return -0.5;  // the reference's value; same result after clamping
    if (m == "half_pixel_symmetric") {
        const double adj = lo / (scale * li);
        return li / 2 * (1 - adj) + (x + 0.5) / scale - 0.5;
    }
    return (x + 0.5) / scale - 0.5;
}

/// The two neighbours floor(x), floor(x) + 1 (edge padded: clamped on read) and their coefficients, as the ONNX
/// reference: nearest puts weight 1 on one of them by the ratio rule; linear uses (1 - ratio, ratio).
struct Taps {
    std::int64_t i0, i1;
    double c0, c1;
};
Taps ref_taps(const std::string& mode, const std::string& nm, double x, std::int64_t in) {
    const double f = std::floor(x);
    double ratio = x - f;
    std::int64_t lo = static_cast<std::int64_t>(f), hi = lo + 1;
    if (ratio == 0.0) {  // an integer coordinate: the reference's neighbours are x - 1 and x, ratio 1
        hi = lo;
        lo = lo - 1;
        ratio = 1.0;
    }
    double c0 = 1 - ratio, c1 = ratio;
    if (mode == "nearest") {
        bool second = true;
        if (ratio != 1.0) {
            if (nm == "round_prefer_floor") second = ratio > 0.5;
            else if (nm == "round_prefer_ceil") second = ratio >= 0.5;
            else second = nm == "ceil";
        }
        c0 = second ? 0 : 1;
        c1 = second ? 1 : 0;
    }
    auto clampi = [&](std::int64_t i) { return std::min(std::max<std::int64_t>(i, 0), in - 1); };
    return {clampi(lo), clampi(hi), c0, c1};
}

/// Real values (dequantized) of a rank-4 tensor, resized in double.
std::vector<double> ref_resize(const Tensor& x, const A& a, const Shape& out, const std::array<double, 4>& scale) {
    const Shape& s = x.shape();
    std::vector<double> r;
    for (std::int64_t n = 0; n < out[0]; ++n)
        for (std::int64_t c = 0; c < out[1]; ++c)
            for (std::int64_t h = 0; h < out[2]; ++h)
                for (std::int64_t w = 0; w < out[3]; ++w) {
                    const std::string& cm = a.coordinate_transformation_mode;
                    const Taps th = ref_taps(a.mode, a.nearest_mode, ref_coord(cm, h, scale[2], s[2], out[2]), s[2]);
                    const Taps tw = ref_taps(a.mode, a.nearest_mode, ref_coord(cm, w, scale[3], s[3], out[3]), s[3]);
                    auto v = [&](std::int64_t i, std::int64_t j) { return real_value_at(x, Dims{n, c, i, j}); };
                    r.push_back(th.c0 * (tw.c0 * v(th.i0, tw.i0) + tw.c1 * v(th.i0, tw.i1)) +
                                th.c1 * (tw.c0 * v(th.i1, tw.i0) + tw.c1 * v(th.i1, tw.i1)));
                }
    return r;
}

/// Quantize half to even with saturation (the exact "quantize" of the reference).
template <class T>
double quantize_ref(double real, const numeric::QuantParams& q) {
    const double v = std::nearbyint(real / static_cast<double>(q.scale())) + q.zero_point();
    return std::clamp(v, static_cast<double>(std::numeric_limits<T>::lowest()),
                      static_cast<double>(std::numeric_limits<T>::max()));
}

struct Case {
    A attrs;
    Shape in;
    std::array<double, 4> scale{1, 1, 1, 1};  // the scale the op uses (attribute or out / in)
};

/// A random case: shape, modes, and scales or sizes (scales from a list of float-exact values).
Case random_case(std::mt19937& g, bool linear, std::int64_t max_extent = 7, std::int64_t max_out = 12) {
    auto uni = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(g); };
    Case k;
    k.in = Shape{uni(1, 2), uni(1, 3), uni(1, max_extent), uni(1, max_extent)};
    k.attrs.mode = linear ? "linear" : "nearest";
    k.attrs.coordinate_transformation_mode = coord_modes[static_cast<std::size_t>(uni(0, 5))];
    k.attrs.nearest_mode = nearest_modes[static_cast<std::size_t>(uni(0, 3))];
    if (uni(0, 2) == 0) {
        static const float pool[] = {0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 2.0f, 2.5f, 3.0f, 0.6f, 1.7f, 2.3f};
        const float sh = pool[uni(0, 10)], sw = pool[uni(0, 10)];
        k.attrs.scales = {1, 1, sh, sw};
        k.scale = {1, 1, sh, sw};
    } else {
        const std::int64_t oh = uni(1, max_out), ow = uni(1, max_out);
        k.attrs.sizes = {k.in[0], k.in[1], oh, ow};
        k.scale = {1, 1, static_cast<double>(oh) / static_cast<double>(k.in[2]),
                   static_cast<double>(ow) / static_cast<double>(k.in[3])};
    }
    return k;
}

bool refused_as_ambiguous(const Result<Tensor>& r) {
    return !r.ok() &&
           (r.error().rule == "scale-extent-unambiguous" || r.error().rule == "align-corners-extent-ambiguous");
}

template <class T>
Tensor random_input(const Shape& s, std::mt19937& g, std::optional<numeric::QuantParams> q) {
    std::vector<T> v;
    for (std::int64_t i = 0; i < element_count(s); ++i) {
        if constexpr (std::is_same_v<T, float>) v.push_back(std::uniform_real_distribution<float>(-100, 100)(g));
        else v.push_back(static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::lowest(),
                                                                           std::numeric_limits<T>::max())(g)));
    }
    return Tensor::from<T>(s, v, std::move(q));
}

template <class T>
void sweep_quantized(bool linear, bool same_quant, int cases, int& worst_lsb, int& compared, int* off = nullptr,
                     int* ties = nullptr) {
    std::mt19937 g(linear * 10 + same_quant + (std::is_same_v<T, std::int8_t> ? 100 : 200));
    const DType d = dtype_v<T>;
    for (int it = 0; it < cases; ++it) {
        const Case k = random_case(g, linear);
        const float s_in = std::uniform_real_distribution<float>(0.01f, 1.0f)(g);
        const auto zp = [&] {
            return static_cast<std::int32_t>(std::uniform_int_distribution<int>(std::numeric_limits<T>::lowest(),
                                                                                std::numeric_limits<T>::max())(g));
        };
        const auto qi = numeric::make_quant(d, s_in, zp()).value();
        // one draw per statement: the order of evaluation of function arguments differs between compilers
        const float ratio = std::uniform_real_distribution<float>(0.15f, 2.0f)(g);
        const std::int32_t zp_out = zp();
        const auto qo = same_quant ? qi : numeric::make_quant(d, s_in * ratio, zp_out).value();
        const Tensor x = random_input<T>(k.in, g, qi);
        const TensorType t0 = ops::type_of(x);
        auto inf = Resize::infer(std::span<const TensorType>(&t0, 1), k.attrs);
        if (!inf.ok()) {
            REQUIRE(refused_as_ambiguous(inf.error()));
            continue;
        }
        const TensorType out{d, inf.value().shape, qo};
        auto r = ops::call<Resize>({x}, k.attrs, out);
        REQUIRE(r.ok());
        const auto want = ref_resize(x, k.attrs, out.shape, k.scale);
        const auto got = r.value().to_vector<T>();
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            const int e = static_cast<int>(std::abs(static_cast<double>(got[i]) - quantize_ref<T>(want[i], qo)));
            worst_lsb = std::max(worst_lsb, e);
            ++compared;
            if (off && e != 0) ++*off;
            if (ties && e != 0) {
                const double u = want[i] / static_cast<double>(qo.scale());
                if (std::abs(u - std::floor(u) - 0.5) < 1e-9) ++*ties;
            }
        }
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Randomized comparisons (bounds documented in docs/numerics.md "Resize")

TEST_CASE("float nearest equals the ONNX reference exactly (every coordinate x nearest mode, scales and sizes)") {
    std::mt19937 g(7);
    int compared = 0, refused = 0;
    for (int it = 0; it < 300; ++it) {
        const Case k = random_case(g, false);
        const Tensor x = random_input<float>(k.in, g, std::nullopt);
        auto r = ops::call<Resize>({x}, k.attrs);
        if (refused_as_ambiguous(r)) {
            ++refused;
            continue;
        }
        REQUIRE(r.ok());
        const auto want = ref_resize(x, k.attrs, r.value().shape(), k.scale);
        const auto got = r.value().to_vector<float>();
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) CHECK(static_cast<double>(got[i]) == want[i]);
        compared += static_cast<int>(got.size());
    }
    CHECK(compared > 5000);
    CHECK(refused < 60);
}

TEST_CASE("float linear is within 2^-21 * max|x| of the double ONNX reference") {
    std::mt19937 g(8);
    double worst = 0;
    for (int it = 0; it < 300; ++it) {
        const Case k = random_case(g, true);
        const Tensor x = random_input<float>(k.in, g, std::nullopt);
        auto r = ops::call<Resize>({x}, k.attrs);
        if (refused_as_ambiguous(r)) continue;
        REQUIRE(r.ok());
        const auto want = ref_resize(x, k.attrs, r.value().shape(), k.scale);
        const auto got = r.value().to_vector<float>();
        for (std::size_t i = 0; i < got.size(); ++i)
            worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]) / 100.0);  // |x| <= 100
    }
    MESSAGE("float linear: max |error| / max|x| = " << worst);
    CHECK(worst <= std::ldexp(1.0, -21));
}

TEST_CASE("quantized nearest equals dequantize-select-quantize (same quantization: exact; requantized: <= 1 LSB)") {
    int worst = 0, n = 0;
    sweep_quantized<std::int8_t>(false, true, 150, worst, n);
    sweep_quantized<std::uint8_t>(false, true, 150, worst, n);
    CHECK(worst == 0);
    CHECK(n > 10000);
    worst = 0;
    n = 0;
    sweep_quantized<std::int8_t>(false, false, 150, worst, n);
    sweep_quantized<std::uint8_t>(false, false, 150, worst, n);
    MESSAGE("quantized nearest, requantized: max error " << worst << " LSB over " << n << " elements");
    CHECK(worst <= 1);
}

TEST_CASE("quantized linear is within 1 LSB of dequantize, double linear resize, quantize (half to even)") {
    // s_in / s_out in [0.5, 6.7]: the weight rounding (<= 0.125 input LSB) stays below 1 output LSB (header comment)
    int worst_same = 0, worst_diff = 0, n_same = 0, n_diff = 0, off_same = 0, off_diff = 0, ties = 0;
    sweep_quantized<std::int8_t>(true, true, 200, worst_same, n_same, &off_same, &ties);
    sweep_quantized<std::uint8_t>(true, true, 200, worst_same, n_same, &off_same, &ties);
    sweep_quantized<std::int8_t>(true, false, 200, worst_diff, n_diff, &off_diff);
    sweep_quantized<std::uint8_t>(true, false, 200, worst_diff, n_diff, &off_diff);
    MESSAGE("quantized linear: max error " << worst_same << " LSB, " << off_same << " of " << n_same
                                           << " elements off, " << ties << " of them exact ties (same quantization)");
    MESSAGE("quantized linear: max error " << worst_diff << " LSB, " << off_diff << " of " << n_diff
                                           << " elements off (requantized)");
    CHECK(worst_same <= 1);
    CHECK(worst_diff <= 1);
}

TEST_CASE("quantized linear reproduces a constant image exactly (weights sum to 2^11 on each axis)") {
    const auto q = numeric::make_quant(DType::u8, 0.3f, 17).value();
    const Tensor x = Tensor::from<std::uint8_t>({1, 1, 3, 5}, std::vector<std::uint8_t>(15, 201), q);
    for (const auto& c : coord_modes) {
        A a;
        a.mode = "linear";
        a.coordinate_transformation_mode = c;
        a.sizes = {1, 1, 7, 4};
        auto r = ops::call<Resize>({x}, a, TensorType{DType::u8, {1, 1, 7, 4}, q});
        REQUIRE(r.ok());
        CHECK(r.value().to_vector<std::uint8_t>() == std::vector<std::uint8_t>(28, 201));
    }
}

TEST_CASE("the Q.11 weights: round(f * 2048) half up, w0 + w1 = 2048") {
    CHECK(ops::resize::fixed_weight(0.0) == 0);
    CHECK(ops::resize::fixed_weight(0.25) == 512);
    CHECK(ops::resize::fixed_weight(1.0 / 3) == 683);      // 682.67
    CHECK(ops::resize::fixed_weight(0.5 / 2048) == 1);     // a half rounds up
    CHECK(ops::resize::fixed_weight(1.0 - 1e-9) == 2048);  // the whole weight on the second tap
}

// ---------------------------------------------------------------------------------------------------------------
// Scalar reference path vs SIMD

TEST_CASE("scalar (OpContext{.simd=false}) and SIMD results are bit-identical (float and quantized, both modes)") {
    std::mt19937 g(11);
    int compared = 0;
    for (int it = 0; it < 60; ++it) {
        const bool linear = it % 2 == 0;
        Case k = random_case(g, linear, 9, 40);  // wide rows: full SIMD batches plus tails
        const int kind = (it / 2) % 3;           // float, int8, uint8
        const DType d = kind == 0 ? DType::f32 : kind == 1 ? DType::i8 : DType::u8;
        std::optional<numeric::QuantParams> qi, qo;
        if (kind != 0) {
            qi = numeric::make_quant(d, 0.05f, kind == 1 ? -7 : 131).value();
            qo = it % 4 < 2 ? *qi : numeric::make_quant(d, 0.07f, kind == 1 ? 3 : 120).value();
        }
        const Tensor x = kind == 0 ? random_input<float>(k.in, g, qi)
                         : kind == 1 ? random_input<std::int8_t>(k.in, g, qi)
                                     : random_input<std::uint8_t>(k.in, g, qi);
        const TensorType t0 = ops::type_of(x);
        auto inf = Resize::infer(std::span<const TensorType>(&t0, 1), k.attrs);
        if (!inf.ok()) continue;
        const TensorType out{d, inf.value().shape, qo};
        auto a = ops::call<Resize>({x}, k.attrs, out, ops::OpContext{.simd = false});
        auto b = ops::call<Resize>({x}, k.attrs, out, ops::OpContext{.simd = true});
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        REQUIRE(a.value().elements() == b.value().elements());
        const auto n = static_cast<std::size_t>(a.value().elements()) * dtype_size(d);
        CHECK(std::equal(a.value().data(), a.value().data() + n, b.value().data()));
        compared += static_cast<int>(a.value().elements());
    }
    CHECK(compared > 10000);
}

TEST_CASE("N=2, C=3: every plane is resized independently; N=0 gives an empty result") {
    std::mt19937 g(3);
    const Tensor x = random_input<float>({2, 3, 2, 3}, g, std::nullopt);
    A a;
    a.mode = "linear";
    a.sizes = {2, 3, 3, 5};
    auto r = ops::call<Resize>({x}, a);
    REQUIRE(r.ok());
    for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t c = 0; c < 3; ++c) {
            std::vector<float> plane;
            for (std::int64_t i = 0; i < 6; ++i) plane.push_back(x.at<float>(Dims{n, c, i / 3, i % 3}));
            A one = a;
            one.sizes = {1, 1, 3, 5};
            auto p = ops::call<Resize>({Tensor::from<float>({1, 1, 2, 3}, plane)}, one);
            REQUIRE(p.ok());
            for (std::int64_t i = 0; i < 15; ++i)
                CHECK(r.value().at<float>(Dims{n, c, i / 5, i % 5}) == p.value().at<float>(Dims{0, 0, 0, i}));
        }
    A e;
    e.sizes = {0, 3, 4, 4};
    auto z = ops::call<Resize>({Tensor::from<float>({0, 3, 2, 2}, {})}, e);
    REQUIRE(z.ok());
    CHECK(z.value().shape() == Shape{0, 3, 4, 4});
}

// ---------------------------------------------------------------------------------------------------------------
// Error rules

namespace {
A with_scales(std::vector<float> s) {
    A a;
    a.scales = std::move(s);
    return a;
}
A with_sizes(std::vector<std::int64_t> s) {
    A a;
    a.sizes = std::move(s);
    return a;
}
Result<Tensor> call(const Tensor& x, const A& a, std::optional<TensorType> out = std::nullopt) {
    return ops::call<Resize>({x}, a, std::move(out));
}
Result<TensorType> infer_raw(const TensorType& t, const A& a) {
    return Resize::infer(std::span<const TensorType>(&t, 1), a);
}
const Tensor f22 = Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4});
}  // namespace

TEST_CASE("rule input-count: exactly one input (roi, scales, sizes are attributes)") {
    CHECK_RULE(ops::call<Resize>({f22, f22}, with_scales({1, 1, 2, 2})), "input-count");
}

TEST_CASE("rule resize-rank-4: only N x C x H x W inputs") {
    CHECK_RULE(call(Tensor::from<float>({2, 2}, {1, 2, 3, 4}), with_sizes({4, 4})), "resize-rank-4");
}

TEST_CASE("rule float-or-quantized: unquantized int32 inputs are refused") {
    CHECK_RULE(call(Tensor::from<std::int32_t>({1, 1, 1, 2}, {1, 2}), with_scales({1, 1, 1, 2})), "float-or-quantized");
}

TEST_CASE("rule scales-or-sizes: exactly one of scales and sizes") {
    CHECK_RULE(call(f22, A{}), "scales-or-sizes");
    A both = with_scales({1, 1, 2, 2});
    both.sizes = {1, 1, 4, 4};
    CHECK_RULE(call(f22, both), "scales-or-sizes");
}

TEST_CASE("rules scales-length / sizes-length: one entry per axis of `axes` (default 4)") {
    CHECK_RULE(call(f22, with_scales({2, 2})), "scales-length");
    CHECK_RULE(call(f22, with_sizes({1, 4, 4})), "sizes-length");
    A a = with_sizes({4, 4, 4});
    a.axes = {2, 3};
    CHECK_RULE(call(f22, a), "sizes-length");
}

TEST_CASE("rules axis-in-range / axes-unique") {
    A a = with_sizes({4, 4});
    a.axes = {2, 5};
    CHECK_RULE(call(f22, a), "attribute-range");         // the schema's range check through call<>
    CHECK_RULE(infer_raw(ops::type_of(f22), a), "axis-in-range");  // infer on unchecked attributes
    a.axes = {3, -1};
    CHECK_RULE(call(f22, a), "axes-unique");
}

TEST_CASE("rule resize-batch-channel-unchanged: scale 1 / unchanged size on N and C") {
    CHECK_RULE(call(f22, with_scales({2, 1, 2, 2})), "resize-batch-channel-unchanged");
    CHECK_RULE(call(f22, with_scales({1, 1.5f, 2, 2})), "resize-batch-channel-unchanged");  // floor(1.5) = 1, scale 1.5
    CHECK_RULE(call(f22, with_sizes({1, 2, 4, 4})), "resize-batch-channel-unchanged");
    A a = with_sizes({1, 1, 4, 8});
    a.keep_aspect_ratio_policy = "not_smaller";  // s = 4 would also apply to N and C
    CHECK_RULE(call(f22, a), "resize-batch-channel-unchanged");
}

TEST_CASE("rule spatial-input-nonempty: an empty H or W cannot grow") {
    CHECK_RULE(call(Tensor::from<float>({1, 1, 0, 2}, {}), with_sizes({1, 1, 2, 2})), "spatial-input-nonempty");
}

TEST_CASE("rule output-extent-in-range: in * scale beyond 2^40") {
    CHECK_RULE(call(f22, with_scales({1, 1, 1e12f, 1e12f})), "output-extent-in-range");
}

TEST_CASE("rule scale-extent-unambiguous: floor(10 * 0.7f) is 6 in double (ONNX reference) but 7 in float (ORT)") {
    const Tensor x = Tensor::from<float>({1, 1, 1, 10}, std::vector<float>(10, 1.0f));
    CHECK_RULE(call(x, with_scales({1, 1, 1, 0.7f})), "scale-extent-unambiguous");
    A s = with_sizes({1, 1, 1, 7});  // the way out: give sizes
    CHECK(call(x, s).ok());
}

TEST_CASE("rule align-corners-extent-ambiguous: align_corners with in * scale not an integer (onnx/onnx #2462)") {
    const Tensor x = Tensor::from<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
    A a = with_scales({1, 1, 0.6f, 0.6f});
    a.mode = "linear";
    a.coordinate_transformation_mode = "align_corners";
    CHECK_RULE(call(x, a), "align-corners-extent-ambiguous");
    a.scales = {1, 1, 0.5f, 0.5f};  // 2 * 0.5 and 4 * 0.5 are integers
    CHECK(call(x, a).ok());
}

TEST_CASE("rules antialias-unsupported / exclude-outside-unsupported (nearest); cubic's and tf_crop's: cubic.cpp") {
    A a = with_scales({1, 1, 2, 2});
    a.antialias = 1;
    CHECK_RULE(call(f22, a), "antialias-unsupported");
    a = with_scales({1, 1, 2, 2});
    a.exclude_outside = 1;
    CHECK_RULE(call(f22, a), "exclude-outside-unsupported");
    // cubic_coeff_a and extrapolation_value only affect cubic and tf_crop_and_resize: no effect on nearest
    a = with_scales({1, 1, 2, 2});
    a.cubic_coeff_a = -0.5f;
    a.extrapolation_value = 3.0f;
    CHECK(call(f22, a).value().to_vector<float>() == call(f22, with_scales({1, 1, 2, 2})).value().to_vector<float>());
}

TEST_CASE("rule attribute-range: unknown strings, non-positive or non-finite scales (untrusted attributes)") {
    const TensorType t = ops::type_of(f22);
    CHECK_RULE(ops::infer_with<Resize>(std::span<const TensorType>(&t, 1),
                                       {{"mode", std::string("bicubic")}, {"scales", std::vector<float>{1, 1, 2, 2}}}),
               "attribute-range");
    CHECK_RULE(ops::infer_with<Resize>(std::span<const TensorType>(&t, 1),
                                       {{"scales", std::vector<float>{1, 1, 0, 2}}}),
               "attribute-range");
    CHECK_RULE(ops::infer_with<Resize>(std::span<const TensorType>(&t, 1),
                                       {{"scales", std::vector<float>{1, 1, std::nanf(""), 2}}}),
               "attribute-range");
    CHECK_RULE(ops::infer_with<Resize>(std::span<const TensorType>(&t, 1),
                                       {{"nearest_mode", std::string("round")},
                                        {"sizes", std::vector<std::int64_t>{1, 1, 4, 4}}}),
               "attribute-range");
    CHECK_RULE(ops::infer_with<Resize>(std::span<const TensorType>(&t, 1), {{"region", std::vector<float>{0, 1}}}),
               "known-attribute");
}

TEST_CASE("rule output-quantization-required: quantized linear needs the caller's output quantization (seed A10)") {
    const auto q = numeric::make_quant(DType::i8, 0.1f, 0).value();
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 1, 2}, {1, 2}, q);
    A a = with_scales({1, 1, 1, 2});
    a.mode = "linear";
    CHECK_RULE(call(x, a), "output-quantization-required");
    CHECK(call(x, a, TensorType{DType::i8, {1, 1, 1, 4}, q}).ok());
    CHECK_RULE(call(x, with_scales({1, 1, 1, 2}), TensorType{DType::i8, {1, 1, 1, 4}, std::nullopt}),
               "output-quantization-required");  // nearest: the output may not drop its quantization either
}

TEST_CASE("rule input-not-quantized: a float resize cannot produce a quantized output") {
    const auto q = numeric::make_quant(DType::i8, 0.1f, 0).value();
    const TensorType bad{DType::f32, {1, 1, 4, 4}, q};
    A n = with_scales({1, 1, 2, 2});
    CHECK_RULE(Resize::run(std::span<const Tensor>(&f22, 1), n, bad, {}), "input-not-quantized");
    n.mode = "linear";
    CHECK_RULE(Resize::run(std::span<const Tensor>(&f22, 1), n, bad, {}), "input-not-quantized");
}

TEST_CASE("rule per-tensor-quantization: linear needs per-tensor parameters") {
    const Shape s{1, 2, 1, 2};
    const auto q = numeric::make_quant_per_axis(DType::i8, {0.5f, 0.25f}, {0, 1}, 1, s).value();
    const Tensor x = Tensor::from<std::int8_t>(s, {1, 2, 3, 4}, q);
    A a = with_scales({1, 1, 1, 2});
    a.mode = "linear";
    CHECK_RULE(call(x, a, TensorType{DType::i8, {1, 2, 1, 4}, numeric::make_quant(DType::i8, 0.5f, 0).value()}),
               "per-tensor-quantization");
}

TEST_CASE("rule resize-keeps-quantization-axis: per-axis quantization along H or W is refused") {
    const Shape s{1, 1, 1, 2};
    const auto q = numeric::make_quant_per_axis(DType::i8, {0.5f, 0.25f}, {0, 1}, 3, s).value();
    CHECK_RULE(call(Tensor::from<std::int8_t>(s, {1, 2}, q), with_scales({1, 1, 1, 2})),
               "resize-keeps-quantization-axis");
}

TEST_CASE("rule output-type-matches-inference: a requested output of another shape") {
    CHECK_RULE(call(f22, with_scales({1, 1, 2, 2}), TensorType{DType::f32, {1, 1, 4, 5}, std::nullopt}),
               "output-type-matches-inference");
}
