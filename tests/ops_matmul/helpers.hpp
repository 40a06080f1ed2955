#pragma once
// Test helpers for MatMul / Gemm: tensor builders and checked calls. The references live in the test files and
// share nothing with include/janus/ops/matmul.hpp or contract.hpp (plain double loops over flat indices).
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include <janus/ops/matmul.hpp>
#include <support/check_rule.hpp>

namespace janus::test {

using namespace janus::ops;

inline numeric::QuantParams qp(DType d, float scale, std::int32_t zp) { return numeric::make_quant(d, scale, zp).value(); }
inline numeric::QuantParams qp_axis(DType d, std::vector<float> scales, std::vector<std::int32_t> zps,
                                    std::int64_t axis, const Shape& shape) {
    return numeric::make_quant_per_axis(d, std::move(scales), std::move(zps), axis, shape).value();
}

inline Tensor f32(const Shape& s, std::vector<float> v) { return Tensor::from<float>(s, v); }
inline Tensor i8(const Shape& s, std::vector<std::int8_t> v, numeric::QuantParams q) {
    return Tensor::from<std::int8_t>(s, v, std::move(q));
}
inline Tensor u8(const Shape& s, std::vector<std::uint8_t> v, numeric::QuantParams q) {
    return Tensor::from<std::uint8_t>(s, v, std::move(q));
}
inline Tensor i32(const Shape& s, std::vector<std::int32_t> v) { return Tensor::from<std::int32_t>(s, v); }

/// The output type of a quantized product: storage d, shape s, per-tensor (scale, zp).
inline TensorType qout(DType d, const Shape& s, float scale, std::int32_t zp) { return TensorType{d, s, qp(d, scale, zp)}; }

inline Result<Tensor> matmul(const Tensor& a, const Tensor& b, std::optional<TensorType> out = std::nullopt,
                             bool simd = true) {
    return call<MatMul>({a, b}, {}, std::move(out), OpContext{simd});
}
inline Result<Tensor> run_gemm(std::vector<Tensor> in, const GemmAttrs& at, std::optional<TensorType> out = std::nullopt,
                           bool simd = true) {
    return call<Gemm>(std::span<const Tensor>(in), at, std::move(out), OpContext{simd});
}

/// Values of a result in row-major order as int (int8/uint8) — the bytes a test compares.
inline std::vector<int> ints(const Tensor& t) {
    std::vector<int> r;
    if (t.dtype == DType::i8)
        for (auto v : t.to_vector<std::int8_t>()) r.push_back(v);
    else if (t.dtype == DType::u8)
        for (auto v : t.to_vector<std::uint8_t>()) r.push_back(v);
    else
        for (auto v : t.to_vector<std::int32_t>()) r.push_back(v);
    return r;
}

}  // namespace janus::test
