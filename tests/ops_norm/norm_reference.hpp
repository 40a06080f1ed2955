#pragma once
// Plain references of the normalization tests: "dequantize, float op in double, quantize", written without any
// Janus primitive (nested loops over flat row-major indices).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <janus/ops/norm.hpp>

namespace norm_test {

using namespace janus;
using namespace janus::ops;

inline numeric::QuantParams quant(DType d, float s, std::int32_t zp) { return numeric::make_quant(d, s, zp).value(); }

/// Real values of a tensor in row-major order.
inline std::vector<double> reals(const Tensor& t) {
    std::vector<double> v;
    for_each_index(t.shape(), [&](const Dims& i) { v.push_back(real_value_at(t, i)); });
    return v;
}

/// clamp(round_half_even(v / s) + zp) of the quantization q.
inline std::int32_t quantize_ref(double v, const numeric::QuantParams& q) {
    const double r = std::nearbyint(v / q.scale()) + q.zero_point();
    return static_cast<std::int32_t>(std::clamp(r, static_cast<double>(qmin(q.dtype)),
                                                static_cast<double>(qmax(q.dtype))));
}

/// Integer codes of a quantized tensor (int8 or uint8) as int32, row-major.
inline std::vector<std::int32_t> codes(const Tensor& t) {
    std::vector<std::int32_t> v;
    if (t.dtype == DType::i8)
        for (auto x : t.to_vector<std::int8_t>()) v.push_back(x);
    else
        for (auto x : t.to_vector<std::uint8_t>()) v.push_back(x);
    return v;
}

inline bool same_bytes(const Tensor& a, const Tensor& b) {
    const Tensor x = a.clone(), y = b.clone();
    return x.storage->size() == y.storage->size() &&
           std::memcmp(x.storage->data(), y.storage->data(), x.storage->size()) == 0;
}

/// Group normalization reference in double: x viewed as [rows, inner]; gamma/beta indexed by `param(row, k)`.
template <class P>
std::vector<double> normalize_ref(const std::vector<double>& x, std::int64_t rows, std::int64_t inner, double eps,
                                  const std::vector<float>& gamma, const std::vector<float>& beta, P param) {
    std::vector<double> y(x.size());
    for (std::int64_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (std::int64_t k = 0; k < inner; ++k) mean += x[static_cast<std::size_t>(r * inner + k)];
        mean /= static_cast<double>(inner);
        for (std::int64_t k = 0; k < inner; ++k) {
            const double d = x[static_cast<std::size_t>(r * inner + k)] - mean;
            var += d * d;
        }
        var /= static_cast<double>(inner);
        for (std::int64_t k = 0; k < inner; ++k) {
            const auto i = static_cast<std::size_t>(r * inner + k);
            const auto j = static_cast<std::size_t>(param(r, k));
            y[i] = (x[i] - mean) / std::sqrt(var + eps) * gamma[j] + beta[j];
        }
    }
    return y;
}

template <class T>
Tensor random_codes(const Shape& s, std::mt19937& rng, const numeric::QuantParams& q, int lo = -1000, int hi = 1000) {
    const int a = std::max(lo, static_cast<int>(qmin(q.dtype)));
    const int b = std::min(hi, static_cast<int>(qmax(q.dtype)));
    std::uniform_int_distribution<int> d(a, b);
    std::vector<T> v(static_cast<std::size_t>(element_count(s)));
    for (auto& e : v) e = static_cast<T>(d(rng));
    return Tensor::from<T>(s, v, q);
}

inline std::vector<float> uniform(std::size_t n, float lo, float hi, std::mt19937& rng) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& e : v) e = d(rng);
    return v;
}

inline Tensor vec(const std::vector<float>& v) {
    return Tensor::from<float>(Shape{static_cast<std::int64_t>(v.size())}, v);
}

}  // namespace norm_test
