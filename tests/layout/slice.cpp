// ONNX Slice as a view: normalize_slice follows the spec's clamping, slice() reads the expected elements.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include <janus/layout/view.hpp>

#include "reference.hpp"

using namespace janus;
using janus::test::Materialized;

namespace {
constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();

using L = std::vector<std::int64_t>;

// Plain reference for one axis, after the spec's clamping has been applied by hand in each test: the indices
// s, s+step, ... strictly before e.
std::vector<std::int64_t> run(std::int64_t s, std::int64_t e, std::int64_t step) {
    std::vector<std::int64_t> r;
    for (std::int64_t i = s; step > 0 ? i < e : i > e; i += step) r.push_back(i);
    return r;
}

// Expected contents of a slice of a contiguous int32 tensor of shape `shape`: the cartesian product of per-axis
// index lists, read row-major.
std::vector<std::int32_t> expected(const Shape& shape, const std::vector<std::vector<std::int64_t>>& per_axis) {
    Shape out;
    for (const auto& v : per_axis) out.push_back(static_cast<std::int64_t>(v.size()));
    std::vector<std::int32_t> r;
    for (const auto& o : janus::test::all_indices(out)) {
        Dims src;
        for (int k = 0; k < out.size(); ++k) src.push_back(per_axis[static_cast<std::size_t>(k)][static_cast<std::size_t>(o[k])]);
        r.push_back(static_cast<std::int32_t>(janus::test::flat(src, shape)));
    }
    return r;
}

std::vector<std::int64_t> full(std::int64_t n) { return run(0, n, 1); }

Layout do_slice(const Layout& l, const L& axes, const L& starts, const L& ends, const L& steps) {
    auto r = slice(l, axes, starts, ends, steps);
    if (!r.ok()) FAIL(r.error().message());
    return r.value();
}
}  // namespace

TEST_CASE("slice-clamp: normalize_slice follows the ONNX spec for positive steps") {
    CHECK(normalize_slice(0, 3, 1, 20).value() == SliceRange{0, 3, 1});
    CHECK(normalize_slice(0, -1, 1, 10).value() == SliceRange{0, 9, 1});       // end -1 -> 9
    CHECK(normalize_slice(1000, 1000, 1, 10).value().count == 0);              // start clamps to 10
    CHECK(normalize_slice(1, 1000, 1, 10).value() == SliceRange{1, 9, 1});     // end clamps to 10
    CHECK(normalize_slice(-1000, 2, 1, 10).value() == SliceRange{0, 2, 1});    // start -1000+10 clamps to 0
    CHECK(normalize_slice(0, 10, 3, 10).value() == SliceRange{0, 4, 3});       // 0,3,6,9
    CHECK(normalize_slice(1, 10, 3, 10).value() == SliceRange{1, 3, 3});       // 1,4,7
    CHECK(normalize_slice(5, 2, 1, 10).value().count == 0);                    // empty, not negative
    CHECK(normalize_slice(0, i64max, 1, 7).value() == SliceRange{0, 7, 1});    // INT64_MAX = "to the end"
    CHECK(normalize_slice(i64min, i64max, 2, 7).value() == SliceRange{0, 4, 2});
    CHECK(normalize_slice(0, i64max, i64max, 7).value() == SliceRange{0, 1, i64max});
    CHECK(normalize_slice(0, 5, 1, 0).value().count == 0);                     // empty axis
}

