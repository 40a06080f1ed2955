// Tiny CNN: a quantized image classifier run on Janus' host reference kernels, checked stage by stage against each
// op's documented error bound and end to end against the same network in float32.
//
//   x float [1,3,16,16] -> QuantizeLinear int8
//     -> Conv 3x3 pad 1, 3 -> 8 channels, per-channel weight scales, int32 bias -> Relu -> MaxPool 2x2 stride 2
//     -> Conv 3x3 pad 1 depthwise (group 8), per-channel weights -> GlobalAveragePool -> Flatten
//     -> Gemm 8 -> 10 with bias -> Softmax -> DequantizeLinear -> probabilities [1,10]
//
// The weights are random int8 codes with their own scales (as a QDQ model would give them); the float network uses
// exactly the dequantized weights and biases, so the only differences are activation rounding. Activation scales
// are calibrated from the float network on the same input (max |value| / 127), as a post-training quantizer would.
// Checks: every stage against "dequantize its input, float op, quantize" within the op's documented bound
// (docs/numerics.md), the SIMD and scalar paths byte for byte at every stage, and the same top class as the float
// network; the end-to-end probability difference is printed. Exit code 0 when every check passes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <janus/ops/conv.hpp>
#include <janus/ops/matmul.hpp>
#include <janus/ops/movement.hpp>
#include <janus/ops/pool.hpp>
#include <janus/ops/quantize.hpp>
#include <janus/ops/softmax.hpp>
#include <janus/ops/unary.hpp>

using namespace janus;

namespace {

constexpr int C_in = 3, C1 = 8, classes = 10, H = 16;

/// One weight tensor: int8 codes, their scales (per output channel or per tensor) and the dequantized float copy.
struct Weights {
    Tensor q, f;
    std::vector<float> scales;
};

Weights random_weights(std::mt19937& rng, const Shape& shape, std::vector<float> scales, bool per_channel_axis0) {
    std::uniform_int_distribution<int> code(-127, 127);
    const std::int64_t n = element_count(shape);
    const std::int64_t rows = per_channel_axis0 ? shape[0] : 1;
    std::vector<std::int8_t> q(static_cast<std::size_t>(n));
    std::vector<float> f(q.size());
    for (std::int64_t i = 0; i < n; ++i) {
        const auto u = static_cast<std::size_t>(i);
        const std::size_t r = per_channel_axis0 ? static_cast<std::size_t>(i / (n / rows)) : 0;
        q[u] = static_cast<std::int8_t>(code(rng));
        f[u] = scales[r] * static_cast<float>(q[u]);
    }
    Weights w;
    w.scales = scales;
    auto qp = per_channel_axis0 ? numeric::make_quant_per_axis(DType::i8, scales, {}, 0, shape, "weights")
                                : numeric::make_quant(DType::i8, scales[0], 0);
    w.q = Tensor::from<std::int8_t>(shape, q, qp.value());
    w.f = Tensor::from<float>(shape, f);
    return w;
}

/// A bias in accumulator units (int32, scale s_in * s_w[c], zero point 0) and its exact float value.
struct Bias {
    Tensor q, f;
};

Bias random_bias(std::mt19937& rng, float s_in, const std::vector<float>& s_w, std::int64_t n) {
    std::uniform_int_distribution<int> code(-2000, 2000);
    std::vector<std::int32_t> q(static_cast<std::size_t>(n));
    std::vector<float> f(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) {
        q[i] = code(rng);
        const double s = static_cast<double>(s_in) * static_cast<double>(s_w[s_w.size() == 1 ? 0 : i]);
        f[i] = static_cast<float>(s * q[i]);
    }
    return {Tensor::from<std::int32_t>(Shape{n}, q), Tensor::from<float>(Shape{n}, f)};
}

float max_abs(const Tensor& t) {
    float m = 0;
    for (float v : t.to_vector<float>()) m = std::max(m, std::fabs(v));
    return m;
}

struct Network {
    float s_x = 1.0f / 128;
    Weights w1, wd, wg;
    Bias b1, bd, bg;
    // activation quantization (calibrated)
    numeric::QuantParams q_c1, q_dw, q_gap, q_logits, q_prob;

    static ops::ConvAttrs conv3x3(std::int64_t group) {
        ops::ConvAttrs a;
        a.pads = {1, 1, 1, 1};
        a.group = group;
        return a;
    }
    static ops::MaxPoolAttrs pool2x2() {
        ops::MaxPoolAttrs a;
        a.kernel_shape = {2, 2};
        a.strides = {2, 2};
        return a;
    }

