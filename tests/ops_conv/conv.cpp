// Conv (ONNX opset 11+, QLinearConv convention when quantized): one golden hand-computed case per semantic switch,
// the group split of seed B1, and one bad-input test per rule. Expectations were computed by hand and cross-checked
// with a plain Python loop script while writing the test.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "reference.hpp"
#include <support/check_rule.hpp>

using namespace convtest;

namespace {

std::vector<float> run_f(std::initializer_list<Tensor> in, const ConvAttrs& a) {
    auto r = call<Conv>(in, a);
    REQUIRE(r.ok());
    return r->to_vector<float>();
}

const Tensor x16 = tf({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
const Tensor w1234 = tf({1, 1, 2, 2}, {1, 2, 3, 4});

TensorType qout(DType d, Shape s, float scale, std::int32_t zp) {
    return TensorType{d, std::move(s), numeric::make_quant(d, scale, zp).value()};
}

}  // namespace

TEST_CASE("Conv stride: output o reads input o*s + j") {
    ConvAttrs a;
    a.strides = {2, 2};
    CHECK(run_f({x16, w1234}, a) == std::vector<float>{44, 64, 124, 144});
    auto t = Conv::infer(std::vector<TensorType>{type_of(x16), type_of(w1234)}, a);
    REQUIRE(t.ok());
    CHECK(t->shape == Shape{1, 1, 2, 2});
}

TEST_CASE("Conv dilation: kernel position j reads input o + j*d") {
    ConvAttrs a;
    a.dilations = {2, 2};
    CHECK(run_f({x16, w1234}, a) == std::vector<float>{78, 88, 118, 128});
}

TEST_CASE("Conv asymmetric pads: pads = [top, left, bottom, right] pad each side separately") {
    ConvAttrs a;
    a.pads = {1, 0, 0, 2};
    const Tensor x = tf({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    const Tensor w = tf({1, 1, 2, 2}, {1, 1, 1, 1});
    CHECK(run_f({x, w}, a) == std::vector<float>{3, 5, 3, 0, 12, 16, 9, 0, 24, 28, 15, 0});
}

TEST_CASE("Conv groups: output channel g*Cout_g+co only reads input channels of group g") {
    const Tensor x = tf({1, 4, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    const Tensor w = tf({2, 2, 1, 1}, {1, 10, 100, 1000});
    ConvAttrs a;
    a.group = 2;
    CHECK(run_f({x, w}, a) == std::vector<float>{31, 42, 7500, 8600});
}

TEST_CASE("Conv depthwise: group = C, one filter per channel") {
    std::vector<float> xv;
    for (int i = 1; i <= 18; ++i) xv.push_back(static_cast<float>(i));
    const Tensor x = tf({1, 2, 3, 3}, xv);  // c0 = 1..9, c1 = 10..18
    const Tensor w = tf({2, 1, 2, 2}, {1, 1, 1, 1, 1, 0, 0, -1});
    ConvAttrs a;
    a.group = 2;
    CHECK(run_f({x, w}, a) == std::vector<float>{12, 16, 24, 28, -4, -4, -4, -4});
}

TEST_CASE("Conv bias: added once per output channel") {
    const Tensor x = tf({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor w = tf({2, 1, 1, 1}, {2, 3});
    const Tensor b = tf({2}, {0.5f, -1.0f});
    CHECK(run_f({x, w, b}, {}) == std::vector<float>{2.5f, 4.5f, 6.5f, 8.5f, 2, 5, 8, 11});
}

TEST_CASE("Conv auto_pad: NOTSET uses pads, VALID none, SAME_UPPER extra at the end, SAME_LOWER at the begin") {
    const Tensor x = tf({1, 1, 1, 5}, {1, 2, 3, 4, 5});
    const Tensor w = tf({1, 1, 1, 2}, {1, 10});
    ConvAttrs a;
    a.strides = {1, 2};
    SUBCASE("NOTSET") {
        a.pads = {0, 2, 0, 0};
        CHECK(run_f({x, w}, a) == std::vector<float>{0, 21, 43});
    }
    SUBCASE("VALID") {
        a.auto_pad = "VALID";
        CHECK(run_f({x, w}, a) == std::vector<float>{21, 43});
    }
    SUBCASE("SAME_UPPER") {  // O = ceil(5 / 2) = 3, total pad 1, at the end
        a.auto_pad = "SAME_UPPER";
        CHECK(run_f({x, w}, a) == std::vector<float>{21, 43, 5});
    }
    SUBCASE("SAME_LOWER") {  // total pad 1, at the begin
        a.auto_pad = "SAME_LOWER";
        CHECK(run_f({x, w}, a) == std::vector<float>{10, 32, 54});
    }
}

TEST_CASE("Conv 1-D and 3-D spatial run through the same contract") {
    const Tensor x1 = tf({1, 1, 4}, {1, 2, 3, 4});
    const Tensor w1 = tf({1, 1, 2}, {1, 10});
    CHECK(run_f({x1, w1}, {}) == std::vector<float>{21, 32, 43});
    const Tensor x3 = tf({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    const Tensor w3 = tf({1, 1, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
    CHECK(run_f({x3, w3}, {}) == std::vector<float>{36});
}

TEST_CASE("Conv per-channel scales: output channel oc requantizes with s_x * s_w[oc] / s_y") {
    const Tensor x = tq<std::int8_t>({1, 1, 1, 2}, {10, 20}, 0.5f, 0);
    const Tensor w = tq_axis<std::int8_t>({2, 1, 1, 1}, {4, 4}, {0.25f, 0.5f}, {0, 0}, 0);
    const auto out = qout(DType::i8, {1, 2, 1, 2}, 0.5f, 1);
    auto r = call<Conv>({x, w}, {}, out);
    REQUIRE(r.ok());
    CHECK(ints<std::int8_t>(*r) == std::vector<int>{11, 21, 21, 41});
    CHECK(r->quant == out.quant);  // the caller's parameters, never the input's (seed A10)
}

TEST_CASE("Conv bias (quantized): int32 with the implied scale s_x * s_w[oc] and zero point 0") {
    const Tensor x = tq<std::int8_t>({1, 1, 1, 2}, {10, 20}, 0.5f, 0);
    const Tensor w = tq_axis<std::int8_t>({2, 1, 1, 1}, {4, 4}, {0.25f, 0.5f}, {0, 0}, 0);
    const auto out = qout(DType::i8, {1, 2, 1, 2}, 0.5f, 1);
    auto r = call<Conv>({x, w, bias_i32({-8, 6})}, {}, out);
    REQUIRE(r.ok());
    CHECK(ints<std::int8_t>(*r) == std::vector<int>{9, 19, 24, 44});
    // A bias that carries its parameters explicitly must carry the implied ones.
    Tensor b = bias_i32({-8, 6});
    b.quant = numeric::make_quant_per_axis(DType::i32, {0.125f, 0.25f}, {0, 0}, 0, Shape{2}).value();
    auto r2 = call<Conv>({x, w, b}, {}, out);
    REQUIRE(r2.ok());
    CHECK(ints<std::int8_t>(*r2) == std::vector<int>{9, 19, 24, 44});
}

TEST_CASE("Conv zero points: acc = sum (x - zp_x)(w - zp_w[oc]) with uint8 input and int8 weights") {
    // real x = 0.5 * (q - 128) = [1, -1]; real w = 1 * (q - zp_w[oc]) = [2] and [-3]
    const Tensor x = tq<std::uint8_t>({1, 1, 1, 2}, {130, 126}, 0.5f, 128);
    const Tensor w = tq_axis<std::int8_t>({2, 1, 1, 1}, {5, -5}, {1.0f, 1.0f}, {3, -2}, 0);
    const auto out = qout(DType::u8, {1, 2, 1, 2}, 0.25f, 100);
    auto r = call<Conv>({x, w}, {}, out);
    REQUIRE(r.ok());
    // oc0: [2, -2] / 0.25 + 100 = [108, 92]; oc1: [-3, 3] / 0.25 + 100 = [88, 112]
    CHECK(ints<std::uint8_t>(*r) == std::vector<int>{108, 92, 88, 112});
}

// ---- seed B1: the group split -----------------------------------------------------------------------------------

namespace {
/// A grouped quantized Conv whose per-channel weight scales, zero points and biases all differ across groups.
struct GroupedCase {
    Tensor x, w, b;
    ConvAttrs a;
    TensorType out;
};
GroupedCase grouped_case() {
    GroupedCase c;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> d8(-128, 127);
    std::vector<int> xv(1 * 4 * 5 * 5), wv(6 * 2 * 3 * 3);
    for (auto& v : xv) v = d8(rng);
    for (auto& v : wv) v = d8(rng);
    c.x = tq<std::int8_t>({1, 4, 5, 5}, xv, 0.05f, -3);
    c.w = tq_axis<std::int8_t>({6, 2, 3, 3}, wv, {0.01f, 0.02f, 0.03f, 0.005f, 0.007f, 0.04f}, {0, 1, -1, 2, 0, -2}, 0);
    c.b = bias_i32({100, -200, 300, -400, 500, -600});
    c.a.group = 2;
    c.a.strides = {2, 1};
    c.a.pads = {1, 0, 1, 2};
    c.out = qout(DType::i8, {}, 0.3f, 5);
    c.out.shape = Conv::infer(std::vector<TensorType>{type_of(c.x), type_of(c.w), type_of(c.b)}, c.a).value().shape;
    return c;
}
}  // namespace

TEST_CASE("Conv group split cuts input, weights AND their per-channel quantization together (seed B1)") {
    const GroupedCase c = grouped_case();
    const std::vector<Tensor> in{c.x, c.w, c.b};
    auto whole = call<Conv>(std::span<const Tensor>(in), c.a, c.out);
    REQUIRE(whole.ok());
    auto pieces = split_conv_groups(in, c.a);
    REQUIRE(pieces.ok());
    REQUIRE(pieces->size() == 2);
    std::vector<int> concat(static_cast<std::size_t>(whole->elements()), 999);
    const std::int64_t plane = c.out.shape[2] * c.out.shape[3];
    for (const auto& p : *pieces) {
        CHECK(p.attrs.group == 1);
        CHECK(p.inputs[1].quant->scales.size() == 3);  // the weight scales travelled with the weights
        TensorType po = c.out;
        po.shape[1] = p.out_end - p.out_begin;
        auto y = call<Conv>(std::span<const Tensor>(p.inputs), p.attrs, po);
        REQUIRE(y.ok());
        const auto v = ints<std::int8_t>(*y);
        for (std::size_t i = 0; i < v.size(); ++i) concat[static_cast<std::size_t>(p.out_begin * plane) + i] = v[i];
    }
    CHECK(concat == ints<std::int8_t>(*whole));

    // The mistake of seed B1: cut the weights but give every piece group 0's scales and zero points.
    bool differs = false;
    for (const auto& p : *pieces) {
        std::vector<Tensor> wrong = p.inputs;
        wrong[1].quant = (*pieces)[0].inputs[1].quant;
        TensorType po = c.out;
        po.shape[1] = p.out_end - p.out_begin;
        auto y = call<Conv>(std::span<const Tensor>(wrong), p.attrs, po);
        REQUIRE(y.ok());
        const auto v = ints<std::int8_t>(*y);
        for (std::size_t i = 0; i < v.size(); ++i)
            differs = differs || v[i] != concat[static_cast<std::size_t>(p.out_begin * plane) + i];
    }
    CHECK(differs);
    // Forgetting to cut them at all leaves 6 scales on a 3-channel axis: refused, never silently misread.
    std::vector<Tensor> unsliced = (*pieces)[1].inputs;
    unsliced[1].quant = c.w.quant;
    TensorType po = c.out;
    po.shape[1] = 3;
    CHECK_RULE(call<Conv>(std::span<const Tensor>(unsliced), (*pieces)[1].attrs, po), "channels-match-extent");
}

TEST_CASE("Conv group split: pieces are views of the original bytes, float and per-tensor weights too") {
    const Tensor x = tf({1, 4, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    const Tensor w = tf({2, 2, 1, 1}, {1, 10, 100, 1000});
    ConvAttrs a;
    a.group = 2;
    const std::vector<Tensor> in{x, w};
    auto pieces = split_conv_groups(in, a);
    REQUIRE(pieces.ok());
    REQUIRE(pieces->size() == 2);
    CHECK((*pieces)[1].inputs[0].storage == x.storage);
    CHECK((*pieces)[1].inputs[0].shape() == Shape{1, 2, 1, 2});
    auto y1 = call<Conv>(std::span<const Tensor>((*pieces)[1].inputs), (*pieces)[1].attrs);
    REQUIRE(y1.ok());
    CHECK(y1->to_vector<float>() == std::vector<float>{7500, 8600});
    // an invalid node is refused, not split
    ConvAttrs bad;
    bad.group = 3;
    CHECK_RULE(split_conv_groups(in, bad), "conv-channels-match-groups");
}

// ---- bad inputs: one per rule ------------------------------------------------------------------------------------

TEST_CASE("Conv rules: shapes, groups and geometry") {
    const Tensor x = tf({1, 4, 3, 3}, std::vector<float>(36, 1.0f));
    const Tensor w = tf({2, 2, 2, 2}, std::vector<float>(16, 1.0f));
    ConvAttrs g2;
    g2.group = 2;
    CHECK_RULE(call<Conv>({x}, g2), "input-count");
    CHECK_RULE(call<Conv>({tf({4, 9}, std::vector<float>(36, 0)), w}, g2), "conv-input-rank");
    CHECK_RULE(call<Conv>({tf({1, 1, 1, 1, 1, 1}, {0}), tf({1, 1, 1, 1, 1, 1}, {0})}, {}), "conv-input-rank");
    CHECK_RULE(call<Conv>({x, tf({2, 2, 4}, std::vector<float>(16, 0))}, g2), "conv-weight-rank");
    CHECK_RULE(call<Conv>({x, w}, {}), "conv-channels-match-groups");
    ConvAttrs g4;
    g4.group = 4;
    CHECK_RULE(call<Conv>({x, tf({2, 1, 2, 2}, std::vector<float>(8, 0))}, g4), "conv-out-channels-divisible");
    ConvAttrs g0;
    g0.group = 0;
    CHECK_RULE(call<Conv>({x, w}, g0), "attribute-range");
    CHECK_RULE(Conv::infer(std::vector<TensorType>{type_of(x), type_of(w)}, g0), "groups-positive");
    ConvAttrs k = g2;
    k.kernel_shape = {3, 3};
    CHECK_RULE(call<Conv>({x, w}, k), "kernel-matches-weights");
    ConvAttrs s = g2;
    s.strides = {1, 1, 1};
    CHECK_RULE(call<Conv>({x, w}, s), "window-param-length");
    ConvAttrs p = g2;
    p.pads = {1, 1};
    CHECK_RULE(call<Conv>({x, w}, p), "window-param-length");
    ConvAttrs ap = g2;
    ap.auto_pad = "SAME_UPPER";
    ap.pads = {0, 0, 1, 1};
    CHECK_RULE(call<Conv>({x, w}, ap), "pads-with-auto-pad");
    ConvAttrs bad_ap = g2;
    bad_ap.auto_pad = "SAME";
    CHECK_RULE(call<Conv>({x, w}, bad_ap), "attribute-range");
    ConvAttrs dil = g2;
    dil.dilations = {3, 3};  // effective extent 4 > 3
    CHECK_RULE(call<Conv>({x, w}, dil), "window-fits-padded-input");
    ConvAttrs same = g2;
    same.auto_pad = "SAME_LOWER";
    CHECK_RULE(call<Conv>({x, tf({2, 2, 2, 0}, {})}, same), "kernel-positive");
    CHECK_RULE(call_with<Conv>(std::vector<Tensor>{x, w}, AttrMap{{"groups", std::int64_t{2}}}), "known-attribute");
}

TEST_CASE("Conv rules: operand types and quantization") {
    const Tensor xf = tf({1, 2, 2, 2}, std::vector<float>(8, 1.0f));
    const Tensor wf = tf({2, 2, 1, 1}, std::vector<float>(4, 1.0f));
    const Tensor xq = tq<std::int8_t>({1, 2, 2, 2}, std::vector<int>(8, 1), 0.5f, 0);
    const Tensor wq = tq<std::int8_t>({2, 2, 1, 1}, std::vector<int>(4, 1), 0.5f, 0);
    const auto out = qout(DType::i8, {1, 2, 2, 2}, 1.0f, 0);
    CHECK_RULE(call<Conv>({xf, Tensor::from<std::int8_t>({2, 2, 1, 1}, std::vector<std::int8_t>(4, 1))}, {}),
               "float-or-quantized");
    CHECK_RULE(call<Conv>({Tensor::from<std::int8_t>({1, 2, 2, 2}, std::vector<std::int8_t>(8, 1)), wq}, {}, out),
               "quantized-input");
    CHECK_RULE(call<Conv>({xq, wf}, {}, out), "quantized-input");
    const Tensor x_axis = tq_axis<std::int8_t>({1, 2, 2, 2}, std::vector<int>(8, 1), {0.5f, 0.5f}, {0, 0}, 1);
    CHECK_RULE(call<Conv>({x_axis, wq}, {}, out), "per-tensor-quantization");
    Tensor x_mis = xq;
    x_mis.quant->dtype = DType::u8;
    CHECK_RULE(call<Conv>({x_mis, wq}, {}, out), "quant-dtype-matches");
    const Tensor w_axis1 = tq_axis<std::int8_t>({2, 2, 1, 1}, std::vector<int>(4, 1), {0.5f, 0.5f}, {0, 0}, 1);
    CHECK_RULE(call<Conv>({xq, w_axis1}, {}, out), "weight-quant-axis");
    CHECK_RULE(call<Conv>({xq, wq, tf({2}, {0, 0})}, {}, out), "bias-dtype");
    CHECK_RULE(call<Conv>({xf, wf, bias_i32({0, 0})}, {}), "bias-dtype");
    CHECK_RULE(call<Conv>({xq, wq, bias_i32({0, 0, 0})}, {}, out), "bias-shape");
    Tensor b = bias_i32({0, 0});
    b.quant = numeric::make_quant(DType::i32, 0.5f, 0).value();  // implied: 0.5 * 0.5 = 0.25
    CHECK_RULE(call<Conv>({xq, wq, b}, {}, out), "bias-quant-implied");
    CHECK_RULE(call<Conv>({xq, wq}, {}), "output-quantization-required");
    const std::vector<Tensor> in{xq, wq};
    CHECK_RULE(Conv::run(in, {}, TensorType{DType::f32, {1, 2, 2, 2}, std::nullopt}, {}), "quantized-output");
    CHECK_RULE(Conv::run(in, {}, qout(DType::i8, {1, 2, 2, 3}, 1.0f, 0), {}), "output-shape");
    const std::vector<Tensor> inf{xf, wf};
    CHECK_RULE(Conv::run(inf, {}, TensorType{DType::i8, {1, 2, 2, 2}, std::nullopt}, {}), "output-dtype");
    CHECK_RULE(call<Conv>({xq, wq}, {}, qout(DType::i8, {1, 2, 2, 2}, 1e-10f, 0)), "ratio-below-2^30");
}

TEST_CASE("Conv rules: accumulator and epilogue ranges are proved before anything is returned (seed A5)") {
    // x - zp_x in [-255, 0], w - zp_w in [0, 255]: products in [-65025, 0], at most 33025 terms fit int32.
    const std::int64_t C = 33100;
    const Tensor x = tq<std::int8_t>({1, C, 1, 1}, std::vector<int>(static_cast<std::size_t>(C), 0), 1.0f, 127);
    const Tensor w = tq<std::int8_t>({1, C, 1, 1}, std::vector<int>(static_cast<std::size_t>(C), 0), 1.0f, -128);
    CHECK_RULE(call<Conv>({x, w}, {}, qout(DType::i8, {1, 1, 1, 1}, 1.0f, 0)), "accumulator-fits-int32");
    // M = s_x s_w / s_y = 4096 (left shift 13) with |acc| up to 9 * 255 * 128: round_double's shift could saturate.
    const Tensor x9 = tq<std::int8_t>({1, 1, 3, 3}, std::vector<int>(9, 1), 1.0f, 127);
    const Tensor w9 = tq<std::int8_t>({1, 1, 3, 3}, std::vector<int>(9, 1), 1.0f, 0);
    CHECK_RULE(call<Conv>({x9, w9}, {}, qout(DType::i8, {1, 1, 1, 1}, 1.0f / 4096.0f, 0)),
               "requantize-left-shift-fits-int32");
    // ... and with a small ratio >= 1 it is proved and runs: acc = 9 * (1 - 127) * 1 = -1134, M = 2 -> saturates.
    auto ok = call<Conv>({x9, w9}, {}, qout(DType::i8, {1, 1, 1, 1}, 0.5f, 0));
    REQUIRE(ok.ok());
    CHECK(ints<std::int8_t>(*ok) == std::vector<int>{-128});
}
