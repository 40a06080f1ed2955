// Resize, part 3: mode = cubic (float32) and coordinate_transformation_mode = tf_crop_and_resize (roi,
// extrapolation_value). Golden values: the ONNX 1.12 reference implementation of the backend tests
// (onnx/backend/test/case/node/resize.py, interpolate_nd with cubic_coeffs / linear_coeffs / nearest_coeffs), run with
// numpy 1.24 by a script of the form
//     y = interpolate_nd(x, lambda r: cubic_coeffs(r, A), output_size=[...] or scale_factors=np.float32([...]),
//                        coordinate_transformation_mode=..., exclude_outside=..., roi=..., extrapolation_value=...)
//     print(", ".join("%.9g" % v for v in y.astype(np.float32).flatten()))
// and restated here. A randomized comparison against a literal double port of that reference (edge padding, the n
// nearest padded indices, ratio 1 on integer coordinates), scalar vs SIMD identity, the rules, and the NPU lowering's
// refusals follow.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <janus/emit/resize.hpp>
#include <janus/ops/resize.hpp>
#include <support/check_rule.hpp>

using namespace janus;

// The helpers live in a namespace of their own: the unity build compiles this file with golden.cpp and
// random_rules.cpp as one TU, whose anonymous-namespace helpers have the same names.
namespace cubic_test {

namespace {

using ops::Resize;
using ops::TensorType;
using A = Resize::Attrs;

A cubic(std::string coord = "half_pixel") {
    A a;
    a.mode = "cubic";
    a.coordinate_transformation_mode = std::move(coord);
    return a;
}
A with_sizes(A a, std::vector<std::int64_t> s) {
    a.sizes = std::move(s);
    return a;
}
A with_scales(A a, std::vector<float> s) {
    a.scales = std::move(s);
    return a;
}
A crop(std::string mode, std::vector<float> roi, std::vector<std::int64_t> sizes, float extrapolation = 0.0f) {
    A a;
    a.mode = std::move(mode);
    a.coordinate_transformation_mode = "tf_crop_and_resize";
    a.roi = std::move(roi);
    a.sizes = std::move(sizes);
    a.extrapolation_value = extrapolation;
    return a;
}

Result<Tensor> call(const Tensor& x, const A& a, std::optional<TensorType> out = std::nullopt) {
    return ops::call<Resize>({x}, a, std::move(out));
}

/// Run and compare with the reference's values: rtol 1e-5 (the node tests allow 1e-3), atol 1e-6.
void check_golden(const Tensor& x, const A& a, const Shape& shape, const std::vector<float>& want) {
    const auto r = call(x, a);
    if (!r.ok()) FAIL(r.error().message());
    REQUIRE(r.value().shape() == shape);
    const auto got = r.value().to_vector<float>();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(std::abs(got[i] - want[i]) <= 1e-6f + 1e-5f * std::abs(want[i]));
    }
}

// 1x1x3x4, values chosen so that no axis is symmetric.
const Tensor a34 = Tensor::from<float>({1, 1, 3, 4}, {1, 3, 2, 5, 4, -1, 0, 2, 7, 6, 8, 3});
// 1x1x4x6: i^1.5 / 4 for i = 0..23 (as float32).
const Tensor b46 = [] {
    std::vector<float> v;
    for (int i = 0; i < 24; ++i) v.push_back(static_cast<float>(std::pow(static_cast<float>(i), 1.5f) / 4.0f));
    return Tensor::from<float>({1, 1, 4, 6}, v);
}();
// 1x1x4x4: 1..16 (the ONNX backend tests' input).
const Tensor x44 = [] {
    std::vector<float> v;
    for (int i = 1; i <= 16; ++i) v.push_back(static_cast<float>(i));
    return Tensor::from<float>({1, 1, 4, 4}, v);
}();

// ---- a literal double port of the ONNX reference (interpolate_1d_with_x / interpolate_nd), for random cases ----

/// The reference's coordinate: output_width = scale * in (double), L_out = 1 cases as the reference writes them.
double ref_x(const std::string& m, std::int64_t j, double scale, std::int64_t in, std::int64_t out, float start,
             float end) {
    const double x = static_cast<double>(j), li = static_cast<double>(in), lo = scale * li;
    if (m == "align_corners") return lo == 1 ? 0.0 : x * (li - 1) / (lo - 1);
    if (m == "asymmetric") return x / scale;
    if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;  // (onnx 1.12 has no nearest-only mode in here)
    if (m == "tf_crop_and_resize") {                            // roi[1] - roi[0]: a float32 subtraction
        const double width = static_cast<double>(end - start);
        return (lo == 1 ? width * (li - 1) / 2 : x * width * (li - 1) / (lo - 1)) +
               static_cast<double>(start) * (li - 1);
    }
    if (m == "pytorch_half_pixel") return lo == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    if (m == "half_pixel_symmetric") {  // opset 19 (not in onnx 1.12): the spec's formula
        const double adj = static_cast<double>(out) / lo;
        return li / 2 * (1 - adj) + (x + 0.5) / scale - 0.5;
    }
    return (x + 0.5) / scale - 0.5;
}

std::vector<double> ref_cubic_coeffs(double r, double a) {
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
            ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a};
}

