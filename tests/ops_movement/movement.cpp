// Data movement, part 1: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice, Expand (ONNX semantics, views vs
// copies, the quantization axis moving with the tensor). Concat, Pad, the index map and copy_into: concat_pad.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "helpers.hpp"

using namespace janus;
using namespace janus::test;
using ops::Expand;
using ops::Flatten;
using ops::Reshape;
using ops::Slice;
using ops::Squeeze;
using ops::Transpose;
using ops::Unsqueeze;

namespace {
constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();

Shape reshaped(const Shape& in, const L& shape, std::int64_t allowzero = 0) {
    return run<Reshape>({iota<float>(in)}, {shape, allowzero}).shape();
}
}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Reshape / Flatten

TEST_CASE("Reshape: the ONNX spec examples (0 copies, -1 inferred, allowzero) keep the row-major element order") {
    const Shape in{2, 3, 4};
    CHECK(reshaped(in, {4, 2, 3}) == Shape{4, 2, 3});
    CHECK(reshaped(in, {2, 12}) == Shape{2, 12});
    CHECK(reshaped(in, {2, 3, 2, 2}) == Shape{2, 3, 2, 2});
    CHECK(reshaped(in, {24}) == Shape{24});
    CHECK(reshaped(in, {2, -1, 2}) == Shape{2, 6, 2});
    CHECK(reshaped(in, {-1, 2, 3, 4}) == Shape{1, 2, 3, 4});
    CHECK(reshaped(in, {2, 0, 4, 1}) == Shape{2, 3, 4, 1});
    CHECK(reshaped(in, {2, 0, 1, -1}) == Shape{2, 3, 1, 4});
    CHECK(reshaped({0, 3, 4}, {3, 4, 0}, 1) == Shape{3, 4, 0});
    for (DType d : {DType::f32, DType::i8, DType::u8, DType::i32}) {
        visit_dtype(d, [&](auto tag) {
            using T = typename decltype(tag)::type;
            const Tensor x = iota<T>(in);
            const Tensor y = run<Reshape>({x}, {{3, -1}, 0});
            CHECK(y.shape() == Shape{3, 8});
            CHECK(y.to_vector<T>() == x.to_vector<T>());
        });
    }
}

TEST_CASE("Reshape of a contiguous tensor is a view sharing the input's storage (seed B3: provable linear map)") {
    const Tensor x = iota<std::int8_t>({2, 3, 4}, qp(DType::i8, 0.5f, 3));
    const Tensor y = run<Reshape>({x}, {{6, 4}, 0});
    CHECK(y.storage == x.storage);
    CHECK(y.layout.is_contiguous());
    CHECK(y.quant == x.quant);
    CHECK(y.to_vector<std::int8_t>() == x.to_vector<std::int8_t>());
}

