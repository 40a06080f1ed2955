// Differential verification of ReduceSum / ReduceMean over OUTER axes (emit/reduce.hpp, the innermost axis kept:
// streamed vec.acc partial rows, vec.add32 halving, vec.rq): emit -> simulate -> compare with ops::call bit for bit,
// no fault, no race, no leaked event. Matrix: C = 1, 13, 16, 40; spatial 1x1, 3x5, 7x7 and 56x56 (NHWC, axes
// {1, 2}); keepdims 0 and 1; input zero points -128 and 127; scale ratios 0.3, 1 and 50; the [K1, R, K2] block
// forms; forced tiles and chunks, and chunks forced by the real ACC budget; a wrong multiplier must fail.
#include "reduce_support.hpp"

using namespace rt;

TEST_CASE("outer ReduceSum / ReduceMean over the spatial axes of NHWC: C, sizes, keepdims, zero points, ratios") {
    CHECK(outer_spatial<ops::ReduceSum>(sum(), 100) == 144);
    CHECK(outer_spatial<ops::ReduceMean>(mean(), 300) == 144);
}

TEST_CASE("outer ReduceSum / ReduceMean at 56x56 (C = 16 and 40)") {
    std::uint32_t seed = 900;
    for (const std::int64_t C : {16, 40}) {
        CAPTURE(C);
        const auto qi = quant(0.05f, -3);
        auto o = run<ops::ReduceSum>(Shape{1, 56, 56, C}, attrs({1, 2}, 1), qi, quant(40.0f, 5), ++seed, sum());
        CHECK(o.got == o.want);
        o = run<ops::ReduceMean>(Shape{1, 56, 56, C}, attrs({1, 2}, 0), qi, quant(0.02f, 5), ++seed, mean());
        CHECK(o.got == o.want);
        MESSAGE("ReduceMean 56x56x" << C << ": " << o.report.cycles << " cycles; " << o.log.back());
    }
}

TEST_CASE("outer ReduceSum / ReduceMean block forms [K1, R, K2]") {
    outer_forms<ops::ReduceSum>(sum(), 1000);
    outer_forms<ops::ReduceMean>(mean(), 1050);
}

TEST_CASE("outer ReduceSum / ReduceMean tiles and chunks (forced)") {
    outer_tiles<ops::ReduceSum>(sum, 1100);
    outer_tiles<ops::ReduceMean>(mean, 1150);
}

TEST_CASE("outer chunks forced by the real ACC budget: a sum over H of 4 x 512 x 64") {
    const auto o =
        run<ops::ReduceSum>(Shape{1, 4, 512, 64}, attrs({1}, 1), quant(0.1f, 0), quant(0.2f, 0), 1200, sum());
    CHECK(o.got == o.want);
    // 32 KiB pixels: 4 x 32 KiB of int32 sums exceed the 64 KiB ACC, so each job takes a 16 KiB chunk
    CHECK(has(o.log, "2 job(s) of 4 pixels of 16384 B"));
}

TEST_CASE("outer sum epilogue: a wrong multiplier changes the outputs") {
    const Shape s{1, 3, 5, 16};
    const auto qi = quant(0.05f, 0), qo = quant(0.5f, 0);
    const auto good = run<ops::ReduceSum>(s, attrs({1, 2}, 1), qi, qo, 1402, sum());
    CHECK(good.got == good.want);
    const auto m_edit = [](ops::ReducePlan& p) { p.multipliers[0].multiplier += 1 << 26; };
    const auto bad = run<ops::ReduceSum>(s, attrs({1, 2}, 1), qi, qo, 1402, sum(), Data::uniform, 0, m_edit);
    CHECK(bad.got != bad.want);
}
