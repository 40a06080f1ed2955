// Emitted kernel quality (issue 5): simulated cycles of emitted kernels against the lower bound of the timing model,
//   bound = max(MACs / 256, tensor bytes moved by DMA / 16, VEC elements / 16, LUT elements / 16)  cycles,
// as counters: sim_cycles, bound_cycles, utilization = bound / simulated (1.0 = at the bound). The host time per
// iteration is emission + simulation.
//   EwAdd/N    Add of two int8 tensors of N elements (vec.ew.add): 3N bytes moved
//   LutSig/N   Sigmoid (lut.apply, its 256-entry table loaded once): 2N bytes moved
//   EwChain/N/mode  the chain Add(x, y) -> Sigmoid -> Mul(., z), kernel barriers between its kernels: three kernels
//              with the two intermediates in DRAM scratch (mode 0: 8N bytes moved) or kept in LMEM (mode 1: 4N
//              bytes), or the Sigmoid fused into the Add's kernel and its result kept in LMEM (mode 2: two kernels,
//              4N bytes; what graph/lower.hpp makes of the chain); counter dma_bytes
//   Matmul/M/K/N  quantized MatMul (mac.mm + vec.rq), per-column weight scales: M K N MACs, MK + KN + MN bytes;
//              FC 1024 -> 1000 (M = 1) and the 1x1 conv 56x56x64 -> 64 as a matmul (M = 3136)
//   Depthwise/H/C/s  3x3 depthwise conv, stride s (pad 1; stride 2: pads 0 0 1 1, as TF 'SAME'), on VEC (vec.mac per tap, vec.rq per row): the MAC array is idle, so the
//              bound is VEC's: (9 + 1) H H C / 16 cycles (it exceeds the DMA's 2 H H C / 16 and MACs / 256)
//   MatmulLeft/M/K/N  the weight on the left (seed B12), W [M, K] x X [K, N]: a channels-first 1x1 conv
//   MaxPool/H/C/k/s  k x k / s max pool on VEC (vec.max over rows and taps, strided store)
//   GlobalAvgPool/H/C  vec.acc tiles, halving, the host's epilogue
//   Conv/H/C/Co/k/s  kxk conv, pad k/2, stride s, on the MAC array (implicit im2col: one mac.mm per tap over an
//              M tile of output rows): MACs = Ho Wo Co C k k; bytes = H W Cp + Ho Wo Cop + k k C Co
// Sizes are MobileNet-like: 28x28x32, 56x56x24 (the V2 residual adds), 112x112x32.
// Run: cmake --preset bench -DJANUS_WERROR=OFF && cmake --build --preset bench --target janus_bench_emit_kernels
//      ./build/bench/janus_bench_emit_kernels
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <janus/emit/conv.hpp>
#include <janus/emit/depthwise.hpp>
#include <janus/emit/elementwise.hpp>
#include <janus/emit/matmul.hpp>
#include <janus/emit/pool.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/pool.hpp>
#include <janus/ops/unary.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace {

using namespace janus;

numeric::QuantParams q8(float scale, std::int32_t zp) { return numeric::make_quant(DType::i8, scale, zp).value(); }

/// Emit with `lower(builder)`, run on `m` (input and output regions prepared by the caller), report the counters.
/// `dma`, when given, gets the run's DMA bytes.
template <class Lower>
void run_kernel(benchmark::State& state, vnpu::sim::Machine& m, double bound, Lower&& lower,
                std::uint64_t* dma = nullptr) {
    std::uint64_t cycles = 0;
    for (auto _ : state) {
        emit::Builder b("bench");
        if (!lower(b).ok()) {
            state.SkipWithError("lowering failed");
            return;
        }
        auto p = b.finish();
        m.dram[0] = p->weights;
        const auto r = vnpu::sim::run(p->code, m);
        if (r.fault || !r.races.empty()) {
            state.SkipWithError("fault or race");
            return;
        }
        cycles = r.cycles;
        if (dma) *dma = r.dma_bytes;
        benchmark::DoNotOptimize(m.dram[3].data());
    }
    state.counters["sim_cycles"] = static_cast<double>(cycles);
    state.counters["bound_cycles"] = bound;
    state.counters["utilization"] = bound / static_cast<double>(cycles);
}

