// Reshape: ONNX shape inference, and the no-copy view that must refuse padded and transposed sources (B3).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <janus/layout/view.hpp>

#include "reference.hpp"

using namespace janus;
using janus::test::Materialized;

namespace {
using L = std::vector<std::int64_t>;
Shape infer(const Shape& in, const L& req, bool allowzero = false) {
    auto r = infer_reshape_shape(in, req, allowzero);
    if (!r.ok()) FAIL(r.error().message());
    return r.value();
}
}  // namespace

TEST_CASE("reshape-infer: 0 copies the input extent, one -1 is inferred (ONNX Reshape)") {
    CHECK(infer({2, 3, 4}, {4, 2, 3}) == Shape{4, 2, 3});
    CHECK(infer({2, 3, 4}, {0, -1}) == Shape{2, 12});
    CHECK(infer({2, 3, 4}, {-1}) == Shape{24});
    CHECK(infer({2, 3, 4}, {0, 0, -1, 1}) == Shape{2, 3, 4, 1});
    CHECK(infer({2, 3, 4}, {2, -1, 2}) == Shape{2, 6, 2});
    CHECK(infer({1, 1}, {}) == Shape{});                 // to a scalar
    CHECK(infer({}, {1, -1}) == Shape{1, 1});
    CHECK(infer({0, 3}, {3, -1}) == Shape{3, 0});        // -1 over an empty tensor with a nonzero rest
    CHECK(infer({0, 3}, {0, 3}) == Shape{0, 3});         // 0 copies the input's 0
    CHECK(infer({0, 3}, {3, 0}, true) == Shape{3, 0});   // allowzero: literal 0
}

TEST_CASE("reshape-one-inferred, reshape-extent-valid, reshape-zero-copies-input-axis: bad shape attributes") {
    CHECK_RULE(infer_reshape_shape({2, 3}, L{-1, -1}, false), "reshape-one-inferred");
    CHECK(infer_reshape_shape({2, 3}, L{-1, -1}, false).error().position == "index 1");
    CHECK_RULE(infer_reshape_shape({2, 3}, L{-2, 3}, false), "reshape-extent-valid");
    CHECK_RULE(infer_reshape_shape({6}, L{3, 0}, false), "reshape-zero-copies-input-axis");
    CHECK_RULE(infer_reshape_shape({2, 3}, L{1, 1, 1, 1, 1, 1, 6}, false), "rank-at-most-6");
}

TEST_CASE("reshape-zero-and-inferred, reshape-inferred-ambiguous, reshape-element-count: counts must work out") {
    CHECK_RULE(infer_reshape_shape({0, 3}, L{0, -1}, true), "reshape-zero-and-inferred");
    CHECK_RULE(infer_reshape_shape({0, 3}, L{0, -1}, false), "reshape-inferred-ambiguous");  // 0 copies the 0
    CHECK_RULE(infer_reshape_shape({2, 3}, L{4, -1}, false), "reshape-element-count");
    CHECK_RULE(infer_reshape_shape({2, 3}, L{4, 2}, false), "reshape-element-count");
    CHECK_RULE(infer_reshape_shape({2, 3}, L{0, 3}, true), "reshape-element-count");
    const std::int64_t big = std::int64_t{1} << 40;
    CHECK_RULE(infer_reshape_shape({2, 3}, L{big, big, big}, false), "reshape-element-count");  // no overflow
    CHECK_RULE(infer_reshape_shape({2, 3}, L{big, big, -1}, false), "reshape-element-count");
    CHECK_RULE(reshape(Layout::contiguous({2, 3}, 1), {7}), "reshape-element-count");
}

TEST_CASE("reshape-contiguous: any reshape of a contiguous layout is a view with contiguous strides") {
    const Layout base = Layout::contiguous({2, 3, 4}, 4);
    const Materialized m(base);
    for (const Shape& s : {Shape{24}, Shape{4, 6}, Shape{2, 12}, Shape{1, 2, 1, 12, 1}, Shape{2, 3, 2, 2}, Shape{3, 8},
                           Shape{24, 1, 1}}) {
        const Layout r = reshape(base, s).value();
        CAPTURE(s.str());
        CHECK(r == Layout::contiguous(s, 4));
        CHECK(m.read(r) == m.read(base));  // same elements, same row-major order
    }
    CHECK(reshape(Layout::contiguous({}, 4), {1, 1}).value() == Layout::contiguous({1, 1}, 4));
    CHECK(reshape(Layout::contiguous({1, 1}, 4), {}).value() == Layout::contiguous({}, 4));
}

