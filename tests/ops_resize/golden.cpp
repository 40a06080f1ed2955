// Resize, part 1: golden hand-computed cases, one per semantic switch (seed D14: the coordinate rule, the nearest
// rounding and the interpolation weights decide the answer). Coordinates are worked out in the comments; several
// cases are the ONNX backend tests (onnx/backend/test/case/node/resize.py), whose expected outputs are restated.
// Randomized comparisons, scalar/SIMD identity and the error rules: random_rules.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <janus/ops/resize.hpp>
#include <support/check_rule.hpp>

using namespace janus;
using ops::Resize;
using ops::TensorType;
using A = Resize::Attrs;

namespace {

template <class T = float>
std::vector<T> run(const Tensor& x, const A& a, std::optional<TensorType> out = std::nullopt, Shape* shape = nullptr) {
    auto r = ops::call<Resize>({x}, a, std::move(out));
    if (!r.ok()) FAIL(r.error().message());
    if (shape) *shape = r.value().shape();
    return r.value().template to_vector<T>();
}

A nearest(std::string coord, std::string nmode, std::vector<float> scales = {1, 1, 2, 2}) {
    A a;
    a.scales = std::move(scales);
    a.coordinate_transformation_mode = std::move(coord);
    a.nearest_mode = std::move(nmode);
    return a;
}

/// Expand per-axis source tables into the expected output of a 1x1xHxW resize of `in` (row-major).
std::vector<float> pick(const std::vector<float>& in, std::int64_t w_in, const std::vector<int>& rows,
                        const std::vector<int>& cols) {
    std::vector<float> o;
    for (int r : rows)
        for (int c : cols) o.push_back(in[static_cast<std::size_t>(r * w_in + c)]);
    return o;
}

const Tensor x22 = Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4});
const std::vector<float> v22{1, 2, 3, 4};