/// A machine whose input region holds `inputs` bytes and output region `outputs` bytes.
vnpu::sim::Machine machine(std::int64_t inputs, std::int64_t outputs) {
    vnpu::sim::Machine m;
    m.dram[2].assign(static_cast<std::size_t>(inputs), 3);
    m.dram[3].resize(static_cast<std::size_t>(outputs));
    return m;
}

void EwAdd(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    const ops::TensorType types[2] = {{DType::i8, Shape{n}, q8(0.1f, 3)}, {DType::i8, Shape{n}, q8(0.07f, -2)}};
    const auto plan =
        ops::Add::plan(types, {}, {DType::i8, Shape{n}, q8(0.15f, 1)}, janus::numeric::default_rounding_mode).value();
    const double bound = std::max(3.0 * static_cast<double>(n) / 16, static_cast<double>(n) / 16);
    const std::int64_t padded = (n + 15) / 16 * 16;
    auto m = machine(2 * padded, padded);
    run_kernel(state, m, bound, [&](emit::Builder& b) {
        return emit::lower_binary<expr::BinOp::add>(b, plan, {2, 0, n}, {2, static_cast<std::uint32_t>(padded), n},
                                                    {3, 0, n});
    });
}
BENCHMARK(EwAdd)->Arg(28 * 28 * 32)->Arg(56 * 56 * 24)->Arg(112 * 112 * 32)->Unit(benchmark::kMicrosecond);

void LutSig(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    const ops::TensorType x{DType::i8, Shape{n}, q8(0.1f, 0)};
    const auto table = ops::Sigmoid::plan(std::span(&x, 1), ops::NoAttrs{}, {DType::i8, Shape{n}, q8(1.0f / 256, -128)},
                                          janus::numeric::default_rounding_mode)
                           .value();
    const double bound = 2.0 * static_cast<double>(n) / 16;
    auto m = machine((n + 15) / 16 * 16, (n + 15) / 16 * 16);
    run_kernel(state, m, bound, [&](emit::Builder& b) { return emit::lower_lut(b, *table, {2, 0, n}, {3, 0, n}); });
}
BENCHMARK(LutSig)->Arg(28 * 28 * 32)->Arg(56 * 56 * 24)->Arg(112 * 112 * 32)->Unit(benchmark::kMicrosecond);