TEST_CASE("reshape-needs-data-movement: a padded layout cannot merge rows across the padding (B3, B6)") {
    for (const std::int64_t width : {7, 13}) {
        const Layout base = Layout::padded({4, 2, width}, 4, 16);
        const Materialized m(base);
        CAPTURE(width);
        // merge rows with columns: the padding lies in between
        const auto flat = reshape(base, {8 * width});
        CHECK_RULE(flat, "reshape-needs-data-movement");
        CHECK(flat.error().position == "axis 1");
        CHECK_RULE(reshape(base, {4, 2 * width}), "reshape-needs-data-movement");
        // merging and splitting OUTER axes is fine: they are evenly spaced by the padded row stride
        const Layout merged = reshape(base, {8, width}).value();
        CHECK(merged.strides == Dims{base.strides[1], 4});
        CHECK(m.read(merged) == m.read(base));
        const Layout split = reshape(base, {2, 2, 2, 1, width}).value();
        CHECK(m.read(split) == m.read(base));
        // unit axes anywhere are fine
        const Layout unit = reshape(base, {4, 2, width, 1}).value();
        CHECK(m.read(unit) == m.read(base));
    }
}

TEST_CASE("reshape-needs-data-movement: a transposed view cannot be flattened (B3)") {
    const Layout base = Layout::contiguous({2, 3, 4}, 4);
    const Materialized m(base);
    const Layout t = transpose(base, Dims{0, 2, 1}).value();  // [2,4,3], strides [48,4,16]
    CHECK_RULE(reshape(t, {24}), "reshape-needs-data-movement");
    CHECK_RULE(reshape(t, {2, 12}), "reshape-needs-data-movement");
    CHECK_RULE(reshape(t, {8, 3}), "reshape-needs-data-movement");
    // axes that still group correctly: split/merge the untouched outer axis, insert unit axes
    const Layout ok1 = reshape(t, {1, 2, 4, 3}).value();
    CHECK(m.read(ok1) == m.read(t));
    const Layout ok2 = reshape(t, {2, 2, 2, 3}).value();  // split axis 1 (4 -> 2x2, stride 4 -> 8, 4)
    CHECK(ok2.strides == Dims{48, 8, 4, 16});
    CHECK(m.read(ok2) == m.read(t));

    // a slice that keeps 3 of 4 columns leaves a gap after every row: merging across it is refused, merging the
    // evenly spaced outer axes is not
    using V = std::vector<std::int64_t>;
    const Layout cut = slice(base, V{2}, V{0}, V{3}, V{}).value();  // [2,3,3], strides [48,16,4]
    CHECK_RULE(reshape(cut, {2, 9}), "reshape-needs-data-movement");
    const Layout ok3 = reshape(cut, {6, 3}).value();  // 48 == 3 * 16
    CHECK(m.read(ok3) == m.read(cut));
    // a step-2 slice is still one arithmetic run (stride 8 everywhere): it flattens without a copy
    const Layout every_other = slice(base, V{2}, V{0}, V{4}, V{2}).value();  // [2,3,2], strides [48,16,8]
    const Layout flat = reshape(every_other, {12}).value();
    CHECK(flat.strides == Dims{8});
    CHECK(m.read(flat) == m.read(every_other));
}

TEST_CASE("reshape-broadcast-view: stride-0 axes merge with each other but not with real ones") {
    const Layout base = Layout::contiguous({4}, 4);
    const Materialized m(base);
    const Layout b = broadcast_to(base, {2, 3, 4}).value();  // strides [0,0,4]
    const Layout merged = reshape(b, {6, 4}).value();
    CHECK(merged.strides == Dims{0, 4});
    CHECK(m.read(merged) == m.read(b));
    CHECK_RULE(reshape(b, {24}), "reshape-needs-data-movement");
}

