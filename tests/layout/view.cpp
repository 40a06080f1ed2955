// transpose, broadcast_to, squeeze, unsqueeze: address arithmetic against a materialized reference.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <janus/layout/view.hpp>

#include "reference.hpp"

using namespace janus;
using janus::test::all_indices;
using janus::test::flat;
using janus::test::Materialized;

TEST_CASE("transpose-view: output axis j reads input axis perm[j] without copying") {
    const Shape shape{2, 3, 4};
    for (const bool padded : {false, true}) {
        const Layout base = padded ? Layout::padded(shape, 4, 16) : Layout::contiguous(shape, 4);
        const Materialized m(base);
        const Dims perm{2, 0, 1};
        const Layout t = transpose(base, perm).value();
        CHECK(t.shape == Shape{4, 2, 3});
        CHECK(t.offset == base.offset);
        CHECK(t.byte_extent() == base.byte_extent());
        std::vector<std::int32_t> want;
        for (std::int64_t a = 0; a < 4; ++a)      // out axis 0 = in axis 2
            for (std::int64_t b = 0; b < 2; ++b)  // out axis 1 = in axis 0
                for (std::int64_t c = 0; c < 3; ++c) want.push_back(static_cast<std::int32_t>((b * 3 + c) * 4 + a));
        CHECK(m.read(t) == want);
    }
}

TEST_CASE("perm-length-matches-rank: transpose refuses a permutation of the wrong length") {
    const Layout l = Layout::contiguous({2, 3}, 1);
    CHECK_RULE(transpose(l, Dims{0, 1, 2}), "perm-length-matches-rank");
    CHECK_RULE(transpose(l, Dims{0}), "perm-length-matches-rank");
    CHECK_RULE(transpose(l, Dims{1, 1}), "perm-entry-unique");
    CHECK(transpose(l, Dims{1, 1}).error().input == "Transpose.perm");
    CHECK(transpose(Layout::contiguous({}, 1), Dims{}).value() == Layout::contiguous({}, 1));
}

TEST_CASE("broadcast-stride-zero: broadcast_to gives stride 0 to missing and 1->N axes (B5)") {
    const Layout base = Layout::contiguous({3, 1}, 4);  // strides [4, 4]
    const Materialized m(base);
    const Layout b = broadcast_to(base, {2, 3, 5}).value();
    CHECK(b.shape == Shape{2, 3, 5});
    CHECK(b.strides == Dims{0, 4, 0});
    std::vector<std::int32_t> want;
    for (std::int64_t i = 0; i < 2; ++i)
        for (std::int64_t j = 0; j < 3; ++j)
            for (std::int64_t k = 0; k < 5; ++k) want.push_back(static_cast<std::int32_t>(j));
    CHECK(m.read(b) == want);

    // scalar: every address is the one element
    const Layout s = broadcast_to(Layout::contiguous({}, 4), {2, 2}).value();
    CHECK(s.strides == Dims{0, 0});
    // same shape: unchanged, including an extent-1 axis meeting extent 1
    CHECK(broadcast_to(base, {3, 1}).value() == base);
    // 1 -> 0 is allowed (empty result)
    CHECK(broadcast_to(base, {3, 0}).value().elements() == 0);
}

TEST_CASE("broadcast-compatible, broadcast-target-rank: broadcast_to names the axis and both extents") {
    const Layout l = Layout::contiguous({3, 4}, 1);
    const auto r = broadcast_to(l, {2, 3, 5});
    CHECK_RULE(r, "broadcast-compatible");
    CHECK(r.error().position == "axis 2");
    CHECK(r.error().detail.find("4") != std::string::npos);
    CHECK(r.error().detail.find("5") != std::string::npos);
    CHECK_RULE(broadcast_to(l, {3, 1}), "broadcast-compatible");  // unidirectional: the input cannot shrink
    CHECK_RULE(broadcast_to(l, {4}), "broadcast-target-rank");
}

