// The `contract` primitive (conv and matmul accumulators, int8 operands with zero points, int32 sums): GOP/s =
// 2 x MACs / CPU time for four variants per shape:
//   Plain     a naive loop nest over the int8 data written here (zero-point subtraction, bounds tests): the baseline;
//   Reference run_*_contract with ContractOptions{.simd = false}: the primitive's plain reference loops;
//   Prepacked run_*_contract with the constant operand packed once (pack_conv_weights / pack_matmul_b);
//   PerCall   the plain API with SIMD: pre maps and packing of both operands on every call;
//   Workspace the prepacked overload with a ContractWorkspace: no per-call allocation (a simulator's loop).
// Run: cmake --preset bench -DJANUS_WERROR=OFF && cmake --build --preset bench --target janus_bench_contract -j1
//      ./build/bench/janus_bench_contract
#include <benchmark/benchmark.h>

#include "bench_tensors.hpp"

#include <cstdint>
#include <span>
#include <vector>

#include <janus/ops/contract.hpp>

namespace {

using namespace janus;
using namespace janus::ops;
using expr::In;

constexpr std::int32_t zp_x = -3;  // activation zero point: x - zp_x in [-125, 130]
constexpr std::int32_t zp_w = 2;   // weight zero point: w - zp_w in [-130, 125] (int16 panels)

struct ConvShape {
    Shape x, w;
    std::int64_t groups, pad;
};

const ConvShape conv3x3{{1, 32, 56, 56}, {32, 32, 3, 3}, 1, 1};
const ConvShape depthwise{{1, 32, 112, 112}, {32, 1, 3, 3}, 32, 1};
const ConvShape conv1x1{{1, 64, 56, 56}, {64, 64, 1, 1}, 1, 0};  // GEMM M = 3136 pixels, K = 64, N = 64

struct MatShape {
    std::int64_t M, K, N;
};
const MatShape gemm196{196, 512, 512};
const MatShape fc{1, 1024, 1000};

std::int64_t conv_macs(const ConvShape& s) {
    const std::int64_t oh = s.x[2] + 2 * s.pad - s.w[2] + 1, ow = s.x[3] + 2 * s.pad - s.w[3] + 1;
    return s.x[0] * s.w[0] * oh * ow * s.w[1] * s.w[2] * s.w[3];
}

ConvParams conv_params(const ConvShape& s) {
    ConvParams p;
    p.window = WindowParams{{}, {1, 1}, {1, 1}, {s.pad, s.pad}, {s.pad, s.pad}, false};
    p.groups = s.groups;
    return p;
}

void report(benchmark::State& state, std::int64_t macs) {
    state.counters["GOP/s"] =
        benchmark::Counter(static_cast<double>(2 * macs) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- the plain scalar loops (baseline) --------------------------------------------------------------------------------

void plain_conv(const std::int8_t* x, const std::int8_t* w, const std::int32_t* bias, std::int32_t* out,
                const ConvShape& s) {
    const std::int64_t C = s.x[1], H = s.x[2], W = s.x[3], CO = s.w[0], CIg = s.w[1], KH = s.w[2], KW = s.w[3];
    const std::int64_t OH = H + 2 * s.pad - KH + 1, OW = W + 2 * s.pad - KW + 1, COg = CO / s.groups;
    for (std::int64_t oc = 0; oc < CO; ++oc) {
        const std::int64_t g = oc / COg;
        for (std::int64_t oh = 0; oh < OH; ++oh)
            for (std::int64_t ow = 0; ow < OW; ++ow) {
                std::int32_t acc = bias[oc];
                for (std::int64_t ci = 0; ci < CIg; ++ci)
                    for (std::int64_t kh = 0; kh < KH; ++kh)
                        for (std::int64_t kw = 0; kw < KW; ++kw) {
                            const std::int64_t ih = oh - s.pad + kh, iw = ow - s.pad + kw;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                            acc += (x[((g * CIg + ci) * H + ih) * W + iw] - zp_x) *
                                   (w[((oc * CIg + ci) * KH + kh) * KW + kw] - zp_w);
                        }
                out[(oc * OH + oh) * OW + ow] = acc;
            }
    }
    (void)C;
}

void plain_matmul(const std::int8_t* a, const std::int8_t* b, const std::int32_t* bias, std::int32_t* out,
                  const MatShape& s) {
    for (std::int64_t m = 0; m < s.M; ++m)
        for (std::int64_t n = 0; n < s.N; ++n) {
            std::int32_t acc = bias[n];
            for (std::int64_t k = 0; k < s.K; ++k) acc += (a[m * s.K + k] - zp_x) * (b[k * s.N + n] - zp_w);
            out[m * s.N + n] = acc;
        }
}

// ---- benchmarks -------------------------------------------------------------------------------------------------------

const auto pre_x = expr::sub(expr::widen(In<0, std::int8_t>{}), expr::cst(zp_x));
const auto pre_w = expr::sub(expr::widen(In<0, std::int8_t>{}), expr::cst(zp_w));

enum Variant : int { plain = 0, reference = 1, prepacked = 2, per_call = 3, workspace = 4 };
constexpr const char* variant_names[] = {"plain scalar loop", "reference (simd=false)", "fast, prepacked",
                                         "fast, per call", "fast, prepacked + workspace"};

void conv_bench(benchmark::State& state, const ConvShape& s) {
    const auto v = static_cast<Variant>(state.range(0));
    const Tensor x = bench::random_tensor<std::int8_t>(s.x, std::nullopt, 1);
    const Tensor w = bench::random_tensor<std::int8_t>(s.w, std::nullopt, 2);
    std::vector<std::int32_t> bv(static_cast<std::size_t>(s.w[0]));
    for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<std::int32_t>(i * 37) - 500;
    const Tensor bias = Tensor::from<std::int32_t>({s.w[0]}, bv);
    const ConvParams p = conv_params(s);
    const auto packed = pack_conv_weights(pre_w, w).value();
    std::vector<std::int32_t> out(static_cast<std::size_t>(conv_macs(s) / (s.w[1] * s.w[2] * s.w[3])));
    ContractWorkspace ws;
    for (auto _ : state) {
        if (v == plain) {
            plain_conv(reinterpret_cast<const std::int8_t*>(x.data()), reinterpret_cast<const std::int8_t*>(w.data()),
                       bv.data(), out.data(), s);
            benchmark::DoNotOptimize(out.data());
            benchmark::ClobberMemory();
        } else if (v == prepacked || v == workspace) {
            auto r = run_conv_contract(pre_x, packed, x, &bias, p, {}, "contract", v == workspace ? &ws : nullptr);
            benchmark::DoNotOptimize(r);
        } else {
            auto r = run_conv_contract(pre_x, pre_w, x, w, &bias, p, ContractOptions{v == per_call});
            benchmark::DoNotOptimize(r);
        }
    }
    report(state, conv_macs(s));
    state.SetLabel(variant_names[v]);
}

void matmul_bench(benchmark::State& state, const MatShape& s) {
    const auto v = static_cast<Variant>(state.range(0));
    const Tensor a = bench::random_tensor<std::int8_t>({s.M, s.K}, std::nullopt, 3);
    const Tensor b = bench::random_tensor<std::int8_t>({s.K, s.N}, std::nullopt, 4);
    std::vector<std::int32_t> bv(static_cast<std::size_t>(s.N));
    for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<std::int32_t>(i * 37) - 500;
    const Tensor bias = Tensor::from<std::int32_t>({s.N}, bv);
    const auto packed = pack_matmul_b(pre_w, b).value();
    std::vector<std::int32_t> out(static_cast<std::size_t>(s.M * s.N));
    ContractWorkspace ws;
    for (auto _ : state) {
        if (v == plain) {
            plain_matmul(reinterpret_cast<const std::int8_t*>(a.data()), reinterpret_cast<const std::int8_t*>(b.data()),
                         bv.data(), out.data(), s);
            benchmark::DoNotOptimize(out.data());
            benchmark::ClobberMemory();
        } else if (v == prepacked || v == workspace) {
            auto r = run_matmul_contract(pre_x, packed, a, &bias, {}, "contract", v == workspace ? &ws : nullptr);
            benchmark::DoNotOptimize(r);
        } else {
            auto r = run_matmul_contract(pre_x, pre_w, a, b, &bias, ContractOptions{v == per_call});
            benchmark::DoNotOptimize(r);
        }
    }
    report(state, s.M * s.K * s.N);
    state.SetLabel(variant_names[v]);
}

void BM_Conv3x3_56x56x32to32(benchmark::State& s) { conv_bench(s, conv3x3); }
void BM_Depthwise3x3_112x112x32(benchmark::State& s) { conv_bench(s, depthwise); }
void BM_Conv1x1_M3136_K64_N64(benchmark::State& s) { conv_bench(s, conv1x1); }
void BM_Gemm_M196_K512_N512(benchmark::State& s) { matmul_bench(s, gemm196); }
void BM_FC_1x1024to1000(benchmark::State& s) { matmul_bench(s, fc); }

}  // namespace

// the reference path runs ~20-100x slower than the plain loop: one iteration is enough
#define JANUS_CONTRACT_BENCH(fn)                                                                         \
    BENCHMARK(fn)->Arg(plain)->Arg(workspace)->Arg(prepacked)->Arg(per_call)->Unit(benchmark::kMicrosecond); \
    BENCHMARK(fn)->Arg(reference)->Iterations(1)->Unit(benchmark::kMicrosecond)
JANUS_CONTRACT_BENCH(BM_Conv3x3_56x56x32to32);
JANUS_CONTRACT_BENCH(BM_Depthwise3x3_112x112x32);
JANUS_CONTRACT_BENCH(BM_Conv1x1_M3136_K64_N64);
JANUS_CONTRACT_BENCH(BM_Gemm_M196_K512_N512);
JANUS_CONTRACT_BENCH(BM_FC_1x1024to1000);
