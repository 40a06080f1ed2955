// Differential verification of the convolution lowering (emit/conv.hpp): emit -> simulate -> compare with
// ops::call<ops::Conv> (NCHW on the host, NHWC on the vnpu) bit for bit, no fault, no race. Kernels 1x1, 3x3 and
// 5x3; strides 1 and 2 (rows, columns, both); dilation 2; symmetric, asymmetric and over-wide pads; groups 2 and 4
// (channels per group 16 and 3); C = 3 (MobileNet's first layer), 13, 40; Co = 8, 24, 48, 130; zero points at both
// ends; per-channel weight scales; bias; tiling forced down to one row and 16 channels; and the refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <janus/emit/conv.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../emit/conv_support.hpp"
#include "../emit/emit_support.hpp"
#include "../support/check_rule.hpp"

using namespace janus;
using namespace janus::emit;

namespace {

struct Case {
    std::int64_t C, H, W, Co;
    et::ConvSpec k;
    std::int32_t zp_x;
    bool with_bias;
    ConvOptions opt{};
    std::vector<std::int32_t> zp_w{};  ///< weight zero points, cycled over the output channels (empty: all 0)
};

vnpu::sim::Report check(const Case& t, std::uint32_t seed, std::vector<std::string>* log = nullptr) {
    CAPTURE(t.C);
    CAPTURE(t.H);
    CAPTURE(t.W);
    CAPTURE(t.Co);
    CAPTURE(t.k.kh);
    CAPTURE(t.k.kw);
    CAPTURE(t.k.a.strides[0]);
    CAPTURE(t.k.a.strides[1]);
    CAPTURE(t.k.a.group);
    CAPTURE(t.zp_x);
    CAPTURE(t.zp_w.size());
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::uniform_real_distribution<float> scale(0.005f, 0.05f);
    const et::ConvSpec& k = t.k;
    const std::int64_t C = t.C, H = t.H, W = t.W, Co = t.Co, Cg = C / k.a.group, Cp = round16(C), Cop = round16(Co);
    std::vector<std::int8_t> x(static_cast<std::size_t>(C * H * W)), w(static_cast<std::size_t>(Co * Cg * k.kh * k.kw));
    for (auto& v : x) v = static_cast<std::int8_t>(byte(rng));
    for (auto& v : w) v = static_cast<std::int8_t>(byte(rng));
    std::vector<std::int32_t> bias;
    if (t.with_bias)
        for (std::int64_t c = 0; c < Co; ++c) bias.push_back(static_cast<std::int32_t>(byte(rng)) * 40);
    std::vector<float> sw(static_cast<std::size_t>(Co));
    for (auto& v : sw) v = scale(rng);
    const auto qx = numeric::make_quant(DType::i8, 0.04f, t.zp_x).value();
    std::vector<std::int32_t> zw(sw.size(), 0);
    for (std::size_t c = 0; c < zw.size() && !t.zp_w.empty(); ++c) zw[c] = t.zp_w[c % t.zp_w.size()];
    const auto qw = numeric::make_quant_per_axis(DType::i8, sw, zw, 0, Shape{Co, Cg, k.kh, k.kw}).value();
    // about 3 standard deviations of the accumulator at the output's full range (w - zw spreads about twice as wide
    // with zero points near the ends of int8)
    const float spread = t.zp_w.empty() ? 1.0f : 2.0f;
    const float sy =
        0.04f * 0.03f * 74.0f * 74.0f * spread * std::sqrt(static_cast<float>(Cg * k.kh * k.kw)) * 3.0f / 127.0f;
    const auto qy = numeric::make_quant(DType::i8, sy, -6).value();
    const Tensor tx = Tensor::from<std::int8_t>(Shape{1, C, H, W}, x, qx);
    const Tensor tw = Tensor::from<std::int8_t>(Shape{Co, Cg, k.kh, k.kw}, w, qw);
    const ops::Conv::Attrs& at = k.a;
    std::vector<Tensor> ins{tx, tw};
    if (t.with_bias) ins.push_back(Tensor::from<std::int32_t>(Shape{Co}, bias));
    const et::HostConv host = et::host_conv(ins, at, qy);
    const auto& types = host.types;
    const auto& out = host.out;
    const std::int64_t Ho = out.shape[2], Wo = out.shape[3];
    // a fused activation clamp (ConvOptions::clamp): the Conv's codes, then the clamp
    auto want = host.codes;
    for (auto& v : want) v = static_cast<std::int8_t>(std::clamp<int>(v, t.opt.clamp.lo, t.opt.clamp.hi));

    const auto plan = ops::Conv::plan(types, at, out, numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    Builder b("conv");
    const DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, Ho, Wo, Co, Cop};
    const auto st = lower_conv(b, *plan, X, w, bias, Y, t.opt);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    if (log) *log = b.log();
    vnpu::sim::Machine m;
    m.dram[2] = et::to_nhwc(x, C, H * W, Cp, 0x5a);  // padding channels hold anything
    m.dram[3].resize(static_cast<std::size_t>(Ho * Wo * Cop));
    const auto r = et::run_clean(b, m);
    const auto got = et::from_nhwc(m.dram[3], Co, Ho * Wo, Cop);
    auto expect = want;  // then a fused epilogue table (ConvOptions::lut): T[c + 128]
    if (t.opt.lut)
        for (auto& v : expect) v = static_cast<std::int8_t>(t.opt.lut->values[static_cast<std::size_t>(v + 128)]);
    CHECK(got == expect);
    int saturated = 0, low = 0, high = 0;
    for (auto v : want) {
        saturated += (v == -128 || v == 127);
        low += v == t.opt.clamp.lo;
        high += v == t.opt.clamp.hi;
    }
    CHECK(saturated * 4 < static_cast<int>(want.size()) + 4);     // the comparison is not between saturated outputs
    if (!(t.opt.clamp == Clamp{})) CHECK((low > 0 && high > 0));  // the clamp cut both ends
    return r;
}

using et::window;

}  // namespace

