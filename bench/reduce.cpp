// Reductions (ReduceSum / ReduceMean / ReduceMax) of a 1x64x56x56 activation over the inner axis (horizontal: one
// accumulator per row, 56 reads each) and an outer axis (vertical: axis 1, 64 reads per output, SIMD across the row),
// int8 and float32, SIMD path vs the scalar reference path. Bytes/s counts the input bytes read.
// Run: cmake --preset bench && cmake --build --preset bench && ./build/bench/janus_bench_reduce
#include <benchmark/benchmark.h>

#include "bench_tensors.hpp"

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include <janus/ops/reduction.hpp>

namespace {

using namespace janus;

const Shape act{1, 64, 56, 56};
constexpr std::int64_t inner = 3, outer = 1;

using bench::random_tensor;

template <class O, class T>
void reduce(benchmark::State& state, std::int64_t axis) {
    const bool simd = state.range(0) != 0;
    std::optional<numeric::QuantParams> qa, qo;
    if constexpr (!std::is_same_v<T, float>) {
        qa = numeric::make_quant(DType::i8, 0.05f, -3).value();
        qo = numeric::make_quant(DType::i8, 0.4f, 2).value();
    }
    const Tensor x = random_tensor<T>(act, qa, 7);
    const ops::ReduceAttrs a{{axis}, 1, 0};
    Shape out_shape = act;
    out_shape[static_cast<int>(axis)] = 1;
    const ops::TensorType out{dtype_v<T>, out_shape, qo};
    for (auto _ : state) {
        auto y = ops::call<O>({x}, a, out, ops::OpContext{simd});
        benchmark::DoNotOptimize(y);
    }
    state.SetItemsProcessed(state.iterations() * element_count(act));
    state.SetBytesProcessed(state.iterations() * element_count(act) * static_cast<std::int64_t>(sizeof(T)));
    state.SetLabel(simd ? "simd" : "scalar");
}

void BM_ReduceSumInt8Inner(benchmark::State& s) { reduce<ops::ReduceSum, std::int8_t>(s, inner); }
void BM_ReduceSumInt8Outer(benchmark::State& s) { reduce<ops::ReduceSum, std::int8_t>(s, outer); }
void BM_ReduceMeanInt8Inner(benchmark::State& s) { reduce<ops::ReduceMean, std::int8_t>(s, inner); }
void BM_ReduceMeanInt8Outer(benchmark::State& s) { reduce<ops::ReduceMean, std::int8_t>(s, outer); }
void BM_ReduceMaxInt8Inner(benchmark::State& s) { reduce<ops::ReduceMax, std::int8_t>(s, inner); }
void BM_ReduceMaxInt8Outer(benchmark::State& s) { reduce<ops::ReduceMax, std::int8_t>(s, outer); }
void BM_ReduceSumFloatInner(benchmark::State& s) { reduce<ops::ReduceSum, float>(s, inner); }
void BM_ReduceSumFloatOuter(benchmark::State& s) { reduce<ops::ReduceSum, float>(s, outer); }
void BM_ReduceMeanFloatInner(benchmark::State& s) { reduce<ops::ReduceMean, float>(s, inner); }
void BM_ReduceMeanFloatOuter(benchmark::State& s) { reduce<ops::ReduceMean, float>(s, outer); }
void BM_ReduceMaxFloatInner(benchmark::State& s) { reduce<ops::ReduceMax, float>(s, inner); }
void BM_ReduceMaxFloatOuter(benchmark::State& s) { reduce<ops::ReduceMax, float>(s, outer); }

}  // namespace

BENCHMARK(BM_ReduceSumInt8Inner)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceSumInt8Outer)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceMeanInt8Inner)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceMeanInt8Outer)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceMaxInt8Inner)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceMaxInt8Outer)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceSumFloatInner)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceSumFloatOuter)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceMeanFloatInner)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceMeanFloatOuter)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceMaxFloatInner)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceMaxFloatOuter)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
