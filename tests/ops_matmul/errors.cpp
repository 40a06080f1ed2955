// MatMul and Gemm: every refusal, by rule name (CHECK_RULE: a named input, the rule, a sentence).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "helpers.hpp"

using namespace janus;
using namespace janus::test;

namespace {
const Tensor fa = f32({2, 3}, {1, 2, 3, 4, 5, 6});
const Tensor fb = f32({3, 2}, {1, 2, 3, 4, 5, 6});
Tensor qa(const Shape& s = {2, 3}) { return Tensor::zeros(DType::i8, s, qp(DType::i8, 0.5f, 1)); }
Tensor qb(const Shape& s = {3, 2}) { return Tensor::zeros(DType::i8, s, qp(DType::i8, 0.25f, -2)); }
TensorType out22(float s = 1.0f) { return qout(DType::i8, {2, 2}, s, 0); }
}  // namespace

TEST_CASE("input-count: MatMul takes 2 inputs, Gemm 2 or 3") {
    CHECK_RULE(call<MatMul>({fa}), "input-count");
    CHECK_RULE(run_gemm({fa}, {}), "input-count");
    CHECK_RULE(run_gemm({fa, fb, f32({2}, {0, 0}), f32({2}, {0, 0})}, {}), "input-count");
}

TEST_CASE("float-or-quantized: an operand must be float32 or quantized int8/uint8") {
    CHECK_RULE(matmul(i32({2, 3}, {1, 2, 3, 4, 5, 6}), fb), "float-or-quantized");
    CHECK_RULE(run_gemm({fa, i32({3, 2}, {1, 2, 3, 4, 5, 6})}, {}), "float-or-quantized");
}

TEST_CASE("quantized-input: int8 storage without quantization parameters is not a quantized operand") {
    CHECK_RULE(matmul(Tensor::zeros(DType::i8, {2, 3}), qb()), "quantized-input");
}

TEST_CASE("same-kind-operands: float32 and quantized operands are never mixed") {
    CHECK_RULE(matmul(fa, qb()), "same-kind-operands");
    CHECK_RULE(run_gemm({qa(), fb}, {}), "same-kind-operands");
}

TEST_CASE("quant-dtype-matches: the quantization dtype must be the storage dtype") {
    Tensor a = qa();
    a.quant = qp(DType::u8, 0.5f, 1);
    CHECK_RULE(matmul(a, qb()), "quant-dtype-matches");
}

TEST_CASE("matmul-rank-at-least-1: MatMul refuses a scalar operand") {
    CHECK_RULE(matmul(f32({}, {1}), fb), "matmul-rank-at-least-1");
    CHECK_RULE(matmul(fa, f32({}, {1})), "matmul-rank-at-least-1");
}

TEST_CASE("matmul-inner-dims-match: K of both operands (after promotion / transposes)") {
    CHECK_RULE(matmul(fa, f32({2, 2}, {1, 2, 3, 4})), "matmul-inner-dims-match");
    CHECK_RULE(matmul(f32({2}, {1, 2}), fb), "matmul-inner-dims-match");  // [1, 2] x [3, 2]
    CHECK_RULE(run_gemm({fa, fa}, {}), "matmul-inner-dims-match");
    CHECK(run_gemm({fa, fa}, GemmAttrs{1, 1, 0, 1}).ok());  // transB makes K agree
    CHECK_RULE(run_gemm({fa, fb}, GemmAttrs{1, 1, 1, 0}), "matmul-inner-dims-match");
}

TEST_CASE("broadcast-compatible: MatMul batch axes follow numpy broadcasting") {
    CHECK_RULE(matmul(Tensor::zeros(DType::f32, {2, 2, 3}), Tensor::zeros(DType::f32, {3, 3, 2})),
               "broadcast-compatible");
}