TEST_CASE("conv on the MAC array: kernels, pads, channel counts, zero points, bias") {
    check({16, 6, 7, 16, window(3, 3, 1, {1, 1, 1, 1}), 0, true}, 1);
    check({13, 7, 9, 24, window(3, 3, 1, {1, 0, 2, 1}), -128, true}, 2);  // asymmetric pads, C padded to 16
    check({40, 5, 6, 8, window(5, 3, 1, {2, 1, 2, 1}), 127, false}, 3);
    check({40, 4, 5, 130, window(1, 1, 1, {0, 0, 0, 0}), 9, true}, 4);  // 1x1, Co = 130 (pitch 144)
    check({16, 2, 3, 16, window(3, 3, 1, {2, 2, 2, 2}), -3, true}, 5);  // pads wider than the image
}

TEST_CASE("conv strides and dilations: phase planes and the virtual row") {
    check({3, 9, 9, 16, window(3, 3, 2, {1, 1, 1, 1}), -128, true}, 11);       // MobileNet's first layer, C = 3
    check({16, 8, 7, 24, window(3, 3, 2, {0, 0, 0, 0}), 5, true}, 12);         // odd width: the virtual row is wider
    check({16, 7, 7, 16, window(1, 1, 2, {0, 0, 0, 0}), -9, false}, 13);       // a phase plane no tap reads
    check({16, 9, 10, 16, window(3, 3, 1, {2, 2, 2, 2}, 1, 2), 3, true}, 14);  // dilation 2
    check({13, 11, 8, 16, et::conv_spec(3, 2, 3, 1, 2, 1, {1, 0, 2, 1}), 7, true}, 15);   // sh 3, sw 1, dh 2
    check({13, 8, 11, 16, et::conv_spec(2, 3, 1, 2, 1, 3, {0, 2, 1, 0}), -7, true}, 16);  // sh 1, sw 2, dw 3
}

TEST_CASE("grouped conv: block-diagonal B keeps each group's weights and multipliers with its channels (seed B1)") {
    check({32, 5, 6, 48, window(3, 3, 1, {1, 1, 1, 1}, 2), -4, true}, 21);   // 16 channels per group
    check({12, 6, 5, 8, window(3, 3, 1, {1, 1, 1, 1}, 4), 60, true}, 22);    // 3 in, 2 out per group
    check({16, 5, 5, 16, window(3, 3, 2, {1, 1, 1, 1}, 16), -1, true}, 23);  // depthwise through the MAC array
}

TEST_CASE("a fused activation clamp in the requantization equals the Conv followed by the clamp of its codes") {
    check({16, 7, 9, 40, window(3, 3, 1, {1, 1, 1, 1}), 11, true, ConvOptions{16, 1, {-6, 100}, {}}}, 41);  // Relu-like
    check({24, 9, 6, 33, window(3, 3, 2, {1, 1, 1, 1}), -100, true, ConvOptions{0, 0, {-40, 20}, {}}}, 42);
}

TEST_CASE("a fused epilogue table: lut.apply on each output tile equals the Conv followed by the table") {
    expr::Table256 t;  // a scramble of the codes: any mistake in which code meets which entry shows
    for (std::size_t i = 0; i < 256; ++i) t.values[i] = static_cast<std::int32_t>((i * 77 + 13) % 256) - 128;
    check({16, 7, 9, 40, window(3, 3, 1, {1, 1, 1, 1}), 11, true, ConvOptions{16, 1, {}, t}}, 43);   // 7 x 3 steps
    check({24, 9, 6, 33, window(3, 3, 2, {1, 1, 1, 1}), -100, true, ConvOptions{0, 0, {}, t}}, 44);  // stride 2
}

