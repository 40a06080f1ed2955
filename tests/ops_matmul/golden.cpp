// MatMul and Gemm: hand-computed golden values, one per semantic switch (1-D promotion on either side, batch
// broadcast, transA, transB, alpha, beta, C broadcast as row / column / scalar / full, per-column scales, per-row left
// weight, quantized alpha and C), and seed B12: moving the constant weight across with a transpose identity moves
// its quantization axis with it.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "helpers.hpp"

using namespace janus;
using namespace janus::test;

static_assert(Op<MatMul>);
static_assert(Op<Gemm>);

// ---- float MatMul ---------------------------------------------------------------------------------------------

TEST_CASE("MatMul float: a 1-D left operand is promoted to [1, K] and the inserted axis is removed") {
    auto y = matmul(f32({2}, {1, 2}), f32({2, 3}, {1, 2, 3, 4, 5, 6}));
    REQUIRE(y.ok());
    CHECK(y->shape() == Shape{3});
    CHECK(y->to_vector<float>() == std::vector<float>{9, 12, 15});
}

TEST_CASE("MatMul float: a 1-D right operand is promoted to [K, 1] and the appended axis is removed") {
    auto y = matmul(f32({2, 2}, {1, 2, 3, 4}), f32({2}, {5, 6}));
    REQUIRE(y.ok());
    CHECK(y->shape() == Shape{2});
    CHECK(y->to_vector<float>() == std::vector<float>{17, 39});
}

TEST_CASE("MatMul float: 1-D x 1-D is the dot product with the scalar shape []") {
    auto y = matmul(f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6}));
    REQUIRE(y.ok());
    CHECK(y->shape() == Shape{});
    CHECK(y->to_vector<float>() == std::vector<float>{32});
}

TEST_CASE("MatMul float: a 1-D left operand against a batched right operand keeps the batch axes") {
    // [2] x [3, 2, 2] -> [3, 2]; batch j of B is [[j, 1], [1, j]]
    std::vector<float> b;
    for (int j = 0; j < 3; ++j) b.insert(b.end(), {float(j), 1, 1, float(j)});
    auto y = matmul(f32({2}, {1, 10}), f32({3, 2, 2}, b));
    REQUIRE(y.ok());
    CHECK(y->shape() == Shape{3, 2});
    CHECK(y->to_vector<float>() == std::vector<float>{10, 1, 11, 11, 12, 21});
}

TEST_CASE("MatMul float: batch axes broadcast numpy-style ([2,1,1,2] x [3,2,1] -> [2,3,1,1])") {
    // A_i = (1, 2), (3, 4); B_j = (j+1, 10(j+1)): y[i, j] = A_i . B_j
    auto y = matmul(f32({2, 1, 1, 2}, {1, 2, 3, 4}), f32({3, 2, 1}, {1, 10, 2, 20, 3, 30}));
    REQUIRE(y.ok());
    CHECK(y->shape() == Shape{2, 3, 1, 1});
    CHECK(y->to_vector<float>() == std::vector<float>{21, 42, 63, 43, 86, 129});
}

TEST_CASE("MatMul float: operands of any layout (a transposed view) give the same product") {
    const Tensor a = f32({3, 2}, {1, 2, 3, 4, 5, 6});  // a^T = [[1, 3, 5], [2, 4, 6]]
    const Tensor at = a.view(transpose(a.layout, Dims{1, 0}).value());
    auto y = matmul(at, f32({3, 1}, {1, 1, 1}));
    REQUIRE(y.ok());
    CHECK(y->to_vector<float>() == std::vector<float>{9, 12});
}

// ---- float Gemm -----------------------------------------------------------------------------------------------

TEST_CASE("Gemm float: transA multiplies by the transposed left operand") {
    auto y = run_gemm({f32({3, 2}, {1, 2, 3, 4, 5, 6}), f32({3, 1}, {1, 1, 1})}, GemmAttrs{1, 1, 1, 0});
    REQUIRE(y.ok());
    CHECK(y->shape() == Shape{2, 1});
    CHECK(y->to_vector<float>() == std::vector<float>{9, 12});
}