void check_close(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// nearest: every coordinate mode x every nearest mode on 2 -> 4 (scale 2)

TEST_CASE("nearest half_pixel 2->4: x = (j + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (no ties)") {
    const std::vector<int> round{0, 0, 1, 1}, fl{0, 0, 0, 1}, ce{0, 1, 1, 1};
    CHECK(run(x22, nearest("half_pixel", "round_prefer_floor")) == pick(v22, 2, round, round));
    CHECK(run(x22, nearest("half_pixel", "round_prefer_ceil")) == pick(v22, 2, round, round));
    CHECK(run(x22, nearest("half_pixel", "floor")) == pick(v22, 2, fl, fl));  // floor(-0.25) = -1 clamps to 0
    CHECK(run(x22, nearest("half_pixel", "ceil")) == pick(v22, 2, ce, ce));   // ceil(1.25) = 2 clamps to 1
}

TEST_CASE("nearest asymmetric 2->4: x = j / 2 = 0, 0.5, 1, 1.5 (ties at 0.5 and 1.5 decide)") {
    const std::vector<int> down{0, 0, 1, 1}, up{0, 1, 1, 1};
    CHECK(run(x22, nearest("asymmetric", "round_prefer_floor")) == pick(v22, 2, down, down));
    CHECK(run(x22, nearest("asymmetric", "round_prefer_ceil")) == pick(v22, 2, up, up));  // 1.5 -> 2 -> clamp 1
    CHECK(run(x22, nearest("asymmetric", "floor")) == pick(v22, 2, down, down));
    CHECK(run(x22, nearest("asymmetric", "ceil")) == pick(v22, 2, up, up));
}

TEST_CASE("nearest align_corners 2->4: x = j * 1 / 3 = 0, 1/3, 2/3, 1") {
    const std::vector<int> round{0, 0, 1, 1}, fl{0, 0, 0, 1}, ce{0, 1, 1, 1};
    CHECK(run(x22, nearest("align_corners", "round_prefer_floor")) == pick(v22, 2, round, round));
    CHECK(run(x22, nearest("align_corners", "round_prefer_ceil")) == pick(v22, 2, round, round));
    CHECK(run(x22, nearest("align_corners", "floor")) == pick(v22, 2, fl, fl));
    CHECK(run(x22, nearest("align_corners", "ceil")) == pick(v22, 2, ce, ce));
}

TEST_CASE("nearest pytorch_half_pixel 2->4 equals half_pixel when the output extent is > 1") {
    for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
        CHECK(run(x22, nearest("pytorch_half_pixel", nm)) == run(x22, nearest("half_pixel", nm)));
}

TEST_CASE("nearest tf_half_pixel_for_nn 2->4: x = (j + 0.5) / 2 = 0.25, 0.75, 1.25, 1.75") {
    const std::vector<int> round{0, 1, 1, 1}, fl{0, 0, 1, 1}, ce{1, 1, 1, 1};
    CHECK(run(x22, nearest("tf_half_pixel_for_nn", "round_prefer_floor")) == pick(v22, 2, round, round));
    CHECK(run(x22, nearest("tf_half_pixel_for_nn", "round_prefer_ceil")) == pick(v22, 2, round, round));
    CHECK(run(x22, nearest("tf_half_pixel_for_nn", "floor")) == pick(v22, 2, fl, fl));
    CHECK(run(x22, nearest("tf_half_pixel_for_nn", "ceil")) == pick(v22, 2, ce, ce));
}

TEST_CASE("nearest half_pixel_symmetric equals half_pixel when in * scale is the integer output extent") {
    CHECK(run(x22, nearest("half_pixel_symmetric", "round_prefer_floor")) ==
          run(x22, nearest("half_pixel", "round_prefer_floor")));
}

TEST_CASE("nearest downscale 4->3 half_pixel: x = (j + 0.5) / 0.75 - 0.5 = 1/6, 1.5, 17/6 (the classic tie 1.5)") {
    const Tensor x = Tensor::from<float>({1, 1, 1, 4}, {10, 11, 12, 13});
    A a;
    a.sizes = {1, 1, 1, 3};
    CHECK(run(x, a) == std::vector<float>{10, 11, 13});  // round_prefer_floor: 1.5 -> 1
    a.nearest_mode = "round_prefer_ceil";
    CHECK(run(x, a) == std::vector<float>{10, 12, 13});  // 1.5 -> 2
    a.nearest_mode = "floor";
    CHECK(run(x, a) == std::vector<float>{10, 11, 12});
    a.nearest_mode = "ceil";
    CHECK(run(x, a) == std::vector<float>{11, 12, 13});
}

TEST_CASE("ONNX resize_downsample_sizes_nearest: 2x4 -> 1x3, ties 0.5 (rows) and 1.5 (columns) go down") {
    const Tensor x = Tensor::from<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
    A a;
    a.sizes = {1, 1, 1, 3};
    CHECK(run(x, a) == std::vector<float>{1, 2, 4});
}

TEST_CASE("ONNX resize_upsample_sizes_nearest: 2x2 -> 7x8, the row tie (3 + 0.5) / 3.5 - 0.5 = 0.5 goes down") {
    A a;
    a.sizes = {1, 1, 7, 8};
    Shape s;
    CHECK(run(x22, a, std::nullopt, &s) == pick(v22, 2, {0, 0, 0, 0, 1, 1, 1}, {0, 0, 0, 0, 1, 1, 1, 1}));
    CHECK(s == Shape{1, 1, 7, 8});
}

TEST_CASE("ONNX resize_upsample_sizes_nearest_{ceil_half_pixel, floor_align_corners, round_prefer_ceil_asymmetric}") {
    std::vector<float> v(16);
    for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
    const Tensor x = Tensor::from<float>({1, 1, 4, 4}, v);
    A a;
    a.sizes = {1, 1, 8, 8};
    a.nearest_mode = "ceil";  // half_pixel: -0.25, 0.25, ..., 3.25
    const std::vector<int> ceil_hp{0, 1, 1, 2, 2, 3, 3, 3};
    CHECK(run(x, a) == pick(v, 4, ceil_hp, ceil_hp));
    a.nearest_mode = "floor";
    a.coordinate_transformation_mode = "align_corners";  // j * 3 / 7
    const std::vector<int> floor_ac{0, 0, 0, 1, 1, 2, 2, 3};
    CHECK(run(x, a) == pick(v, 4, floor_ac, floor_ac));
    a.nearest_mode = "round_prefer_ceil";
    a.coordinate_transformation_mode = "asymmetric";  // j / 2: every odd j is a tie
    const std::vector<int> ceil_as{0, 1, 1, 2, 2, 3, 3, 3};
    CHECK(run(x, a) == pick(v, 4, ceil_as, ceil_as));
}

TEST_CASE("ONNX resize_downsample_sizes_nearest_tf_half_pixel_for_nn: 4x4 -> 3x2 selects rows 1,2,3, columns 1,3") {
    std::vector<float> v(16);
    for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
    const Tensor x = Tensor::from<float>({1, 1, 4, 4}, v);
    A a;
    a.sizes = {1, 1, 3, 2};
    a.coordinate_transformation_mode = "tf_half_pixel_for_nn";
    CHECK(run(x, a) == std::vector<float>{6, 8, 10, 12, 14, 16});
}

TEST_CASE("ONNX resize_downsample_scales_nearest: scales 0.6 on 2x4 gives floor(1.2) x floor(2.4) = 1x2: {1, 3}") {
    const Tensor x = Tensor::from<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
    Shape s;
    CHECK(run(x, nearest("half_pixel", "round_prefer_floor", {1, 1, 0.6f, 0.6f}), std::nullopt, &s) ==
          std::vector<float>{1, 3});
    CHECK(s == Shape{1, 1, 1, 2});
}

TEST_CASE("output extent 1: align_corners and pytorch_half_pixel read coordinate 0, half_pixel reads the middle") {
    const Tensor x = Tensor::from<float>({1, 1, 1, 4}, {10, 11, 12, 13});
    A a;
    a.sizes = {1, 1, 1, 1};
    a.coordinate_transformation_mode = "align_corners";
    CHECK(run(x, a) == std::vector<float>{10});
    a.coordinate_transformation_mode = "pytorch_half_pixel";
    CHECK(run(x, a) == std::vector<float>{10});
    a.coordinate_transformation_mode = "half_pixel";  // 0.5 / 0.25 - 0.5 = 1.5: a tie, prefer floor
    CHECK(run(x, a) == std::vector<float>{11});
    a.mode = "linear";
    check_close(run(x, a), {11.5f});
    a.coordinate_transformation_mode = "align_corners";
    check_close(run(x, a), {10.0f});
}

TEST_CASE("scales and sizes giving the same extents give the same result (every coordinate mode, both modes)") {
    std::vector<float> v(12);
    for (int i = 0; i < 12; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i * i % 7);
    const Tensor x = Tensor::from<float>({1, 2, 2, 3}, v);
    for (const char* mode : {"nearest", "linear"})
        for (const char* c : {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                              "tf_half_pixel_for_nn"}) {
            A s, z;
            s.mode = z.mode = mode;
            s.coordinate_transformation_mode = z.coordinate_transformation_mode = c;
            s.scales = {1, 1, 2, 3};  // exact in float: out/in computed from sizes is the same double
            z.sizes = {1, 2, 4, 9};
            CHECK(run(x, s) == run(x, z));
        }
}

TEST_CASE("axes (opset 18) name the axes scales/sizes describe; negative axes count from the end") {
    A full, part, neg;
    full.sizes = {1, 1, 7, 8};
    part.sizes = {7, 8};
    part.axes = {2, 3};
    neg.sizes = {8, 7};
    neg.axes = {-1, -2};
    CHECK(run(x22, full) == run(x22, part));
    CHECK(run(x22, full) == run(x22, neg));
}

TEST_CASE("keep_aspect_ratio_policy not_larger / not_smaller (ONNX resize_upsample_sizes_nearest_not_larger)") {
    A a;
    a.sizes = {7, 8};
    a.axes = {2, 3};
    a.keep_aspect_ratio_policy = "not_larger";  // s = min(3.5, 4): 7x7, scale 3.5 on both axes
    Shape s;
    const std::vector<int> t35{0, 0, 0, 0, 1, 1, 1}, t4{0, 0, 0, 0, 1, 1, 1, 1};
    CHECK(run(x22, a, std::nullopt, &s) == pick(v22, 2, t35, t35));
    CHECK(s == Shape{1, 1, 7, 7});
    a.keep_aspect_ratio_policy = "not_smaller";  // s = 4: 8x8
    CHECK(run(x22, a, std::nullopt, &s) == pick(v22, 2, t4, t4));
    CHECK(s == Shape{1, 1, 8, 8});
    a.keep_aspect_ratio_policy = "stretch";
    CHECK(run(x22, a, std::nullopt, &s) == pick(v22, 2, t35, t4));
}

// ---------------------------------------------------------------------------------------------------------------
// linear (float)

TEST_CASE("ONNX resize_upsample_scales_linear: half_pixel 2x2 -> 4x4, coordinates clamp to [0, 1] at the border") {
    check_close(run(x22, [] { A a; a.mode = "linear"; a.scales = {1, 1, 2, 2}; return a; }()),
                {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});
}

TEST_CASE("ONNX resize_upsample_scales_linear_align_corners: 2x2 -> 4x4, x = j / 3") {
    A a;
    a.mode = "linear";
    a.scales = {1, 1, 2, 2};
    a.coordinate_transformation_mode = "align_corners";
    check_close(run(x22, a), {1, 1.3333333f, 1.6666667f, 2, 1.6666667f, 2, 2.3333333f, 2.6666667f,  //
                              2.3333333f, 2.6666667f, 3, 3.3333333f, 3, 3.3333333f, 3.6666667f, 4});
}

TEST_CASE("ONNX resize_downsample_scales_linear: 2x4 scales 0.6 -> {2.6666665, 4.3333331}") {
    const Tensor x = Tensor::from<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
    A a;
    a.mode = "linear";
    a.scales = {1, 1, 0.6f, 0.6f};
    check_close(run(x, a), {2.6666665f, 4.3333331f});
}

TEST_CASE("ONNX resize_downsample_sizes_linear_pytorch_half_pixel: 4x4 -> 3x1 reads column 0") {
    std::vector<float> v(16);
    for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
    const Tensor x = Tensor::from<float>({1, 1, 4, 4}, v);
    A a;
    a.mode = "linear";
    a.sizes = {1, 1, 3, 1};
    a.coordinate_transformation_mode = "pytorch_half_pixel";
    check_close(run(x, a), {1.6666666f, 7.0f, 12.333333f});
}

TEST_CASE("linear asymmetric 1x2 -> 1x4: x = 0, 0.5, 1, 1.5 (clamped to 1)") {
    const Tensor x = Tensor::from<float>({1, 1, 1, 2}, {2, 4});
    A a;
    a.mode = "linear";
    a.scales = {1, 1, 1, 2};
    a.coordinate_transformation_mode = "asymmetric";
    CHECK(run(x, a) == std::vector<float>{2, 3, 4, 4});
    a.coordinate_transformation_mode = "tf_half_pixel_for_nn";  // 0.25, 0.75, 1.25, 1.75
    CHECK(run(x, a) == std::vector<float>{2.5f, 3.5f, 4, 4});
}

TEST_CASE("ONNX half_pixel_symmetric: [1,2,3,4] scale 0.6 -> extent 2 (2.4), offset 2 (1 - 2/2.4) = 1/3") {
    const Tensor x = Tensor::from<float>({1, 1, 1, 4}, {1, 2, 3, 4});
    A a;
    a.mode = "linear";
    a.scales = {1, 1, 1, 0.6f};
    a.coordinate_transformation_mode = "half_pixel_symmetric";  // x = 1/3 + (j + 0.5) / 0.6 - 0.5 = 2/3, 7/3
    check_close(run(x, a), {1.6666666f, 3.3333333f});
    a.coordinate_transformation_mode = "half_pixel";  // 1/3, 2: the symmetric offset is what differs
    check_close(run(x, a), {1.3333333f, 3.0f});
}

// ---------------------------------------------------------------------------------------------------------------
// quantized

TEST_CASE("quantized nearest copies codes and proposes the input's quantization (a selection, seed A10)") {
    const auto q = numeric::make_quant(DType::i8, 0.5f, -3).value();
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 2, 2}, {-128, -1, 0, 127}, q);
    auto r = ops::call<Resize>({x}, nearest("asymmetric", "round_prefer_ceil"));
    REQUIRE(r.ok());
    CHECK(r.value().quant == q);
    CHECK(r.value().to_vector<std::int8_t>() ==
          std::vector<std::int8_t>{-128, -1, -1, -1, 0, 127, 127, 127, 0, 127, 127, 127, 0, 127, 127, 127});
}