TEST_CASE("matmul-a-quant-axis: the left operand is per-tensor or per-row, never per-K or per-batch") {
    const Shape s{2, 3};
    Tensor a = qa(s);
    a.quant = qp_axis(DType::i8, {1, 1, 1}, {0, 0, 0}, 1, s);  // along K
    CHECK_RULE(matmul(a, qb(), out22()), "matmul-a-quant-axis");
    const Shape s3{2, 2, 3};
    Tensor ab = qa(s3);
    ab.quant = qp_axis(DType::i8, {1, 1}, {0, 0}, 0, s3);  // along the batch axis
    CHECK_RULE(matmul(ab, qb(), qout(DType::i8, {2, 2, 2}, 1, 0)), "matmul-a-quant-axis");
    // 1-D left operand: its only axis is K
    Tensor a1 = qa({3});
    a1.quant = qp_axis(DType::i8, {1, 1, 1}, {0, 0, 0}, 0, Shape{3});
    CHECK_RULE(matmul(a1, qb(), qout(DType::i8, {2}, 1, 0)), "matmul-a-quant-axis");
    // Gemm: with transA the stored axis 0 is K of A'
    Tensor at = qa({3, 2});
    at.quant = qp_axis(DType::i8, {1, 1, 1}, {0, 0, 0}, 0, Shape{3, 2});
    CHECK_RULE(run_gemm({at, qb()}, GemmAttrs{1, 1, 1, 0}, out22()), "matmul-a-quant-axis");
}

TEST_CASE("matmul-b-quant-axis: the right operand is per-tensor or per-column, never per-K or per-batch") {
    const Shape s{3, 2};
    Tensor b = qb(s);
    b.quant = qp_axis(DType::i8, {1, 1, 1}, {0, 0, 0}, 0, s);  // along K
    CHECK_RULE(matmul(qa(), b, out22()), "matmul-b-quant-axis");
    Tensor b1 = qb({3});
    b1.quant = qp_axis(DType::i8, {1, 1, 1}, {0, 0, 0}, 0, Shape{3});
    CHECK_RULE(matmul(qa(), b1, qout(DType::i8, {2}, 1, 0)), "matmul-b-quant-axis");
    // Gemm with transB: stored [N, K] along axis 1 is K of B'
    Tensor bt = qb({2, 3});
    bt.quant = qp_axis(DType::i8, {1, 1, 1}, {0, 0, 0}, 1, Shape{2, 3});
    CHECK_RULE(run_gemm({qa(), bt}, GemmAttrs{1, 1, 0, 1}, out22()), "matmul-b-quant-axis");
}

TEST_CASE("one-per-axis-operand: per-row A and per-column B together are refused") {
    Tensor a = qa();
    a.quant = qp_axis(DType::i8, {1, 2}, {0, 0}, 0, Shape{2, 3});
    Tensor b = qb();
    b.quant = qp_axis(DType::i8, {1, 2}, {0, 0}, 1, Shape{3, 2});
    CHECK_RULE(matmul(a, b, out22()), "one-per-axis-operand");
    CHECK_RULE(run_gemm({a, b}, {}, out22()), "one-per-axis-operand");
}

TEST_CASE("channels-match-extent: per-axis parameters must fit the operand (checked before any kernel)") {
    Tensor a = qa();
    a.quant = numeric::QuantParams{DType::i8, {1, 1, 1}, {0, 0, 0}, 0};  // 3 scales for an axis of extent 2
    CHECK_RULE(matmul(a, qb(), out22()), "channels-match-extent");
}

TEST_CASE("output rules: the caller's per-tensor int8/uint8 quantization of the product's shape and left dtype") {
    const Tensor in[2] = {qa(), qb()};
    const std::span<const Tensor> s(in);
    CHECK_RULE(matmul(qa(), qb(), TensorType{DType::i8, {2, 2}, std::nullopt}), "output-quantization-required");
    CHECK_RULE(matmul(qa(), qb(), TensorType{DType::i8, {2, 2}, qp_axis(DType::i8, {1, 1}, {0, 0}, 1, Shape{2, 2})}),
               "per-tensor-quantization");
    CHECK_RULE(MatMul::run(s, {}, qout(DType::i8, {2, 3}, 1, 0), {}), "output-shape");
    CHECK_RULE(MatMul::run(s, {}, TensorType{DType::f32, {2, 2}, std::nullopt}, {}), "quantized-output");
    CHECK_RULE(MatMul::run(s, {}, qout(DType::u8, {2, 2}, 1, 0), {}), "output-dtype");
    const Tensor fin[2] = {fa, fb};
    CHECK_RULE(MatMul::run(fin, {}, TensorType{DType::f32, {3, 3}, std::nullopt}, {}), "output-shape");
    CHECK_RULE(MatMul::run(fin, {}, qout(DType::i8, {2, 2}, 1, 0), {}), "output-dtype");
    CHECK_RULE(Gemm::run(fin, {}, TensorType{DType::f32, {2, 3}, std::nullopt}, {}), "output-shape");
    CHECK_RULE(Gemm::run(s, {}, qout(DType::u8, {2, 2}, 1, 0), {}), "output-dtype");
    CHECK_RULE(call<MatMul>({qa(), qb()}, {}, qout(DType::u8, {2, 2}, 1, 0)), "output-type-matches-inference");
}