TEST_CASE("Gemm float: transB multiplies by the transposed right operand") {
    auto y = run_gemm({f32({1, 3}, {1, 2, 3}), f32({2, 3}, {1, 0, 0, 0, 1, 1})}, GemmAttrs{1, 1, 0, 1});
    REQUIRE(y.ok());
    CHECK(y->shape() == Shape{1, 2});
    CHECK(y->to_vector<float>() == std::vector<float>{1, 5});
}

TEST_CASE("Gemm float: alpha scales the product, beta scales C (y = alpha AB + beta C)") {
    const Tensor a = f32({1, 2}, {2, 4}), b = f32({2, 1}, {1, 1});
    auto y = run_gemm({a, b}, GemmAttrs{0.5f, 1, 0, 0});
    REQUIRE(y.ok());
    CHECK(y->to_vector<float>() == std::vector<float>{3});
    auto z = run_gemm({a, b, f32({}, {10})}, GemmAttrs{0.5f, 2.0f, 0, 0});
    REQUIRE(z.ok());
    CHECK(z->to_vector<float>() == std::vector<float>{23});
}

TEST_CASE("Gemm float: C broadcasts to [M, N] as a row, a column, a scalar or a full matrix") {
    const Tensor a = f32({2, 2}, {1, 2, 3, 4}), id = f32({2, 2}, {1, 0, 0, 1});
    auto row = run_gemm({a, id, f32({2}, {10, 20})}, {});
    auto row2 = run_gemm({a, id, f32({1, 2}, {10, 20})}, {});
    auto col = run_gemm({a, id, f32({2, 1}, {100, 200})}, {});
    auto scalar = run_gemm({a, id, f32({}, {1000})}, {});
    auto one = run_gemm({a, id, f32({1}, {1000})}, {});
    auto full = run_gemm({a, id, f32({2, 2}, {1, 2, 3, 4})}, {});
    REQUIRE((row.ok() && row2.ok() && col.ok() && scalar.ok() && one.ok() && full.ok()));
    CHECK(row->to_vector<float>() == std::vector<float>{11, 22, 13, 24});
    CHECK(row2->to_vector<float>() == std::vector<float>{11, 22, 13, 24});
    CHECK(col->to_vector<float>() == std::vector<float>{101, 102, 203, 204});
    CHECK(scalar->to_vector<float>() == std::vector<float>{1001, 1002, 1003, 1004});
    CHECK(one->to_vector<float>() == std::vector<float>{1001, 1002, 1003, 1004});
    CHECK(full->to_vector<float>() == std::vector<float>{2, 4, 6, 8});
}

TEST_CASE("Gemm float: beta = 0 still evaluates beta * C (ONNX formula: 0 * inf = NaN)") {
    const float inf = std::numeric_limits<float>::infinity();
    auto y = run_gemm({f32({1, 1}, {2}), f32({1, 1}, {3}), f32({1, 1}, {inf})}, GemmAttrs{1, 0, 0, 0});
    REQUIRE(y.ok());
    CHECK(std::isnan(y->to_vector<float>()[0]));
}

// ---- quantized ------------------------------------------------------------------------------------------------
// Shared case: a = (3, 5) with s 0.5 zp 1 -> real (1, 2); b = (2, 6) with s 0.25 zp -2 -> real (1, 2); y = 5.
// acc = 2*4 + 4*8 = 40, ratio 0.5 * 0.25 / 1 = 0.125: 40 * 0.125 = 5, + zp_y 3 = 8.

TEST_CASE("MatMul quantized: acc = sum (a - zp_a)(b - zp_b), requantized by s_a s_b / s_y plus zp_y") {
    auto y = matmul(i8({1, 2}, {3, 5}, qp(DType::i8, 0.5f, 1)), i8({2, 1}, {2, 6}, qp(DType::i8, 0.25f, -2)),
                    qout(DType::i8, {1, 1}, 1.0f, 3));
    REQUIRE(y.ok());
    CHECK(ints(*y) == std::vector<int>{8});
    CHECK(y->quant == qp(DType::i8, 1.0f, 3));  // the caller's parameters, never an input's (seed A10)
}

