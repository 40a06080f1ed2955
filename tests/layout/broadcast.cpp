// Broadcasting: shapes, the per-axis advance rule (B5) and coalescing for kernels.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <janus/layout/broadcast.hpp>

#include "reference.hpp"

using namespace janus;
using janus::test::all_indices;
using janus::test::flat;
using janus::test::Materialized;

TEST_CASE("broadcast-compatible: broadcast_shapes follows numpy rules") {
    CHECK(broadcast_shapes(Shape{2, 1, 4, 1}, Shape{1, 3, 1, 5}).value() == Shape{2, 3, 4, 5});
    CHECK(broadcast_shapes(Shape{}, Shape{2, 3}).value() == Shape{2, 3});   // scalar
    CHECK(broadcast_shapes(Shape{4, 5}, Shape{2, 3, 4, 5}).value() == Shape{2, 3, 4, 5});  // lower rank
    CHECK(broadcast_shapes(Shape{1, 0}, Shape{3, 1}).value() == Shape{3, 0});  // 1 vs 0 gives 0
    CHECK(broadcast_shapes(std::span<const Shape>{}).value() == Shape{});
    const Shape three[] = {Shape{3, 1, 1}, Shape{1, 4, 1}, Shape{5}};
    CHECK(broadcast_shapes(three).value() == Shape{3, 4, 5});

    const auto r = broadcast_shapes(Shape{2, 3}, Shape{4, 3}, "Add");
    CHECK_RULE(r, "broadcast-compatible");
    CHECK(r.error().input == "Add.input[1]");
    CHECK(r.error().position == "axis 0");
    CHECK(r.error().detail.find("extent 4") != std::string::npos);
    CHECK(r.error().detail.find("extent 2") != std::string::npos);
    const Shape bad[] = {Shape{3, 1}, Shape{1, 4}, Shape{2, 4}};
    const auto r3 = broadcast_shapes(bad, "Sum");
    CHECK_RULE(r3, "broadcast-compatible");
    CHECK(r3.error().input == "Sum.input[2]");
    CHECK_RULE(broadcast_shapes(Shape{0, 3}, Shape{2, 3}), "broadcast-compatible");  // 0 is not 1
}

TEST_CASE("elements-at-most-2^40: broadcasting two valid shapes can overflow the element limit") {
    const std::int64_t big = std::int64_t{1} << 30;
    CHECK_RULE(broadcast_shapes(Shape{big, 1}, Shape{1, big}), "elements-at-most-2^40");
}

TEST_CASE("advance-rule: per output axis the address advances or stays (B5 table)") {
    const Shape out{2, 3, 4, 5};
    CHECK(advance_rule(Shape{}, out) == Dims{0, 0, 0, 0});            // scalar
    CHECK(advance_rule(Shape{4, 5}, out) == Dims{0, 0, 1, 1});        // lower rank
    CHECK(advance_rule(Shape{3, 1, 1}, out) == Dims{0, 1, 0, 0});     // per-channel
    CHECK(advance_rule(Shape{2, 1, 4, 1}, out) == Dims{1, 0, 1, 0});  // two-sided, left
    CHECK(advance_rule(Shape{1, 3, 1, 5}, out) == Dims{0, 1, 0, 1});  // two-sided, right
    CHECK(advance_rule(Shape{1, 4}, Shape{1, 4}) == Dims{0, 1});      // extent 1 never advances
}

TEST_CASE("advance-rule: [2,1,4,1] x [1,3,1,5] plan reads the right elements") {
    const Layout a = Layout::contiguous({2, 1, 4, 1}, 4);
    const Layout b = Layout::contiguous({1, 3, 1, 5}, 4);
    const Materialized ma(a), mb(b);
    const Layout both[] = {a, b};
    const BroadcastPlan p = plan_broadcast(both).value();
    CHECK(p.out == Shape{2, 3, 4, 5});
    CHECK(p.inputs[0].strides == Dims{16, 0, 4, 0});
    CHECK(p.inputs[1].strides == Dims{0, 20, 0, 4});
    CHECK(advance_rule(p.inputs[0]) == advance_rule(a.shape, p.out));
    CHECK(advance_rule(p.inputs[1]) == advance_rule(b.shape, p.out));
    for (const auto& i : all_indices(p.out)) {
        CHECK(ma.at(p.inputs[0], i) == static_cast<std::int32_t>(i[0] * 4 + i[2]));
        CHECK(mb.at(p.inputs[1], i) == static_cast<std::int32_t>(i[1] * 5 + i[3]));
    }
}

