// Data movement, part 2: Concat (requantizing inputs of different scales), Pad (constant / reflect / edge through
// the index-map primitive), run_index_map itself and copy_into.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "helpers.hpp"

using namespace janus;
using namespace janus::test;
using ops::Concat;
using ops::Pad;

// ---------------------------------------------------------------------------------------------------------------
// Concat

TEST_CASE("Concat: the ONNX examples along axis 0, 1 and -1") {
    const Tensor a = Tensor::from<float>({2, 2}, {1, 2, 3, 4});
    const Tensor b = Tensor::from<float>({2, 2}, {5, 6, 7, 8});
    CHECK(run<Concat>({a, b}, {0}).to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
    CHECK(run<Concat>({a, b}, {0}).shape() == Shape{4, 2});
    CHECK(run<Concat>({a, b}, {1}).to_vector<float>() == std::vector<float>{1, 2, 5, 6, 3, 4, 7, 8});
    CHECK(run<Concat>({a, b}, {-1}).to_vector<float>() == std::vector<float>{1, 2, 5, 6, 3, 4, 7, 8});
    CHECK(run<Concat>({a}, {0}).to_vector<float>() == a.to_vector<float>());
    // different extents along the axis, an empty input among them, every dtype
    for (DType d : {DType::f32, DType::i8, DType::u8, DType::i32, DType::i64}) {
        visit_dtype(d, [&](auto tag) {
            using T = typename decltype(tag)::type;
            const Tensor x = Tensor::from<T>({2, 1}, {T(1), T(2)});
            const Tensor y = Tensor::from<T>({2, 3}, {T(3), T(4), T(5), T(6), T(7), T(8)});
            const Tensor e = Tensor::from<T>({2, 0}, {});
            const Tensor c = run<Concat>({x, e, y}, {1});
            CHECK(c.shape() == Shape{2, 4});
            CHECK(c.to_vector<T>() == std::vector<T>{T(1), T(3), T(4), T(5), T(2), T(6), T(7), T(8)});
        });
    }
}

TEST_CASE("Concat reads inputs through any layout (transposed view, padded rows)") {
    const Tensor base = iota<std::int32_t>({3, 2});  // [[0,1],[2,3],[4,5]]
    const Tensor t = base.view(transpose(base.layout, Dims{1, 0}).value());  // [[0,2,4],[1,3,5]]
    Tensor p = Tensor::with_layout(DType::i32, Layout::padded({2, 3}, 4, 32));
    for (std::int64_t i = 0; i < 2; ++i)
        for (std::int64_t j = 0; j < 3; ++j) p.set<std::int32_t>(Dims{i, j}, static_cast<std::int32_t>(10 + 3 * i + j));
    const Tensor c = run<Concat>({t, p}, {0});
    CHECK(c.to_vector<std::int32_t>() == std::vector<std::int32_t>{0, 2, 4, 1, 3, 5, 10, 11, 12, 13, 14, 15});
}

TEST_CASE("Concat with equal quantization proposes it and copies bytes exactly") {
    const auto q = qp(DType::i8, 0.1f, -3);
    const Tensor a = random_tensor<std::int8_t>({2, 7}, 1, q);
    const Tensor b = random_tensor<std::int8_t>({3, 7}, 2, q);
    const std::vector<TensorType> types{type_of(a), type_of(b)};
    CHECK(ops::infer_with<Concat>(types, {{"axis", std::int64_t{0}}}).value().quant == q);
    const Tensor c = run<Concat>({a, b}, {0});
    CHECK(c.quant == q);
    std::vector<std::int8_t> want = a.to_vector<std::int8_t>();
    for (auto v : b.to_vector<std::int8_t>()) want.push_back(v);
    CHECK(c.to_vector<std::int8_t>() == want);
}

TEST_CASE("Concat of inputs with different scales requantizes each to the output's (required) quantization") {
    for (std::int64_t w : {7, 13}) {
        const Tensor a = random_tensor<std::uint8_t>({2, w}, 3, qp(DType::u8, 0.05f, 120));
        const Tensor b = random_tensor<std::uint8_t>({2, 5}, 4, qp(DType::u8, 0.2f, 10));
        const Tensor c = random_tensor<std::uint8_t>({2, 3}, 5, qp(DType::u8, 0.1f, 128));
        const std::vector<TensorType> types{type_of(a), type_of(b), type_of(c)};
        const auto inferred = ops::infer_with<Concat>(types, {{"axis", std::int64_t{-1}}}).value();
        CHECK(inferred.shape == Shape{2, w + 8});
        CHECK_FALSE(inferred.quant.has_value());  // no proposal: the parameters differ
        CHECK_RULE(ops::call<Concat>({a, b, c}, {1}), "output-quantization-required");
        const TensorType out{DType::u8, {2, w + 8}, c.quant};
        const Tensor y = run<Concat>({a, b, c}, {1}, out);
        const Tensor ys = run<Concat>({a, b, c}, {1}, out, OpContext{false});
        CHECK(y.to_vector<std::uint8_t>() == ys.to_vector<std::uint8_t>());  // scalar == SIMD
        CHECK(y.quant == c.quant);
        // every element within 1 LSB of round-half-even(real / s_out) + zp_out
        const Tensor* src[3] = {&a, &b, &c};
        const std::int64_t start[3] = {0, w, w + 5};
        for (int k = 0; k < 3; ++k) {
            const Tensor part = y.view(slice(y.layout, L{1}, L{start[k]}, L{start[k] + src[k]->shape()[1]}, {}).value());
            check_requantized<std::uint8_t>(*src[k], part, [](const Dims& o) { return o; });
        }
        // the input already in the output's quantization is copied exactly
        for (std::int64_t i = 0; i < 2; ++i)
            for (std::int64_t j = 0; j < 3; ++j)
                CHECK(y.at<std::uint8_t>(Dims{i, w + 5 + j}) == c.at<std::uint8_t>(Dims{i, j}));
    }
}

TEST_CASE("Concat along the per-axis quantization axis concatenates the channels' parameters") {
    const auto qa = qp_axis(DType::i8, {0.5f, 0.25f}, {1, 2}, 0, {2, 3});
    const auto qb = qp_axis(DType::i8, {2.0f}, {-1}, 0, {1, 3});
    const Tensor a = iota<std::int8_t>({2, 3}, qa);
    const Tensor b = iota<std::int8_t>({1, 3}, qb);
    const Tensor c = run<Concat>({a, b}, {0});
    REQUIRE(c.quant);
    CHECK(c.quant->axis == 0);
    CHECK(c.quant->scales == std::vector<float>{0.5f, 0.25f, 2.0f});
    CHECK(c.quant->zero_points == std::vector<std::int32_t>{1, 2, -1});
    for (std::int64_t j = 0; j < 3; ++j) {
        CHECK(real_value_at(c, Dims{1, j}) == real_value_at(a, Dims{1, j}));
        CHECK(real_value_at(c, Dims{2, j}) == real_value_at(b, Dims{0, j}));
    }
    // along the other axis with equal per-axis parameters: proposed unchanged
    const Tensor d = run<Concat>({a, a}, {1});
    CHECK(d.quant == qa);
    // along the other axis with different per-axis parameters: required; a per-tensor output requantizes per channel
    const auto qa2 = qp_axis(DType::i8, {1.0f, 0.125f}, {0, 0}, 0, {2, 3});
    const Tensor a2 = random_tensor<std::int8_t>({2, 3}, 9, qa2);
    CHECK_RULE(ops::call<Concat>({a, a2}, {1}), "output-quantization-required");
    const Tensor e = run<Concat>({a, a2}, {1}, TensorType{DType::i8, {2, 6}, qp(DType::i8, 0.3f, 0)});
    check_requantized<std::int8_t>(a, e.view(slice(e.layout, L{1}, L{0}, L{3}, {}).value()), [](const Dims& o) { return o; });
    check_requantized<std::int8_t>(a2, e.view(slice(e.layout, L{1}, L{3}, L{6}, {}).value()), [](const Dims& o) { return o; });
}

TEST_CASE("Concat errors name their rule") {
    const Tensor a = iota<float>({2, 3});
    CHECK_RULE(ops::call<Concat>({a, iota<float>({3, 3})}, {1}), "concat-extents-match");
    CHECK(ops::call<Concat>({a, iota<float>({3, 3})}, {1}).error().input == "Concat.input[1]");
    CHECK(ops::call<Concat>({a, iota<float>({3, 3})}, {1}).error().position == "axis 0");
    CHECK_RULE(ops::call<Concat>({a, iota<float>({2, 3, 1})}, {0}), "same-rank");
    CHECK_RULE(ops::call<Concat>({a, iota<std::int32_t>({2, 3})}, {0}), "same-dtype");
    CHECK_RULE(ops::call<Concat>({iota<std::int8_t>({2}), iota<std::int8_t>({2}, qp(DType::i8, 1.0f, 0))}, {0}),
               "same-quantization-presence");
    CHECK_RULE(ops::call<Concat>({a, a}, {}), "attribute-range");  // axis is required
    CHECK_RULE(ops::call<Concat>({a, a}, {2}), "axis-in-range");
    CHECK_RULE(ops::call<Concat>({a, a}, {-3}), "axis-in-range");
    CHECK_RULE(ops::call<Concat>({Tensor::from<float>({}, {1.0f})}, {0}), "axis-in-range");  // scalars have no axis
    CHECK_RULE(ops::call<Concat>(std::span<const Tensor>(), {0}), "input-count");
    const std::vector<Tensor> many(65, a);
    CHECK_RULE(ops::call<Concat>(std::span<const Tensor>(many), {0}), "input-count");
    const std::vector<Tensor> max64(64, a);
    CHECK(run_span<Concat>(max64, {0}).shape() == Shape{128, 3});
    // a quantized output for unquantized inputs
    CHECK_RULE(ops::call<Concat>({iota<std::int8_t>({2})}, {0}, TensorType{DType::i8, {2}, qp(DType::i8, 1.0f, 0)}),
               "input-not-quantized");
}

// ---------------------------------------------------------------------------------------------------------------
// Pad

namespace {

/// Independent reference of ONNX Pad on one axis: the list of source coordinates (-1 = constant), built by cropping
/// the list 0..n-1 and then prepending / appending the border elements explicitly.
std::vector<std::int64_t> ref_axis(std::int64_t n, std::int64_t b, std::int64_t e, const std::string& mode) {
    std::vector<std::int64_t> c;
    for (std::int64_t i = std::max<std::int64_t>(-b, 0); i < n - std::max<std::int64_t>(-e, 0); ++i) c.push_back(i);
    const std::int64_t pb = std::max<std::int64_t>(b, 0), pe = std::max<std::int64_t>(e, 0);
    const auto m = static_cast<std::int64_t>(c.size());
    std::vector<std::int64_t> left, right;
    for (std::int64_t k = pb; k >= 1; --k)  // left border, outermost first
        left.push_back(mode == "constant" ? -1 : mode == "edge" ? c.front() : c[static_cast<std::size_t>(k)]);
    for (std::int64_t k = 1; k <= pe; ++k)
        right.push_back(mode == "constant" ? -1 : mode == "edge" ? c.back() : c[static_cast<std::size_t>(m - 1 - k)]);
    std::vector<std::int64_t> r = left;
    r.insert(r.end(), c.begin(), c.end());
    r.insert(r.end(), right.begin(), right.end());
    return r;
}

/// Expected output values of Pad for an input x (stored values), fill `fill` (stored).
template <class T>
std::vector<T> ref_pad(const Tensor& x, const L& pads, const std::string& mode, T fill) {
    const int r = x.rank();
    std::vector<std::vector<std::int64_t>> ax;
    Shape out;
    for (int k = 0; k < r; ++k) {
        ax.push_back(ref_axis(x.shape()[k], pads[static_cast<std::size_t>(k)], pads[static_cast<std::size_t>(k + r)], mode));
        out.push_back(static_cast<std::int64_t>(ax.back().size()));
    }
    std::vector<T> v;
    for (std::int64_t f = 0; f < element_count(out); ++f) {
        const Dims o = unflat(f, out);
        Dims i = Dims::filled(r, 0);
        bool inside = true;
        for (int k = 0; k < r; ++k) {
            i[k] = ax[static_cast<std::size_t>(k)][static_cast<std::size_t>(o[k])];
            inside = inside && i[k] >= 0;
        }
        v.push_back(inside ? x.at<T>(i) : fill);
    }
    return v;
}

}  // namespace

TEST_CASE("Pad: the ONNX spec examples for constant, reflect and edge") {
    const Tensor x = Tensor::from<float>({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
    const L pads{0, 2, 0, 0};
    CHECK(run<Pad>({x}, {pads, "constant", 0.0f}).to_vector<float>() ==
          std::vector<float>{0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f});
    // The spec's reflect example used pads [0, 2, 0, 0] on an axis of extent 2, which breaks reflect's own rule
    // pad < extent (onnx/onnx#7467, fixed by onnx/onnx#7700 to pads [0, 1, 0, 1]): refused here, the fix holds.
    CHECK_RULE(ops::call<Pad>({x}, {pads, "reflect", 0.0f}), "pad-reflect-less-than-extent");
    CHECK(run<Pad>({x}, {{0, 1, 0, 1}, "reflect", 0.0f}).to_vector<float>() ==
          std::vector<float>{1.2f, 1.0f, 1.2f, 1.0f, 3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f});
    CHECK(run<Pad>({x}, {pads, "edge", 0.0f}).to_vector<float>() ==
          std::vector<float>{1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f});
    CHECK(run<Pad>({x}, {pads, "constant", 1.5f}).shape() == Shape{3, 4});
    CHECK(run<Pad>({x}, {pads, "constant", 1.5f}).to_vector<float>()[0] == 1.5f);
    // 1-D by hand: reflect does not repeat the edge element, edge does
    const Tensor r = Tensor::from<std::int32_t>({4}, {1, 2, 3, 4});
    CHECK(run<Pad>({r}, {{3, 2}, "reflect", 0.0f}).to_vector<std::int32_t>() ==
          std::vector<std::int32_t>{4, 3, 2, 1, 2, 3, 4, 3, 2});
    CHECK(run<Pad>({r}, {{3, 2}, "edge", 0.0f}).to_vector<std::int32_t>() ==
          std::vector<std::int32_t>{1, 1, 1, 1, 2, 3, 4, 4, 4});
    CHECK(run<Pad>({r}, {{-1, 2}, "constant", 9.0f}).to_vector<std::int32_t>() ==
          std::vector<std::int32_t>{2, 3, 4, 9, 9});
    // crop first, then reflect the cropped axis [2, 3, 4]
    CHECK(run<Pad>({r}, {{-1, 2}, "reflect", 0.0f}).to_vector<std::int32_t>() ==
          std::vector<std::int32_t>{2, 3, 4, 3, 2});
    CHECK(run<Pad>({Tensor::from<float>({}, {2.5f})}, {{}, "reflect", 0.0f}).to_vector<float>() ==
          std::vector<float>{2.5f});
}

TEST_CASE("Pad matches the reference for widths 7 and 13, pads beyond the extent (edge, constant), crops, any layout") {
    std::mt19937 g(1234);
    for (std::int64_t w : {7, 13}) {
        for (const std::string mode : {"constant", "reflect", "edge"}) {
            for (int trial = 0; trial < 25; ++trial) {
                // input [3, w] with padded rows (seed B6) or a transposed view
                Tensor x = Tensor::with_layout(DType::i8, Layout::padded({3, w}, 1, 16));
                for (std::int64_t i = 0; i < 3; ++i)
                    for (std::int64_t j = 0; j < w; ++j) x.set<std::int8_t>(Dims{i, j}, static_cast<std::int8_t>(i * 16 + j));
                if (trial % 2) {
                    const Tensor base = iota<std::int8_t>({w, 3});
                    x = base.view(transpose(base.layout, Dims{1, 0}).value());
                }
                auto pick = [&](std::int64_t extent) {
                    const std::int64_t hi = mode == "reflect" ? extent - 1 : 2 * extent + 3;
                    return std::uniform_int_distribution<std::int64_t>(-1, hi)(g);  // crops keep >= 1 element
                };
                L pads{pick(3), pick(w), pick(3), pick(w)};
                if (mode == "reflect") {  // keep pad < cropped extent
                    for (int k = 0; k < 2; ++k) {
                        const std::int64_t n = k == 0 ? 3 : w;
                        auto& b = pads[static_cast<std::size_t>(k)];
                        auto& e = pads[static_cast<std::size_t>(k + 2)];
                        const std::int64_t m = n - std::max<std::int64_t>(-b, 0) - std::max<std::int64_t>(-e, 0);
                        b = std::min(b, m - 1);
                        e = std::min(e, m - 1);
                    }
                }
                const Tensor y = run<Pad>({x}, {pads, mode, -7.0f});
                CHECK(y.to_vector<std::int8_t>() == ref_pad<std::int8_t>(x, pads, mode, std::int8_t{-7}));
            }
        }
        // edge with pads far larger than the extent
        const Tensor x = iota<float>({w});
        const Tensor y = run<Pad>({x}, {{3 * w, 2 * w + 1}, "edge", 0.0f});
        CHECK(y.to_vector<float>() == ref_pad<float>(x, {3 * w, 2 * w + 1}, "edge", 0.0f));
        // reflect at the largest legal pad (extent - 1) on both sides
        const Tensor z = run<Pad>({x}, {{w - 1, w - 1}, "reflect", 0.0f});
        CHECK(z.to_vector<float>() == ref_pad<float>(x, {w - 1, w - 1}, "reflect", 0.0f));
        CHECK_RULE(ops::call<Pad>({x}, {{w, 0}, "reflect", 0.0f}), "pad-reflect-less-than-extent");
        CHECK_RULE(ops::call<Pad>({x}, {{0, w + 5}, "reflect", 0.0f}), "pad-reflect-less-than-extent");
    }
}

TEST_CASE("Pad constant on quantized tensors: the value is quantized with the OUTPUT parameters (half even, saturated)") {
    const auto q = qp(DType::i8, 0.5f, 3);
    const Tensor x = Tensor::from<std::int8_t>({2}, {10, -10}, q);
    auto pad_value = [&](float v, std::optional<TensorType> out = std::nullopt) {
        return run<Pad>({x}, {{1, 0}, "constant", v}, out).to_vector<std::int8_t>()[0];
    };
    CHECK(pad_value(0.0f) == 3);      // real 0 is the zero point
    CHECK(pad_value(1.0f) == 5);      // 1 / 0.5 = 2, + 3
    CHECK(pad_value(0.25f) == 3);     // 0.5 -> 0 (ties to even)
    CHECK(pad_value(0.75f) == 5);     // 1.5 -> 2
    CHECK(pad_value(1.25f) == 5);     // 2.5 -> 2
    CHECK(pad_value(-0.75f) == 1);    // -1.5 -> -2
    CHECK(pad_value(1000.0f) == 127);  // saturated
    CHECK(pad_value(-1000.0f) == -128);
    CHECK(pad_value(std::numeric_limits<float>::infinity()) == 127);
    // data elements: an exact byte copy
    CHECK(run<Pad>({x}, {{1, 2}, "constant", 1.0f}).to_vector<std::int8_t>() == std::vector<std::int8_t>{5, 10, -10, 5, 5});
    // uint8
    const Tensor u = Tensor::from<std::uint8_t>({1}, {7}, qp(DType::u8, 0.1f, 128));
    CHECK(run<Pad>({u}, {{1, 1}, "constant", -1.0f}).to_vector<std::uint8_t>() == std::vector<std::uint8_t>{118, 7, 118});
    // with a requested output quantization: input requantized, value quantized with the output's parameters
    const auto qo = qp(DType::i8, 0.25f, -4);
    const Tensor y = run<Pad>({x}, {{1, 1}, "constant", 1.0f}, TensorType{DType::i8, {4}, qo});
    CHECK(y.quant == qo);
    CHECK(y.to_vector<std::int8_t>() == std::vector<std::int8_t>{0, 10, -30, 0});  // 1/0.25-4; 3.5/.25-4; -6.5/.25-4
}

TEST_CASE("Pad constant per-axis quantized: one fill per channel; the quantization axis itself cannot be padded") {
    const Shape in{2, 3};
    const auto q = qp_axis(DType::i8, {0.5f, 0.25f}, {1, -2}, 0, in);
    const Tensor x = iota<std::int8_t>(in, q);
    const Tensor y = run<Pad>({x}, {{0, 1, 0, 1}, "constant", 1.0f});
    CHECK(y.quant == q);
    CHECK(y.to_vector<std::int8_t>() ==
          std::vector<std::int8_t>{3, -128, -127, -126, 3, 2, -125, -124, -123, 2});  // 1/0.5+1 = 3, 1/0.25-2 = 2
    CHECK_RULE(ops::call<Pad>({x}, {{1, 0, 0, 0}, "constant", 0.0f}), "pad-keeps-quantization-axis");
    CHECK_RULE(ops::call<Pad>({x}, {{0, 0, -1, 0}, "edge", 0.0f}), "pad-keeps-quantization-axis");
    const auto q1 = qp_axis(DType::i8, {0.5f}, {1}, 0, {1, 3});
    const Tensor one = run<Pad>({iota<std::int8_t>({1, 3}, q1)}, {{1, 0, 0, 0}, "edge", 0.0f});
    CHECK(one.quant->per_tensor());
    CHECK(one.shape() == Shape{2, 3});
}

TEST_CASE("Pad constant on unquantized integers needs an exact, representable integer value") {
    const Tensor i = Tensor::from<std::int32_t>({2}, {1, 2});
    CHECK(run<Pad>({i}, {{1, 1}, "constant", -7.0f}).to_vector<std::int32_t>() == std::vector<std::int32_t>{-7, 1, 2, -7});
    CHECK(run<Pad>({i}, {{1, 0}, "constant", 16777216.0f}).to_vector<std::int32_t>()[0] == 16777216);
    CHECK_RULE(ops::call<Pad>({i}, {{1, 1}, "constant", 2.5f}), "pad-value-representable");
    CHECK_RULE(ops::call<Pad>({i}, {{1, 1}, "constant", 3e9f}), "pad-value-representable");
    CHECK_RULE(ops::call<Pad>({i}, {{1, 1}, "constant", std::nanf("")}), "pad-value-representable");
    CHECK_RULE(ops::call<Pad>({iota<std::int8_t>({2})}, {{1, 1}, "constant", 200.0f}), "pad-value-representable");
    CHECK(run<Pad>({iota<std::uint8_t>({2})}, {{1, 0}, "constant", 200.0f}).to_vector<std::uint8_t>()[0] == 200);
    // float keeps NaN and infinities as given
    CHECK(std::isnan(run<Pad>({iota<float>({2})}, {{1, 0}, "constant", std::nanf("")}).to_vector<float>()[0]));
    // non-constant modes ignore the value (and it may be anything)
    CHECK(run<Pad>({i}, {{1, 1}, "edge", 2.5f}).to_vector<std::int32_t>() == std::vector<std::int32_t>{1, 1, 2, 2});
}

TEST_CASE("Pad errors name their rule") {
    const Tensor x = iota<float>({2, 3});
    CHECK_RULE(ops::call<Pad>({x}, {{1, 1}, "constant", 0.0f}), "pads-length");
    CHECK_RULE(ops::call<Pad>({x}, {}), "pads-length");
    CHECK_RULE(ops::call<Pad>({x}, {{-2, 0, -1, 0}, "constant", 0.0f}), "pad-crop-within-extent");
    CHECK(ops::call<Pad>({x}, {{-2, 0, -1, 0}, "constant", 0.0f}).error().position == "axis 0");
    CHECK(run<Pad>({x}, {{-2, 0, 0, 0}, "constant", 0.0f}).shape() == Shape{0, 3});  // crop everything: empty
    CHECK_RULE(ops::call<Pad>({x}, {{-2, 0, 1, 0}, "edge", 0.0f}), "pad-edge-nonempty");
    CHECK_RULE(ops::call<Pad>({iota<float>({1, 3})}, {{1, 0, 0, 0}, "reflect", 0.0f}), "pad-reflect-less-than-extent");
    CHECK_RULE(ops::call<Pad>({x}, {{0, 0, 0, 0}, "wrap", 0.0f}), "attribute-range");
    CHECK_RULE(ops::call<Pad>({x}, {{std::int64_t{1} << 41, 0, 0, 0}, "constant", 0.0f}), "attribute-range");
    const TensorType t = type_of(x);
    CHECK_RULE(Pad::infer(std::span<const TensorType>(&t, 1), {{std::numeric_limits<std::int64_t>::min(), 0, 0, 0}, "constant", 0.0f}),
               "pad-in-range");
    CHECK_RULE(ops::call<Pad>({x}, {{1 << 20, 1 << 21, 0, 0}, "constant", 0.0f}), "elements-at-most-2^40");
    CHECK_RULE(ops::call<Pad>({x}, {{0, 0, 0, 0}, "constant", 0.0f}, TensorType{DType::f32, {3, 3}, std::nullopt}),
               "output-type-matches-inference");
}

// ---------------------------------------------------------------------------------------------------------------
// The index-map primitive and copy_into

TEST_CASE("run_index_map gathers by per-axis tables; -1 takes the (broadcast) fill; rank 0 copies one element") {
    const Tensor x = iota<std::int32_t>({2, 3});
    ops::IndexMap m{{{1, -1, 0}, {2, 2, 0, 1}}};
    const Tensor fill = Tensor::from<std::int32_t>({}, {-9});
    const Tensor f = fill.view(broadcast_to(fill.layout, Shape{3, 4}).value());
    Tensor y = Tensor::zeros(DType::i32, {3, 4});
    REQUIRE(ops::run_index_map(x, m, f, y).ok());
    CHECK(y.to_vector<std::int32_t>() == std::vector<std::int32_t>{5, 5, 3, 4, -9, -9, -9, -9, 2, 2, 0, 1});
    Tensor s = Tensor::zeros(DType::f32, {});
    REQUIRE(ops::run_index_map(Tensor::from<float>({}, {3.25f}), ops::IndexMap{}, std::nullopt, s).ok());
    CHECK(s.to_vector<float>() == std::vector<float>{3.25f});
    // int64 is moved like any other element
    Tensor y64 = Tensor::zeros(DType::i64, {2});
    REQUIRE(ops::run_index_map(Tensor::from<std::int64_t>({3}, {7, 8, std::int64_t{1} << 40}), ops::IndexMap{{{2, 0}}},
                               std::nullopt, y64)
                .ok());
    CHECK(y64.to_vector<std::int64_t>() == std::vector<std::int64_t>{std::int64_t{1} << 40, 7});
}

TEST_CASE("run_index_map refuses bad tables, missing fills, wrong shapes and dtypes") {
    const Tensor x = iota<std::int32_t>({2, 3});
    Tensor y = Tensor::zeros(DType::i32, {2, 2});
    CHECK_RULE(ops::run_index_map(x, ops::IndexMap{{{0, 2}, {0, 1}}}, std::nullopt, y), "index-map-entry-in-range");
    CHECK_RULE(ops::run_index_map(x, ops::IndexMap{{{0, -2}, {0, 1}}}, std::nullopt, y), "index-map-entry-in-range");
    CHECK_RULE(ops::run_index_map(x, ops::IndexMap{{{0, -1}, {0, 1}}}, std::nullopt, y), "index-map-fill-required");
    CHECK_RULE(ops::run_index_map(x, ops::IndexMap{{{0, 1}}}, std::nullopt, y), "index-map-rank");
    CHECK_RULE(ops::run_index_map(x, ops::IndexMap{{{0, 1}, {0, 1, 2}}}, std::nullopt, y), "index-map-shape");
    Tensor yf = Tensor::zeros(DType::f32, {2, 2});
    CHECK_RULE(ops::run_index_map(x, ops::IndexMap{{{0, 1}, {0, 1}}}, std::nullopt, yf), "index-map-dtype");
    CHECK_RULE(ops::run_index_map(x, ops::IndexMap{{{0, -1}, {0, 1}}}, Tensor::zeros(DType::i32, {2}), y),
               "index-map-fill-required");
}

TEST_CASE("copy_into writes only the destination view's elements (padding and neighbours untouched)") {
    Tensor dst = Tensor::with_layout(DType::u8, Layout::padded({2, 7}, 1, 16), qp(DType::u8, 0.5f, 0));
    for (auto& b : *dst.storage) b = std::byte{0xEE};
    Tensor view = dst.view(slice(dst.layout, L{1}, L{2}, L{5}, {}).value());  // columns 2..4
    const Tensor src = Tensor::from<std::uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}, qp(DType::u8, 0.5f, 0));
    REQUIRE(ops::copy_into(src, view, OpContext{}).ok());
    for (std::int64_t i = 0; i < 2; ++i)
        for (std::int64_t j = 0; j < 16; ++j) {
            const auto at = static_cast<std::size_t>(i * 16 + j);
            if (at >= dst.storage->size()) continue;
            const auto b = static_cast<int>((*dst.storage)[at]);
            if (j >= 2 && j < 5) CHECK(b == 1 + 3 * i + (j - 2));
            else CHECK(b == 0xEE);
        }
}

TEST_CASE("copy_into / materialize never change meaning silently: int32 with different parameters is refused") {
    const Tensor b = Tensor::from<std::int32_t>({2}, {100, -100}, qp(DType::i32, 0.01f, 0));
    CHECK_RULE(ops::materialize(b, TensorType{DType::i32, {2}, qp(DType::i32, 0.02f, 0)}, OpContext{}), "quantized-output");
    CHECK(ops::materialize(b, TensorType{DType::i32, {2}, b.quant}, OpContext{}).value().to_vector<std::int32_t>() ==
          std::vector<std::int32_t>{100, -100});
    CHECK_RULE(ops::materialize(b, TensorType{DType::i32, {2}, std::nullopt}, OpContext{}), "same-type");
    CHECK_RULE(ops::materialize(iota<float>({2}), TensorType{DType::i32, {2}, std::nullopt}, OpContext{}), "same-type");
    CHECK_RULE(ops::materialize(iota<float>({2}), TensorType{DType::f32, {3}, std::nullopt}, OpContext{}), "same-shape");
    const Tensor i64 = Tensor::from<std::int64_t>({3}, {1, -2, 3});
    const Tensor r = i64.view(slice(i64.layout, L{0}, L{-1}, L{std::numeric_limits<std::int64_t>::min()}, L{-1}).value());
    CHECK(ops::materialize(r, TensorType{DType::i64, {3}, std::nullopt}, OpContext{}).value().to_vector<std::int64_t>() ==
          std::vector<std::int64_t>{3, -2, 1});
}