/// interpolate_1d_with_x after the coordinate: edge-pad by 2, take the 4 padded indices nearest to x (ties prefer the
/// smaller), ratio 1 on an integer x, exclude_outside zeroes and renormalizes. One deliberate difference: distances are
/// measured from x, not from the rounded x + 2 (the reference's double sum rounds 2.0000000000000004 + 2 to 4 and
/// then picks the taps one to the left, while its ratio stays 4e-16: an artifact, which ONNX Runtime's and this
/// kernel's floor(x) - 1 .. floor(x) + 2 do not have).
double ref_1d(const std::vector<double>& data, double x, bool cubic, double a, bool exclude) {
    const auto len = static_cast<std::int64_t>(data.size());
    const double fl = std::floor(x);
    const double ratio = x == fl ? 1.0 : x - fl;
    std::vector<double> c = cubic ? ref_cubic_coeffs(ratio, a) : std::vector<double>{1 - ratio, ratio};
    const auto n = c.size();
    const auto pad = static_cast<std::int64_t>((n + 1) / 2);
    std::vector<std::int64_t> idx;
    for (std::int64_t i = 0; i < len + 2 * pad; ++i) idx.push_back(i);
    std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t p, std::int64_t q) {
        const double dp = std::abs(x - static_cast<double>(p - pad)), dq = std::abs(x - static_cast<double>(q - pad));
        return dp < dq || (dp == dq && p < q);
    });
    idx.resize(n);
    std::sort(idx.begin(), idx.end());
    if (exclude) {
        double sum = 0;
        for (std::size_t k = 0; k < n; ++k) {
            if (idx[k] - pad < 0 || idx[k] - pad >= len) c[k] = 0;
        }
        for (double w : c) sum += w;
        for (double& w : c) w /= sum;
    }
    double r = 0;
    for (std::size_t k = 0; k < n; ++k)
        r += c[k] * data[static_cast<std::size_t>(std::clamp<std::int64_t>(idx[k] - pad, 0, len - 1))];
    return r;
}

struct RefCase {
    A attrs;
    Shape in, out;
    std::array<double, 4> scale{1, 1, 1, 1};
};

std::vector<double> ref_resize(const Tensor& x, const RefCase& k) {
    const Shape& s = k.in;
    const A& a = k.attrs;
    const double ca = static_cast<double>(a.cubic_coeff_a);
    const bool crop = a.coordinate_transformation_mode == "tf_crop_and_resize", cub = a.mode == "cubic";
    const auto v = x.to_vector<float>();
    std::vector<double> r;
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < k.out[2]; ++h)
                for (std::int64_t w = 0; w < k.out[3]; ++w) {
                    const double xh = ref_x(a.coordinate_transformation_mode, h, k.scale[2], s[2], k.out[2],
                                            crop ? a.roi[2] : 0.0f, crop ? a.roi[6] : 1.0f);
                    const double xw = ref_x(a.coordinate_transformation_mode, w, k.scale[3], s[3], k.out[3],
                                            crop ? a.roi[3] : 0.0f, crop ? a.roi[7] : 1.0f);
                    if (crop && (xh < 0 || xh > static_cast<double>(s[2] - 1) || xw < 0 ||
                                 xw > static_cast<double>(s[3] - 1))) {
                        r.push_back(a.extrapolation_value);
                        continue;
                    }
                    std::vector<double> rows;
                    for (std::int64_t i = 0; i < s[2]; ++i) {
                        std::vector<double> row;
                        for (std::int64_t j = 0; j < s[3]; ++j)
                            row.push_back(v[static_cast<std::size_t>(((n * s[1] + c) * s[2] + i) * s[3] + j)]);
                        rows.push_back(ref_1d(row, xw, cub, ca, a.exclude_outside != 0));
                    }
                    r.push_back(ref_1d(rows, xh, cub, ca, a.exclude_outside != 0));
                }
    return r;
}

