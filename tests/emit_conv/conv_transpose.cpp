// Differential verification of lower_conv_transpose (emit/conv.hpp): emit -> simulate -> compare with
// ops::call<ops::ConvTranspose> bit for bit. Strides 1, 2 and (2, 3); dilation 2; pads that crop (a negative stuff
// begin); output_padding; groups 2 with per-channel scales along W's axis 1 (seed B2); and the refusals.
#include <doctest/doctest.h>

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

// Test executables build as one unity TU per directory: this file's helpers and tests live in their own
// namespace, so their names hide (never overload) a sibling file's helpers of the same name.
namespace conv_transpose_test {

namespace {

struct Case {
    std::int64_t C, H, W, Cog, kh, kw;
    ops::ConvTranspose::Attrs a;
    std::int32_t zp_x;
    bool with_bias;
};

void check(const Case& t, std::uint32_t seed) {
    CAPTURE(t.C);
    CAPTURE(t.H);
    CAPTURE(t.W);
    CAPTURE(t.Cog);
    CAPTURE(t.a.group);
    CAPTURE(t.zp_x);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::uniform_real_distribution<float> scale(0.005f, 0.05f);
    const std::int64_t C = t.C, H = t.H, W = t.W, G = t.a.group, Co = t.Cog * G, Cp = round16(C), Cop = round16(Co);
    std::vector<std::int8_t> x(static_cast<std::size_t>(C * H * W)),
        w(static_cast<std::size_t>(C * t.Cog * t.kh * t.kw));
    for (auto& v : x) v = static_cast<std::int8_t>(byte(rng));
    for (auto& v : w) v = static_cast<std::int8_t>(byte(rng));
    std::vector<std::int32_t> bias;
    if (t.with_bias)
        for (std::int64_t c = 0; c < Co; ++c) bias.push_back(static_cast<std::int32_t>(byte(rng)) * 40);
    std::vector<float> sw(static_cast<std::size_t>(t.Cog));
    for (auto& v : sw) v = scale(rng);
    const auto qx = numeric::make_quant(DType::i8, 0.04f, t.zp_x).value();
    const auto qw = numeric::make_quant_per_axis(DType::i8, sw, std::vector<std::int32_t>(sw.size(), 0), 1,
                                                 Shape{C, t.Cog, t.kh, t.kw})
                        .value();
    const float sy = 0.04f * 0.03f * 74.0f * 74.0f * std::sqrt(static_cast<float>(C / G * t.kh * t.kw)) * 2.0f / 127.0f;
    const auto qy = numeric::make_quant(DType::i8, sy, 4).value();
    const Tensor tx = Tensor::from<std::int8_t>(Shape{1, C, H, W}, x, qx);
    const Tensor tw = Tensor::from<std::int8_t>(Shape{C, t.Cog, t.kh, t.kw}, w, qw);
    const ops::TensorType types[2] = {ops::type_of(tx), ops::type_of(tw)};
    const auto inferred = ops::ConvTranspose::infer(types, t.a);
    REQUIRE(inferred.ok());
    const Shape os = inferred->shape;
    const ops::TensorType out{DType::i8, os, qy};
    std::vector<Tensor> ins{tx, tw};
    if (t.with_bias) ins.push_back(Tensor::from<std::int32_t>(Shape{Co}, bias));
    const auto host = ops::call<ops::ConvTranspose>(std::span<const Tensor>(ins), t.a, out);
    REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
    const auto want = host->to_vector<std::int8_t>();

    std::vector<ops::TensorType> all;
    for (const auto& v : ins) all.push_back(ops::type_of(v));
    const auto plan = ops::ConvTranspose::plan(all, t.a, out, numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    const auto scratch = conv_transpose_scratch(*plan, 1, 0);
    REQUIRE(scratch.ok());
    Builder b("convT");
    const std::int64_t Ho = os[2], Wo = os[3];
    const DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, Ho, Wo, Co, Cop};
    const auto st = lower_conv_transpose(b, *plan, tw, bias, X, *scratch, Y);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    vnpu::sim::Machine m;
    m.dram[2] = et::to_nhwc(x, C, H * W, Cp, 0x5a);  // padding channels hold anything
    m.dram[3].resize(static_cast<std::size_t>(Ho * Wo * Cop));
    m.dram[1].assign(static_cast<std::size_t>(scratch->h * scratch->w * Cp), 0xee);  // stale scratch contents
    et::run_clean(b, m);
    const auto got = et::from_nhwc(m.dram[3], Co, Ho * Wo, Cop);
    CHECK(got == want);
    int saturated = 0;
    for (auto v : want) saturated += (v == -128 || v == 127);
    CHECK(saturated * 4 < static_cast<int>(want.size()) + 4);
}

ops::ConvTranspose::Attrs attrs(std::vector<std::int64_t> strides, std::vector<std::int64_t> pads = {},
                                std::int64_t group = 1, std::vector<std::int64_t> dilations = {},
                                std::vector<std::int64_t> output_padding = {}) {
    ops::ConvTranspose::Attrs a;
    a.strides = std::move(strides);
    a.pads = std::move(pads);
    a.group = group;
    a.dilations = std::move(dilations);
    a.output_padding = std::move(output_padding);
    return a;
}

}  // namespace

TEST_CASE("ConvTranspose on the vnpu: zero-stuffed scratch + conv, strides, crops, dilation, output_padding") {
    check({16, 4, 5, 16, 3, 3, attrs({1, 1}), 0, true}, 1);
    check({13, 4, 5, 8, 3, 3, attrs({2, 2}, {1, 1, 1, 1}), -128, true}, 2);              // crops: stuff begin 1
    check({16, 3, 4, 24, 2, 2, attrs({2, 2}), 127, false}, 3);                           // 2x2 / 2: the upsampling case
    check({8, 5, 3, 16, 3, 2, attrs({2, 3}, {2, 0, 1, 1}, 1, {}, {1, 2}), 6, true}, 4);  // output_padding
    check({16, 4, 4, 16, 3, 3, attrs({1, 1}, {5, 5, 1, 1}, 1, {2, 2}), -20, true}, 5);   // dilation, begin < 0
}

TEST_CASE("grouped ConvTranspose: W's axis-1 scales follow each group's output channels (seed B2)") {
    check({32, 4, 4, 8, 3, 3, attrs({2, 2}, {1, 1, 1, 1}, 2), 3, true}, 11);
    check({6, 3, 5, 3, 2, 3, attrs({1, 2}, {}, 3), -70, true}, 12);
}

TEST_CASE("ConvTranspose refusals") {
    const auto qx = numeric::make_quant(DType::i8, 0.04f, 0).value();
    const auto qw = numeric::make_quant(DType::i8, 0.02f, 0).value();
    const ops::TensorType xt{DType::i8, Shape{1, 16, 4, 4}, qx};
    const Tensor w = Tensor::from<std::int8_t>(Shape{16, 16, 3, 3}, std::vector<std::int8_t>(16 * 16 * 9, 1), qw);
    const auto a = attrs({2, 2});
    const ops::TensorType types[2] = {xt, ops::type_of(w)};
    const auto plan = ops::ConvTranspose::plan(
        types, a, ops::TensorType{DType::i8, Shape{1, 16, 9, 9}, numeric::make_quant(DType::i8, 0.5f, 0).value()},
        numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    const auto scratch = conv_transpose_scratch(*plan, 1, 0);
    REQUIRE(scratch.ok());
    CHECK(scratch->h == 2 * 3 + 1 + 2 * 2);  // (L - 1) s + 1 stuffed, k - 1 = 2 padded on each side
    Builder b("convT");
    REQUIRE(b.emit("nop", {}).ok());
    const DramImage X{2, 0, 4, 4, 16, 16}, Y{3, 0, 9, 9, 16, 16};
    DramImage small = *scratch;
    small.w -= 1;
    CHECK_RULE(lower_conv_transpose(b, *plan, w, {}, X, small, Y), "lower-conv-layout");
    CHECK_RULE(lower_conv_transpose(b, *plan, w, {}, DramImage{2, 0, 4, 5, 16, 16}, *scratch, Y),
               "lower-conv-layout");
    auto bad = *plan;
    bad.quant.zp_w.pop_back();  // a zero point per output channel
    CHECK_RULE(lower_conv_transpose(b, bad, w, {}, X, *scratch, Y), "lower-conv-layout");
    ops::ConvPlan conv = et::conv_plan(16, 4, 4, 16, et::window(3, 3, 1, {1, 1, 1, 1}));  // not a ConvTranspose's
    CHECK_RULE(lower_conv_transpose(b, conv, w, {}, X, *scratch, Y), "lower-conv-layout");
    CHECK(b.size() == 1);  // the stuffing emitted before the refusal is taken back
    CHECK(b.weights().empty());
    CHECK(b.holders().empty());
}

}  // namespace conv_transpose_test