void EwChain(benchmark::State& state) {
    const std::int64_t n = state.range(0), p = (n + 15) / 16 * 16;
    const std::int64_t mode = state.range(1);
    const bool kept = mode != 0;
    const auto r = janus::numeric::default_rounding_mode;
    const auto type = [&](numeric::QuantParams q) { return ops::TensorType{DType::i8, Shape{n}, q}; };
    const ops::TensorType add_in[2] = {type(q8(0.1f, 3)), type(q8(0.07f, -2))}, sig_in[1] = {type(q8(0.15f, 1))},
                          mul_in[2] = {type(q8(1.0f / 256, -128)), type(q8(0.05f, 4))};
    const auto add = ops::Add::plan(add_in, {}, sig_in[0], r).value();
    const auto sig = ops::Sigmoid::plan(sig_in, ops::NoAttrs{}, mul_in[0], r).value();
    const auto mul = ops::Mul::plan(mul_in, {}, type(q8(0.02f, 0)), r).value();
    auto m = machine(3 * p, p);
    m.dram[1].resize(static_cast<std::size_t>(2 * p));
    const double bound = (kept ? 4.0 : 8.0) * static_cast<double>(n) / 16;
    std::uint64_t dma = 0;
    run_kernel(
        state, m, bound,
        [&](emit::Builder& b) -> Status {
            JANUS_TRY(emit::KernelBarrier barrier, emit::KernelBarrier::make(b));
            emit::Buffer s1, s2;
            emit::DramTensor t1{1, 0, n}, t2{1, static_cast<std::uint32_t>(p), n};
            if (kept) {
                JANUS_TRY(s1, b.alloc(emit::Mem::lmem, static_cast<std::uint32_t>(p), "s1"));
                JANUS_TRY(s2, b.alloc(emit::Mem::lmem, static_cast<std::uint32_t>(p), "s2"));
                t1 = {emit::lmem_region, s1.address(), n}, t2 = {emit::lmem_region, s2.address(), n};
            }
            const auto u = [](std::int64_t x) { return static_cast<std::uint32_t>(x); };
            if (mode == 2) {  // one kernel for Add and Sigmoid: the table on each tile
                JANUS_CHECK(emit::lower_binary<expr::BinOp::add>(b, add, {2, 0, n}, {2, u(p), n}, t2, {}, *sig));
            } else {
                JANUS_CHECK(emit::lower_binary<expr::BinOp::add>(b, add, {2, 0, n}, {2, u(p), n}, t1));
                JANUS_CHECK(barrier.emit(b));
                JANUS_CHECK(emit::lower_lut(b, *sig, t1, t2));
            }
            JANUS_CHECK(barrier.emit(b));
            JANUS_CHECK(emit::lower_binary<expr::BinOp::mul>(b, mul, t2, {2, u(2 * p), n}, {3, 0, n}));
            s1.release(), s2.release();
            barrier.release();
            return ok_status();
        },
        &dma);
    state.counters["dma_bytes"] = static_cast<double>(dma);
}
BENCHMARK(EwChain)
    ->Args({28 * 28 * 32, 0})
    ->Args({28 * 28 * 32, 1})
    ->Args({28 * 28 * 32, 2})
    ->Args({56 * 56 * 16, 0})
    ->Args({56 * 56 * 16, 1})
    ->Args({56 * 56 * 16, 2})
    ->Unit(benchmark::kMicrosecond);

void Matmul(benchmark::State& state) {
    const std::int64_t M = state.range(0), K = state.range(1), N = state.range(2);
    const std::int64_t Kp = (K + 15) / 16 * 16, Np = (N + 15) / 16 * 16;
    std::vector<float> scales(static_cast<std::size_t>(N));
    for (std::size_t i = 0; i < scales.size(); ++i) scales[i] = 0.01f + 0.0001f * static_cast<float>(i % 37);
    const ops::TensorType types[2] = {
        {DType::i8, Shape{M, K}, q8(0.05f, 3)},
        {DType::i8, Shape{K, N},
         numeric::make_quant_per_axis(DType::i8, scales, std::vector<std::int32_t>(scales.size(), 0), 1, Shape{K, N})
             .value()}};
    const auto plan = ops::MatMul::plan(types, {}, ops::TensorType{DType::i8, Shape{M, N}, q8(0.5f, 0)}, janus::numeric::default_rounding_mode).value();
    std::vector<std::int8_t> w(static_cast<std::size_t>(K * N), 5);
    const double macs = static_cast<double>(M * K * N);
    const double bytes = static_cast<double>(M * K + K * N + M * N);
    const double bound = std::max(macs / 256, bytes / 16);
    auto m = machine(M * Kp, M * Np);
    run_kernel(state, m, bound, [&](emit::Builder& b) {
        return emit::lower_matmul(b, plan, {2, 0, M, K, Kp}, w, K, N, {3, 0, M, N, Np});
    });
}