TEST_CASE("ratio-below-2^30: |alpha| s_a s_b / s_y must be representable") {
    CHECK_RULE(matmul(qa(), qb(), out22(1e-10f)), "ratio-below-2^30");
    CHECK_RULE(run_gemm({qa(), qb()}, GemmAttrs{1e30f, 1, 0, 0}, out22()), "ratio-below-2^30");
}

TEST_CASE("accumulator-fits-int32: K products of (a - zp_a)(b - zp_b) must fit int32 (proved, seed A5)") {
    // a - 127 in [-255, 0], b + 128 in [0, 255]: products in [-65025, 0], at most 33,025 of them fit int32.
    const std::int64_t K = 33026;
    const Tensor a = Tensor::zeros(DType::i8, {1, K}, qp(DType::i8, 1, 127));
    const Tensor b = Tensor::zeros(DType::i8, {K, 1}, qp(DType::i8, 1, -128));
    CHECK(matmul(Tensor::zeros(DType::i8, {1, K - 1}, qp(DType::i8, 1, 127)),
                 Tensor::zeros(DType::i8, {K - 1, 1}, qp(DType::i8, 1, -128)), qout(DType::i8, {1, 1}, 1, 0))
              .ok());
    CHECK_RULE(matmul(a, b, qout(DType::i8, {1, 1}, 1, 0)), "accumulator-fits-int32");
}

TEST_CASE("requantize-left-shift-fits-int32: per-channel ratios too far apart for one clamp limit") {
    // Row 0's ratio 4e-8 needs no clamp below 2^31 (L = 2^31 - 1); row 1's ratio 4 shifts left by 3. With K = 5000,
    // a - 127 in [-255, 0] and b + 128 in [0, 255]: acc reaches -5000 * 255 * 255 = -3.25e8, and -3.25e8 * 2^3
    // leaves int32.
    const std::int64_t K = 5000;
    const Shape as{2, K};
    const Tensor a = Tensor::zeros(DType::i8, as, qp_axis(DType::i8, {1e-8f, 1.0f}, {127, 127}, 0, as));
    const Tensor b = Tensor::zeros(DType::i8, {K, 1}, qp(DType::i8, 1, -128));
    CHECK_RULE(matmul(a, b, qout(DType::i8, {2, 1}, 0.25f, 0)), "requantize-left-shift-fits-int32");
    // The same shapes with per-tensor scales: the clamp bounds the shift input and the product is accepted.
    const Tensor ap = Tensor::zeros(DType::i8, as, qp(DType::i8, 1, 127));
    CHECK(matmul(ap, b, qout(DType::i8, {2, 1}, 0.25f, 0)).ok());
}

TEST_CASE("intermediate-fits-int32: acc + C must fit int32 (the range of C's values is used)") {
    const Tensor c = i32({1}, {std::numeric_limits<std::int32_t>::max() - 10});
    CHECK_RULE(run_gemm({qa({1, 3}), qb({3, 1}), c}, {}, qout(DType::i8, {1, 1}, 1, 0)), "intermediate-fits-int32");
}

TEST_CASE("gemm-rank-2: Gemm operands are matrices") {
    CHECK_RULE(run_gemm({Tensor::zeros(DType::f32, {1, 2, 3}), fb}, {}), "gemm-rank-2");
    CHECK_RULE(run_gemm({fa, f32({3}, {1, 2, 3})}, {}), "gemm-rank-2");
}

