#pragma once
// Deterministic random tensors for the benchmarks (values uniform in [-4, 4) for float, the full int8 range else).
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include <janus/ops/tensor.hpp>

namespace janus::bench {

template <class T>
Tensor random_tensor(const Shape& s, std::optional<numeric::QuantParams> q, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<T> v(static_cast<std::size_t>(element_count(s)));
    if constexpr (std::is_same_v<T, float>) {
        std::uniform_real_distribution<float> d(-4.0f, 4.0f);
        for (auto& x : v) x = d(rng);
    } else {
        std::uniform_int_distribution<int> d(-128, 127);
        for (auto& x : v) x = static_cast<T>(d(rng));
    }
    return Tensor::from<T>(s, v, std::move(q));
}

}  // namespace janus::bench
