// Quickstart: a small quantized network run on Janus' host reference kernels, checked against the same network
// in float32.
//
//   x (float [1,8,6,6]) -> QuantizeLinear int8 -> Add per-channel bias [1,8,1,1] -> HardSwish
//     -> Transpose to NHWC -> ReduceMean over H, W (keepdims=0) -> DequantizeLinear -> y (float [1,8])
//
// Every quantized tensor has its own scale and zero point (as a QDQ model would give them). The program prints the
// quantized and float results, the largest difference in output LSBs, and checks that the SIMD and scalar paths
// agree byte for byte. Exit code 0 when all checks pass.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <janus/ops/binary.hpp>
#include <janus/ops/movement.hpp>
#include <janus/ops/quantize.hpp>
#include <janus/ops/reduction.hpp>
#include <janus/ops/unary.hpp>

using namespace janus;

namespace {

struct Network {
    Tensor bias_q, bias_f;
    numeric::QuantParams add_q, act_q, mean_q;

    Result<Tensor> run_quantized(const Tensor& x, const ops::OpContext& ctx) const {
        ops::QuantizeLinear::Attrs qa;
        qa.scale = {0.025f};
        qa.zero_point = {0};
        qa.dtype = "int8";
        JANUS_TRY(Tensor xq, ops::call<ops::QuantizeLinear>({x}, qa, std::nullopt, ctx));
        JANUS_TRY(Tensor a, ops::call<ops::Add>({xq, bias_q}, {}, ops::TensorType{DType::i8, xq.shape(), add_q}, ctx));
        JANUS_TRY(Tensor h, ops::call<ops::HardSwish>({a}, {}, ops::TensorType{DType::i8, a.shape(), act_q}, ctx));
        ops::Transpose::Attrs ta;
        ta.perm = {0, 2, 3, 1};
        JANUS_TRY(Tensor t, ops::call<ops::Transpose>({h}, ta, std::nullopt, ctx));
        ops::ReduceAttrs ra;
        ra.axes = {1, 2};
        ra.keepdims = 0;
        JANUS_TRY(Tensor m, ops::call<ops::ReduceMean>({t}, ra, ops::TensorType{DType::i8, Shape{1, 8}, mean_q}, ctx));
        return ops::call<ops::DequantizeLinear>({m}, {}, std::nullopt, ctx);
    }

    Result<Tensor> run_float(const Tensor& x) const {
        JANUS_TRY(Tensor a, ops::call<ops::Add>({x, bias_f}));
        JANUS_TRY(Tensor h, ops::call<ops::HardSwish>({a}));
        ops::Transpose::Attrs ta;
        ta.perm = {0, 2, 3, 1};
        JANUS_TRY(Tensor t, ops::call<ops::Transpose>({h}, ta));
        ops::ReduceAttrs ra;
        ra.axes = {1, 2};
        ra.keepdims = 0;
        return ops::call<ops::ReduceMean>({t}, ra);
    }
};

}  // namespace

int main() {
    std::mt19937 rng(2026);
    std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
    const Shape shape{1, 8, 6, 6};
    std::vector<float> xv(static_cast<std::size_t>(element_count(shape)));
    for (auto& v : xv) v = dist(rng);
    const Tensor x = Tensor::from<float>(shape, xv);

    Network net;
    std::vector<std::int8_t> bq(8);
    std::vector<float> bf(8);
    for (int c = 0; c < 8; ++c) {
        bq[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c * 25 - 90);  // real = 0.01 * q
        bf[static_cast<std::size_t>(c)] = 0.01f * static_cast<float>(bq[static_cast<std::size_t>(c)]);
    }
    net.bias_q = Tensor::from<std::int8_t>(Shape{1, 8, 1, 1}, bq, numeric::make_quant(DType::i8, 0.01f, 0).value());
    net.bias_f = Tensor::from<float>(Shape{1, 8, 1, 1}, bf);
    net.add_q = numeric::make_quant(DType::i8, 0.04f, -10).value();
    net.act_q = numeric::make_quant(DType::i8, 0.03f, -100).value();
    net.mean_q = numeric::make_quant(DType::i8, 0.02f, -50).value();

    auto yq = net.run_quantized(x, ops::OpContext{true});
    auto yq_scalar = net.run_quantized(x, ops::OpContext{false});
    auto yf = net.run_float(x);
    for (const auto* r : {&yq, &yq_scalar, &yf})
        if (!r->ok()) {
            std::fprintf(stderr, "%s\n", r->error().message().c_str());
            return 1;
        }
    const auto q = yq->to_vector<float>();
    const auto qs = yq_scalar->to_vector<float>();
    const auto f = yf->to_vector<float>();
    std::printf("channel  quantized  float32    diff(LSB)\n");
    double worst = 0;
    for (std::size_t c = 0; c < f.size(); ++c) {
        const double lsb = std::fabs(static_cast<double>(q[c]) - f[c]) / net.mean_q.scale();
        worst = std::max(worst, lsb);
        std::printf("%7zu  %9.4f  %9.4f  %6.2f\n", c, static_cast<double>(q[c]), static_cast<double>(f[c]), lsb);
    }
    const bool same = std::memcmp(q.data(), qs.data(), q.size() * sizeof(float)) == 0;
    std::printf("largest difference: %.2f LSB of the output scale %.3g\n", worst, static_cast<double>(net.mean_q.scale()));
    std::printf("SIMD and scalar paths identical: %s\n", same ? "yes" : "NO");
    // Worst-case error budget, stage by stage (each quantized result is within 1 LSB of its exact value: half an LSB
    // of rounding plus at most half an LSB from fixed-point rescaling; docs/numerics.md):
    const double e_x = 0.025 / 2;                          // QuantizeLinear rounds half to even
    const double e_add = e_x + net.add_q.scale();          // bias is exact in int8; Add rescales and rounds
    const double e_act = 1.5 * e_add + net.act_q.scale();  // HardSwish has slope <= 1.5; its table rounds once
    const double e_mean = e_act + net.mean_q.scale();      // a mean does not amplify; it rounds once more
    const double budget = e_mean / net.mean_q.scale();
    const bool close = worst <= budget;
    std::printf("within the worst-case error budget of %.2f LSB: %s\n", budget, close ? "yes" : "NO");
    return same && close ? 0 : 1;
}