TEST_CASE("quantized nearest requantizes when the requested output quantization differs (seed A4)") {
    const auto q = numeric::make_quant(DType::u8, 1.0f, 10).value();
    const auto q2 = numeric::make_quant(DType::u8, 2.0f, 0).value();
    const Tensor x = Tensor::from<std::uint8_t>({1, 1, 1, 2}, {10, 20}, q);  // real 0, 10
    const auto v = run<std::uint8_t>(x, nearest("asymmetric", "round_prefer_floor", {1, 1, 1, 2}),
                                     TensorType{DType::u8, {1, 1, 1, 4}, q2});
    CHECK(v == std::vector<std::uint8_t>{0, 0, 5, 5});
}

TEST_CASE("quantized nearest keeps a per-axis quantization along C (the channel axis is not resized)") {
    const Shape s{1, 2, 1, 2};
    const auto q = numeric::make_quant_per_axis(DType::i8, {0.5f, 0.25f}, {0, 1}, 1, s).value();
    const Tensor x = Tensor::from<std::int8_t>(s, {1, 2, 3, 4}, q);
    auto r = ops::call<Resize>({x}, nearest("asymmetric", "floor", {1, 1, 1, 2}));
    REQUIRE(r.ok());
    CHECK(r.value().quant == q);
    CHECK(r.value().to_vector<std::int8_t>() == std::vector<std::int8_t>{1, 1, 2, 2, 3, 3, 4, 4});
}

