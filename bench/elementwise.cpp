// Elementwise and broadcast kernels: bytes/s and elements/s, SIMD path vs the scalar reference path.
// Run: cmake --preset bench && cmake --build --preset bench && ./build/bench/janus_bench_elementwise
#include <benchmark/benchmark.h>

#include "bench_tensors.hpp"

#include <random>
#include <string>
#include <vector>

#include <janus/ops/binary.hpp>
#include <janus/ops/unary.hpp>

namespace {

using namespace janus;

using bench::random_tensor;

const Shape act{1, 64, 56, 56};
const Shape per_channel{1, 64, 1, 1};

/// range(0): 1 SIMD, 0 scalar; range(1) when given: the rounding (numeric::Rounding: 0 double, 1 single,
/// 2 half-even; the run-time choice of docs/numerics.md "Rounding as a choice").
template <class O, class T>
void binary(benchmark::State& state, const Shape& b_shape) {
    const bool simd = state.range(0) != 0;
    const auto rounding = static_cast<numeric::Rounding>(state.range(1));
    std::optional<numeric::QuantParams> qa, qb, qo;
    if constexpr (!std::is_same_v<T, float>) {
        qa = numeric::make_quant(DType::i8, 0.05f, -3).value();
        qb = numeric::make_quant(DType::i8, 0.02f, 7).value();
        qo = numeric::make_quant(DType::i8, 0.08f, 1).value();
    }
    const Tensor a = random_tensor<T>(act, qa, 1), b = random_tensor<T>(b_shape, qb, 2);
    const ops::TensorType out{dtype_v<T>, act, qo};
    for (auto _ : state) {
        auto y = ops::call<O>({a, b}, {}, out, ops::OpContext{simd, rounding});
        benchmark::DoNotOptimize(y);
    }
    state.SetItemsProcessed(state.iterations() * element_count(act));
    state.SetBytesProcessed(state.iterations() * element_count(act) * static_cast<std::int64_t>(sizeof(T)) * 3);
    state.SetLabel(std::string(simd ? "simd" : "scalar") + ", rounding " +
                   std::string(numeric::rounding_name(rounding)));
}

template <class O, class T>
void unary(benchmark::State& state) {
    const bool simd = state.range(0) != 0;
    std::optional<numeric::QuantParams> qa, qo;
    if constexpr (!std::is_same_v<T, float>) {
        qa = numeric::make_quant(DType::i8, 0.05f, -3).value();
        qo = numeric::make_quant(DType::i8, 1.0f / 256, -128).value();
    }
    const Tensor a = random_tensor<T>(act, qa, 3);
    const ops::TensorType out{dtype_v<T>, act, qo};
    for (auto _ : state) {
        auto y = ops::call<O>({a}, {}, out, ops::OpContext{simd});
        benchmark::DoNotOptimize(y);
    }
    state.SetItemsProcessed(state.iterations() * element_count(act));
    state.SetBytesProcessed(state.iterations() * element_count(act) * static_cast<std::int64_t>(sizeof(T)) * 2);
    state.SetLabel(simd ? "simd" : "scalar");
}

void BM_AddInt8(benchmark::State& s) { binary<ops::Add, std::int8_t>(s, act); }
void BM_AddInt8BroadcastChannel(benchmark::State& s) { binary<ops::Add, std::int8_t>(s, per_channel); }
void BM_MulInt8(benchmark::State& s) { binary<ops::Mul, std::int8_t>(s, act); }
void BM_AddFloat(benchmark::State& s) { binary<ops::Add, float>(s, act); }
void BM_AddFloatBroadcastChannel(benchmark::State& s) { binary<ops::Add, float>(s, per_channel); }
void BM_SigmoidInt8(benchmark::State& s) { unary<ops::Sigmoid, std::int8_t>(s); }
void BM_SigmoidFloat(benchmark::State& s) { unary<ops::Sigmoid, float>(s); }
void BM_ReluFloat(benchmark::State& s) { unary<ops::Relu, float>(s); }

}  // namespace

BENCHMARK(BM_AddInt8)->ArgsProduct({{0, 1}, {0, 1, 2}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AddInt8BroadcastChannel)->Args({0, 0})->Args({1, 0})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MulInt8)->ArgsProduct({{0, 1}, {0, 1, 2}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AddFloat)->Args({0, 0})->Args({1, 0})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AddFloatBroadcastChannel)->Args({0, 0})->Args({1, 0})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SigmoidInt8)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SigmoidFloat)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReluFloat)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