TEST_CASE("slice-clamp: normalize_slice follows the ONNX spec for negative steps") {
    CHECK(normalize_slice(20, 0, -1, 20).value() == SliceRange{19, 19, -1});   // start clamps to 19, stops before 0
    CHECK(normalize_slice(10, 0, -3, 10).value() == SliceRange{9, 3, -3});     // 9,6,3
    CHECK(normalize_slice(4, 1, -2, 5).value() == SliceRange{4, 2, -2});       // 4,2
    CHECK(normalize_slice(-1, i64min, -1, 5).value() == SliceRange{4, 5, -1}); // full reverse
    CHECK(normalize_slice(i64max, i64min, -1, 5).value() == SliceRange{4, 5, -1});
    CHECK(normalize_slice(-1, -1000, -1, 5).value() == SliceRange{4, 5, -1});  // end clamps to -1 (before 0)
    CHECK(normalize_slice(3, i64min, i64min, 5).value() == SliceRange{3, 1, i64min});  // |step| overflows int64
    CHECK(normalize_slice(1, 3, -1, 5).value().count == 0);
    CHECK(normalize_slice(-1, i64min, -1, 0).value().count == 0);               // empty axis: nothing to clamp into
}

TEST_CASE("slice-step-nonzero: step 0 is an error naming the entry") {
    CHECK_RULE(normalize_slice(0, 1, 0, 4), "slice-step-nonzero");
    const Layout l = Layout::contiguous({4, 5}, 1);
    const auto r = slice(l, L{0, 1}, L{0, 0}, L{4, 5}, L{1, 0});
    CHECK_RULE(r, "slice-step-nonzero");
    CHECK(r.error().input == "Slice.steps");
    CHECK(r.error().position == "index 1");
}

TEST_CASE("slice-lengths-match, axis-in-range, axes-unique: malformed attribute lists are errors") {
    const Layout l = Layout::contiguous({4, 5}, 1);
    CHECK_RULE(slice(l, L{}, L{0, 0}, L{1}, L{}), "slice-lengths-match");
    CHECK_RULE(slice(l, L{0}, L{0, 0}, L{1, 1}, L{}), "slice-lengths-match");
    CHECK_RULE(slice(l, L{}, L{0, 0}, L{1, 1}, L{1}), "slice-lengths-match");
    CHECK_RULE(slice(l, L{}, L{0, 0, 0}, L{1, 1, 1}, L{}), "slice-lengths-match");  // default axes past the rank
    CHECK_RULE(slice(l, L{2}, L{0}, L{1}, L{}), "axis-in-range");
    CHECK_RULE(slice(l, L{-3}, L{0}, L{1}, L{}), "axis-in-range");
    const auto dup = slice(l, L{1, -1}, L{0, 0}, L{1, 1}, L{});
    CHECK_RULE(dup, "axes-unique");
    CHECK(dup.error().input == "Slice.axes");
    CHECK(dup.error().position == "index 1");
}