TEST_CASE("advance-rule: scalar and lower-rank inputs stay on the missing axes") {
    const Layout s = Layout::contiguous({}, 4);
    const Layout v = Layout::contiguous({5}, 4);
    const Layout m = Layout::contiguous({2, 3, 5}, 4);
    const Materialized ms(s), mv(v);
    const Layout in[] = {s, v, m};
    const BroadcastPlan p = plan_broadcast(in, "Where").value();
    CHECK(p.out == Shape{2, 3, 5});
    CHECK(p.inputs[0].strides == Dims{0, 0, 0});
    CHECK(p.inputs[1].strides == Dims{0, 0, 4});
    CHECK(p.inputs[2] == m);
    for (const auto& i : all_indices(p.out)) {
        CHECK(ms.at(p.inputs[0], i) == 0);
        CHECK(mv.at(p.inputs[1], i) == static_cast<std::int32_t>(i[2]));
    }
    const Layout bad[] = {v, Layout::contiguous({4}, 4)};
    CHECK_RULE(plan_broadcast(bad), "broadcast-compatible");
}

namespace {
// coalesce must not change which element any input reads at any row-major output position.
void check_coalesce_preserves(const std::vector<Layout>& ins) {
    const BroadcastPlan before = plan_broadcast(ins).value();
    BroadcastPlan after = before;
    coalesce(after);
    CHECK(element_count(after.out) == element_count(before.out));
    const auto bi = all_indices(before.out), ai = all_indices(after.out);
    REQUIRE(bi.size() == ai.size());
    for (std::size_t i = 0; i < ins.size(); ++i) {
        CHECK(after.inputs[i].shape == after.out);
        for (std::size_t f = 0; f < bi.size(); ++f)
            CHECK(after.inputs[i].address(ai[f]) == before.inputs[i].address(bi[f]));
    }
}
}  // namespace

TEST_CASE("coalesce-merge: adjacent axes merge only when every input can walk them as one") {
    {
        // [4,5] + [3,4,5] -> [3,20]
        const Layout in[] = {Layout::contiguous({4, 5}, 1), Layout::contiguous({3, 4, 5}, 1)};
        BroadcastPlan p = plan_broadcast(in).value();
        coalesce(p);
        CHECK(p.out == Shape{3, 20});
        CHECK(p.inputs[0].strides == Dims{0, 1});
        CHECK(p.inputs[1].strides == Dims{20, 1});
    }
    {
        // scalar + [2,3] -> [6]
        const Layout in[] = {Layout::contiguous({}, 1), Layout::contiguous({2, 3}, 1)};
        BroadcastPlan p = plan_broadcast(in).value();
        coalesce(p);
        CHECK(p.out == Shape{6});
        CHECK(p.inputs[0].strides == Dims{0});
        CHECK(p.inputs[1].strides == Dims{1});
    }
    {
        // two-sided: nothing merges ([2,3,4,5] stays rank 4)
        const Layout in[] = {Layout::contiguous({2, 1, 4, 1}, 1), Layout::contiguous({1, 3, 1, 5}, 1)};
        BroadcastPlan p = plan_broadcast(in).value();
        coalesce(p);
        CHECK(p.out == Shape{2, 3, 4, 5});
    }
    {
        // a padded input keeps its rows apart (B6): [3,7] padded to 16 + contiguous [3,7]
        const Layout in[] = {Layout::padded({3, 7}, 1, 16), Layout::contiguous({3, 7}, 1)};
        BroadcastPlan p = plan_broadcast(in).value();
        coalesce(p);
        CHECK(p.out == Shape{3, 7});
        CHECK(p.inputs[0].strides == Dims{16, 1});
    }
    {
        // extent-1 axes vanish; empty outputs collapse to [0]
        const Layout in[] = {Layout::contiguous({1, 6, 1}, 1)};
        BroadcastPlan p = plan_broadcast(in).value();
        coalesce(p);
        CHECK(p.out == Shape{6});
        const Layout e[] = {Layout::contiguous({2, 0, 3}, 1)};
        BroadcastPlan pe = plan_broadcast(e).value();
        coalesce(pe);
        CHECK(pe.out == Shape{0});
        const Layout ones[] = {Layout::contiguous({1, 1}, 1)};
        BroadcastPlan po = plan_broadcast(ones).value();
        coalesce(po);
        CHECK(po.out == Shape{});
    }
    check_coalesce_preserves({Layout::contiguous({4, 5}, 1), Layout::contiguous({3, 4, 5}, 1)});
    check_coalesce_preserves({Layout::contiguous({2, 1, 4, 1}, 2), Layout::contiguous({1, 3, 1, 5}, 4)});
    check_coalesce_preserves({Layout::padded({2, 3, 7}, 1, 16), Layout::contiguous({3, 1}, 1)});
    check_coalesce_preserves({Layout::padded({2, 3, 13}, 2, 16), Layout::contiguous({}, 1)});
    check_coalesce_preserves({Layout::contiguous({2, 3, 4}, 1).with_offset(5), Layout::contiguous({1, 1, 4}, 1)});
}
