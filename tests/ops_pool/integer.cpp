// MaxPool on plain (non-quantized) int8 / uint8 tensors: exact selection, padding takes no part, scalar == SIMD;
// the other pools and the other integer dtypes still refuse plain integers (float-or-quantized).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <janus/ops/pool.hpp>
#include <support/check_rule.hpp>

namespace integer_pool_test {
namespace {

using namespace janus;
using namespace janus::ops;

MaxPoolAttrs max_attrs(std::vector<std::int64_t> k, std::vector<std::int64_t> s, std::vector<std::int64_t> pads) {
    MaxPoolAttrs a;
    a.kernel_shape = std::move(k);
    a.strides = std::move(s);
    a.pads = std::move(pads);
    return a;
}

template <class T>
std::vector<T> maxpool(const Tensor& x, const MaxPoolAttrs& a, bool simd = true) {
    auto y = call<MaxPool>({x}, a, std::nullopt, OpContext{simd});
    REQUIRE_MESSAGE(y.ok(), (y.ok() ? "" : y.error().message()));
    CHECK(y->dtype == dtype_v<T>);
    CHECK_FALSE(y->quant.has_value());
    return y->to_vector<T>();
}

TEST_CASE("plain uint8 / int8 MaxPool: exact selection; padding takes no part") {
    // int8, all negative, 3x3 with pads 1 and kernel 2x2 stride 2: if padding counted as 0, the corners would be 0
    const Tensor x8 = Tensor::from<std::int8_t>({1, 1, 3, 3}, {-9, -8, -7, -6, -5, -4, -3, -2, -128});
    CHECK(maxpool<std::int8_t>(x8, max_attrs({2, 2}, {2, 2}, {1, 1, 1, 1})) ==
          std::vector<std::int8_t>{-9, -7, -3, -2});
    // uint8 at the top of the range (a signed reading would make 255 the smallest)
    const Tensor xu = Tensor::from<std::uint8_t>({1, 1, 2, 4}, {255, 1, 128, 127, 0, 254, 3, 200});
    CHECK(maxpool<std::uint8_t>(xu, max_attrs({2, 2}, {1, 2}, {})) == std::vector<std::uint8_t>{255, 200});
    CHECK(maxpool<std::uint8_t>(xu, max_attrs({1, 3}, {1, 1}, {0, 1, 0, 1})) ==
          std::vector<std::uint8_t>{255, 255, 128, 128, 254, 254, 254, 200});
}

TEST_CASE("plain uint8 / int8 MaxPool equals a brute-force max on random inputs, scalar == SIMD") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 20; ++trial) {
        const std::int64_t h = 3 + trial % 5, w = 17 + trial % 7, c = 1 + trial % 3;
        const std::int64_t k = 2 + trial % 2, pad = trial % 2;
        std::vector<std::uint8_t> v(static_cast<std::size_t>(c * h * w));
        for (auto& e : v) e = static_cast<std::uint8_t>(rng());
        const Tensor xu = Tensor::from<std::uint8_t>({1, c, h, w}, v);
        std::vector<std::int8_t> vs(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) vs[i] = static_cast<std::int8_t>(v[i]);
        const Tensor xs = Tensor::from<std::int8_t>({1, c, h, w}, vs);
        const auto a = max_attrs({k, k}, {1, 1}, {pad, pad, pad, pad});
        const auto yu = maxpool<std::uint8_t>(xu, a, true);
        CHECK(yu == maxpool<std::uint8_t>(xu, a, false));
        const auto ys = maxpool<std::int8_t>(xs, a, true);
        CHECK(ys == maxpool<std::int8_t>(xs, a, false));
        const std::int64_t oh = h + 2 * pad - k + 1, ow = w + 2 * pad - k + 1;
        REQUIRE(static_cast<std::int64_t>(yu.size()) == c * oh * ow);
        std::int64_t bad = 0;
        for (std::int64_t ch = 0; ch < c; ++ch)
            for (std::int64_t i = 0; i < oh; ++i)
                for (std::int64_t j = 0; j < ow; ++j) {
                    int mu = -1, ms = -129;
                    for (std::int64_t di = 0; di < k; ++di)
                        for (std::int64_t dj = 0; dj < k; ++dj) {
                            const std::int64_t r = i + di - pad, q = j + dj - pad;
                            if (r < 0 || r >= h || q < 0 || q >= w) continue;
                            const std::size_t at = static_cast<std::size_t>((ch * h + r) * w + q);
                            mu = std::max<int>(mu, v[at]);
                            ms = std::max<int>(ms, vs[at]);
                        }
                    const std::size_t o = static_cast<std::size_t>((ch * oh + i) * ow + j);
                    if (yu[o] != mu || ys[o] != ms) ++bad;
                }
        CHECK(bad == 0);
    }
}

TEST_CASE("plain integers: MaxPool int32 / int64, AveragePool and the global pools still refuse them") {
    const auto a = max_attrs({2}, {}, {});
    CHECK_RULE(call<MaxPool>({Tensor::from<std::int32_t>({1, 1, 2}, {1, 2})}, a), "float-or-quantized");
    CHECK_RULE(call<MaxPool>({Tensor::from<std::int64_t>({1, 1, 2}, {1, 2})}, a), "float-or-quantized");
    AveragePoolAttrs avg;
    avg.kernel_shape = {2};
    CHECK_RULE(call<AveragePool>({Tensor::from<std::uint8_t>({1, 1, 2}, {1, 2})}, avg), "float-or-quantized");
    CHECK_RULE(call<GlobalMaxPool>({Tensor::from<std::uint8_t>({1, 1, 2}, {1, 2})}, {}), "float-or-quantized");
    CHECK_RULE(call<GlobalAveragePool>({Tensor::from<std::int8_t>({1, 1, 2}, {1, 2})}, {}), "float-or-quantized");
    // a plain result carries no quantization
    const auto q = numeric::make_quant(DType::u8, 0.5f, 0).value();
    CHECK_RULE(call<MaxPool>({Tensor::from<std::uint8_t>({1, 1, 2}, {1, 2})}, a, TensorType{DType::u8, {1, 1, 1}, q}),
               "plain-integer-output");
    // the quantized MaxPool still proposes the input's quantization
    const Tensor xq = Tensor::from<std::uint8_t>({1, 1, 2}, {1, 2}, q);
    auto yq = call<MaxPool>({xq}, a);
    REQUIRE(yq.ok());
    CHECK(yq->quant == q);
    CHECK(yq->to_vector<std::uint8_t>() == std::vector<std::uint8_t>{2});
}

}  // namespace
}  // namespace integer_pool_test
