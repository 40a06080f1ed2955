// Differential verification of ReduceMax / ReduceMin over OUTER axes (emit/reduce.hpp, the innermost axis kept:
// streamed vec.max / vec.min partial rows started at -128 / 127, halving, vec.acc + vec.rq with bias -zp_in):
// emit -> simulate -> compare with ops::call bit for bit, no fault, no race, no leaked event. Matrix as in
// outer_sum.cpp, plus per-channel quantization along the innermost axis; the init fill and the epilogue's zero
// point must matter.
#include "reduce_support.hpp"

using namespace rt;

TEST_CASE("outer ReduceMax / ReduceMin over the spatial axes of NHWC: C, sizes, keepdims, zero points, ratios") {
    CHECK(outer_spatial<ops::ReduceMax>(max(), 500) == 144);
    CHECK(outer_spatial<ops::ReduceMin>(min(), 700) == 144);
}

TEST_CASE("outer ReduceMax / ReduceMin at 56x56 (C = 16 and 40)") {
    std::uint32_t seed = 900;
    for (const std::int64_t C : {16, 40}) {
        CAPTURE(C);
        const auto qi = quant(0.05f, -3), qo = quant(0.02f, 5);
        auto o = run<ops::ReduceMax>(Shape{1, 56, 56, C}, attrs({1, 2}, 1), qi, qo, ++seed, max());
        CHECK(o.got == o.want);
        o = run<ops::ReduceMin>(Shape{1, 56, 56, C}, attrs({1, 2}, 0), qi, qo, ++seed, min());
        CHECK(o.got == o.want);
        MESSAGE("ReduceMin 56x56x" << C << ": " << o.report.cycles << " cycles; " << o.log.back());
    }
}

TEST_CASE("outer ReduceMax / ReduceMin block forms [K1, R, K2]") {
    outer_forms<ops::ReduceMax>(max(), 1000);
    outer_forms<ops::ReduceMin>(min(), 1050);
}

TEST_CASE("outer ReduceMax / ReduceMin tiles and chunks (forced)") {
    outer_tiles<ops::ReduceMax>(max, 1100);
    outer_tiles<ops::ReduceMin>(min, 1150);
}

TEST_CASE("per-channel ReduceMax / ReduceMin along the innermost axis (zero points and multipliers per channel)") {
    const Shape s{1, 5, 7, 13};
    std::vector<float> si, so;
    std::vector<std::int32_t> zi;
    for (int c = 0; c < 13; ++c) {
        si.push_back(0.01f * static_cast<float>(c + 1));
        so.push_back(0.02f + 0.03f * static_cast<float>(c % 4));
        zi.push_back(c % 2 ? -128 + 19 * c : 127 - 17 * c);
    }
    const std::vector<std::int32_t> zo(13, -4);  // one output zero point: vec.rq's header holds one
    const auto qi = numeric::make_quant_per_axis(DType::i8, si, zi, 3, s).value();
    const auto qo1 = numeric::make_quant_per_axis(DType::i8, so, zo, 3, Shape{1, 1, 1, 13}).value();
    const auto qo0 = numeric::make_quant_per_axis(DType::i8, so, zo, 1, Shape{1, 13}).value();
    for (const std::int64_t keep : {0, 1}) {
        CAPTURE(keep);
        auto o = run<ops::ReduceMax>(s, attrs({1, 2}, keep), qi, keep ? qo1 : qo0, 1300, max());
        CHECK(o.got == o.want);
        o = run<ops::ReduceMin>(s, attrs({1, 2}, keep), qi, keep ? qo1 : qo0, 1301, min());
        CHECK(o.got == o.want);
    }
}

TEST_CASE("mutations: the min init fill and the max / min epilogue's zero point matter") {
    const Shape s{1, 3, 5, 16};
    const auto qi = quant(0.05f, 0);
    // data mostly 127: a running min started at 126 wins wherever every element is 127
    const auto good =
        run<ops::ReduceMin>(s, attrs({1, 2}, 1), qi, qi, 1400, min(ReduceTiles{4, 0}), Data::extreme, 127);
    CHECK(good.got == good.want);
    int mutated = 0;
    const auto refill = [&](std::vector<vnpu::Instr>& code) {
        for (auto& in : code)
            if (in.info->mnemonic == "dma.fill" && in.operands[1] == 127) in.operands[1] = 126, ++mutated;
    };
    const auto bad =
        run<ops::ReduceMin>(s, attrs({1, 2}, 1), qi, qi, 1400, min(ReduceTiles{4, 0}), Data::extreme, 127, {}, refill);
    CHECK(mutated == 1);
    CHECK(bad.got != bad.want);
    // the same for max's -128 start with data mostly -128
    mutated = 0;
    const auto refill_max = [&](std::vector<vnpu::Instr>& code) {
        for (auto& in : code)
            if (in.info->mnemonic == "dma.fill" && in.operands[1] == -128) in.operands[1] = -127, ++mutated;
    };
    const auto mbad = run<ops::ReduceMax>(s, attrs({1, 2}, 1), qi, qi, 1401, max(ReduceTiles{4, 0}), Data::extreme,
                                          -128, {}, refill_max);
    CHECK(mutated == 1);
    CHECK(mbad.got != mbad.want);
    // the max / min bias is -zp_in: off by one shifts the outputs
    const auto qz = quant(0.05f, 10);
    const auto zp_edit = [](ops::ReducePlan& p) { p.zp_in[0] += 1; };
    const auto zbad = run<ops::ReduceMax>(s, attrs({1, 2}, 1), qz, qz, 1402, max(), Data::uniform, 0, zp_edit);
    CHECK(zbad.got != zbad.want);
}
