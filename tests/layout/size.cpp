// The shape and size policy (core/size.hpp, issue 26): checked_size is the one computation of element counts and
// byte sizes; a zero extent makes a tensor empty but does not exempt the other extents.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <janus/layout/layout.hpp>
#include <janus/layout/shape.hpp>
#include <janus/layout/view.hpp>

#include <support/check_rule.hpp>

using namespace janus;

namespace {
constexpr std::int64_t p62 = std::int64_t{1} << 62;
constexpr std::int64_t p32 = std::int64_t{1} << 32;
constexpr std::int64_t p20 = std::int64_t{1} << 20;
}  // namespace

TEST_CASE("checked_size: element counts and byte sizes of valid shapes") {
    CHECK(checked_size(std::vector<std::int64_t>{}, 4).value() == TensorSize{1, 4, 1});  // rank 0: one element
    CHECK(checked_size(std::vector<std::int64_t>{2, 3, 4}, 2).value() == TensorSize{24, 48, 24});
    CHECK(checked_size(std::vector<std::int64_t>{2, 0, 4}, 8).value() == TensorSize{0, 0, 8});  // empty
    CHECK(checked_size(std::vector<std::int64_t>{0}, 1).value() == TensorSize{0, 0, 1});
}

TEST_CASE("elements-at-most-2^40: a zero extent does not exempt the extents after (or before) it") {
    // The crash: an initializer [0, 2^62, 2^62] passed the old check (`d != 0 && n > max / d` stopped
    // multiplying after the zero) and a ReduceSum over axis 0 then sized a buffer from 2^124 wrapped to int64.
    const auto r = checked_size(std::vector<std::int64_t>{0, p62, p62}, 1, "w");
    CHECK_RULE(r, "elements-at-most-2^40");
    CHECK(r.error().input == "w");
    CHECK(r.error().position == "axis 1");
    CHECK(r.error().detail.find("zero extent") != std::string::npos);
    CHECK_RULE(checked_size(std::vector<std::int64_t>{p62, 0}, 1), "elements-at-most-2^40");
    CHECK_RULE(checked_size(std::vector<std::int64_t>{p20, 0, p20, 2}, 1), "elements-at-most-2^40");
    // float[2^32, 2^32]: 2^64 wraps to 0 in int64 arithmetic; the policy refuses it at the second extent
    CHECK_RULE(checked_size(std::vector<std::int64_t>{p32, p32}, 4), "elements-at-most-2^40");
    CHECK_FALSE(within_size_policy(std::vector<std::int64_t>{0, p62, p62}));
    CHECK(within_size_policy(std::vector<std::int64_t>{0, p20, p20}));
}

TEST_CASE("elements-at-most-2^40: the exact boundary") {
    CHECK(checked_size(std::vector<std::int64_t>{max_elements}, 1).value().elements == max_elements);
    CHECK(checked_size(std::vector<std::int64_t>{p20, p20}, 8).value().bytes == max_elements * 8);
    CHECK(checked_size(std::vector<std::int64_t>{0, p20, p20}, 8).value() == TensorSize{0, 0, max_elements});
    CHECK_RULE(checked_size(std::vector<std::int64_t>{max_elements + 1}, 1), "elements-at-most-2^40");
    CHECK_RULE(checked_size(std::vector<std::int64_t>{p20 + 1, p20}, 1), "elements-at-most-2^40");
    CHECK_RULE(checked_size(std::vector<std::int64_t>{p20, 0, p20 + 1}, 1), "elements-at-most-2^40");
    CHECK_RULE(checked_size(std::vector<std::int64_t>{2, p62, p62, p62}, 1), "elements-at-most-2^40");
}

TEST_CASE("checked_size: rank, negative extents and the caller's rule") {
    CHECK_RULE(checked_size(std::vector<std::int64_t>(7, 1), 1), "rank-at-most-6");
    const auto neg = checked_size(std::vector<std::int64_t>{0, -1}, 1, "x");
    CHECK_RULE(neg, "extent-nonnegative");
    CHECK(neg.error().position == "axis 1");
    CHECK_RULE(checked_size(std::vector<std::int64_t>{0, p62, p62}, 1, "w", "onnx-dims"), "onnx-dims");
}

TEST_CASE("make_shape and reshape apply the policy") {
    CHECK_RULE(make_shape(std::vector<std::int64_t>{0, p62, p62}), "elements-at-most-2^40");
    CHECK(make_shape(std::vector<std::int64_t>{0, p20, p20}).value() == Shape{0, p20, p20});
    // an empty input reshaped to [0, 2^62]: the zero does not make 2^62 acceptable
    const std::vector<std::int64_t> to{0, p62};
    CHECK_RULE(infer_reshape_shape(Shape{0}, to, true), "reshape-element-count");
}
