// MaxPoolIndices (MaxPool's Indices output): hand-computed indices for both storage orders, batch and channel
// offsets, padding, ties (the first element in kernel order wins), all -inf windows (their first element), all-NaN
// windows (-1), a plain uint8 window of zeros (its first element), a quantized input
// (the same elements as its float reading), agreement of the selected values with MaxPool's Y, and the refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <janus/ops/pool.hpp>
#include <support/check_rule.hpp>

using namespace janus;
using namespace janus::ops;

namespace indices_test {

namespace {

MaxPoolAttrs attrs(std::vector<std::int64_t> k, std::vector<std::int64_t> s, std::vector<std::int64_t> pads,
                   std::int64_t storage_order = 0) {
    MaxPoolAttrs a;
    a.kernel_shape = std::move(k);
    a.strides = std::move(s);
    a.pads = std::move(pads);
    a.storage_order = storage_order;
    return a;
}

std::vector<std::int64_t> indices(const Tensor& x, const MaxPoolAttrs& a) {
    auto r = call<MaxPoolIndices>({x}, a);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message()));
    CHECK(r->dtype == DType::i64);
    CHECK(!r->quant);
    return r->to_vector<std::int64_t>();
}

}  // namespace

TEST_CASE("MaxPoolIndices: flat indices into X, row-major or column-major over the spatial axes") {
    // x[0, 0] = 0..15 with a few values moved: 2x2 windows, stride 2
    std::vector<float> v(16);
    for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
    v[4] = 100.0f;  // (1, 0): the top-left window's max
    v[2] = 50.0f;   // (0, 2): the top-right window's max
    const Tensor x = Tensor::from<float>({1, 1, 4, 4}, v);
    CHECK(indices(x, attrs({2, 2}, {2, 2}, {})) == std::vector<std::int64_t>{4, 2, 13, 15});
    // storage_order 1: index = w * H + h
    CHECK(indices(x, attrs({2, 2}, {2, 2}, {}, 1)) == std::vector<std::int64_t>{1, 8, 7, 15});
    // Y holds the values at those indices
    const auto y = call<MaxPool>({x}, attrs({2, 2}, {2, 2}, {}));
    REQUIRE(y.ok());
    const auto yv = y->to_vector<float>();
    const auto iv = indices(x, attrs({2, 2}, {2, 2}, {}));
    for (std::size_t k = 0; k < yv.size(); ++k) CHECK(yv[k] == v[static_cast<std::size_t>(iv[k])]);
}

TEST_CASE("MaxPoolIndices: batch and channel offsets, padding, ties and windows without a winner") {
    // N = 2, C = 2, 1 x 3: a 1x2 kernel with stride 1 and one pad on the left
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const Tensor x = Tensor::from<float>({2, 2, 1, 3}, {1, 1, 0,        // n0 c0: a tie, the first wins
                                                        -inf, -inf, 2,  // n0 c1: -inf equals init
                                                        nan, nan, 5,    // n1 c0: NaN is skipped
                                                        7, 9, 9});      // n1 c1
    const auto a = attrs({1, 2}, {1, 1}, {0, 1, 0, 0});
    // outputs per row: windows {pad, x0}, {x0, x1}, {x1, x2}
    CHECK(indices(x, a) == std::vector<std::int64_t>{0, 0, 1,      //
                                                     3, 3, 5,      // all -inf: the first element
                                                     -1, -1, 8,    // all-NaN windows
                                                     9, 10, 10});  // the first 9 in kernel order
}

TEST_CASE("MaxPoolIndices: an integer window of the type's lowest value names its first element") {
    const Tensor x = Tensor::from<std::uint8_t>({1, 1, 2, 2}, {0, 0, 0, 0});
    CHECK(indices(x, attrs({2, 2}, {1, 1}, {})) == std::vector<std::int64_t>{0});
    CHECK(indices(x, attrs({1, 2}, {1, 1}, {})) == std::vector<std::int64_t>{0, 2});
}

TEST_CASE("MaxPoolIndices: a quantized input selects the elements its float reading selects") {
    std::vector<std::int8_t> q{-5, 7, 7, -128, 3, 0, 12, -1, 4};
    const auto qp = numeric::make_quant(DType::i8, 0.25f, -3).value();
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 3, 3}, q, qp);
    std::vector<float> f;
    for (auto v : q) f.push_back(0.25f * static_cast<float>(v + 3));
    const Tensor xf = Tensor::from<float>({1, 1, 3, 3}, f);
    const auto a = attrs({2, 2}, {1, 1}, {1, 1, 0, 0});
    CHECK(indices(x, a) == indices(xf, a));
    CHECK(indices(x, a) == std::vector<std::int64_t>{0, 1, 1, 0, 1, 1, 6, 6, 8});
}

TEST_CASE("MaxPoolIndices refuses what MaxPool refuses") {
    const Tensor x = Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4});
    CHECK_RULE(call<MaxPoolIndices>({x}, attrs({3, 3}, {1, 1}, {})), "window-fits-padded-input");
    CHECK_RULE(call<MaxPoolIndices>({Tensor::from<float>({4}, {1, 2, 3, 4})}, attrs({2}, {1}, {})),
               "window-input-rank");
}

}  // namespace indices_test