    /// Stage k of the float network (k = 1..8: conv1, relu, pool, depthwise, gap, flatten, gemm, softmax).
    Result<Tensor> float_stage(int k, const Tensor& in) const {
        switch (k) {
            case 1: return ops::call<ops::Conv>({in, w1.f, b1.f}, conv3x3(1));
            case 2: return ops::call<ops::Relu>({in});
            case 3: return ops::call<ops::MaxPool>({in}, pool2x2());
            case 4: return ops::call<ops::Conv>({in, wd.f, bd.f}, conv3x3(C1));
            case 5: return ops::call<ops::GlobalAveragePool>({in});
            case 6: return ops::call<ops::Flatten>({in});
            case 7: return ops::call<ops::Gemm>({in, wg.f, bg.f});
            default: return ops::call<ops::Softmax>({in});
        }
    }

    /// The float network; returns the input and every stage's output.
    Result<std::vector<Tensor>> run_float(const Tensor& x) const {
        std::vector<Tensor> s{x};
        for (int k = 1; k <= 8; ++k) {
            JANUS_TRY(Tensor y, float_stage(k, s.back()));
            s.push_back(std::move(y));
        }
        return s;
    }

    /// The quantized network; returns the quantized input and every stage's quantized output.
    Result<std::vector<Tensor>> run_quantized(const Tensor& x, const ops::OpContext& ctx) const {
        const auto as = [](const Tensor& like, const numeric::QuantParams& q) {
            return ops::TensorType{DType::i8, like.shape(), q};
        };
        ops::QuantizeLinear::Attrs qa;
        qa.scale = {s_x};
        qa.zero_point = {0};
        qa.dtype = "int8";
        JANUS_TRY(Tensor xq, ops::call<ops::QuantizeLinear>({x}, qa, std::nullopt, ctx));
        JANUS_TRY(Tensor c1, ops::call<ops::Conv>({xq, w1.q, b1.q}, conv3x3(1),
                                                  ops::TensorType{DType::i8, Shape{1, C1, H, H}, q_c1}, ctx));
        // Relu keeps the conv's quantization: on that grid it is exact (a table of max(q, zp)).
        JANUS_TRY(Tensor r, ops::call<ops::Relu>({c1}, {}, as(c1, q_c1), ctx));
        JANUS_TRY(Tensor p, ops::call<ops::MaxPool>({r}, pool2x2(), std::nullopt, ctx));  // a selection keeps q_c1
        JANUS_TRY(Tensor d, ops::call<ops::Conv>({p, wd.q, bd.q}, conv3x3(C1), as(p, q_dw), ctx));
        JANUS_TRY(Tensor g, ops::call<ops::GlobalAveragePool>(
                                {d}, {}, ops::TensorType{DType::i8, Shape{1, C1, 1, 1}, q_gap}, ctx));
        JANUS_TRY(Tensor fl, ops::call<ops::Flatten>({g}, {}, std::nullopt, ctx));
        JANUS_TRY(Tensor lg, ops::call<ops::Gemm>({fl, wg.q, bg.q}, {},
                                                  ops::TensorType{DType::i8, Shape{1, classes}, q_logits}, ctx));
        JANUS_TRY(Tensor pr, ops::call<ops::Softmax>({lg}, {}, as(lg, q_prob), ctx));
        return std::vector<Tensor>{xq, c1, r, p, d, g, fl, lg, pr};
    }
};

/// The int8 codes of a quantized tensor.
std::vector<int> codes(const Tensor& t) {
    std::vector<int> v;
    for (std::int8_t c : t.to_vector<std::int8_t>()) v.push_back(c);
    return v;
}

}  // namespace