TEST_CASE("Reshape of a transposed view needs data movement: materialized, values in the view's row-major order (B3)") {
    const Tensor base = iota<float>({2, 3});  // [[0,1,2],[3,4,5]]
    const Tensor t = base.view(transpose(base.layout, Dims{1, 0}).value());  // [[0,3],[1,4],[2,5]]
    REQUIRE_FALSE(reshape(t.layout, Shape{6}).ok());  // the layout refuses: strides cannot express it
    const Tensor y = run<Reshape>({t}, {{6}, 0});
    CHECK(y.storage != base.storage);
    CHECK(y.to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
    // the same through Flatten
    const Tensor f = run<Flatten>({t}, {0});
    CHECK(f.shape() == Shape{1, 6});
    CHECK(f.to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("Reshape of a padded layout (row stride != width, seed B6): merging rows copies, splitting stays a view") {
    for (std::int64_t width : {7, 13}) {
        const Layout padded = Layout::padded({3, width}, 1, 16);
        Tensor x = Tensor::with_layout(DType::i8, padded, qp(DType::i8, 0.25f, -2));
        for (std::int64_t i = 0; i < 3; ++i)
            for (std::int64_t j = 0; j < width; ++j) x.set<std::int8_t>(Dims{i, j}, static_cast<std::int8_t>(i * 20 + j));
        // poison the padding: a wrong address would read it
        for (std::int64_t i = 0; i < 3; ++i)
            for (std::int64_t j = width; j < 16; ++j)
                if (i * 16 + j < static_cast<std::int64_t>(x.storage->size()))
                    (*x.storage)[static_cast<std::size_t>(i * 16 + j)] = std::byte{0x7f};
        const Tensor y = run<Reshape>({x}, {{-1}, 0});
        CHECK(y.storage != x.storage);
        std::vector<std::int8_t> want;
        for (std::int64_t i = 0; i < 3; ++i)
            for (std::int64_t j = 0; j < width; ++j) want.push_back(static_cast<std::int8_t>(i * 20 + j));
        CHECK(y.to_vector<std::int8_t>() == want);
        CHECK(y.quant == x.quant);
        const Tensor v = run<Reshape>({x}, {{3, 1, width}, 0});
        CHECK(v.storage == x.storage);  // no merge across the padding: still a view
        CHECK(v.to_vector<std::int8_t>() == want);
    }
}

TEST_CASE("Reshape of a per-axis quantized tensor keeps the axis only where it survives unchanged (A10/B12)") {
    const Shape in{2, 3, 4};
    const auto q = qp_axis(DType::i8, {0.1f, 0.2f, 0.3f}, {0, 1, -1}, 1, in);
    const Tensor x = iota<std::int8_t>(in, q);
    const TensorType t{DType::i8, in, q};
    auto infer = [&](const L& s) { return ops::infer_with<Reshape>(std::span<const TensorType>(&t, 1), {{"shape", s}}); };
    CHECK(infer({2, 3, 2, 2}).value().quant->axis == 1);
    CHECK(infer({1, 2, 3, 4}).value().quant->axis == 2);
    CHECK(infer({2, 3, 4, 1}).value().quant->axis == 1);
    CHECK_RULE(infer({6, 1, 4}), "reshape-keeps-quantization-axis");
    CHECK_RULE(infer({6, 4}), "reshape-keeps-quantization-axis");
    CHECK_RULE(infer({2, 12}), "reshape-keeps-quantization-axis");
    CHECK_RULE(infer({24}), "reshape-keeps-quantization-axis");
    const Tensor y = run<Reshape>({x}, {{1, 2, 3, 4}, 0});
    CHECK(y.quant->axis == 2);
    CHECK(y.quant->scales == q.scales);
    for (std::int64_t f = 0; f < 24; ++f)
        CHECK(real_value_at(y, unflat(f, y.shape())) == real_value_at(x, unflat(f, in)));
    // one channel: the axis may disappear, the quantization becomes per-tensor (the same meaning)
    const auto q1 = qp_axis(DType::i8, {0.5f}, {2}, 0, {1, 6});
    const TensorType t1{DType::i8, {1, 6}, q1};
    const auto r1 = ops::infer_with<Reshape>(std::span<const TensorType>(&t1, 1), {{"shape", L{2, 3}}}).value();
    CHECK(r1.quant->per_tensor());
    CHECK(r1.quant->scale() == 0.5f);
}

TEST_CASE("Reshape to a different output quantization requantizes (within 1 LSB of round-half-even), any layout") {
    const Tensor base = random_tensor<std::int8_t>({4, 13}, 7, qp(DType::i8, 0.1f, 5));
    const Tensor t = base.view(transpose(base.layout, Dims{1, 0}).value());  // [13, 4], not reshapable in place
    const auto qo = qp(DType::i8, 0.23f, -7);
    for (const Tensor& x : {base, t}) {
        const Shape s{element_count(x.shape())};
        const Tensor y = run<Reshape>({x}, {{-1}, 0}, TensorType{DType::i8, s, qo});
        CHECK(y.quant == qo);
        check_requantized<std::int8_t>(x, y, [&](const Dims& o) { return unflat(o[0], x.shape()); });
        const Tensor ys = run<Reshape>({x}, {{-1}, 0}, TensorType{DType::i8, s, qo}, OpContext{false});
        CHECK(ys.to_vector<std::int8_t>() == y.to_vector<std::int8_t>());  // scalar == SIMD, bit for bit
    }
}

TEST_CASE("Flatten: axis in [-r, r] gives [prod(s[:axis]), prod(s[axis:])] (ONNX examples)") {
    const Tensor x = iota<float>({2, 3, 4, 5});
    CHECK(run<Flatten>({x}, {0}).shape() == Shape{1, 120});
    CHECK(run<Flatten>({x}, {1}).shape() == Shape{2, 60});
    CHECK(run<Flatten>({x}, {}).shape() == Shape{2, 60});  // default axis 1
    CHECK(run<Flatten>({x}, {3}).shape() == Shape{24, 5});
    CHECK(run<Flatten>({x}, {4}).shape() == Shape{120, 1});
    CHECK(run<Flatten>({x}, {-1}).shape() == Shape{24, 5});
    CHECK(run<Flatten>({x}, {-4}).shape() == Shape{1, 120});
    CHECK(run<Flatten>({x}, {2}).to_vector<float>() == x.to_vector<float>());
    CHECK(run<Flatten>({Tensor::from<float>({}, {3.5f})}, {0}).shape() == Shape{1, 1});
    CHECK_RULE(ops::call<Flatten>({x}, {5}), "axis-in-range");
    CHECK_RULE(ops::call<Flatten>({x}, {-5}), "axis-in-range");
    CHECK_RULE(ops::call<Flatten>({x}, {7}), "attribute-range");
}

TEST_CASE("Reshape errors name their rule") {
    const Tensor x = iota<float>({2, 3, 4});
    CHECK_RULE(ops::call<Reshape>({x}, {{5, -1}, 0}), "reshape-element-count");
    CHECK_RULE(ops::call<Reshape>({x}, {{7, 3}, 0}), "reshape-element-count");
    CHECK_RULE(ops::call<Reshape>({x}, {{-1, -1}, 0}), "reshape-one-inferred");
    CHECK_RULE(ops::call<Reshape>({x}, {{0, -1, 0, 0}, 0}), "reshape-zero-copies-input-axis");
    CHECK_RULE(ops::call<Reshape>({iota<float>({0, 3})}, {{0, -1}, 1}), "reshape-zero-and-inferred");
    CHECK_RULE(ops::call<Reshape>({x}, {{-2, 12}, 0}), "attribute-range");
    CHECK_RULE(ops::call<Reshape>({x}, {{24}, 2}), "attribute-range");
    CHECK_RULE(ops::call<Reshape>({x}, {{1, 1, 1, 1, 1, 1, 24}, 0}), "attribute-range");
    CHECK_RULE(ops::call<Reshape>({x, x}, {{24}, 0}), "input-count");
    CHECK_RULE(ops::call<Reshape>({x}, {{24}, 0}, TensorType{DType::f32, {4, 6}, std::nullopt}),
               "output-type-matches-inference");
    // quantized input, requested output without quantization: never dropped silently (A10)
    const Tensor q = iota<std::int8_t>({2, 3}, qp(DType::i8, 1.0f, 0));
    CHECK_RULE(ops::call<Reshape>({q}, {{6}, 0}, TensorType{DType::i8, {6}, std::nullopt}),
               "output-quantization-required");
    // unquantized input, requested output quantization: refused
    CHECK_RULE(ops::call<Reshape>({iota<std::int8_t>({6})}, {{6}, 0}, TensorType{DType::i8, {6}, qp(DType::i8, 1.0f, 0)}),
               "input-not-quantized");
    // per-axis output whose axis does not survive the reshape back to the input's coordinates
    const Tensor p = iota<std::int8_t>({2, 3}, qp(DType::i8, 1.0f, 0));
    CHECK_RULE(ops::call<Reshape>({p}, {{6}, 0},
                                  TensorType{DType::i8, {6}, qp_axis(DType::i8, std::vector<float>(6, 1.0f), {}, 0, {6})}),
               "reshape-keeps-quantization-axis");
}

// ---------------------------------------------------------------------------------------------------------------
// Squeeze / Unsqueeze

TEST_CASE("Squeeze: no axes removes every extent-1 axis; named (negative) axes must have extent 1") {
    const Tensor x = iota<std::int32_t>({1, 3, 1, 5});
    const Tensor a = run<Squeeze>({x}, {});
    CHECK(a.shape() == Shape{3, 5});
    CHECK(a.storage == x.storage);  // a view
    CHECK(a.to_vector<std::int32_t>() == x.to_vector<std::int32_t>());
    CHECK(run<Squeeze>({x}, {{-2}}).shape() == Shape{1, 3, 5});
    CHECK(run<Squeeze>({x}, {{0, -2}}).shape() == Shape{3, 5});
    CHECK(run<Squeeze>({iota<float>({1, 1})}, {}).shape() == Shape{});
    CHECK(run<Squeeze>({iota<float>({3, 5})}, {}).shape() == Shape{3, 5});
    CHECK_RULE(ops::call<Squeeze>({x}, {{1}}), "squeeze-extent-one");
    CHECK(ops::call<Squeeze>({x}, {{1}}).error().position == "axis 1");
    CHECK_RULE(ops::call<Squeeze>({x}, {{0, -4}}), "axes-unique");
    CHECK_RULE(ops::call<Squeeze>({x}, {{4}}), "axis-in-range");
    CHECK_RULE(ops::call<Squeeze>({x}, {{-5}}), "axis-in-range");
    CHECK_RULE(ops::call<Squeeze>({x}, {{0, 0, 0, 0, 0, 0, 0}}), "attribute-range");
}

TEST_CASE("Unsqueeze: axes are OUTPUT positions, negative allowed, required, no duplicates (ONNX examples)") {
    const Tensor x = iota<float>({3, 4, 5});
    CHECK(run<Unsqueeze>({x}, {{0}}).shape() == Shape{1, 3, 4, 5});
    CHECK(run<Unsqueeze>({x}, {{0, 4}}).shape() == Shape{1, 3, 4, 5, 1});
    CHECK(run<Unsqueeze>({x}, {{5, 4, 2}}).shape() == Shape{3, 4, 1, 5, 1, 1});  // unsorted
    CHECK(run<Unsqueeze>({x}, {{-1}}).shape() == Shape{3, 4, 5, 1});
    CHECK(run<Unsqueeze>({x}, {{-2}}).shape() == Shape{3, 4, 1, 5});
    CHECK(run<Unsqueeze>({iota<float>({1, 3, 1, 5})}, {{-2}}).shape() == Shape{1, 3, 1, 1, 5});
    const Tensor y = run<Unsqueeze>({x}, {{1}});
    CHECK(y.storage == x.storage);
    CHECK(y.layout.is_contiguous());
    CHECK(y.to_vector<float>() == x.to_vector<float>());
    CHECK(run<Unsqueeze>({Tensor::from<float>({}, {2.0f})}, {{0}}).shape() == Shape{1});
    CHECK_RULE(ops::call<Unsqueeze>({x}, {{0, 0}}), "axes-unique");
    CHECK_RULE(ops::call<Unsqueeze>({x}, {{1, -4}}), "axes-unique");  // -4 is position 1 of the rank-5 output
    CHECK_RULE(ops::call<Unsqueeze>({x}, {{5}}), "axis-in-range");
    CHECK_RULE(ops::call<Unsqueeze>({x}, {}), "attribute-range");  // axes are required
    CHECK_RULE(ops::call<Unsqueeze>({x}, {{0, 1, 2, 3}}), "rank-at-most-6");
}

TEST_CASE("Squeeze / Unsqueeze move the per-axis quantization axis; squeezing a 1-channel axis makes it per-tensor") {
    const Shape in{1, 3, 1, 2};
    const auto q = qp_axis(DType::u8, {0.5f, 0.25f}, {10, 20}, 3, in);
    const Tensor x = iota<std::uint8_t>(in, q);
    const Tensor s = run<Squeeze>({x}, {});
    CHECK(s.shape() == Shape{3, 2});
    CHECK(s.quant->axis == 1);
    CHECK(s.quant->scales == q.scales);
    const Tensor u = run<Unsqueeze>({x}, {{0, -1}});
    CHECK(u.shape() == Shape{1, 1, 3, 1, 2, 1});
    CHECK(u.quant->axis == 4);
    for (std::int64_t f = 0; f < 6; ++f) {
        CHECK(real_value_at(s, unflat(f, s.shape())) == real_value_at(x, unflat(f, in)));
        CHECK(real_value_at(u, unflat(f, u.shape())) == real_value_at(x, unflat(f, in)));
    }
    const auto q1 = qp_axis(DType::i8, {0.5f}, {1}, 0, {1, 4});
    const Tensor one = run<Squeeze>({iota<std::int8_t>({1, 4}, q1)}, {{0}});
    CHECK(one.quant->per_tensor());
    CHECK(one.quant->scale() == 0.5f);
    CHECK(one.quant->zero_point() == 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Transpose

TEST_CASE("Transpose: output axis j is input axis perm[j]; the default perm reverses the axes") {
    const Shape in{2, 3, 4};
    const Tensor x = iota<std::int32_t>(in);
    const Tensor d = run<Transpose>({x}, {});
    CHECK(d.shape() == Shape{4, 3, 2});
    CHECK(d.layout.is_contiguous());
    CHECK(d.storage != x.storage);
    for (std::int64_t f = 0; f < 24; ++f) {
        const Dims o = unflat(f, d.shape());
        CHECK(d.at<std::int32_t>(o) == flat(Dims{o[2], o[1], o[0]}, in));
    }
    const Tensor p = run<Transpose>({x}, {{1, 2, 0}});
    CHECK(p.shape() == Shape{3, 4, 2});
    for (std::int64_t f = 0; f < 24; ++f) {
        const Dims o = unflat(f, p.shape());
        Dims i = Dims::filled(3, 0);
        i[1] = o[0];  // in[perm[j]] = o[j]
        i[2] = o[1];
        i[0] = o[2];
        CHECK(p.at<std::int32_t>(o) == flat(i, in));
    }
    CHECK(run<Transpose>({Tensor::from<float>({}, {1.5f})}, {}).to_vector<float>() == std::vector<float>{1.5f});
    CHECK_RULE(ops::call<Transpose>({x}, {{0, 0, 1}}), "perm-entry-unique");
    CHECK_RULE(ops::call<Transpose>({x}, {{0, 1}}), "perm-length-matches-rank");
    CHECK_RULE(ops::call<Transpose>({x}, {{0, 1, 3}}), "perm-entry-in-range");
    CHECK_RULE(ops::call<Transpose>({x}, {{0, -1, 2}}), "attribute-range");
}

TEST_CASE("Transpose moves the per-axis quantization axis with the data (seeds B12, A10)") {
    // weights [out=3, in=5] quantized per output channel (axis 0); transposed to [in, out]: the axis becomes 1
    const Shape in{3, 5};
    const auto q = qp_axis(DType::i8, {0.5f, 0.125f, 2.0f}, {-3, 0, 7}, 0, in);
    const Tensor w = random_tensor<std::int8_t>(in, 11, q);
    const TensorType wt = type_of(w);
    const auto inferred = ops::infer_with<Transpose>(std::span<const TensorType>(&wt, 1), {}).value();
    CHECK(inferred.shape == Shape{5, 3});
    REQUIRE(inferred.quant);
    CHECK(inferred.quant->axis == 1);
    CHECK(inferred.quant->scales == q.scales);
    const Tensor t = run<Transpose>({w}, {{1, 0}});
    for (std::int64_t i = 0; i < 3; ++i)
        for (std::int64_t j = 0; j < 5; ++j) {
            CHECK(t.at<std::int8_t>(Dims{j, i}) == w.at<std::int8_t>(Dims{i, j}));  // exact byte copy
            CHECK(real_value_at(t, Dims{j, i}) == real_value_at(w, Dims{i, j}));    // the same real numbers
        }
    // rank 4, NCHW -> NHWC with the quantization on C (axis 1 -> 3)
    const Shape nchw{2, 3, 2, 2};
    const Tensor x = iota<std::int8_t>(nchw, qp_axis(DType::i8, {1.0f, 2.0f, 3.0f}, {}, 1, nchw));
    CHECK(run<Transpose>({x}, {{0, 2, 3, 1}}).quant->axis == 3);
    // a requested output quantized along the OLD axis is refused (the meaning would be wrong)
    CHECK_RULE(ops::call<Transpose>({w}, {{1, 0}},
                                    TensorType{DType::i8, {5, 3}, qp_axis(DType::i8, {1, 1, 1, 1, 1}, {}, 0, {5, 3})}),
               "same-quantization-axis");
}

TEST_CASE("Transpose with a changed output quantization requantizes; scalar and SIMD paths are bit-identical") {
    for (std::int64_t w : {7, 13, 37}) {
        const Shape in{3, w};
        const Tensor x = random_tensor<std::uint8_t>(in, static_cast<std::uint32_t>(w), qp(DType::u8, 0.05f, 128));
        // unchanged quantization: an exact byte copy
        const Tensor same = run<Transpose>({x}, {{1, 0}});
        for (std::int64_t i = 0; i < 3; ++i)
            for (std::int64_t j = 0; j < w; ++j) CHECK(same.at<std::uint8_t>(Dims{j, i}) == x.at<std::uint8_t>(Dims{i, j}));
        // per-tensor -> per-axis along the new axis 1
        const auto qo = qp_axis(DType::u8, {0.07f, 0.03f, 0.05f}, {100, 130, 128}, 1, {w, 3});
        const TensorType out{DType::u8, {w, 3}, qo};
        const Tensor y = run<Transpose>({x}, {{1, 0}}, out);
        const Tensor ys = run<Transpose>({x}, {{1, 0}}, out, OpContext{false});
        CHECK(y.to_vector<std::uint8_t>() == ys.to_vector<std::uint8_t>());
        check_requantized<std::uint8_t>(x, y, [](const Dims& o) { return Dims{o[1], o[0]}; });
        const Tensor same_scalar = run<Transpose>({x}, {{1, 0}}, std::nullopt, OpContext{false});
        CHECK(same_scalar.to_vector<std::uint8_t>() == same.to_vector<std::uint8_t>());
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Slice

TEST_CASE("Slice: the ONNX spec examples (steps, end clamping, default axes)") {
    const Tensor x = Tensor::from<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
    const Tensor a = run<Slice>({x}, {{1, 0}, {2, 3}, {0, 1}, {1, 2}});
    CHECK(a.shape() == Shape{1, 2});
    CHECK(a.to_vector<float>() == std::vector<float>{5, 7});
    const Tensor b = run<Slice>({x}, {{0, 1}, {-1, 1000}, {}, {}});
    CHECK(b.shape() == Shape{1, 3});
    CHECK(b.to_vector<float>() == std::vector<float>{2, 3, 4});
    // INT64_MAX end, negative axes
    const Tensor c = run<Slice>({x}, {{1}, {i64max}, {-1}, {}});
    CHECK(c.to_vector<float>() == std::vector<float>{2, 3, 4, 6, 7, 8});
    // start beyond the end: empty
    CHECK(run<Slice>({x}, {{1000}, {1000}, {1}, {}}).shape() == Shape{2, 0});
    // a copy, contiguous
    CHECK(a.layout.is_contiguous());
    CHECK(a.storage != x.storage);
}

TEST_CASE("Slice with negative steps reads backwards (ONNX test_slice_neg_steps, x[20:0:-1, 10:0:-3, 4:1:-2])") {
    const Shape in{20, 10, 5};
    const Tensor x = iota<std::int32_t>(in);
    const Tensor y = run<Slice>({x}, {{20, 10, 4}, {0, 0, 1}, {0, 1, 2}, {-1, -3, -2}});
    REQUIRE(y.shape() == Shape{19, 3, 2});
    for (std::int64_t f = 0; f < element_count(y.shape()); ++f) {
        const Dims o = unflat(f, y.shape());
        // numpy: start 20 clamps to 19; axis 1: 9, 6, 3; axis 2: 4, 2
        const Dims i{19 - o[0], 9 - 3 * o[1], 4 - 2 * o[2]};
        CHECK(y.at<std::int32_t>(o) == flat(i, in));
    }
    // full reversal with INT64_MIN end, and -1 start
    const Tensor r = run<Slice>({iota<std::int8_t>({7})}, {{-1}, {i64min}, {0}, {-1}});
    CHECK(r.to_vector<std::int8_t>() == std::vector<std::int8_t>{-122, -123, -124, -125, -126, -127, -128});
    const Tensor r2 = run<Slice>({iota<std::uint8_t>({13})}, {{i64max}, {-14}, {}, {-4}});
    CHECK(r2.to_vector<std::uint8_t>() == std::vector<std::uint8_t>{12, 8, 4, 0});
}

TEST_CASE("Slice of a per-axis quantized tensor selects the channels' parameters with the channels") {
    const Shape in{4, 3};
    const auto q = qp_axis(DType::i8, {0.1f, 0.2f, 0.3f, 0.4f}, {1, 2, 3, 4}, 0, in);
    const Tensor x = iota<std::int8_t>(in, q);
    const Tensor y = run<Slice>({x}, {{-1}, {i64min}, {0}, {-2}});  // rows 3, 1
    REQUIRE(y.shape() == Shape{2, 3});
    CHECK(y.quant->axis == 0);
    CHECK(y.quant->scales == std::vector<float>{0.4f, 0.2f});
    CHECK(y.quant->zero_points == std::vector<std::int32_t>{4, 2});
    for (std::int64_t j = 0; j < 3; ++j) {
        CHECK(real_value_at(y, Dims{0, j}) == real_value_at(x, Dims{3, j}));
        CHECK(real_value_at(y, Dims{1, j}) == real_value_at(x, Dims{1, j}));
    }
    // slicing another axis keeps the parameters; an empty selection of the axis leaves a per-tensor quantization
    CHECK(run<Slice>({x}, {{1}, {3}, {1}, {}}).quant == q);
    CHECK(run<Slice>({x}, {{2}, {2}, {0}, {}}).quant->per_tensor());
}

TEST_CASE("Slice errors name their rule") {
    const Tensor x = iota<float>({2, 4});
    CHECK_RULE(ops::call<Slice>({x}, {{0}, {1}, {0}, {0}}), "slice-step-nonzero");
    CHECK_RULE(ops::call<Slice>({x}, {{0, 0}, {1}, {}, {}}), "slice-lengths-match");
    CHECK_RULE(ops::call<Slice>({x}, {{0}, {1}, {0, 1}, {}}), "slice-lengths-match");
    CHECK_RULE(ops::call<Slice>({x}, {{0, 0, 0}, {1, 1, 1}, {}, {}}), "slice-lengths-match");
    CHECK_RULE(ops::call<Slice>({x}, {{0, 0}, {1, 1}, {1, -1}, {}}), "axes-unique");
    CHECK_RULE(ops::call<Slice>({x}, {{0}, {1}, {2}, {}}), "axis-in-range");
    CHECK_RULE(ops::call<Slice>({x}, {{0}, {1}, {9}, {}}), "attribute-range");
}

// ---------------------------------------------------------------------------------------------------------------
// Expand

TEST_CASE("Expand: numpy two-way broadcasting of the input shape and `shape` (ONNX examples)") {
    const Tensor x = Tensor::from<float>({3, 1}, {1, 2, 3});
    const Tensor a = run<Expand>({x}, {{2, 1, 6}});
    REQUIRE(a.shape() == Shape{2, 3, 6});
    for (std::int64_t f = 0; f < 36; ++f) {
        const Dims o = unflat(f, a.shape());
        CHECK(a.at<float>(o) == static_cast<float>(o[1] + 1));
    }
    CHECK(a.layout.is_contiguous());  // materialized: no stride-0 output
    const Tensor b = run<Expand>({x}, {{3, 4}});
    CHECK(b.to_vector<float>() == std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
    // a 1 in `shape` keeps the input's extent (two-way), a shorter shape is right-aligned
    CHECK(run<Expand>({iota<std::int32_t>({3, 4})}, {{1}}).shape() == Shape{3, 4});
    CHECK(run<Expand>({iota<std::int32_t>({3, 4})}, {{1, 1}}).to_vector<std::int32_t>() == iota_values<std::int32_t>(12));
    const Tensor c = run<Expand>({Tensor::from<std::int8_t>({2, 1}, {5, -6})}, {{1, 3}});
    CHECK(c.to_vector<std::int8_t>() == std::vector<std::int8_t>{5, 5, 5, -6, -6, -6});
    CHECK(run<Expand>({Tensor::from<float>({}, {4.0f})}, {{2, 2}}).to_vector<float>() == std::vector<float>(4, 4.0f));
    CHECK(run<Expand>({iota<float>({1, 3})}, {{0, 1}}).shape() == Shape{0, 3});
    // the broadcast repeats bytes for every dtype; quantization unchanged: exact copy
    const Tensor q = Tensor::from<std::uint8_t>({1, 7}, {0, 1, 2, 253, 254, 255, 128}, qp(DType::u8, 0.5f, 128));
    const Tensor e = run<Expand>({q}, {{13, 1}});
    CHECK(e.quant == q.quant);
    for (std::int64_t i = 0; i < 13; ++i)
        for (std::int64_t j = 0; j < 7; ++j) CHECK(e.at<std::uint8_t>(Dims{i, j}) == q.at<std::uint8_t>(Dims{0, j}));
}

TEST_CASE("Expand: per-axis quantization shifts with the rank growth; an axis broadcast 1 -> N becomes per-tensor") {
    const auto q = qp_axis(DType::i8, {0.5f, 1.0f, 2.0f}, {0, 1, 2}, 0, {3, 1});
    const Tensor x = iota<std::int8_t>({3, 1}, q);
    const Tensor y = run<Expand>({x}, {{2, 1, 6}});
    CHECK(y.quant->axis == 1);
    CHECK(y.quant->scales == q.scales);
    CHECK(real_value_at(y, Dims{1, 2, 5}) == real_value_at(x, Dims{2, 0}));
    const auto q1 = qp_axis(DType::i8, {0.5f}, {3}, 1, {3, 1});
    const Tensor z = run<Expand>({iota<std::int8_t>({3, 1}, q1)}, {{3, 4}});
    CHECK(z.quant->per_tensor());
    CHECK(z.quant->zero_point() == 3);
}

TEST_CASE("Expand with a changed output quantization: scalar and SIMD bit-identical, within 1 LSB") {
    for (std::int64_t w : {7, 13}) {
        const Tensor x = random_tensor<std::int8_t>({1, w}, static_cast<std::uint32_t>(100 + w), qp(DType::i8, 0.02f, -5));
        const TensorType out{DType::i8, {5, w}, qp(DType::i8, 0.03f, 9)};
        const Tensor y = run<Expand>({x}, {{5, 1}}, out);
        const Tensor ys = run<Expand>({x}, {{5, 1}}, out, OpContext{false});
        CHECK(y.to_vector<std::int8_t>() == ys.to_vector<std::int8_t>());
        check_requantized<std::int8_t>(x, y, [](const Dims& o) { return Dims{0, o[1]}; });
    }
}

TEST_CASE("Expand errors name their rule") {
    const Tensor x = iota<float>({3});
    CHECK_RULE(ops::call<Expand>({x}, {{4}}), "broadcast-compatible");
    CHECK_RULE(ops::call<Expand>({iota<float>({2, 3})}, {{3, 3}}), "broadcast-compatible");
    CHECK_RULE(ops::call<Expand>({x}, {{-1}}), "attribute-range");
    CHECK_RULE(ops::call<Expand>({x}, {{1, 1, 1, 1, 1, 1, 1}}), "attribute-range");
    CHECK_RULE(ops::infer_with<Expand>(std::vector<TensorType>{type_of(x)}, {{"shape", L{1 << 21, 1 << 21, 3}}}),
               "elements-at-most-2^40");
}

TEST_CASE("Inputs and outputs whose quantization does not describe them are refused, never moved") {
    const Shape s{2, 3};
    auto with = [&](numeric::QuantParams q) { return Tensor::from<std::int8_t>(s, iota_values<std::int8_t>(6), q); };
    numeric::QuantParams zero_scale{DType::i8, {0.0f}, {0}, std::nullopt};
    numeric::QuantParams wrong_dtype{DType::u8, {1.0f}, {0}, std::nullopt};
    numeric::QuantParams bad_axis{DType::i8, {1.0f, 1.0f}, {0, 0}, 2};
    numeric::QuantParams bad_channels{DType::i8, {1.0f, 1.0f}, {0, 0}, 1};
    CHECK_RULE(ops::call<Transpose>({with(zero_scale)}, {}), "scale-positive-finite");
    CHECK_RULE(ops::call<Reshape>({with(wrong_dtype)}, {{6}, 0}), "quant-dtype-matches");
    CHECK_RULE(ops::call<Squeeze>({with(bad_axis)}, {}), "axis-in-range");
    CHECK_RULE(ops::call<Slice>({with(bad_channels)}, {{0}, {1}, {}, {}}), "channels-match-extent");
    CHECK_RULE(ops::call<ops::Concat>({with(zero_scale), with(zero_scale)}, {0}), "scale-positive-finite");
    CHECK_RULE(ops::call<ops::Pad>({with(bad_channels)}, {{0, 0, 0, 0}, "constant", 0.0f}), "channels-match-extent");
    const Tensor ok = with(qp(DType::i8, 1.0f, 0));
    CHECK_RULE(ops::call<Transpose>({ok}, {}, TensorType{DType::i8, {3, 2}, qp(DType::u8, 1.0f, 0)}), "quant-dtype-matches");
}