TEST_CASE("MatMul quantized: 1-D promotion on both sides gives the scalar [] result") {
    auto y = matmul(i8({2}, {3, 5}, qp(DType::i8, 0.5f, 1)), i8({2}, {2, 6}, qp(DType::i8, 0.25f, -2)),
                    qout(DType::i8, {}, 1.0f, 3));
    REQUIRE(y.ok());
    CHECK(y->shape() == Shape{});
    CHECK(ints(*y) == std::vector<int>{8});
}

TEST_CASE("MatMul quantized: uint8 left operand with an int8 right operand; the output is stored as the left's type") {
    // a (131, 133) zp 129 s 0.5 -> (1, 2); same b as above
    auto y = matmul(u8({1, 2}, {131, 133}, qp(DType::u8, 0.5f, 129)), i8({2, 1}, {2, 6}, qp(DType::i8, 0.25f, -2)),
                    qout(DType::u8, {1, 1}, 0.5f, 100));
    REQUIRE(y.ok());
    CHECK(y->dtype == DType::u8);
    CHECK(ints(*y) == std::vector<int>{110});  // 5 / 0.5 + 100
}

TEST_CASE("MatMul quantized: per-column scales of the right operand requantize each output column") {
    // a (2, 3) s 1; b columns: s 1 -> (1, 2), s 0.5 -> (2, 3); y = (8, 13); s_y 0.5 -> (16, 26)
    const Shape bs{2, 2};
    const Tensor b = i8(bs, {1, 4, 2, 6}, qp_axis(DType::i8, {1.0f, 0.5f}, {0, 0}, 1, bs));
    auto y = matmul(i8({1, 2}, {2, 3}, qp(DType::i8, 1, 0)), b, qout(DType::i8, {1, 2}, 0.5f, 0));
    REQUIRE(y.ok());
    CHECK(ints(*y) == std::vector<int>{16, 26});
    // per-column zero points: column 1 with zp 2: b col1 real = 0.5 * ((4, 6) - 2) = (1, 2): y1 = 2 + 6 = 8 -> 16
    const Tensor bz = i8(bs, {1, 4, 2, 6}, qp_axis(DType::i8, {1.0f, 0.5f}, {0, 2}, 1, bs));
    auto z = matmul(i8({1, 2}, {2, 3}, qp(DType::i8, 1, 0)), bz, qout(DType::i8, {1, 2}, 0.5f, 0));
    REQUIRE(z.ok());
    CHECK(ints(*z) == std::vector<int>{16, 16});
}

TEST_CASE("MatMul quantized: a per-row left weight requantizes each output row with its own scale and zero point") {
    // a rows: s 1 zp 0 (1, 2) -> (1, 2); s 0.25 zp 4 (8, 16) -> (1, 3); b (3, 1): y = (5, 6); zp_y -1 -> (4, 5)
    const Shape as{2, 2};
    const Tensor a = i8(as, {1, 2, 8, 16}, qp_axis(DType::i8, {1.0f, 0.25f}, {0, 4}, 0, as));
    auto y = matmul(a, i8({2, 1}, {3, 1}, qp(DType::i8, 1, 0)), qout(DType::i8, {2, 1}, 1.0f, -1));
    REQUIRE(y.ok());
    CHECK(ints(*y) == std::vector<int>{4, 5});
}

TEST_CASE("MatMul quantized: a per-row batched left operand (axis rank-2) broadcasts against a 2-D right operand") {
    const Shape as{2, 2, 1};  // batch 2, M 2, K 1; rows scaled 1 and 2
    const Tensor a = i8(as, {1, 2, 3, 4}, qp_axis(DType::i8, {1.0f, 2.0f}, {0, 0}, 1, as));
    auto y = matmul(a, i8({1, 2}, {1, -1}, qp(DType::i8, 1, 0)), qout(DType::i8, {2, 2, 2}, 1.0f, 0));
    REQUIRE(y.ok());
    // batch 0: rows (1), (2*2 = 4); batch 1: rows (3), (4*2 = 8); times (1, -1)
    CHECK(ints(*y) == std::vector<int>{1, -1, 4, -4, 3, -3, 8, -8});
}