const std::vector<std::string> cubic_coords{"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                            "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};

RefCase random_case(std::mt19937& g) {
    auto uni = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(g); };
    RefCase k;
    k.in = Shape{uni(1, 2), uni(1, 2), uni(1, 7), uni(1, 7)};
    A& a = k.attrs;
    a.mode = "cubic";
    a.coordinate_transformation_mode = cubic_coords[static_cast<std::size_t>(uni(0, 6))];
    static const float coeff[] = {-0.75f, -0.5f, -0.6f};
    a.cubic_coeff_a = coeff[uni(0, 2)];
    a.exclude_outside = uni(0, 1);
    const bool crop = a.coordinate_transformation_mode == "tf_crop_and_resize";
    if (crop) {
        static const float ends[] = {-0.3f, 0.0f, 0.25f, 0.5f, 0.8f, 1.0f, 1.2f};
        a.roi = {0, 0, ends[uni(0, 6)], ends[uni(0, 6)], 1, 1, ends[uni(0, 6)], ends[uni(0, 6)]};
        a.extrapolation_value = static_cast<float>(uni(-5, 5));
        if (uni(0, 2) == 0) a.mode = "linear";  // tf_crop_and_resize with linear too
    }
    if (!crop && uni(0, 2) == 0) {
        static const float pool[] = {0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 2.0f, 2.5f, 3.0f, 0.6f, 1.7f};
        const float sh = pool[uni(0, 9)], sw = pool[uni(0, 9)];
        a.scales = {1, 1, sh, sw};
        k.scale = {1, 1, sh, sw};
        k.out = Shape{k.in[0], k.in[1], static_cast<std::int64_t>(std::floor(static_cast<double>(sh) * k.in[2])),
                      static_cast<std::int64_t>(std::floor(static_cast<double>(sw) * k.in[3]))};
    } else {
        k.out = Shape{k.in[0], k.in[1], uni(1, 12), uni(1, 12)};
        a.sizes = {k.out[0], k.out[1], k.out[2], k.out[3]};
        k.scale = {1, 1, static_cast<double>(k.out[2]) / static_cast<double>(k.in[2]),
                   static_cast<double>(k.out[3]) / static_cast<double>(k.in[3])};
    }
    return k;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// cubic golden values (ONNX reference)

TEST_CASE("cubic half_pixel upsample 3x4 -> 5x7 (sizes), cubic_coeff_a = -0.75") {
    check_golden(a34, with_sizes(cubic(), {1, 1, 5, 7}), {1, 1, 5, 7},
                 {0.446893573f, 1.69577181f, 3.28618002f,   2.74825001f,  2.31407952f,  4.15975285f, 5.59517431f,
                  2.04761338f,  1.62409699f, 1.01511729f,   0.409750015f, 0.81261152f,  2.68404007f, 4.07315874f,
                  4.49608231f,  2.23478508f, -0.760113001f, -1.15625f,    0.160623178f, 1.38001096f, 2.19843292f,
                  6.35520554f,  4.90269804f, 3.08973861f,   3.80837488f,  4.69831228f,  3.30678177f, 2.16224599f,
                  7.34911728f,  6.94920254f, 6.6104269f,    8.19400024f,  8.54028988f,  5.15759611f, 2.53324413f});
}