TEST_CASE("reshape-empty: an empty tensor reshapes to any shape with zero elements") {
    const Layout l = Layout::padded({0, 7}, 1, 16);
    CHECK(reshape(l, {7, 0, 3}).value().shape == Shape{7, 0, 3});
    CHECK_RULE(reshape(l, {1}), "reshape-element-count");
}

namespace {
// Brute-force oracle: a no-copy reshape exists iff the source addresses, listed in row-major order, are an affine
// function of the new index (each new axis of extent > 1 then has stride A[e_k] - A[0]).
bool affine_reshape_exists(const Layout& src, const Shape& target) {
    std::vector<std::int64_t> a;
    for (const auto& i : janus::test::all_indices(src.shape)) a.push_back(src.address(i));
    if (a.empty()) return true;
    const auto ti = janus::test::all_indices(target);
    Dims st = Dims::filled(target.size(), 0);
    for (int k = 0; k < target.size(); ++k)
        if (target[k] > 1) {
            Dims e = Dims::filled(target.size(), 0);
            e[k] = 1;
            st[k] = a[static_cast<std::size_t>(janus::test::flat(e, target))] - a[0];
        }
    for (std::size_t f = 0; f < ti.size(); ++f) {
        std::int64_t x = a[0];
        for (int k = 0; k < target.size(); ++k) x += ti[f][k] * st[k];
        if (x != a[f]) return false;
    }
    return true;
}
// Every ordered factorization of n into exactly r factors.
void factorizations(std::int64_t n, int r, Shape cur, std::vector<Shape>& out) {
    if (r == 0) {
        if (n == 1) out.push_back(cur);
        return;
    }
    for (std::int64_t d = 1; d <= n; ++d)
        if (n % d == 0) {
            Shape next = cur;
            next.push_back(d);
            factorizations(n / d, r - 1, next, out);
        }
}
}  // namespace

TEST_CASE("reshape-needs-data-movement: refused exactly when no strides over the same bytes exist (oracle)") {
    using V = std::vector<std::int64_t>;
    std::vector<Layout> sources;
    for (const Shape& s : {Shape{2, 3, 4}, Shape{4, 1, 6}, Shape{2, 2, 3}}) {
        const Layout c = Layout::contiguous(s, 2);
        const Layout p = Layout::padded(s, 2, 16);
        for (const Layout& base : {c, p}) {
            for (const Dims& perm : {Dims{0, 1, 2}, Dims{0, 2, 1}, Dims{1, 0, 2}, Dims{2, 1, 0}, Dims{1, 2, 0}})
                sources.push_back(transpose(base, perm).value());
            sources.push_back(slice(base, V{2}, V{-1}, V{INT64_MIN}, V{-1}).value());  // reversed rows
            sources.push_back(slice(base, V{0}, V{0}, V{1}, V{}).value());             // first plane
            sources.push_back(slice(base, V{2}, V{0}, V{INT64_MAX}, V{2}).value());    // every other column
            sources.push_back(broadcast_to(slice(base, V{0}, V{0}, V{1}, V{}).value(), {3, s[1], s[2]}).value());
        }
    }
    int accepted = 0, refused = 0;
    for (const Layout& src : sources) {
        std::vector<Shape> targets;
        for (int r = 0; r <= 4; ++r) factorizations(src.elements(), r, Shape{}, targets);
        for (const Shape& t : targets) {
            CAPTURE(src.str());
            CAPTURE(t.str());
            const auto r = reshape(src, t);
            const bool possible = affine_reshape_exists(src, t);
            CHECK(r.ok() == possible);
            if (r.ok()) {
                ++accepted;
                const auto si = janus::test::all_indices(src.shape), ti = janus::test::all_indices(t);
                for (std::size_t f = 0; f < si.size(); ++f) CHECK(r.value().address(ti[f]) == src.address(si[f]));
            } else {
                ++refused;
                CHECK(r.error().rule == "reshape-needs-data-movement");
            }
        }
    }
    CHECK(accepted > 100);
    CHECK(refused > 100);
}