TEST_CASE("MatMul quantized: results saturate at the output type's range") {
    auto y = matmul(i8({1, 2}, {127, 127}, qp(DType::i8, 1, 0)), i8({2, 2}, {127, -128, 127, -128}, qp(DType::i8, 1, 0)),
                    qout(DType::i8, {1, 2}, 1.0f, 0));
    REQUIRE(y.ok());
    CHECK(ints(*y) == std::vector<int>{127, -128});
}

TEST_CASE("Gemm quantized: alpha folds into the multiplier; a negative alpha negates the accumulator") {
    const Tensor a = i8({1, 2}, {3, 5}, qp(DType::i8, 0.5f, 1)), b = i8({2, 1}, {2, 6}, qp(DType::i8, 0.25f, -2));
    auto two = run_gemm({a, b}, GemmAttrs{2.0f, 1, 0, 0}, qout(DType::i8, {1, 1}, 1.0f, 3));
    auto neg = run_gemm({a, b}, GemmAttrs{-1.0f, 1, 0, 0}, qout(DType::i8, {1, 1}, 1.0f, 3));
    auto zero = run_gemm({a, b}, GemmAttrs{0.0f, 1, 0, 0}, qout(DType::i8, {1, 1}, 1.0f, 3));
    REQUIRE((two.ok() && neg.ok() && zero.ok()));
    CHECK(ints(*two) == std::vector<int>{13});   // 10 + 3
    CHECK(ints(*neg) == std::vector<int>{-2});   // -5 + 3
    CHECK(ints(*zero) == std::vector<int>{3});   // zp_y
}

TEST_CASE("Gemm quantized: C is an int32 bias in accumulator units (scale s_a s_b) added before requantization") {
    const Tensor a = i8({1, 2}, {3, 5}, qp(DType::i8, 0.5f, 1)), b = i8({2, 1}, {2, 6}, qp(DType::i8, 0.25f, -2));
    const Tensor c = i32({1}, {16});  // real 16 * 0.125 = 2
    auto y = run_gemm({a, b, c}, {}, qout(DType::i8, {1, 1}, 1.0f, 3));
    REQUIRE(y.ok());
    CHECK(ints(*y) == std::vector<int>{10});  // 5 + 2 + 3
    auto y2 = run_gemm({a, b, c}, GemmAttrs{2.0f, 2.0f, 0, 0}, qout(DType::i8, {1, 1}, 1.0f, 3));
    REQUIRE(y2.ok());
    CHECK(ints(*y2) == std::vector<int>{17});  // 2 * (5 + 2) + 3
    auto yn = run_gemm({a, b, c}, GemmAttrs{-1.0f, -1.0f, 0, 0}, qout(DType::i8, {1, 1}, 1.0f, 3));
    REQUIRE(yn.ok());
    CHECK(ints(*yn) == std::vector<int>{-4});  // -(5 + 2) + 3
    auto y0 = run_gemm({a, b, c}, GemmAttrs{1.0f, 0.0f, 0, 0}, qout(DType::i8, {1, 1}, 1.0f, 3));
    REQUIRE(y0.ok());
    CHECK(ints(*y0) == std::vector<int>{8});  // beta 0: C ignored
    // C carrying its own parameters that say exactly the implied ones is accepted
    Tensor cq = c;
    cq.quant = numeric::make_quant(DType::i32, 0.125f, 0).value();
    auto yq = run_gemm({a, b, cq}, {}, qout(DType::i8, {1, 1}, 1.0f, 3));
    REQUIRE(yq.ok());
    CHECK(ints(*yq) == std::vector<int>{10});
}