TEST_CASE("cubic_coeff_a = -0.5 with exclude_outside = 1 and = 0 (scales 2): the border values differ") {
    A a = with_scales(cubic(), {1, 1, 2, 2});
    a.cubic_coeff_a = -0.5f;
    a.exclude_outside = 1;
    check_golden(a34, a, {1, 1, 6, 8},
                 {0.504325271f, 1.25783598f, 2.85428834f, 3.2256434f,  2.25965071f,  2.7792995f,    4.6528554f,
                  5.53719711f,  1.45212543f, 1.62853646f, 2.00245166f, 1.92871809f,  1.38104475f,   2.05716825f,
                  3.83227658f,  4.67024469f, 3.45846438f, 2.41210222f, 0.195676237f, -0.821445584f, -0.483420789f,
                  0.524911165f, 2.09327459f, 2.8338573f,  5.27570724f, 3.96835136f,  1.19876468f,   0.21875f,
                  1.22304392f,  1.81143296f, 1.97258592f, 2.04894471f, 6.66509247f,  6.09281254f,   4.8799243f,
                  4.91263676f,  6.27623177f, 5.74770164f, 3.48606753f, 2.41863465f,  7.32179928f,   7.09617853f,
                  6.61742258f,  7.12798691f, 8.66153526f, 7.6057477f,  4.20008564f,  2.59256053f});
    a.exclude_outside = 0;
    check_golden(a34, a, {1, 1, 6, 8},
                 {0.613830566f, 1.32202148f, 2.85522461f, 3.15283203f, 2.21484375f,   2.68408203f,   4.56054688f,
                  5.42681885f,  1.50500488f, 1.6519165f,  1.96844482f, 1.86273193f,   1.33477783f,   1.96429443f,
                  3.75128174f,  4.57537842f, 3.4510498f,  2.38348389f, 0.0674438477f, -0.907897949f, -0.542541504f,
                  0.428039551f, 2.00384521f, 2.72857666f, 5.14935303f, 3.83825684f,   0.996704102f,  0.0726318359f,
                  1.06604004f,  1.68200684f, 1.92053223f, 2.02789307f, 6.59991455f,   6.01623535f,   4.75622559f,
                  4.80432129f,  6.16052246f, 5.72619629f, 3.50134277f, 2.47332764f,   7.26147461f,   7.01641846f,
                  6.49261475f,  6.99090576f, 8.5112915f,  7.59246826f, 4.23443604f,   2.68414307f});
}

TEST_CASE("cubic align_corners (sizes 4x6: the corners are the input's) and asymmetric (scales 2)") {
    check_golden(a34, with_sizes(cubic("align_corners"), {1, 1, 4, 6}), {1, 1, 4, 6},
                 {1,           2.33200002f,  2.94400001f,   1.93599999f,   3.05599999f,  5,
                  2.72222233f, 0.710888863f, -0.858222246f, -0.679555535f, 0.968666673f, 2.83333325f,
                  5.27777767f, 2.34644437f,  0.60355556f,   1.94755554f,   2.34014821f,  1.98148143f,
                  7,           6.17199993f,  6.37599993f,   8.10400009f,   6.27600002f,  3});
    check_golden(a34, with_scales(cubic("asymmetric"), {1, 1, 2, 2}), {1, 1, 6, 8},
                 {1,        2.09375f,    3,        2.40625f,      2,       3.40625f,    5,        5.28125f,
                  2.21875f, 1.29003906f, 0.34375f, -0.174804688f, 0.25f,   1.81933594f, 3.40625f, 3.70214844f,
                  4,        1.40625f,    -1,       -1.15625f,     0,       1.09375f,    2,        2.1875f,
                  5.78125f, 3.79492188f, 2.125f,   2.77539062f,   3.8125f, 3.17382812f, 2.21875f, 2.06933594f,
                  7,        6.3125f,     6,        7.375f,        8,       5.6875f,     3,        2.53125f,
                  7.28125f, 6.77246094f, 6.65625f, 8.17480469f,   8.75f,   6.11816406f, 3.09375f, 2.56347656f});
}

TEST_CASE("cubic downsample: sizes 4x6 -> 3x4; scales 0.5 with cubic_coeff_a = -0.5 and exclude_outside") {
    check_golden(b46, with_sizes(cubic(), {1, 1, 3, 4}), {1, 1, 3, 4},
                 {0.470093578f, 1.11035287f, 2.15825009f, 3.39121699f, 6.78626728f, 8.59945488f, 10.6427784f,
                  12.7057524f, 18.2604771f, 20.6725273f, 23.3258877f, 25.9432392f});
    A a = with_scales(cubic(), {1, 1, 0.5f, 0.5f});
    a.cubic_coeff_a = -0.5f;
    a.exclude_outside = 1;
    check_golden(b46, a, {1, 1, 2, 3}, {1.55614281f, 2.99089622f, 4.8716774f, 16.0078773f, 19.2280407f, 22.6466789f});
}

