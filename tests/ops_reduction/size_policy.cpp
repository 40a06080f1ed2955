// The size policy in op shape inference (core/size.hpp, issue 26): no op's inference accepts or produces a shape
// whose extents, zeros counted as one, multiply to more than 2^40. The crash it prevents: ReduceSum over axis 0 of an
// initializer [0, 2^62, 2^62] planned an output [1, 2^62, 2^62] and sized a buffer from its wrapped byte count.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <janus/ops/reduction.hpp>
#include <janus/ops/unary.hpp>

#include "support/check_rule.hpp"

using namespace janus;
using ops::TensorType;

namespace {
constexpr std::int64_t p62 = std::int64_t{1} << 62;
constexpr std::int64_t p20 = std::int64_t{1} << 20;
}  // namespace

TEST_CASE("elements-at-most-2^40: ReduceSum refuses [0, 2^62, 2^62] instead of planning [1, 2^62, 2^62]") {
    ops::ReduceAttrs a;
    a.axes = {0};
    CHECK_RULE(ops::plan_reduce_shape(Shape{0, p62, p62}, a, "ReduceSum"), "elements-at-most-2^40");
    const TensorType in{DType::f32, Shape{0, p62, p62}, std::nullopt};
    CHECK_RULE(ops::infer_with<ops::ReduceSum>(std::span<const TensorType>(&in, 1), ops::AttrMap{}),
               "elements-at-most-2^40");
    // within the policy, an empty input reduces to an output of the other extents
    const auto ok = ops::plan_reduce_shape(Shape{0, p20, 4}, a, "ReduceSum");
    REQUIRE(ok.ok());
    CHECK(ok->out_shape == Shape{1, p20, 4});
}

TEST_CASE("elements-at-most-2^40: every op's inferred output passes the policy (ops::call, ops::infer_with)") {
    // Relu copies its input's shape: the check on the output is the one that refuses it
    const TensorType in{DType::f32, Shape{p62, 0, p62}, std::nullopt};
    const auto r = ops::infer_with<ops::Relu>(std::span<const TensorType>(&in, 1), ops::AttrMap{});
    CHECK_RULE(r, "elements-at-most-2^40");
    CHECK(r.error().input == "Relu.output");
    const TensorType fine{DType::f32, Shape{p20, 0, p20}, std::nullopt};
    CHECK(ops::infer_with<ops::Relu>(std::span<const TensorType>(&fine, 1), ops::AttrMap{}).ok());
}
