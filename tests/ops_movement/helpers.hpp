#pragma once
// Test helpers for the data-movement ops: tensor builders, checked calls, and plain references written from the
// ONNX definitions with nested index arithmetic (nothing shared with include/janus/layout or ops/index_map.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include <janus/ops/movement.hpp>
#include <support/check_rule.hpp>

namespace janus::test {

using ops::OpContext;
using ops::type_of;
using ops::TensorType;
using L = std::vector<std::int64_t>;

inline numeric::QuantParams qp(DType d, float scale, std::int32_t zp) { return numeric::make_quant(d, scale, zp).value(); }
inline numeric::QuantParams qp_axis(DType d, std::vector<float> scales, std::vector<std::int32_t> zps, std::int64_t axis,
                                    const Shape& shape) {
    return numeric::make_quant_per_axis(d, std::move(scales), std::move(zps), axis, shape).value();
}

/// 0, 1, 2, ... as T (wrapping into T's range for narrow types).
template <class T>
std::vector<T> iota_values(std::int64_t n, std::int64_t first = 0) {
    std::vector<T> v;
    for (std::int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<T, std::int8_t>) v.push_back(static_cast<T>(((first + i) % 256 + 256) % 256 - 128));
        else if constexpr (std::is_same_v<T, std::uint8_t>) v.push_back(static_cast<T>(((first + i) % 256 + 256) % 256));
        else v.push_back(static_cast<T>(first + i));
    }
    return v;
}
template <class T>
Tensor iota(const Shape& s, std::optional<numeric::QuantParams> q = std::nullopt) {
    return Tensor::from<T>(s, iota_values<T>(element_count(s)), std::move(q));
}

/// Random values of T over its whole range (fixed seed).
template <class T>
Tensor random_tensor(const Shape& s, std::uint32_t seed, std::optional<numeric::QuantParams> q = std::nullopt) {
    std::mt19937 g(seed);
    std::vector<T> v;
    for (std::int64_t i = 0; i < element_count(s); ++i) {
        if constexpr (std::is_same_v<T, float>) v.push_back(std::uniform_real_distribution<float>(-100, 100)(g));
        else v.push_back(static_cast<T>(std::uniform_int_distribution<std::int64_t>(
                 std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max())(g)));
    }
    return Tensor::from<T>(s, v, std::move(q));
}

template <class O>
Tensor run(std::initializer_list<Tensor> in, const typename O::Attrs& a = {}, std::optional<TensorType> out = std::nullopt,
           OpContext ctx = {}) {
    auto r = ops::call<O>(in, a, std::move(out), ctx);
    if (!r.ok()) FAIL(r.error().message());
    return r.value();
}
template <class O>
Tensor run_span(const std::vector<Tensor>& in, const typename O::Attrs& a, std::optional<TensorType> out = std::nullopt,
                OpContext ctx = {}) {
    auto r = ops::call<O>(std::span<const Tensor>(in), a, std::move(out), ctx);
    if (!r.ok()) FAIL(r.error().message());
    return r.value();
}

/// Row-major position of idx in shape, and the index of a row-major position (plain arithmetic).
inline std::int64_t flat(const Dims& idx, const Shape& shape) {
    std::int64_t f = 0;
    for (int k = 0; k < shape.size(); ++k) f = f * shape[k] + idx[k];
    return f;
}
inline Dims unflat(std::int64_t f, const Shape& shape) {
    Dims idx = Dims::filled(shape.size(), 0);
    for (int k = shape.size() - 1; k >= 0; --k) {
        idx[k] = f % shape[k];
        f /= shape[k];
    }
    return idx;
}

/// Same stored values (bytes), element by element in row-major order.
template <class T>
void check_same_values(const Tensor& a, const Tensor& b) {
    REQUIRE(a.shape() == b.shape());
    CHECK(a.to_vector<T>() == b.to_vector<T>());
}

/// Every element of a quantized `out` is within 1 LSB of round-half-even(real / s_out) + zp_out (saturated), where
/// real is the exact real value of the element `src_of(out index)` of `in`.
template <class To, class F>
void check_requantized(const Tensor& in, const Tensor& out, F src_of) {
    REQUIRE(out.quant);
    const auto n = out.elements();
    int worst = 0;
    for (std::int64_t f = 0; f < n; ++f) {
        const Dims o = unflat(f, out.shape());
        const double real = real_value_at(in, src_of(o));
        const std::size_t c = out.quant->per_tensor() ? 0 : static_cast<std::size_t>(o[*out.quant->axis]);
        double want = std::nearbyint(real / static_cast<double>(out.quant->scale(c))) + out.quant->zero_point(c);
        want = std::clamp(want, static_cast<double>(std::numeric_limits<To>::lowest()),
                          static_cast<double>(std::numeric_limits<To>::max()));
        const int got = static_cast<int>(out.at<To>(o));
        worst = std::max(worst, static_cast<int>(std::abs(got - want)));
    }
    CHECK(worst <= 1);
}

}  // namespace janus::test