TEST_CASE("cubic pytorch_half_pixel 3x4 -> 3x5") {
    check_golden(a34, with_sizes(cubic("pytorch_half_pixel"), {1, 1, 3, 5}), {1, 1, 3, 5},
                 {0.878499985f, 2.55224991f, 2.40625f, 2.7267499f, 5.18225002f, 4.30375004f, 0.284750015f, -1.15625f,
                  0.668250024f, 2.12150002f, 7.06075001f, 6.05849981f, 7.375f, 6.82550001f, 2.69624996f});
}

TEST_CASE("cubic on a constant image is the constant (weights sum to 1), with and without exclude_outside") {
    const Tensor c = Tensor::from<float>({1, 2, 3, 3}, std::vector<float>(18, 2.5f));
    for (std::int64_t ex : {0, 1}) {
        A a = with_sizes(cubic(), {1, 2, 7, 2});
        a.exclude_outside = ex;
        for (float v : call(c, a).value().to_vector<float>()) CHECK(v == doctest::Approx(2.5f).epsilon(1e-6));
    }
}

// ---------------------------------------------------------------------------------------------------------------
// tf_crop_and_resize (roi: starts then ends; outside [0, L_in - 1] the output is extrapolation_value)

TEST_CASE("tf_crop_and_resize linear: the ONNX node test (roi [0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8], sizes 3x3)") {
    check_golden(
        x44, crop("linear", {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}, {1, 1, 3, 3}), {1, 1, 3, 3},
        {7.60000038f, 7.9000001f, 8.19999981f, 8.80000019f, 9.10000038f, 9.40000057f, 10, 10.3000002f, 10.6000004f});
}

TEST_CASE("tf_crop_and_resize with extrapolation_value 10: linear, nearest and cubic (roi reaches outside)") {
    const std::vector<float> roi{0, 0, -0.2f, 0.5f, 1, 1, 0.9f, 1.4f};
    check_golden(x44, crop("linear", roi, {1, 1, 4, 5}, 10), {1, 1, 4, 5},
                 {10,          10,          10,     10, 10, 4.5f,        5.17500019f, 5.8499999f,  10, 10,
                  8.90000057f, 9.57499981f, 10.25f, 10, 10, 13.3000002f, 13.9750004f, 14.6500006f, 10, 10});
    check_golden(x44, crop("nearest", roi, {1, 1, 4, 5}, 10), {1, 1, 4, 5},
                 {10, 10, 10, 10, 10, 6, 7, 8, 10, 10, 10, 11, 12, 10, 10, 14, 15, 16, 10, 10});
    check_golden(x44, crop("cubic", roi, {1, 1, 4, 5}, 10), {1, 1, 4, 5},
                 {10,         10,          10,          10, 10, 4.125f,  4.86587095f, 5.51165628f, 10, 10,
                  8.8039999f, 9.54487133f, 10.1906567f, 10, 10, 13.573f, 14.3138714f, 14.9596567f, 10, 10});
    // opset 18 axes: roi covers only the listed axes (starts, then ends)
    A a = crop("linear", {-0.2f, 0.5f, 0.9f, 1.4f}, {4, 5}, 10);
    a.axes = {2, 3};
    check_golden(x44, a, {1, 1, 4, 5},
                 {10,          10,          10,     10, 10, 4.5f,        5.17500019f, 5.8499999f,  10, 10,
                  8.90000057f, 9.57499981f, 10.25f, 10, 10, 13.3000002f, 13.9750004f, 14.6500006f, 10, 10});
}

TEST_CASE("tf_crop_and_resize to one row samples the roi's centre 0.5 (start + end) (L_in - 1)") {
    check_golden(x44, crop("cubic", {0, 0, 0.3f, 0.2f, 1, 1, 0.3f, 0.9f}, {1, 1, 1, 4}), {1, 1, 1, 4},
                 {4.93300009f, 5.77100039f, 6.42900038f, 7.19725037f});
}

// ---------------------------------------------------------------------------------------------------------------
// randomized: against the literal port of the reference; scalar vs SIMD identity