int main() {
    std::mt19937 rng(2026);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const Shape shape{1, C_in, H, H};
    std::vector<float> xv(static_cast<std::size_t>(element_count(shape)));
    for (auto& v : xv) v = dist(rng);
    const Tensor x = Tensor::from<float>(shape, xv);

    Network net;
    std::vector<float> s1, sd;
    for (int c = 0; c < C1; ++c) {
        s1.push_back(0.002f + 0.0005f * static_cast<float>(c));  // per-channel weight scales differ
        sd.push_back(0.003f + 0.0004f * static_cast<float>(C1 - c));
    }
    net.w1 = random_weights(rng, Shape{C1, C_in, 3, 3}, s1, true);
    net.wd = random_weights(rng, Shape{C1, 1, 3, 3}, sd, true);
    net.wg = random_weights(rng, Shape{C1, classes}, {0.01f}, false);
    net.b1 = random_bias(rng, net.s_x, s1, C1);

    // Calibrate activation scales on the float network. The depthwise conv's and the Gemm's biases are in units of
    // their input scales, so calibrate stage by stage.
    const auto calibrate = [](float m) {
        return numeric::make_quant(DType::i8, std::max(m, 1e-3f) / 127.0f, 0).value();
    };
    net.bd = {Tensor::from<std::int32_t>(Shape{C1}, std::vector<std::int32_t>(C1, 0)),
              Tensor::zeros(DType::f32, Shape{C1})};
    net.bg = {Tensor::from<std::int32_t>(Shape{classes}, std::vector<std::int32_t>(classes, 0)),
              Tensor::zeros(DType::f32, Shape{classes})};
    auto pass = net.run_float(x);
    if (!pass.ok()) {
        std::fprintf(stderr, "%s\n", pass.error().message().c_str());
        return 1;
    }
    net.q_c1 = calibrate(max_abs((*pass)[1]));
    net.bd = random_bias(rng, net.q_c1.scale(), sd, C1);
    pass = net.run_float(x);
    if (!pass.ok()) return 1;
    net.q_dw = calibrate(max_abs((*pass)[4]));
    net.q_gap = calibrate(max_abs((*pass)[5]));
    net.bg = random_bias(rng, net.q_gap.scale(), {0.01f}, classes);
    pass = net.run_float(x);
    if (!pass.ok()) return 1;
    net.q_logits = calibrate(max_abs((*pass)[7]));
    net.q_prob = numeric::make_quant(DType::i8, 1.0f / 256, -128).value();  // TFLite's softmax output

    auto sq = net.run_quantized(x, ops::OpContext{true});
    auto sq_scalar = net.run_quantized(x, ops::OpContext{false});
    for (const auto* r : {&sq, &sq_scalar})
        if (!r->ok()) {
            std::fprintf(stderr, "%s\n", r->error().message().c_str());
            return 1;
        }
    bool same = true;
    for (std::size_t k = 0; k < sq->size(); ++k) same = same && codes((*sq)[k]) == codes((*sq_scalar)[k]);

    // Stage by stage: each quantized op against "dequantize its quantized input, run the float op, quantize (round
    // half to even, saturate)", within the bound docs/numerics.md states for the op.
    const char* names[] = {"",        "Conv 3x3", "Relu",   "MaxPool", "Conv depthwise", "GlobalAveragePool",
                           "Flatten", "Gemm",     "Softmax"};
    const int bound[] = {0, 1, 0, 0, 1, 1, 0, 1, 1};  // LSB; Relu/MaxPool/Flatten on an unchanged grid are exact
    bool stages_ok = true;
    std::printf("stage              outputs  max |diff| (LSB)  bound\n");
    for (int k = 1; k <= 8; ++k) {
        auto in_f = ops::call<ops::DequantizeLinear>({(*sq)[static_cast<std::size_t>(k - 1)]});
        auto ref = in_f.ok() ? net.float_stage(k, *in_f) : Result<Tensor>(in_f.error());
        if (!ref.ok()) {
            std::fprintf(stderr, "%s\n", ref.error().message().c_str());
            return 1;
        }
        const Tensor& y = (*sq)[static_cast<std::size_t>(k)];
        const auto& q = *y.quant;
        const auto got = codes(y);
        const auto exact = ref->to_vector<float>();
        int worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            const double r =
                std::nearbyint(static_cast<double>(exact[i]) / static_cast<double>(q.scale())) + q.zero_point();
            worst = std::max(worst, static_cast<int>(std::fabs(got[i] - std::clamp(r, -128.0, 127.0))));
        }
        stages_ok = stages_ok && worst <= bound[k];
        std::printf("%-18s %7zu  %16d  %5d\n", names[k], got.size(), worst, bound[k]);
    }

    auto yq = ops::call<ops::DequantizeLinear>({sq->back()});
    if (!yq.ok()) return 1;
    const auto q = yq->to_vector<float>();
    const auto f = (*pass)[8].to_vector<float>();
    std::printf("\nclass  quantized  float32\n");
    double worst = 0;
    for (std::size_t c = 0; c < f.size(); ++c) {
        worst = std::max(worst, std::fabs(static_cast<double>(q[c]) - f[c]));
        std::printf("%5zu  %9.4f  %7.4f\n", c, static_cast<double>(q[c]), static_cast<double>(f[c]));
    }
    const auto top = [](const std::vector<float>& v) { return std::max_element(v.begin(), v.end()) - v.begin(); };
    std::printf("largest probability difference from the float network: %.4f (%.1f output LSB of 1/256)\n", worst,
                worst * 256);
    std::printf("top class: quantized %td, float %td\n", top(q), top(f));
    std::printf("every stage within its documented bound: %s\n", stages_ok ? "yes" : "NO");
    std::printf("SIMD and scalar paths identical at every stage: %s\n", same ? "yes" : "NO");
    return same && stages_ok && top(q) == top(f) ? 0 : 1;
}
