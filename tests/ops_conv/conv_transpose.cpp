// ConvTranspose (ONNX opset 11+): golden hand-computed cases per semantic switch (stride, output_padding, dilation,
// pads, output_shape, auto_pad, groups and the [C_in, C_out/group, k..] weight order of seed B2), per-channel weight
// quantization along axis 1, the group split, and one bad-input test per rule. Expectations by hand: each input
// element scatters x * w[j] to output position i*s - b + j*d (cross-checked with a Python loop script).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "reference.hpp"
#include <support/check_rule.hpp>

using namespace convtest;

namespace {

std::vector<float> run_t(std::initializer_list<Tensor> in, const ConvTransposeAttrs& a) {
    auto r = call<ConvTranspose>(in, a);
    REQUIRE(r.ok());
    return r->to_vector<float>();
}

const Tensor x123 = tf({1, 1, 1, 3}, {1, 2, 3});
const Tensor k3 = tf({1, 1, 1, 3}, {1, 10, 100});  // stride 2: full output [1, 10, 102, 20, 203, 30, 300]

ConvTransposeAttrs stride2() {
    ConvTransposeAttrs a;
    a.strides = {1, 2};
    return a;
}

}  // namespace

TEST_CASE("ConvTranspose stride: input i scatters to outputs i*s + j, overlaps add") {
    CHECK(run_t({x123, k3}, stride2()) == std::vector<float>{1, 10, 102, 20, 203, 30, 300});
    // 2-D: each input element stamps the kernel at (2i, 2j)
    const Tensor x = tf({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor w = tf({1, 1, 2, 2}, {1, 10, 100, 1000});
    ConvTransposeAttrs a;
    a.strides = {2, 2};
    CHECK(run_t({x, w}, a) == std::vector<float>{1,   10,   2,   20,   100, 1000, 200, 2000,
                                                 3,   30,   4,   40,   300, 3000, 400, 4000});
}

TEST_CASE("ConvTranspose output_padding: extra positions at the end of each axis") {
    ConvTransposeAttrs a = stride2();
    a.output_padding = {0, 1};
    CHECK(run_t({x123, k3}, a) == std::vector<float>{1, 10, 102, 20, 203, 30, 300, 0});
}

TEST_CASE("ConvTranspose dilation: kernel position j lands at i + j*d") {
    ConvTransposeAttrs a;
    a.dilations = {1, 2};
    CHECK(run_t({x123, tf({1, 1, 1, 2}, {1, 10})}, a) == std::vector<float>{1, 2, 13, 20, 30});
}

TEST_CASE("ConvTranspose pads: crop b positions at the begin and e at the end of the full output") {
    ConvTransposeAttrs a = stride2();
    a.pads = {0, 1, 0, 2};
    CHECK(run_t({x123, k3}, a) == std::vector<float>{10, 102, 20, 203});
}

TEST_CASE("ConvTranspose output_shape: total crop = full - O, the odd one at the begin unless SAME_UPPER") {
    ConvTransposeAttrs a = stride2();
    a.output_shape = {1, 5};  // total 2: b = e = 1
    CHECK(run_t({x123, k3}, a) == std::vector<float>{10, 102, 20, 203, 30});
    a.output_shape = {1, 6};  // total 1: NOTSET -> b = 1, e = 0 (ONNX: pads[start] = total - total / 2)
    CHECK(run_t({x123, k3}, a) == std::vector<float>{10, 102, 20, 203, 30, 300});
    a.pads = {0, 2, 0, 2};  // ignored when output_shape is given
    CHECK(run_t({x123, k3}, a) == std::vector<float>{10, 102, 20, 203, 30, 300});
    a.pads.clear();
    a.auto_pad = "SAME_UPPER";  // -> b = 0, e = 1
    CHECK(run_t({x123, k3}, a) == std::vector<float>{1, 10, 102, 20, 203, 30});
}

TEST_CASE("ConvTranspose auto_pad: SAME_* gives O = L*s, VALID crops nothing") {
    ConvTransposeAttrs a = stride2();
    a.auto_pad = "SAME_UPPER";
    CHECK(run_t({x123, k3}, a) == std::vector<float>{1, 10, 102, 20, 203, 30});
    a.auto_pad = "SAME_LOWER";
    CHECK(run_t({x123, k3}, a) == std::vector<float>{10, 102, 20, 203, 30, 300});
    a.auto_pad = "VALID";
    CHECK(run_t({x123, k3}, a) == std::vector<float>{1, 10, 102, 20, 203, 30, 300});
}

TEST_CASE("ConvTranspose weight order is [C_in, C_out/group, k..] (seed B2), groups pair input and output blocks") {
    const Tensor x = tf({1, 2, 1, 2}, {1, 2, 3, 4});  // c0 = [1, 2], c1 = [3, 4]
    const Tensor w = tf({2, 2, 1, 1}, {1, 2, 3, 4});  // W[ci][co]
    // group 1: y[co] = sum_ci W[ci][co] x[ci]  ->  co0 = 1 c0 + 3 c1, co1 = 2 c0 + 4 c1 (NOT 1 c0 + 2 c1)
    CHECK(run_t({x, w}, {}) == std::vector<float>{10, 14, 14, 20});
    // group 2: Cin_g = 1, Cout_g = 2, Cout = 4: output g*2 + co reads input g only, with W[g][co]
    ConvTransposeAttrs a;
    a.group = 2;
    CHECK(run_t({x, w}, a) == std::vector<float>{1, 2, 2, 4, 9, 12, 12, 16});
    auto t = ConvTranspose::infer(std::vector<TensorType>{type_of(x), type_of(w)}, a);
    REQUIRE(t.ok());
    CHECK(t->shape == Shape{1, 4, 1, 2});
}

TEST_CASE("ConvTranspose bias: added once per output channel") {
    CHECK(run_t({x123, tf({1, 1, 1, 1}, {2}), tf({1}, {0.5f})}, {}) == std::vector<float>{2.5f, 4.5f, 6.5f});
}

TEST_CASE("ConvTranspose 1-D and 3-D spatial") {
    ConvTransposeAttrs a;
    a.strides = {2};
    CHECK(run_t({tf({1, 1, 3}, {1, 2, 3}), tf({1, 1, 3}, {1, 10, 100})}, a) ==
          std::vector<float>{1, 10, 102, 20, 203, 30, 300});
    auto r = call<ConvTranspose>({tf({1, 1, 1, 1, 2}, {1, 2}), tf({1, 1, 2, 1, 1}, {1, 10})}, {});
    REQUIRE(r.ok());
    CHECK(r->shape() == Shape{1, 1, 2, 1, 2});
    CHECK(r->to_vector<float>() == std::vector<float>{1, 2, 10, 20});
}

TEST_CASE("ConvTranspose per-channel scales: axis 1 of W, output channel g*Cout_g + co uses s_w[co]") {
    const Tensor x = tq<std::int8_t>({1, 2, 1, 1}, {2, 4}, 1.0f, 0);
    // W [C_in = 2, Cout_g = 2, 1, 1], scales along axis 1: s_w = [0.5, 0.25]; real W = [[1, 1], [3, 3]]
    const Tensor w = tq_axis<std::int8_t>({2, 2, 1, 1}, {2, 4, 6, 12}, {0.5f, 0.25f}, {0, 0}, 1);
    ConvTransposeAttrs a;
    a.group = 2;
    const TensorType out{DType::i8, {1, 4, 1, 1}, numeric::make_quant(DType::i8, 0.5f, 0).value()};
    auto r = call<ConvTranspose>({x, w}, a, out);
    REQUIRE(r.ok());
    CHECK(ints<std::int8_t>(*r) == std::vector<int>{4, 4, 24, 24});  // real [2, 2, 12, 12]
    // bias: implied scale s_x s_w[co] = [0.5, 0.25, 0.5, 0.25]; b = [2, 4, -2, -4] is real [1, 1, -1, -1]
    auto rb = call<ConvTranspose>({x, w, bias_i32({2, 4, -2, -4})}, a, out);
    REQUIRE(rb.ok());
    CHECK(ints<std::int8_t>(*rb) == std::vector<int>{6, 6, 22, 22});
}

// ---- seeds B1 + B2: the group split -----------------------------------------------------------------------------

TEST_CASE("ConvTranspose group split cuts W by INPUT channels along axis 0 and keeps the axis-1 quantization") {
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> d8(-128, 127);
    std::vector<int> xv(1 * 6 * 3 * 4), wv(6 * 2 * 2 * 3);
    for (auto& v : xv) v = d8(rng);
    for (auto& v : wv) v = d8(rng);
    const Tensor x = tq<std::int8_t>({1, 6, 3, 4}, xv, 0.04f, 2);
    const Tensor w = tq_axis<std::int8_t>({6, 2, 2, 3}, wv, {0.01f, 0.03f}, {1, -1}, 1);
    const Tensor b = bias_i32({50, -70, 90, -110, 130, -150});
    ConvTransposeAttrs a;
    a.group = 3;
    a.strides = {2, 2};
    a.dilations = {1, 2};
    a.pads = {1, 0, 0, 1};
    a.output_padding = {1, 0};
    const std::vector<Tensor> in{x, w, b};
    TensorType out{DType::i8, ConvTranspose::infer(std::vector<TensorType>{type_of(x), type_of(w), type_of(b)}, a)
                                  .value()
                                  .shape,
                   numeric::make_quant(DType::i8, 0.2f, -4).value()};
    auto whole = call<ConvTranspose>(in, a, out);
    REQUIRE(whole.ok());
    auto pieces = split_conv_transpose_groups(in, a);
    REQUIRE(pieces.ok());
    REQUIRE(pieces->size() == 3);
    const std::int64_t plane = out.shape[2] * out.shape[3];
    std::vector<int> concat(static_cast<std::size_t>(whole->elements()), 999);
    for (const auto& p : *pieces) {
        CHECK(p.inputs[1].shape() == Shape{2, 2, 2, 3});  // [Cin_g, Cout_g, k..]: rows g*Cin_g.. of axis 0
        CHECK(p.inputs[1].quant == w.quant);              // indexed by co: the same for every group
        TensorType po = out;
        po.shape[1] = p.out_end - p.out_begin;
        auto y = call<ConvTranspose>(std::span<const Tensor>(p.inputs), p.attrs, po);
        REQUIRE(y.ok());
        const auto v = ints<std::int8_t>(*y);
        for (std::size_t i = 0; i < v.size(); ++i) concat[static_cast<std::size_t>(p.out_begin * plane) + i] = v[i];
    }
    CHECK(concat == ints<std::int8_t>(*whole));

    // Conv's dialect applied to ConvTranspose storage (cut W's axis 1 by output channels, or treat axis 0 as output
    // channels) gives other numbers: here Cin_g == Cout_g == 2, so the wrong cut even has a valid shape.
    bool differs = false;
    for (const auto& p : *pieces) {
        std::vector<Tensor> wrong = p.inputs;
        const std::int64_t g = p.out_begin / 2;
        // Conv's formula: W rows [g*Cout_g, (g+1)*Cout_g) of axis 0 are "the group's filters" -- the same rows here,
        // so take the transposed reading instead: each piece's [2, 2] block read as [co][ci].
        Tensor wt = Tensor::zeros(DType::i8, Shape{2, 2, 2, 3}, w.quant);
        for (std::int64_t ci = 0; ci < 2; ++ci)
            for (std::int64_t co = 0; co < 2; ++co)
                for (std::int64_t kh = 0; kh < 2; ++kh)
                    for (std::int64_t kw = 0; kw < 3; ++kw)
                        wt.set<std::int8_t>({ci, co, kh, kw}, w.at<std::int8_t>({g * 2 + co, ci, kh, kw}));
        wrong[1] = wt;
        TensorType po = out;
        po.shape[1] = 2;
        auto y = call<ConvTranspose>(std::span<const Tensor>(wrong), p.attrs, po);
        REQUIRE(y.ok());
        const auto v = ints<std::int8_t>(*y);
        for (std::size_t i = 0; i < v.size(); ++i)
            differs = differs || v[i] != concat[static_cast<std::size_t>(p.out_begin * plane) + i];
    }
    CHECK(differs);
    // Slicing the axis-1 scales by group (Conv's habit) is refused: 2 channels per piece, not 2/3 of them.
    std::vector<Tensor> cut = (*pieces)[1].inputs;
    cut[1].quant->scales = {0.03f};
    cut[1].quant->zero_points = {-1};
    TensorType po = out;
    po.shape[1] = 2;
    CHECK_RULE(call<ConvTranspose>(std::span<const Tensor>(cut), (*pieces)[1].attrs, po), "channels-match-extent");
}

TEST_CASE("ConvTranspose group split with per-channel scales that differ across co: forgetting them changes results") {
    // Per-tensor would be the "forgotten" quantization: the pieces must keep the per-co scales.
    const Tensor x = tq<std::int8_t>({1, 2, 1, 1}, {2, 4}, 1.0f, 0);
    const Tensor w = tq_axis<std::int8_t>({2, 2, 1, 1}, {2, 4, 6, 12}, {0.5f, 0.25f}, {0, 0}, 1);
    ConvTransposeAttrs a;
    a.group = 2;
    const std::vector<Tensor> in{x, w};
    auto pieces = split_conv_transpose_groups(in, a);
    REQUIRE(pieces.ok());
    const TensorType po{DType::i8, {1, 2, 1, 1}, numeric::make_quant(DType::i8, 0.5f, 0).value()};
    auto y1 = call<ConvTranspose>(std::span<const Tensor>((*pieces)[1].inputs), (*pieces)[1].attrs, po);
    REQUIRE(y1.ok());
    CHECK(ints<std::int8_t>(*y1) == std::vector<int>{24, 24});
    std::vector<Tensor> forgot = (*pieces)[1].inputs;
    forgot[1].quant = numeric::make_quant(DType::i8, 0.5f, 0).value();
    auto y2 = call<ConvTranspose>(std::span<const Tensor>(forgot), (*pieces)[1].attrs, po);
    REQUIRE(y2.ok());
    CHECK(ints<std::int8_t>(*y2) == std::vector<int>{24, 48});
}

// ---- bad inputs: one per rule ------------------------------------------------------------------------------------

TEST_CASE("ConvTranspose rules") {
    const Tensor x = tf({1, 4, 2, 2}, std::vector<float>(16, 1.0f));
    const Tensor w = tf({4, 1, 2, 2}, std::vector<float>(16, 1.0f));
    CHECK_RULE(call<ConvTranspose>({x}, {}), "input-count");
    CHECK_RULE(call<ConvTranspose>({tf({4, 4}, std::vector<float>(16, 0)), w}, {}), "conv-input-rank");
    CHECK_RULE(call<ConvTranspose>({x, tf({4, 1, 4}, std::vector<float>(16, 0))}, {}), "conv-weight-rank");
    CHECK_RULE(call<ConvTranspose>({x, tf({2, 2, 2, 2}, std::vector<float>(16, 0))}, {}),
               "conv-transpose-channels-match");
    ConvTransposeAttrs g3;
    g3.group = 3;
    CHECK_RULE(call<ConvTranspose>({x, w}, g3), "conv-channels-match-groups");
    ConvTransposeAttrs g0;
    g0.group = 0;
    CHECK_RULE(ConvTranspose::infer(std::vector<TensorType>{type_of(x), type_of(w)}, g0), "groups-positive");
    ConvTransposeAttrs k;
    k.kernel_shape = {3, 3};
    CHECK_RULE(call<ConvTranspose>({x, w}, k), "kernel-matches-weights");
    ConvTransposeAttrs op;
    op.strides = {2, 2};
    op.output_padding = {0, 2};
    CHECK_RULE(call<ConvTranspose>({x, w}, op), "output-padding-below-stride-or-dilation");
    ConvTransposeAttrs os;
    os.output_shape = {4};
    CHECK_RULE(call<ConvTranspose>({x, w}, os), "window-param-length");
    os.output_shape = {3, 4};  // full extent is 3
    CHECK_RULE(call<ConvTranspose>({x, w}, os), "conv-transpose-output-shape-reachable");
    ConvTransposeAttrs pads;
    pads.pads = {2, 0, 1, 0};  // full extent 3, crop 3
    CHECK_RULE(call<ConvTranspose>({x, w}, pads), "conv-transpose-output-nonempty");
    ConvTransposeAttrs ap;
    ap.auto_pad = "VALID";
    ap.pads = {0, 0, 0, 0};
    CHECK_RULE(call<ConvTranspose>({x, w}, ap), "pads-with-auto-pad");
    ConvTransposeAttrs big;
    big.strides = {1, 2147483647};
    CHECK_RULE(call<ConvTranspose>({tf({1, 1, 1, 3}, {1, 2, 3}), tf({1, 1, 1, 1}, {1})}, big),
               "conv-transpose-extent-fits");
    CHECK_RULE(call<ConvTranspose>({tf({1, 1, 1, 0}, {}), tf({1, 1, 1, 1}, {1})}, {}), "conv-transpose-input-nonempty");
    CHECK_RULE(call<ConvTranspose>({tf({1, 1, 1, 3}, {1, 2, 3}), tf({1, 1, 1, 0}, {})}, {}), "kernel-positive");
    // quantization: per-axis weights must be along axis 1 (C_out/group), the bias has the implied parameters
    const Tensor xq = tq<std::int8_t>({1, 2, 1, 1}, {1, 1}, 1.0f, 0);
    const Tensor w_axis0 = tq_axis<std::int8_t>({2, 2, 1, 1}, {1, 1, 1, 1}, {0.5f, 0.25f}, {0, 0}, 0);
    const TensorType out{DType::i8, {1, 2, 1, 1}, numeric::make_quant(DType::i8, 1.0f, 0).value()};
    CHECK_RULE(call<ConvTranspose>({xq, w_axis0}, {}, out), "weight-quant-axis");
    const Tensor w_axis1 = tq_axis<std::int8_t>({2, 2, 1, 1}, {1, 1, 1, 1}, {0.5f, 0.25f}, {0, 0}, 1);
    Tensor b = bias_i32({0, 0});
    b.quant = numeric::make_quant_per_axis(DType::i32, {0.25f, 0.5f}, {0, 0}, 0, Shape{2}).value();  // swapped
    CHECK_RULE(call<ConvTranspose>({xq, w_axis1, b}, {}, out), "bias-quant-implied");
    CHECK_RULE(call<ConvTranspose>({xq, w_axis1, bias_i32({0, 0, 0})}, {}, out), "bias-shape");
    CHECK_RULE(call<ConvTranspose>({xq, w_axis1}, {}), "output-quantization-required");
}