TEST_CASE("cubic and tf_crop_and_resize (cubic, linear) match a double port of the ONNX reference (400 random cases)") {
    std::mt19937 g(20240611);
    double worst = 0;  // max |error| / max(1, max |x|)
    int compared = 0, refused = 0;
    for (int it = 0; it < 400; ++it) {
        const RefCase k = random_case(g);
        std::vector<float> v;
        for (std::int64_t i = 0; i < element_count(k.in); ++i)
            v.push_back(std::uniform_real_distribution<float>(-100, 100)(g));
        const Tensor x = Tensor::from<float>(k.in, v);
        CAPTURE(it);
        CAPTURE(k.attrs.coordinate_transformation_mode);
        CAPTURE(k.in.str());
        CAPTURE(k.out.str());
        const auto r = call(x, k.attrs);
        if (!r.ok()) {  // the only refusals a random case may meet: the ambiguous ones of the header comment
            const std::string& rule = r.error().rule;
            CHECK((rule == "scale-extent-unambiguous" || rule == "align-corners-extent-ambiguous" ||
                   rule == "cubic-single-output-ambiguous"));
            ++refused;
            continue;
        }
        REQUIRE(r.value().shape() == k.out);
        const auto got = r.value().to_vector<float>();
        const auto want = ref_resize(x, k);
        REQUIRE(got.size() == want.size());
        double mx = 1;
        for (float f : v) mx = std::max(mx, static_cast<double>(std::abs(f)));
        double err = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            err = std::max(err, std::abs(static_cast<double>(got[i]) - want[i]) / mx);
            ++compared;
        }
        CAPTURE(k.attrs.exclude_outside);
        CAPTURE(k.attrs.cubic_coeff_a);
        CHECK(err <= std::ldexp(1.0, -21));
        worst = std::max(worst, err);
        // scalar and SIMD paths: bit-identical
        const TensorType out = ops::type_of(r.value());
        const auto scalar = Resize::run(std::span<const Tensor>(&x, 1), k.attrs, out, ops::OpContext{.simd = false});
        REQUIRE(scalar.ok());
        CHECK(scalar.value().to_vector<float>() == got);
    }
    MESSAGE("cubic vs reference port: max |error| = " << worst << " * max(1, max|x|) over " << compared << " elements; "
                                                      << refused << " cases refused as ambiguous");
    CHECK(compared > 5000);
    CHECK(worst <= std::ldexp(1.0, -21));
}

TEST_CASE("linear: exclude_outside = 1 changes nothing (the reference's outside tap already has weight 0)") {
    std::mt19937 g(7);
    for (const std::string coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
        std::vector<float> v;
        for (int i = 0; i < 2 * 5 * 3; ++i) v.push_back(std::uniform_real_distribution<float>(-10, 10)(g));
        const Tensor x = Tensor::from<float>({1, 2, 5, 3}, v);
        A a;
        a.mode = "linear";
        a.coordinate_transformation_mode = coord;
        a.sizes = {1, 2, 9, 7};
        const auto plain = call(x, a).value().to_vector<float>();
        a.exclude_outside = 1;
        CHECK(call(x, a).value().to_vector<float>() == plain);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// rules

TEST_CASE("rule cubic-quantized-unsupported / tf-crop-and-resize-quantized-unsupported: float32 only") {
    const auto q = numeric::make_quant(DType::i8, 0.1f, 0).value();
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 2, 2}, {1, 2, 3, 4}, q);
    CHECK_RULE(call(x, with_scales(cubic(), {1, 1, 2, 2}), TensorType{DType::i8, {1, 1, 4, 4}, q}),
               "cubic-quantized-unsupported");
    CHECK_RULE(call(x, crop("nearest", {0, 0, 0, 0, 1, 1, 1, 1}, {1, 1, 3, 3}), TensorType{DType::i8, {1, 1, 3, 3}, q}),
               "tf-crop-and-resize-quantized-unsupported");
    CHECK_RULE(call(x, crop("linear", {0, 0, 0, 0, 1, 1, 1, 1}, {1, 1, 3, 3}), TensorType{DType::i8, {1, 1, 3, 3}, q}),
               "tf-crop-and-resize-quantized-unsupported");
}