TEST_CASE("weight zero points: w - zw in int8 parts, one mac.mma per tap and part (QLinearConv's uint8 weights)") {
    // 127: w - zw in [-255, 0], 2 parts; -128 (uint8 weights of zero point 0): [0, 255], 3 parts; mixed per channel
    std::vector<std::string> log;
    check({16, 6, 7, 16, window(3, 3, 1, {1, 1, 1, 1}), 0, true, {}, {127}}, 51, &log);
    CHECK(std::find(log.begin(), log.end(), "conv: conv: weight zero points: w - zw in 2 int8 parts, 2 MACs per tap") !=
          log.end());
    check({13, 7, 9, 24, window(3, 3, 1, {1, 0, 2, 1}), 3, true, {}, {-128}}, 52, &log);
    CHECK(std::find(log.begin(), log.end(), "conv: conv: weight zero points: w - zw in 3 int8 parts, 3 MACs per tap") !=
          log.end());
    check({24, 9, 6, 40, window(3, 3, 2, {1, 1, 1, 1}), -2, true, ConvOptions{16, 2, {}, {}}, {5, -77, 100, 0, -128}},
          53);                                                                             // tiles, B double buffered
    check({16, 5, 5, 16, window(3, 3, 1, {1, 1, 1, 1}, 4), 1, false, {}, {60, -60}}, 54);  // grouped
    check({1, 7, 7, 1, window(1, 1, 1, {0, 0, 0, 0}), 4, false, {}, {127}}, 55);           // the node test's 1x1 shape
}

TEST_CASE("conv tiling: forced small tiles and B double buffering") {
    check({16, 7, 9, 40, window(3, 3, 1, {1, 1, 1, 1}), 11, true, ConvOptions{16, 1, {}, {}}}, 31);  // 7 x 3 steps
    check({24, 9, 6, 33, window(3, 3, 2, {1, 1, 1, 1}), -100, true, ConvOptions{16, 2, {}, {}}}, 32);
    std::vector<std::string> log;
    check({64, 14, 14, 64, window(3, 3, 1, {1, 1, 1, 1}), -7, true}, 33, &log);
    REQUIRE(!log.empty());
    CHECK(log.front().find("conv: conv: 14x14x64 from 14x14x64, 9 taps as ") == 0);
}

TEST_CASE("conv refusals name the rule and leave nothing in the builder") {
    const et::ConvSpec k = window(3, 3, 1, {1, 1, 1, 1});
    const ops::ConvPlan plan = et::conv_plan(16, 8, 8, 16, k);  // 8x8x16 -> 8x8x16
    const std::vector<std::int8_t> w(16 * 16 * 9, 1);
    Builder b("conv");
    REQUIRE(b.emit("nop", {}).ok());
    const DramImage X{2, 0, 8, 8, 16, 16}, Y{3, 0, 8, 8, 16, 16};
    auto bad = plan;
    bad.quant.zp_w.pop_back();  // a zero point per output channel
    CHECK_RULE(lower_conv(b, bad, X, w, {}, Y), "lower-conv-layout");
    const ops::ConvPlan narrow = et::conv_plan(16, 8, 8, 16, window(3, 3, 1, {1, 1, 1, 0}));  // 8x7 out
    CHECK_RULE(lower_conv(b, narrow, X, w, {}, Y), "lower-conv-layout");                        // Y's width
    CHECK_RULE(lower_conv(b, plan, DramImage{2, 0, 8, 8, 16, 8}, w, {}, Y), "lower-conv-layout");   // pitch < C
    CHECK_RULE(lower_conv(b, plan, DramImage{2, 0, 8, 9, 16, 16}, w, {}, Y), "lower-conv-layout");  // not the plan's x
    CHECK_RULE(lower_conv(b, plan, X, std::span<const std::int8_t>(w).first(100), {}, Y), "lower-conv-layout");
    auto f32 = plan;  // a float Conv's plan: nothing to lower
    f32.epilogue = ops::ConvEpilogue::float_sums;
    CHECK_RULE(lower_conv(b, f32, X, w, {}, Y), "lower-conv-layout");
    const ops::ConvPlan wide = et::conv_plan(16, 8, 1500, 16, k);  // a row of 1500 pixels > 1024 MAC rows
    const DramImage Xw{2, 0, 8, 1500, 16, 16}, Yw{3, 0, 8, 1500, 16, 16};
    CHECK_RULE(lower_conv(b, wide, Xw, w, {}, Yw), "lower-conv-budget");
    CHECK(b.size() == 1);
    CHECK(b.weights().empty());
    CHECK(b.holders().empty());
}