/// Conv's own plan for int8 x [1, C, H, H] (zero point 3) and w [Co, C / group, k, k]: M = s_x s_w (s_y = 1).
ops::ConvPlan conv_plan(std::int64_t C, std::int64_t H, std::int64_t Co, std::int64_t k, const ops::Conv::Attrs& a,
                        float sx, float sw) {
    const ops::TensorType types[2] = {{DType::i8, Shape{1, C, H, H}, q8(sx, 3)},
                                      {DType::i8, Shape{Co, C / a.group, k, k}, q8(sw, 0)}};
    const Shape out = ops::Conv::infer(types, a).value().shape;
    return ops::Conv::plan(types, a, {DType::i8, out, q8(1.0f, 0)}, numeric::default_rounding_mode).value();
}

void Depthwise(benchmark::State& state) {
    const std::int64_t H = state.range(0), C = state.range(1), st = state.range(2);
    ops::Conv::Attrs a;
    a.group = C, a.strides = {st, st}, a.pads = {st == 1 ? 1 : 0, st == 1 ? 1 : 0, 1, 1};
    const ops::ConvPlan plan = conv_plan(C, H, C, 3, a, 1.0f / 16, 1.0f / 32);  // M = 2^-9
    const std::int64_t Ho = plan.geometry.out_shape[2];
    const std::vector<std::int8_t> w(static_cast<std::size_t>(C * 9), 2);
    const double bound = 10.0 * static_cast<double>(Ho * Ho * C) / 16;  // 9 taps + 1 vec.rq per output element
    auto m = machine(H * H * C, Ho * Ho * C);
    run_kernel(state, m, bound, [&](emit::Builder& b) {
        return emit::lower_depthwise(b, plan, {2, 0, H, H, C, C}, w, {}, {3, 0, Ho, Ho, C, C});
    });
}
BENCHMARK(Depthwise)
    ->Args({112, 32, 1})
    ->Args({56, 144, 1})
    ->Args({112, 96, 2})
    ->Args({56, 144, 2})
    ->Unit(benchmark::kMicrosecond);

void Conv(benchmark::State& state) {
    const std::int64_t H = state.range(0), C = state.range(1), Co = state.range(2), k = state.range(3),
                       s = state.range(4), p = k / 2;
    ops::Conv::Attrs a;
    a.strides = {s, s}, a.pads = {p, p, p, p};
    const ops::ConvPlan plan = conv_plan(C, H, Co, k, a, 1.0f / 64, 1.0f / 128);  // M = 2^-13
    const std::int64_t Cp = emit::round16(C), Cop = emit::round16(Co), Ho = plan.geometry.out_shape[2];
    const std::vector<std::int8_t> w(static_cast<std::size_t>(Co * C * k * k), 2);
    const double macs = static_cast<double>(Ho * Ho * Co * C * k * k);
    const double bytes = static_cast<double>(H * H * Cp + Ho * Ho * Cop + k * k * C * Co);
    const double bound = std::max(macs / 256, bytes / 16);
    auto m = machine(H * H * Cp, Ho * Ho * Cop);
    run_kernel(state, m, bound, [&](emit::Builder& b) {
        return emit::lower_conv(b, plan, {2, 0, H, H, C, Cp}, w, {}, {3, 0, Ho, Ho, Co, Cop});
    });
}
BENCHMARK(Conv)
    ->Args({28, 128, 128, 3, 1})
    ->Args({56, 64, 64, 1, 1})
    ->Args({14, 256, 256, 3, 1})
    ->Args({224, 3, 32, 3, 2})
    ->Unit(benchmark::kMicrosecond);