TEST_CASE(
    "rules of tf_crop_and_resize: tf-crop-and-resize-sizes, roi-length, roi-batch-channel-full, attribute-range") {
    A a = crop("linear", {0, 0, 0, 0, 1, 1, 1, 1}, {});
    a.scales = {1, 1, 2, 2};
    CHECK_RULE(call(x44, a), "tf-crop-and-resize-sizes");
    CHECK_RULE(call(x44, crop("linear", {}, {1, 1, 3, 3})), "roi-length");
    CHECK_RULE(call(x44, crop("linear", {0, 0.4f, 0.6f, 1, 0.8f, 1}, {1, 1, 3, 3})), "roi-length");
    CHECK_RULE(call(x44, crop("linear", {0, 0.5f, 0, 0, 1, 1, 1, 1}, {1, 1, 3, 3})), "roi-batch-channel-full");
    CHECK_RULE(call(x44, crop("nearest", {0, 0, 0, 0, 2, 1, 1, 1}, {1, 1, 3, 3})), "roi-batch-channel-full");
    CHECK_RULE(call(x44, crop("linear", {0, 0, std::nanf(""), 0, 1, 1, 1, 1}, {1, 1, 3, 3})), "attribute-range");
    // roi is ignored by the other coordinate modes
    A h;
    h.mode = "linear";
    h.sizes = {1, 1, 3, 3};
    const auto plain = call(x44, h).value().to_vector<float>();
    h.roi = {0, 0, 0.5f, 0.5f, 1, 1, 0.7f, 0.7f};
    h.extrapolation_value = 7;
    CHECK(call(x44, h).value().to_vector<float>() == plain);
}

TEST_CASE("rule cubic-single-output-ambiguous: cubic pytorch_half_pixel to one row (spec/ORT x = 0, reference -0.5)") {
    CHECK_RULE(call(a34, with_sizes(cubic("pytorch_half_pixel"), {1, 1, 1, 4})), "cubic-single-output-ambiguous");
    CHECK(call(a34, with_sizes(cubic("pytorch_half_pixel"), {1, 1, 2, 4})).ok());
    CHECK(call(Tensor::from<float>({1, 1, 1, 4}, {1, 2, 3, 4}), with_sizes(cubic("pytorch_half_pixel"), {1, 1, 1, 2}))
              .ok());  // L_in = 1: every tap is row 0 either way
}

TEST_CASE("rule cubic-weight-sum-nonzero: exclude_outside leaving a zero weight sum (L_in = 1, A = 18)") {
    // 1 -> 2 half_pixel: x = -0.25, taps -2..1 with ratio 0.75; only tap 0 is inside, its weight with A = 18 is
    // ((A + 2) 0.25 - (A + 3)) 0.25^2 + 1 = 0 exactly.
    A a = with_sizes(cubic(), {1, 1, 1, 2});
    a.cubic_coeff_a = 18;
    a.exclude_outside = 1;
    const Tensor x = Tensor::from<float>({1, 1, 1, 1}, {3});
    CHECK_RULE(call(x, a), "cubic-weight-sum-nonzero");
    a.exclude_outside = 0;
    CHECK(call(x, a).ok());
}

TEST_CASE("rules align-corners-extent-ambiguous and exclude-outside-unsupported also hold for cubic / nearest") {
    // the ONNX node test resize_downsample_scales_cubic_align_corners: 4 * 0.8 = 3.2 (ONNX Runtime differs)
    CHECK_RULE(call(x44, with_scales(cubic("align_corners"), {1, 1, 0.8f, 0.8f})), "align-corners-extent-ambiguous");
    A n;
    n.scales = {1, 1, 2, 2};
    n.exclude_outside = 1;
    CHECK_RULE(call(x44, n), "exclude-outside-unsupported");
}

// ---------------------------------------------------------------------------------------------------------------
// the NPU lowering refuses what it cannot do (emit/resize.hpp lowers nearest only); cubic and tf_crop_and_resize are
// float32 only, so the op's own plan refuses them on int8 before the emitter looks at the mode

TEST_CASE("lower_resize refuses cubic and tf_crop_and_resize on int8 with the host plan's rules") {
    emit::Builder b("resize");
    REQUIRE(b.emit("nop", {}).ok());
    const auto qi = numeric::make_quant(DType::i8, 0.05f, -7).value();
    const emit::DramArray X{2, 0, {1, 4, 4, 16}, 16, qi}, Y{3, 0, {1, 8, 8, 16}, 16, qi};
    CHECK_RULE(emit::lower_resize(b, with_scales(cubic(), {1, 1, 2, 2}), X, Y, janus::numeric::default_rounding_mode),
               "cubic-quantized-unsupported");
    CHECK_RULE(emit::lower_resize(b, crop("nearest", {0, 0, 0, 0, 1, 1, 1, 1}, {1, 16, 8, 8}), X, Y, janus::numeric::default_rounding_mode),
               "tf-crop-and-resize-quantized-unsupported");
    CHECK(b.size() == 1);  // nothing emitted
}

}  // namespace cubic_test