TEST_CASE("quantized linear, same quantization: Q.11 weights 512/1536, Q.22 sums, one rounding (half away from zp)") {
    const auto q = numeric::make_quant(DType::u8, 1.0f, 0).value();
    const Tensor x = Tensor::from<std::uint8_t>({1, 1, 2, 2}, {0, 100, 200, 255}, q);
    A a;
    a.mode = "linear";
    a.scales = {1, 1, 2, 2};
    // rows: top 0, 25, 75, 100; bottom 200, 213.75, 241.25, 255; row 1 = 0.75 top + 0.25 bottom = 50, 72.1875,
    // 116.5625, 138.75; row 2 = 0.25 top + 0.75 bottom = 150, 166.5625, 199.6875, 216.25.
    const auto v = run<std::uint8_t>(x, a, TensorType{DType::u8, {1, 1, 4, 4}, q});
    CHECK(v == std::vector<std::uint8_t>{0, 25, 75, 100, 50, 72, 117, 139, 150, 167, 200, 216, 200, 214, 241, 255});
}

TEST_CASE("quantized linear ties round half away from the zero point: int8 {0, -1} and {0, 1} at x = 0.5") {
    const auto q = numeric::make_quant(DType::i8, 0.1f, 0).value();
    A a;
    a.mode = "linear";
    a.scales = {1, 1, 1, 2};
    a.coordinate_transformation_mode = "asymmetric";  // 0, 0.5, 1, 1.5
    const TensorType o{DType::i8, {1, 1, 1, 4}, q};
    CHECK(run<std::int8_t>(Tensor::from<std::int8_t>({1, 1, 1, 2}, {0, 1}, q), a, o) ==
          std::vector<std::int8_t>{0, 1, 1, 1});
    CHECK(run<std::int8_t>(Tensor::from<std::int8_t>({1, 1, 1, 2}, {0, -1}, q), a, o) ==
          std::vector<std::int8_t>{0, -1, -1, -1});
    const auto qz = numeric::make_quant(DType::i8, 0.1f, 5).value();  // relative to zp 5: 0 and -1 again
    const TensorType oz{DType::i8, {1, 1, 1, 4}, qz};
    CHECK(run<std::int8_t>(Tensor::from<std::int8_t>({1, 1, 1, 2}, {5, 4}, qz), a, oz) ==
          std::vector<std::int8_t>{5, 4, 4, 4});
}

TEST_CASE("quantized linear with a different output quantization requantizes the Q.22 sum once (rq)") {
    const auto qi = numeric::make_quant(DType::u8, 0.5f, 10).value();
    const auto qo = numeric::make_quant(DType::u8, 0.25f, 0).value();
    const Tensor x = Tensor::from<std::uint8_t>({1, 1, 1, 2}, {10, 30}, qi);  // real 0, 10
    A a;
    a.mode = "linear";
    a.scales = {1, 1, 1, 2};
    a.coordinate_transformation_mode = "asymmetric";  // real 0, 5, 10, 10 -> codes 0, 20, 40, 40
    CHECK(run<std::uint8_t>(x, a, TensorType{DType::u8, {1, 1, 1, 4}, qo}) == std::vector<std::uint8_t>{0, 20, 40, 40});
}