/// Y = W X, the weight on the left (seed B12): W [M, K] per-row scales, X [K, N] activations (a channels-first 1x1
/// conv: M = Cout, K = Cin, N = H W).
void MatmulLeft(benchmark::State& state) {
    const std::int64_t M = state.range(0), K = state.range(1), N = state.range(2);
    const std::int64_t Np = emit::round16(N);
    std::vector<float> scales(static_cast<std::size_t>(M));
    for (std::size_t i = 0; i < scales.size(); ++i) scales[i] = 0.01f + 0.0001f * static_cast<float>(i % 37);
    const ops::TensorType types[2] = {
        {DType::i8, Shape{M, K},
         numeric::make_quant_per_axis(DType::i8, scales, std::vector<std::int32_t>(scales.size(), 0), 0, Shape{M, K})
             .value()},
        {DType::i8, Shape{K, N}, q8(0.05f, 3)}};
    const auto plan = ops::MatMul::plan(types, {}, ops::TensorType{DType::i8, Shape{M, N}, q8(0.5f, 0)}, janus::numeric::default_rounding_mode).value();
    std::vector<std::int8_t> w(static_cast<std::size_t>(M * K), 5);
    const double bound =
        std::max(static_cast<double>(M * K * N) / 256, static_cast<double>(M * K + K * N + M * N) / 16);
    auto m = machine(K * Np, M * Np);
    run_kernel(state, m, bound, [&](emit::Builder& b) {
        return emit::lower_matmul_left(b, plan, w, M, K, {2, 0, K, N, Np}, {3, 0, M, N, Np});
    });
}
BENCHMARK(MatmulLeft)->Args({128, 128, 784})->Args({64, 64, 3136})->Unit(benchmark::kMicrosecond);

/// MaxPool k x k / s on H x H x C (the input bytes are the DMA bound: every output row's window rows are loaded).
void MaxPool(benchmark::State& state) {
    const std::int64_t H = state.range(0), C = state.range(1), k = state.range(2), s = state.range(3);
    ops::MaxPool::Attrs a;
    a.kernel_shape = {k, k}, a.strides = {s, s}, a.pads = {k / 2, k / 2, k / 2, k / 2};
    const ops::TensorType in{DType::i8, Shape{1, C, H, H}, q8(0.05f, 3)};
    const auto shape = ops::MaxPool::infer(std::span<const ops::TensorType>(&in, 1), a).value().shape;
    const ops::TensorType out{DType::i8, shape, q8(0.05f, 3)};
    const auto plan = ops::MaxPool::plan(std::array{in}, a, out, janus::numeric::default_rounding_mode).value();
    const std::int64_t Ho = shape[2];
    const double bound = std::max(static_cast<double>(H * H * C + Ho * Ho * C) / 16,
                                  static_cast<double>(Ho * Ho * C * k * k) / 16 / 2);  // VEC: separable max
    auto m = machine(H * H * C, Ho * Ho * C);
    run_kernel(state, m, bound, [&](emit::Builder& b) {
        return emit::lower_max_pool(b, plan, {2, 0, H, H, C, C}, {3, 0, Ho, Ho, C, C});
    });
}
BENCHMARK(MaxPool)->Args({112, 64, 3, 2})->Args({56, 64, 3, 2})->Unit(benchmark::kMicrosecond);

/// GlobalAveragePool on H x H x C: the DMA moves H H C bytes.
void GlobalAvgPool(benchmark::State& state) {
    const std::int64_t H = state.range(0), C = state.range(1);
    const ops::TensorType in{DType::i8, Shape{1, C, H, H}, q8(0.05f, 3)},
        out{DType::i8, Shape{1, C, 1, 1}, q8(0.02f, 0)};
    const auto plan = ops::GlobalAveragePool::plan(std::array{in}, {}, out, janus::numeric::default_rounding_mode).value();
    const double bound = static_cast<double>(H * H * C) / 16;
    auto m = machine(H * H * C, C);
    run_kernel(state, m, bound, [&](emit::Builder& b) {
        return emit::lower_global_average_pool(b, plan, {2, 0, H, H, C, C}, {3, 0, 1, 1, C, C});
    });
}
BENCHMARK(GlobalAvgPool)->Args({7, 1280})->Args({14, 512})->Unit(benchmark::kMicrosecond);

BENCHMARK(Matmul)
    ->Args({1, 1024, 1000})
    ->Args({56 * 56, 64, 64})
    ->Args({28 * 28, 128, 128})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