TEST_CASE("attribute-range: transA / transB are 0 or 1, alpha and beta finite") {
    CHECK_RULE(run_gemm({fa, fb}, GemmAttrs{1, 1, 2, 0}), "attribute-range");
    CHECK_RULE(run_gemm({fa, fb}, GemmAttrs{1, 1, 0, -1}), "attribute-range");
    CHECK_RULE(run_gemm({fa, fb}, GemmAttrs{std::numeric_limits<float>::infinity(), 1, 0, 0}), "attribute-range");
    CHECK_RULE(run_gemm({fa, fb}, GemmAttrs{1, std::numeric_limits<float>::quiet_NaN(), 0, 0}), "attribute-range");
    CHECK_RULE(infer_with<Gemm>(std::vector<TensorType>{type_of(fa), type_of(fb)}, AttrMap{{"transA", 3}}),
               "attribute-range");
}

TEST_CASE("gemm-c-dtype: float Gemm takes float32 C, quantized Gemm an int32 C") {
    CHECK_RULE(run_gemm({fa, fb, i32({2}, {1, 2})}, {}), "gemm-c-dtype");
    CHECK_RULE(run_gemm({qa(), qb(), f32({2}, {1, 2})}, {}, out22()), "gemm-c-dtype");
    CHECK_RULE(run_gemm({qa(), qb(), Tensor::zeros(DType::i8, {2}, qp(DType::i8, 1, 0))}, {}, out22()), "gemm-c-dtype");
}

TEST_CASE("gemm-c-broadcastable: C must broadcast unidirectionally to [M, N]") {
    CHECK_RULE(run_gemm({fa, fb, f32({3}, {1, 2, 3})}, {}), "gemm-c-broadcastable");
    CHECK_RULE(run_gemm({fa, fb, Tensor::zeros(DType::f32, {1, 2, 2})}, {}), "gemm-c-broadcastable");
    CHECK_RULE(run_gemm({fa, fb, Tensor::zeros(DType::f32, {3, 1})}, {}), "gemm-c-broadcastable");
    CHECK_RULE(run_gemm({qa(), qb(), i32({3}, {1, 2, 3})}, {}, out22()), "gemm-c-broadcastable");
}

TEST_CASE("gemm-quantized-beta: a quantized C needs beta == alpha (or beta == 0)") {
    CHECK_RULE(run_gemm({qa(), qb(), i32({2}, {1, 2})}, GemmAttrs{1, 0.5f, 0, 0}, out22()), "gemm-quantized-beta");
    CHECK_RULE(run_gemm({qa(), qb(), i32({2}, {1, 2})}, GemmAttrs{-1, 1, 0, 0}, out22()), "gemm-quantized-beta");
    CHECK(run_gemm({qa(), qb()}, GemmAttrs{1, 0.5f, 0, 0}, out22()).ok());  // no C: beta is irrelevant
}

TEST_CASE("gemm-c-quant: C's own parameters, if any, must be the implied zero point 0 and scale s_a s_b") {
    Tensor c = i32({2}, {1, 2});
    c.quant = numeric::make_quant(DType::i32, 0.125f, 1).value();
    CHECK_RULE(run_gemm({qa(), qb(), c}, {}, out22()), "gemm-c-quant");
    c.quant = numeric::make_quant(DType::i32, 0.25f, 0).value();
    CHECK_RULE(run_gemm({qa(), qb(), c}, {}, out22()), "gemm-c-quant");
    c.quant = numeric::make_quant(DType::i32, 0.125f, 0).value();
    CHECK(run_gemm({qa(), qb(), c}, {}, out22()).ok());
}

TEST_CASE("swap-operands-rank-at-least-2: the B12 rewrite needs matrices (a 1-D promotion is not a transpose)") {
    CHECK_RULE(matmul_swap_operands(f32({3}, {1, 2, 3}), fb), "swap-operands-rank-at-least-2");
    CHECK_RULE(matmul_swap_operands(fa, f32({3}, {1, 2, 3})), "swap-operands-rank-at-least-2");
    auto s = matmul_swap_operands(fa, fb);
    REQUIRE(s.ok());
    CHECK_RULE(matmul_unswap_output(f32({4}, {1, 2, 3, 4}), *s), "swap-output-rank-matches");
}