TEST_CASE("Gemm quantized: C broadcasts as a row, a column and a scalar") {
    const Tensor a = i8({2, 2}, {1, 2, 3, 4}, qp(DType::i8, 1, 0)), id = i8({2, 2}, {1, 0, 0, 1}, qp(DType::i8, 1, 0));
    const auto out = qout(DType::i8, {2, 2}, 1.0f, 0);
    auto row = run_gemm({a, id, i32({2}, {10, 20})}, {}, out);
    auto col = run_gemm({a, id, i32({2, 1}, {100, -100})}, {}, out);
    auto scalar = run_gemm({a, id, i32({}, {-1})}, {}, out);
    REQUIRE((row.ok() && col.ok() && scalar.ok()));
    CHECK(ints(*row) == std::vector<int>{11, 22, 13, 24});
    CHECK(ints(*col) == std::vector<int>{101, 102, -97, -96});
    CHECK(ints(*scalar) == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("Gemm quantized: transA / transB move the per-axis quantization axis with the transpose") {
    // per-row left weight stored transposed [K, M] along axis 1 (= M); same values as the per-row MatMul case
    const Shape ats{2, 2};
    const Tensor at = i8(ats, {1, 8, 2, 16}, qp_axis(DType::i8, {1.0f, 0.25f}, {0, 4}, 1, ats));
    auto y = run_gemm({at, i8({2, 1}, {3, 1}, qp(DType::i8, 1, 0))}, GemmAttrs{1, 1, 1, 0}, qout(DType::i8, {2, 1}, 1, -1));
    REQUIRE(y.ok());
    CHECK(ints(*y) == std::vector<int>{4, 5});
    // per-column right operand stored transposed [N, K] along axis 0 (= N); same values as the per-column case
    const Shape bts{2, 2};
    const Tensor bt = i8(bts, {1, 2, 4, 6}, qp_axis(DType::i8, {1.0f, 0.5f}, {0, 0}, 0, bts));
    auto z = run_gemm({i8({1, 2}, {2, 3}, qp(DType::i8, 1, 0)), bt}, GemmAttrs{1, 1, 0, 1}, qout(DType::i8, {1, 2}, 0.5f, 0));
    REQUIRE(z.ok());
    CHECK(ints(*z) == std::vector<int>{16, 26});
}

TEST_CASE("Gemm quantized: per-column C scales are checked against s_a * s_b[n]") {
    const Shape bs{2, 2};
    const Tensor b = i8(bs, {1, 4, 2, 6}, qp_axis(DType::i8, {1.0f, 0.5f}, {0, 0}, 1, bs));
    Tensor c = i32({2}, {2, 4});  // real (2, 2)
    c.quant = numeric::make_quant_per_axis(DType::i32, {1.0f, 0.5f}, {0, 0}, 0, Shape{2}).value();
    auto y = run_gemm({i8({1, 2}, {2, 3}, qp(DType::i8, 1, 0)), b, c}, {}, qout(DType::i8, {1, 2}, 0.5f, 0));
    REQUIRE(y.ok());
    CHECK(ints(*y) == std::vector<int>{20, 30});  // (8 + 2, 13 + 2) / 0.5
}

TEST_CASE("MatMul/Gemm: plan() states the multipliers from types alone") {
    const TensorType a{DType::i8, {1, 2}, qp(DType::i8, 0.5f, 1)}, b{DType::i8, {2, 1}, qp(DType::i8, 0.25f, -2)};
    const TensorType in[2] = {a, b};
    auto p = MatMul::plan(in, {}, qout(DType::i8, {1, 1}, 1.0f, 3), janus::numeric::default_rounding_mode);
    REQUIRE(p.ok());
    CHECK(p->per_axis == MatMulPerAxis::none);
    REQUIRE(p->ratios.size() == 1);
    CHECK(p->ratios[0] == 0.125);
    CHECK(p->multipliers[0] == numeric::QuantizedMultiplier{1 << 30, -2});
    CHECK(p->zp_y == 3);
    auto g = Gemm::plan(in, GemmAttrs{-3.0f, 1, 0, 0}, qout(DType::i8, {1, 1}, 1.0f, 3), janus::numeric::default_rounding_mode);
    REQUIRE(g.ok());
    CHECK(g->negate);
    CHECK(g->ratios[0] == 0.375);
}

// ---- seed B12 -------------------------------------------------------------------------------------------------

namespace {

std::vector<std::int8_t> random_i8(std::size_t n, std::mt19937& rng) {
    std::uniform_int_distribution<int> d(-128, 127);
    std::vector<std::int8_t> v(n);
    for (auto& x : v) x = static_cast<std::int8_t>(d(rng));
    return v;
}

/// Y = W X with W [.., M, K] per-row along axis rank-2, X [K, N] per-tensor; the same product through the swap.
void check_swap_left_weight(const Shape& ws, std::int64_t N, std::uint32_t seed) {
    std::mt19937 rng(seed);
    const int wr = ws.size();
    const std::int64_t M = ws[wr - 2], K = ws[wr - 1];
    std::vector<float> scales;
    std::vector<std::int32_t> zps;
    for (std::int64_t m = 0; m < M; ++m) {
        scales.push_back(0.01f * static_cast<float>(m + 1));
        zps.push_back(static_cast<std::int32_t>(m % 3) - 1);
    }
    const Tensor w = i8(ws, random_i8(static_cast<std::size_t>(element_count(ws)), rng),
                        qp_axis(DType::i8, scales, zps, wr - 2, ws));
    const Tensor x = i8({K, N}, random_i8(static_cast<std::size_t>(K * N), rng), qp(DType::i8, 0.05f, 3));
    Shape ys = ws;
    ys[wr - 1] = N;
    auto y = matmul(w, x, qout(DType::i8, ys, 0.2f, -5));
    REQUIRE(y.ok());

    auto s = matmul_swap_operands(w, x);
    REQUIRE(s.ok());
    REQUIRE(s->b.quant->axis.has_value());
    CHECK(*s->b.quant->axis == wr - 1);  // per-row of W became per-column of W^T
    Shape yts = ys;
    std::swap(yts[wr - 2], yts[wr - 1]);
    auto yt = matmul(s->a, s->b, qout(DType::i8, yts, 0.2f, -5));
    REQUIRE(yt.ok());
    auto back = matmul_unswap_output(*yt, *s);
    REQUIRE(back.ok());
    CHECK(back->shape() == ys);
    CHECK(ints(*back) == ints(*y));

    // Keeping the OLD axis on W^T puts it on the reduced axis K: the op refuses (it would mix scales in one sum).
    Tensor stale = s->b;
    stale.quant = w.quant;
    if (M == K) {
        CHECK_RULE(matmul(s->a, stale, qout(DType::i8, yts, 0.2f, -5)), "matmul-b-quant-axis");
    } else {
        CHECK_RULE(matmul(s->a, stale, qout(DType::i8, yts, 0.2f, -5)), "channels-match-extent");
    }
}

}  // namespace

TEST_CASE("seed B12: a per-row left weight moved to the right by Y^T = X^T W^T becomes per-column, same bytes") {
    check_swap_left_weight({3, 4}, 5, 1);
    check_swap_left_weight({4, 4}, 19, 2);     // square: the stale axis lands on K and is refused by rule
    check_swap_left_weight({2, 3, 4}, 17, 3);  // batched weight
}

TEST_CASE("seed B12: a per-column right weight moved to the left becomes per-row, same bytes") {
    std::mt19937 rng(7);
    const Shape ws{4, 6};
    const Tensor w = i8(ws, random_i8(24, rng),
                        qp_axis(DType::i8, {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f}, {0, 1, -1, 2, 0, 5}, 1, ws));
    const Tensor x = i8({3, 4}, random_i8(12, rng), qp(DType::i8, 0.05f, -7));
    auto y = matmul(x, w, qout(DType::i8, {3, 6}, 0.1f, 2));
    REQUIRE(y.ok());
    auto s = matmul_swap_operands(x, w);
    REQUIRE(s.ok());
    REQUIRE(s->a.quant->axis.has_value());
    CHECK(*s->a.quant->axis == 0);  // per-column of W became per-row of W^T
    auto yt = matmul(s->a, s->b, qout(DType::i8, {6, 3}, 0.1f, 2));
    REQUIRE(yt.ok());
    auto back = matmul_unswap_output(*yt, *s);
    REQUIRE(back.ok());
    CHECK(ints(*back) == ints(*y));
    // the stale axis (1) on W^T [6, 4] is its K axis
    Tensor stale = s->a;
    stale.quant = w.quant;
    CHECK_RULE(matmul(stale, s->b, qout(DType::i8, {6, 3}, 0.1f, 2)), "channels-match-extent");
}

TEST_CASE("seed B12: the old axis means different numbers — dequantizing W^T with it changes the product") {
    // Square W so that the stale parameters fit W^T's shape; the real values they describe differ from W's.
    const Shape ws{2, 2};
    const Tensor w = i8(ws, {10, 20, 30, 40}, qp_axis(DType::i8, {1.0f, 0.5f}, {0, 0}, 0, ws));
    auto s = matmul_swap_operands(w, i8({2, 1}, {1, 1}, qp(DType::i8, 1, 0)));
    REQUIRE(s.ok());
    auto real = [](const Tensor& t, const numeric::QuantParams& q, std::int64_t i, std::int64_t j) {
        const std::size_t c = static_cast<std::size_t>(*q.axis == 0 ? i : j);
        return q.scale(c) * static_cast<float>(t.at<std::int8_t>(Dims{i, j}) - q.zero_point(c));
    };
    // W^T[k, m] must equal W[m, k] in real value with the moved axis ...
    for (std::int64_t k = 0; k < 2; ++k)
        for (std::int64_t m = 0; m < 2; ++m) CHECK(real(s->b, *s->b.quant, k, m) == real(w, *w.quant, m, k));
    // ... and differs with the old one (W^T[0, 1] = W[1, 0] = 30 * 0.5 = 15, the stale axis reads 30 * 1.0)
    CHECK(real(s->b, *w.quant, 0, 1) != real(w, *w.quant, 1, 0));
}

TEST_CASE("seed B12: swapping twice gives back the original operands, quantization axes included") {
    const Shape ws{2, 3};
    const Tensor w = i8(ws, {1, 2, 3, 4, 5, 6}, qp_axis(DType::i8, {0.5f, 0.25f}, {0, 1}, 0, ws));
    const Tensor x = i8({3, 4}, std::vector<std::int8_t>(12, 1), qp(DType::i8, 1, 0));
    auto s = matmul_swap_operands(w, x);
    REQUIRE(s.ok());
    auto s2 = matmul_swap_operands(s->a, s->b);
    REQUIRE(s2.ok());
    CHECK(s2->a.layout == w.layout);
    CHECK(s2->b.layout == x.layout);
    CHECK(s2->a.quant == w.quant);
    CHECK(s2->b.quant == x.quant);
}

TEST_CASE("MatMul/Gemm: K = 0 is the empty sum (float 0; quantized zp_y, plus C for Gemm)") {
    auto f = matmul(Tensor::zeros(DType::f32, {2, 0}), Tensor::zeros(DType::f32, {0, 3}));
    REQUIRE(f.ok());
    CHECK(f->shape() == Shape{2, 3});
    CHECK(f->to_vector<float>() == std::vector<float>(6, 0.0f));
    const Tensor a = Tensor::zeros(DType::i8, {2, 0}, qp(DType::i8, 1, 0));
    const Tensor b = Tensor::zeros(DType::i8, {0, 3}, qp(DType::i8, 1, 0));
    auto q = matmul(a, b, qout(DType::i8, {2, 3}, 1, 7));
    REQUIRE(q.ok());
    CHECK(ints(*q) == std::vector<int>(6, 7));
    auto g = run_gemm({a, b, i32({3}, {1, 2, 3})}, {}, qout(DType::i8, {2, 3}, 1, 7));
    REQUIRE(g.ok());
    CHECK(ints(*g) == std::vector<int>{8, 9, 10, 8, 9, 10});
}
