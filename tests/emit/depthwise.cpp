// Differential verification of the depthwise lowering (emit/depthwise.hpp): emit -> simulate -> compare with
// ops::call<ops::Conv> (group = C, NCHW on the host, NHWC on the vnpu) bit for bit, no fault, no race. Kernels 1x1,
// 3x3 and 5x3, symmetric and asymmetric pads, C below, at and above a multiple of 16, zero points at both ends,
// with and without bias, the MobileNet 112x112x32 layer; and the refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <janus/emit/depthwise.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../support/check_rule.hpp"
#include "conv_support.hpp"
#include "emit_support.hpp"

using namespace janus;
using namespace janus::emit;

// Test executables build as one unity TU per directory: this file's helpers and tests live in their own
// namespace, so their names hide (never overload) a sibling file's helpers of the same name.
namespace depthwise_test {

namespace {

struct Case {
    std::int64_t C, H, W, kh, kw;
    std::array<std::int64_t, 4> pads;  // top, left, bottom, right
    std::int32_t zp_x;
    bool with_bias;
    std::int64_t sh = 1, sw = 1, dh = 1, dw = 1;  // strides, dilations
    std::vector<std::int32_t> zp_w{};             // weight zero points, cycled over the channels (empty: all 0)
};

vnpu::sim::Report check(const Case& k, std::uint32_t seed, std::vector<std::string>* log = nullptr,
                        const std::optional<expr::Table256>& lut = std::nullopt) {
    CAPTURE(k.C);
    CAPTURE(k.H);
    CAPTURE(k.W);
    CAPTURE(k.kh);
    CAPTURE(k.kw);
    CAPTURE(k.zp_x);
    CAPTURE(k.sh);
    CAPTURE(k.sw);
    CAPTURE(k.dh);
    CAPTURE(k.dw);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::uniform_real_distribution<float> scale(0.005f, 0.05f);
    const std::int64_t C = k.C, H = k.H, W = k.W, Cp = (C + 15) / 16 * 16;
    std::vector<std::int8_t> x(static_cast<std::size_t>(C * H * W)), w(static_cast<std::size_t>(C * k.kh * k.kw));
    for (auto& v : x) v = static_cast<std::int8_t>(byte(rng));
    for (auto& v : w) v = static_cast<std::int8_t>(byte(rng));
    std::vector<std::int32_t> bias;
    if (k.with_bias)
        for (std::int64_t c = 0; c < C; ++c) bias.push_back(static_cast<std::int32_t>(byte(rng)) * 20);
    std::vector<float> sw(static_cast<std::size_t>(C));
    for (auto& v : sw) v = scale(rng);
    const auto qx = numeric::make_quant(DType::i8, 0.04f, k.zp_x).value();
    std::vector<std::int32_t> zw(static_cast<std::size_t>(C), 0);
    for (std::size_t c = 0; c < zw.size() && !k.zp_w.empty(); ++c) zw[c] = k.zp_w[c % k.zp_w.size()];
    const auto qw = numeric::make_quant_per_axis(DType::i8, sw, zw, 0, Shape{C, 1, k.kh, k.kw}).value();
    const float spread = k.zp_w.empty() ? 1.0f : 2.0f;  // w - zw spreads about twice as wide
    const float sy =
        0.04f * 0.03f * 74.0f * 74.0f * spread * std::sqrt(static_cast<float>(k.kh * k.kw)) * 3.0f / 127.0f;
    const auto qy = numeric::make_quant(DType::i8, sy, -6).value();
    const Tensor tx = Tensor::from<std::int8_t>(Shape{1, C, H, W}, x, qx);
    const Tensor tw = Tensor::from<std::int8_t>(Shape{C, 1, k.kh, k.kw}, w, qw);
    const ops::Conv::Attrs at = et::conv_spec(k.kh, k.kw, k.sh, k.sw, k.dh, k.dw, k.pads, C).a;
    std::vector<Tensor> ins{tx, tw};
    if (k.with_bias) ins.push_back(Tensor::from<std::int32_t>(Shape{C}, bias));
    const et::HostConv host = et::host_conv(ins, at, qy);
    const auto& types = host.types;
    const auto& out = host.out;
    const std::int64_t Ho = out.shape[2], Wo = out.shape[3];
    auto want = host.codes;
    int saturated = 0;
    for (auto v : want) saturated += (v == -128 || v == 127);
    CHECK(saturated * 4 < static_cast<int>(want.size()) + 4);
    if (lut)  // then a fused epilogue table: T[c + 128]
        for (auto& v : want) v = static_cast<std::int8_t>(lut->values[static_cast<std::size_t>(v + 128)]);

    const auto plan = ops::Conv::plan(types, at, out, numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    Builder b("dw");
    const DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, Ho, Wo, C, Cp};
    const auto st = lower_depthwise(b, *plan, X, w, bias, Y, {}, lut);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    if (log) *log = b.log();
    vnpu::sim::Machine m;
    m.dram[2] = et::to_nhwc(x, C, H * W, Cp, 0x33);  // padding channels hold anything
    m.dram[3].resize(static_cast<std::size_t>(Ho * Wo * Cp));
    const auto r = et::run_clean(b, m);
    const auto got = et::from_nhwc(m.dram[3], C, Ho * Wo, Cp);
    CHECK(got == want);
    return r;
}

}  // namespace

TEST_CASE("depthwise conv on VEC accumulation: kernels, pads, odd channel counts, zero points, bias") {
    check({16, 8, 8, 3, 3, {1, 1, 1, 1}, 0, true}, 1);
    check({13, 7, 9, 3, 3, {1, 0, 2, 1}, -128, true}, 2);  // asymmetric pads, C padded to 16
    check({32, 6, 5, 5, 3, {2, 1, 2, 1}, 127, false}, 3);
    check({40, 4, 4, 1, 1, {0, 0, 0, 0}, 9, true}, 4);   // 1x1, C = 40 (pitch 48)
    check({16, 2, 3, 3, 3, {2, 2, 2, 2}, -3, true}, 5);  // pads wider than the image: whole zero-point rows
}

TEST_CASE("depthwise strides and dilations: rows picked by the load, every sw-th pixel stored") {
    check({16, 9, 9, 3, 3, {1, 1, 1, 1}, 5, true, 2, 2}, 21);          // MobileNet's stride-2 depthwise
    check({13, 8, 11, 3, 3, {1, 1, 1, 1}, -128, true, 2, 2}, 22);      // odd width, C padded
    check({40, 10, 7, 3, 2, {0, 1, 2, 0}, 127, false, 3, 1}, 23);      // vertical stride 3 only
    check({16, 9, 10, 3, 3, {2, 2, 2, 2}, -9, true, 1, 1, 2, 2}, 24);  // dilation 2
    check({16, 12, 12, 3, 3, {2, 1, 2, 1}, 4, true, 2, 3, 2, 1}, 25);  // strides and a dilation mixed
}

TEST_CASE("depthwise at MobileNet size 112x112x32, 3x3, pad 1") {
    std::vector<std::string> log;
    const auto r = check({32, 112, 112, 3, 3, {1, 1, 1, 1}, -7, true}, 6, &log);
    CHECK(r.macs == static_cast<std::uint64_t>(112) * 112 * 32 * 9);
    REQUIRE(!log.empty());
    CHECK(log.back() == "dw: depthwise: 112 output rows of 112 x 32 B, 9 vec.mac per row, double buffered");
    const auto r2 = check({32, 112, 112, 3, 3, {0, 0, 1, 1}, -7, true, 2, 2}, 7, &log);  // the stride-2 layer
    CHECK(r2.macs == static_cast<std::uint64_t>(56) * 56 * 32 * 9);  // phases: only the output pixels are computed
    CHECK(log.back().find("input rows in 2 phases (stride 2)") != std::string::npos);
}

TEST_CASE("a fused epilogue table: lut.apply on each output row equals the depthwise Conv followed by the table") {
    expr::Table256 t;  // a scramble of the codes: any mistake in which code meets which entry shows
    for (std::size_t i = 0; i < 256; ++i) t.values[i] = static_cast<std::int32_t>((i * 77 + 13) % 256) - 128;
    check({16, 8, 8, 3, 3, {1, 1, 1, 1}, 0, true}, 31, nullptr, t);
    check({24, 9, 7, 3, 3, {1, 1, 1, 1}, 5, true, 2, 2}, 32, nullptr, t);  // strides: phases, every other pixel
}

TEST_CASE("depthwise weight zero points: w - zw in int8 parts, one vec.mac per tap and part") {
    std::vector<std::string> log;
    check({16, 8, 8, 3, 3, {1, 1, 1, 1}, 0, true, 1, 1, 1, 1, {127}}, 41, &log);  // 2 parts
    CHECK(std::find(log.begin(), log.end(),
                    "dw: depthwise: weight zero points: w - zw in 2 int8 parts, 2 vec.mac per tap") != log.end());
    check({24, 9, 7, 3, 3, {1, 1, 1, 1}, -3, true, 2, 2, 1, 1, {-128, 40, -5}}, 42, &log);  // 3 parts, strides
    CHECK(std::find(log.begin(), log.end(),
                    "dw: depthwise: weight zero points: w - zw in 3 int8 parts, 3 vec.mac per tap") != log.end());
}

TEST_CASE("depthwise refusals name the rule and leave nothing in the builder") {
    const auto dw = [](std::array<std::int64_t, 4> pads) { return et::window(3, 3, 1, pads, 16); };
    const ops::ConvPlan plan = et::conv_plan(16, 8, 8, 16, dw({1, 1, 1, 1}));
    const std::vector<std::int8_t> w(16 * 9, 1);
    Builder b("dw");
    REQUIRE(b.emit("nop", {}).ok());
    const DramImage X{2, 0, 8, 8, 16, 16}, Y{3, 0, 8, 8, 16, 16};
    auto bad = plan;
    bad.quant.zp_w.pop_back();  // a zero point per channel
    CHECK_RULE(lower_depthwise(b, bad, X, w, {}, Y), "lower-depthwise-layout");
    CHECK_RULE(lower_depthwise(b, et::conv_plan(16, 8, 8, 16, dw({1, 1, 1, 0})), X, w, {}, Y),
               "lower-depthwise-layout");  // Y's width
    CHECK_RULE(lower_depthwise(b, plan, DramImage{2, 0, 8, 8, 16, 8}, w, {}, Y), "lower-depthwise-layout");
    CHECK_RULE(lower_depthwise(b, et::conv_plan(16, 8, 8, 16, et::window(1, 1, 1, {0, 0, 0, 0}, 2)),
                               X, std::vector<std::int8_t>(16 * 8, 1), {}, Y),
               "lower-depthwise-layout");  // group != C
    const ops::ConvPlan wide = et::conv_plan(16, 8, 600, 16, dw({1, 1, 1, 1}));
    const DramImage Xw{2, 0, 8, 600, 16, 16}, Yw{3, 0, 8, 600, 16, 16};  // an output row of 9600 B: ACC too small
    CHECK_RULE(lower_depthwise(b, wide, Xw, w, {}, Yw), "lower-depthwise-budget");
    CHECK(b.size() == 1);
    CHECK(b.weights().empty());
    CHECK(b.holders().empty());
}

}  // namespace depthwise_test