TEST_CASE("squeeze-extent-one: squeeze removes only extent-1 axes") {
    const Layout base = Layout::contiguous({1, 3, 1, 4}, 4);
    const Materialized m(base);
    const Layout a = squeeze(base, Dims{0, -2}).value();
    CHECK(a.shape == Shape{3, 4});
    CHECK(a.is_contiguous());
    CHECK(m.read(a) == m.read(base));
    CHECK(squeeze(base, Dims{}).value() == a);  // no axes: every extent-1 axis
    CHECK(squeeze(base, Dims{2}).value().shape == Shape{1, 3, 4});

    const auto bad = squeeze(base, Dims{1});
    CHECK_RULE(bad, "squeeze-extent-one");
    CHECK(bad.error().position == "axis 1");
    CHECK_RULE(squeeze(base, Dims{0, -4}), "axes-unique");
    CHECK_RULE(squeeze(base, Dims{4}), "axis-in-range");
}

TEST_CASE("unsqueeze-output-axes: unsqueeze inserts at OUTPUT positions with natural strides") {
    const Layout base = Layout::contiguous({3, 4}, 4);
    const Materialized m(base);
    const Layout a = unsqueeze(base, Dims{0, 3}).value();  // [1,3,4,1]
    CHECK(a.shape == Shape{1, 3, 4, 1});
    CHECK(a.is_contiguous());
    CHECK(m.read(a) == m.read(base));
    CHECK(unsqueeze(base, Dims{-1, 0}).value() == a);  // -1 is the last OUTPUT axis; order does not matter
    CHECK(unsqueeze(base, Dims{1}).value().shape == Shape{3, 1, 4});
    CHECK(unsqueeze(Layout::contiguous({}, 2), Dims{0}).value() == Layout::contiguous({1}, 2));

    CHECK_RULE(unsqueeze(base, Dims{1, 1}), "axes-unique");
    CHECK_RULE(unsqueeze(base, Dims{1, -3}), "axes-unique");  // -3 + 4 = 1
    CHECK_RULE(unsqueeze(base, Dims{3}), "axis-in-range");    // output rank 3: axes [-3, 3)
    CHECK_RULE(unsqueeze(Layout::contiguous({1, 1, 1, 1, 1}, 1), Dims{0, 1}), "rank-at-most-6");

    // squeeze undoes unsqueeze on a strided view too
    const Layout t = transpose(base, Dims{1, 0}).value();
    CHECK(squeeze(unsqueeze(t, Dims{1}).value(), Dims{1}).value() == t);
}

TEST_CASE("padded-row-stride: row r+1 starts at the aligned stride, not right after row r (B6)") {
    for (const std::int64_t width : {7, 13}) {
        for (const std::int64_t elem : {1, 2, 4}) {
            const Layout l = Layout::padded({3, width}, elem, 16);
            const std::int64_t row_bytes = (width * elem + 15) / 16 * 16;
            CAPTURE(width);
            CAPTURE(elem);
            CHECK(l.strides == Dims{row_bytes, elem});
            CHECK(row_bytes % 16 == 0);
            CHECK(row_bytes != width * elem);  // 7 and 13 never fill a 16-byte row exactly
            CHECK(l.address({1, 0}) == row_bytes);                      // not width * elem
            CHECK(l.address({2, width - 1}) == 2 * row_bytes + (width - 1) * elem);
            CHECK(l.byte_extent() == std::pair<std::int64_t, std::int64_t>{0, 2 * row_bytes + width * elem});
            CHECK_FALSE(l.is_contiguous());
        }
    }
    // Read back through views of a padded int32 tensor: padding is never read.
    const Layout base = Layout::padded({2, 3, 7}, 4, 16);
    const Materialized m(base);
    for (const auto& idx : all_indices(base.shape))
        CHECK(m.at(base, idx) == static_cast<std::int32_t>(flat(idx, base.shape)));
    const Layout t = transpose(base, Dims{2, 0, 1}).value();
    for (const auto& v : m.read(t)) CHECK(v != janus::test::poison);
    const Layout b = broadcast_to(unsqueeze(base, Dims{1}).value(), {2, 5, 3, 7}).value();
    for (const auto& v : m.read(b)) CHECK(v != janus::test::poison);
}