TEST_CASE("slice-onnx-examples: the spec's test cases read the expected elements") {
    const Shape shape{20, 10, 5};
    const Layout base = Layout::contiguous(shape, 4);
    const Materialized m(base);

    SUBCASE("slice: x[0:3, 0:10]") {
        const Layout v = do_slice(base, {0, 1}, {0, 0}, {3, 10}, {1, 1});
        CHECK(v.shape == Shape{3, 10, 5});
        CHECK(m.read(v) == expected(shape, {run(0, 3, 1), full(10), full(5)}));
    }
    SUBCASE("slice_neg: x[:, 0:-1]") {
        const Layout v = do_slice(base, {1}, {0}, {-1}, {1});
        CHECK(m.read(v) == expected(shape, {full(20), run(0, 9, 1), full(5)}));
    }
    SUBCASE("slice_start_out_of_bounds: x[:, 1000:1000] is empty") {
        const Layout v = do_slice(base, {1}, {1000}, {1000}, {1});
        CHECK(v.shape == Shape{20, 0, 5});
        CHECK(v.byte_extent().first == v.byte_extent().second);
    }
    SUBCASE("slice_end_out_of_bounds: x[:, 1:1000]") {
        const Layout v = do_slice(base, {1}, {1}, {1000}, {1});
        CHECK(v.shape == Shape{20, 9, 5});
        CHECK(m.read(v) == expected(shape, {full(20), run(1, 10, 1), full(5)}));
    }
    SUBCASE("slice_default_axes and slice_default_steps: x[:, :, 3:4]") {
        const Layout v = do_slice(base, {}, {0, 0, 3}, {20, 10, 4}, {});
        CHECK(v == do_slice(base, {0, 1, 2}, {0, 0, 3}, {20, 10, 4}, {}));
        CHECK(m.read(v) == expected(shape, {full(20), full(10), run(3, 4, 1)}));
    }
    SUBCASE("slice_negative_axes: axes [0,-2,-1]") {
        const Layout v = do_slice(base, {0, -2, -1}, {0, 0, 3}, {20, 10, 4}, {});
        CHECK(m.read(v) == expected(shape, {full(20), full(10), run(3, 4, 1)}));
    }
    SUBCASE("slice_neg_steps: x[20:0:-1, 10:0:-3, 4:1:-2]") {
        const Layout v = do_slice(base, {0, 1, 2}, {20, 10, 4}, {0, 0, 1}, {-1, -3, -2});
        CHECK(v.shape == Shape{19, 3, 2});
        CHECK(v.strides == Dims{-200, -60, -8});  // negative steps -> negative strides
        CHECK(m.read(v) == expected(shape, {run(19, 0, -1), run(9, 0, -3), run(4, 1, -2)}));
        const auto [lo, hi] = v.byte_extent();
        CHECK(lo >= 0);
        CHECK(hi <= base.byte_extent().second);
    }
    SUBCASE("INT64_MIN / INT64_MAX mean 'to the end' in the step's direction") {
        const Layout rev = do_slice(base, {0, 1, 2}, {-1, i64max, -1}, {i64min, i64min, i64min}, {-1, -1, -1});
        CHECK(m.read(rev) == expected(shape, {run(19, -1, -1), run(9, -1, -1), run(4, -1, -1)}));
        const Layout fwd = do_slice(base, {2}, {i64min}, {i64max}, {2});
        CHECK(m.read(fwd) == expected(shape, {full(20), full(10), run(0, 5, 2)}));
    }
    SUBCASE("a huge step selects one element and keeps the source stride (no overflow)") {
        const Layout v = do_slice(base, {0, 1}, {3, -1}, {i64max, i64min}, {i64max, i64min});
        CHECK(v.shape == Shape{1, 1, 5});
        CHECK(v.strides == base.strides);
        CHECK(m.read(v) == expected(shape, {run(3, 4, 1), run(9, 10, 1), full(5)}));
    }
}

TEST_CASE("slice-onnx-examples: the operator documentation's two examples") {
    // data = [[1,2,3,4],[5,6,7,8]]; ids here are 0..7, so value = id + 1.
    const Shape shape{2, 4};
    const Layout base = Layout::contiguous(shape, 4);
    const Materialized m(base);
    const Layout a = do_slice(base, {0, 1}, {1, 0}, {2, 3}, {1, 2});
    CHECK(a.shape == Shape{1, 2});
    CHECK(m.read(a) == std::vector<std::int32_t>{5 - 1, 7 - 1});  // [[5,7]]
    const Layout b = do_slice(base, {}, {0, 1}, {-1, 1000}, {});
    CHECK(b.shape == Shape{1, 3});
    CHECK(m.read(b) == std::vector<std::int32_t>{2 - 1, 3 - 1, 4 - 1});  // [[2,3,4]]
}

TEST_CASE("slice-padded-rows: slicing a padded layout keeps the aligned row stride (B6)") {
    for (const std::int64_t width : {7, 13}) {
        const Shape shape{3, width};
        const Layout base = Layout::padded(shape, 4, 16);
        const Materialized m(base);
        // every other column, reversed rows
        const Layout v = do_slice(base, {0, 1}, {-1, 0}, {i64min, i64max}, {-1, 2});
        CHECK(v.strides[0] == -base.strides[0]);
        CHECK(m.read(v) == expected(shape, {run(2, -1, -1), run(0, width, 2)}));
    }
}
