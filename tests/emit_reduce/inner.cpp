// Differential verification of the innermost-axis reductions (emit/reduce.hpp, the MAC array path): emit ->
// simulate -> compare with ops::call<ReduceSum / ReduceMean> bit for bit, no fault, no race, no leaked event.
// Matrix: C = 1, 13, 16, 40 (padding lanes masked by the ones block); spatial 1x1, 3x5, 7x7 and 56x56; keepdims 1
// (one result per 16-B row) and 0 (results compacted one byte apart by the selection matmul); zero points -128 and
// 127; scale ratios 0.3, 1 and 50; reduced suffixes of several axes; K chunks forced by the budget; forced tiles.
#include "reduce_support.hpp"

using namespace rt;

namespace {

template <class Op>
int inner_matrix(const Lower& lower, std::uint32_t seed) {
    const std::array<std::int64_t, 2> sizes[] = {{1, 1}, {3, 5}, {7, 7}};
    int runs = 0;
    for (const std::int64_t C : {1, 13, 16, 40})
        for (const auto& hw : sizes)
            for (const std::int64_t keep : {0, 1})
                for (const std::int32_t zp : {-128, 127})
                    for (const float ratio : {0.3f, 1.0f, 50.0f}) {
                        CAPTURE(C);
                        CAPTURE(hw[0]);
                        CAPTURE(hw[1]);
                        CAPTURE(keep);
                        CAPTURE(zp);
                        CAPTURE(ratio);
                        const auto qi = quant(0.05f, zp), qo = quant(0.05f / ratio, zp == 127 ? -20 : 20);
                        const auto o = run<Op>(Shape{1, hw[0], hw[1], C}, attrs({3}, keep), qi, qo, ++seed, lower);
                        CHECK(o.got == o.want);
                        CHECK(has(o.log, "selection mac.mm") == (keep == 0 && hw[1] > 1));
                        ++runs;
                    }
    return runs;
}

}  // namespace

TEST_CASE("inner ReduceSum / ReduceMean over the channels: C, sizes, keepdims, zero points, scale ratios") {
    CHECK(inner_matrix<ops::ReduceSum>(sum(), 2000) == 144);
    CHECK(inner_matrix<ops::ReduceMean>(mean(), 2200) == 144);
}

TEST_CASE("inner reductions at 56x56 and over reduced suffixes of several axes") {
    std::uint32_t seed = 2400;
    const auto qi = quant(0.04f, 9), qo = quant(0.03f, -7);
    for (const std::int64_t keep : {0, 1}) {
        CAPTURE(keep);
        auto o = run<ops::ReduceMean>(Shape{1, 56, 56, 40}, attrs({3}, keep), qi, qo, ++seed, mean());
        CHECK(o.got == o.want);
        MESSAGE("ReduceMean over C of 56x56x40, keepdims " << keep << ": " << o.report.cycles << " cycles; "
                                                           << o.log.back());
        o = run<ops::ReduceSum>(Shape{1, 56, 56, 16}, attrs({3}, keep), qi, quant(0.5f, 3), ++seed, sum());
        CHECK(o.got == o.want);
        o = run<ops::ReduceMean>(Shape{2, 5, 7, 13}, attrs({2, 3}, keep), qi, qo, ++seed, mean());
        CHECK(o.got == o.want);
        o = run<ops::ReduceSum>(Shape{3, 4, 5, 40}, attrs({1, 2, 3}, keep), qi, quant(1.5f, 0), ++seed, sum());
        CHECK(o.got == o.want);
        o = run<ops::ReduceMean>(Shape{3, 4, 5, 13}, attrs({}, keep), qi, qo, ++seed, mean());  // every axis
        CHECK(o.got == o.want);
        o = run<ops::ReduceSum>(Shape{37, 20}, attrs({1}, keep), qi, qo, ++seed, sum());  // a 2-D matrix's rows
        CHECK(o.got == o.want);
        o = run<ops::ReduceMean>(Shape{3, 1, 18, 1, 24}, attrs({1, 3, 4}, keep), qi, qo, ++seed, mean());  // units
        CHECK(o.got == o.want);
    }
}

TEST_CASE("inner tiles: forced tiles of 1, 2, 3 outputs / output rows; K chunks forced by the LMEM budget") {
    std::uint32_t seed = 2500;
    const auto qi = quant(0.05f, -128), qo = quant(0.9f, 4);
    for (const std::int64_t tile : {1, 2, 3})
        for (const std::int64_t keep : {0, 1}) {
            CAPTURE(tile);
            CAPTURE(keep);
            auto o = run<ops::ReduceMean>(Shape{1, 5, 7, 40}, attrs({3}, keep), qi, qo, ++seed, mean({tile, 0}));
            CHECK(o.got == o.want);
            o = run<ops::ReduceSum>(Shape{1, 5, 19, 13}, attrs({3}, keep), qi, qo, ++seed, sum({tile, 0}));
            CHECK(o.got == o.want);
        }
    // 64 KiB per output: the ones block is limited to 64 KiB / 16 rows, so K is cut into chunks of 4096
    const auto o = run<ops::ReduceSum>(Shape{2, 32, 32, 64}, attrs({1, 2, 3}, 1), qi, quant(3.0f, 0), 2600, sum());
    CHECK(o.got == o.want);
    CHECK(has(o.log, "16 K chunk(s) of 4096"));
}

TEST_CASE("inner epilogue: a wrong multiplier or zero point changes the outputs") {
    const Shape s{1, 3, 5, 13};
    const auto qi = quant(0.05f, 3), qo = quant(0.02f, -2);
    const auto good = run<ops::ReduceMean>(s, attrs({3}, 0), qi, qo, 2700, mean());
    CHECK(good.got == good.want);
    const auto m_edit = [](ops::ReducePlan& p) { p.multipliers[0].shift -= 1; };
    const auto bad = run<ops::ReduceMean>(s, attrs({3}, 0), qi, qo, 2700, mean(), Data::uniform, 0, m_edit);
    CHECK(bad.got != bad.want);
    const auto z_edit = [](ops::ReducePlan& p) { p.zp_in[0] -= 1; };
    const auto zbad = run<ops::ReduceMean>(s, attrs({3}, 1), qi, qo, 2701, mean(), Data::uniform, 0, z_edit);
    CHECK(zbad.got != zbad.want);
}
