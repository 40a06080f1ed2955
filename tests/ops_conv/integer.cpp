// ConvInteger and MatMulInteger against plain integer loops: random shapes, geometry, zero points (per tensor, per
// output channel, per row and per column), int8/uint8 operands in every pairing, scalar and SIMD paths; the int32
// result must be EXACT. Then every error rule, including the proved accumulator headroom.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <janus/ops/matmul.hpp>

#include "../support/check_rule.hpp"
#include "reference.hpp"

namespace integer_test {

using namespace janus;
using namespace janus::ops;
using convtest::Geo;

/// Random codes of T and the quantization holding `zps` (scale 1; per-axis along `axis` when zps has several).
template <class T>
Tensor codes(const Shape& s, std::mt19937& rng, const std::vector<std::int32_t>& zps, int axis) {
    std::uniform_int_distribution<int> u(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    std::vector<T> v(static_cast<std::size_t>(element_count(s)));
    for (auto& x : v) x = static_cast<T>(u(rng));
    if (v.size() >= 2) v[0] = std::numeric_limits<T>::min(), v[1] = std::numeric_limits<T>::max();
    const auto q =
        zps.size() == 1
            ? numeric::make_quant(dtype_v<T>, 1.0f, zps[0]).value()
            : numeric::make_quant_per_axis(dtype_v<T>, std::vector<float>(zps.size(), 1.0f), zps, axis, s).value();
    return Tensor::from<T>(s, v, q);
}

template <class T>
std::vector<std::int32_t> zero_points(std::size_t n, std::mt19937& rng) {
    std::uniform_int_distribution<int> u(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    std::vector<std::int32_t> z(n);
    for (auto& x : z) x = u(rng);
    return z;
}

/// x - zp per element: the real values at scale 1 (exact in double; the references sum at most a few thousand
/// products below 2^16).
std::vector<double> centred(const Tensor& t) { return convtest::reals(t); }

/// The exact check of one result: int32, no quantization, shape `ys`, every element equal to `want`.
void check_exact(const Result<Tensor>& y, const Shape& ys, const std::vector<double>& want, const std::string& what) {
    REQUIRE_MESSAGE(y.ok(), (y.ok() ? "" : y.error().message()));
    CHECK(y->dtype == DType::i32);
    CHECK_FALSE(y->quant.has_value());
    REQUIRE(y->shape() == ys);
    const auto got = y->to_vector<std::int32_t>();
    REQUIRE(got.size() == want.size());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) bad += static_cast<double>(got[i]) != want[i];
    CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.size() << " differ");
}

template <class Tx, class Tw>
void conv_case(std::mt19937& rng, int& cases) {
    std::uniform_int_distribution<int> d(1, 3);
    const std::int64_t group = d(rng) == 1 ? 2 : 1;
    const std::int64_t C = group * d(rng), CO = group * d(rng), KH = d(rng), KW = d(rng);
    const std::int64_t H = KH + d(rng) + 2, W = KW + d(rng) + 2;
    Geo g;
    g.sh = d(rng), g.sw = d(rng) == 3 ? 2 : 1, g.dh = d(rng) == 3 ? 2 : 1;
    g.pt = d(rng) - 1, g.pb = d(rng) - 1, g.pl = d(rng) - 1, g.pr = 0;
    g.group = group;
    const bool per_channel = d(rng) != 1;
    const Tensor x = codes<Tx>(Shape{2, C, H, W}, rng, zero_points<Tx>(1, rng), 0);
    const Tensor w = codes<Tw>(Shape{CO, C / group, KH, KW}, rng, zero_points<Tw>(per_channel ? CO : 1, rng), 0);
    ConvInteger::Attrs a;
    a.strides = {g.sh, g.sw};
    a.dilations = {g.dh, g.dw};
    a.pads = {g.pt, g.pl, g.pb, g.pr};
    a.group = group;
    Shape ys;
    const auto want = convtest::conv2d_ref(centred(x), x.shape(), centred(w), w.shape(), {}, g, ys);
    for (bool simd : {true, false}) {
        const auto y = call<ConvInteger>({x, w}, a, std::nullopt, OpContext{simd});
        check_exact(y, ys, want, type_of(x).str() + " * " + type_of(w).str());
    }
    ++cases;
}

template <class Ta, class Tb>
void matmul_case(std::mt19937& rng, int& cases) {
    std::uniform_int_distribution<int> d(1, 9);
    const std::int64_t M = d(rng), K = d(rng) * 7, N = d(rng);
    const int form = d(rng) % 3;  // 0: [M, K] x [K, N]; 1: batched A [2, M, K]; 2: 1-D A [K]
    const bool rows = form != 2 && d(rng) > 3, cols = d(rng) > 3;
    const Shape sa = form == 0 ? Shape{M, K} : form == 1 ? Shape{2, M, K} : Shape{K};
    const Tensor a = codes<Ta>(sa, rng, zero_points<Ta>(rows ? M : 1, rng), sa.size() - 2);
    const Tensor b = codes<Tb>(Shape{K, N}, rng, zero_points<Tb>(cols ? N : 1, rng), 1);
    const auto ca = centred(a), cb = centred(b);
    const std::int64_t batch = form == 1 ? 2 : 1, rows_a = form == 2 ? 1 : M;
    std::vector<double> want;
    for (std::int64_t t = 0; t < batch; ++t)
        for (std::int64_t m = 0; m < rows_a; ++m)
            for (std::int64_t n = 0; n < N; ++n) {
                double acc = 0;
                for (std::int64_t k = 0; k < K; ++k)
                    acc += ca[static_cast<std::size_t>((t * rows_a + m) * K + k)] *
                           cb[static_cast<std::size_t>(k * N + n)];
                want.push_back(acc);
            }
    const Shape ys = form == 0 ? Shape{M, N} : form == 1 ? Shape{2, M, N} : Shape{N};
    for (bool simd : {true, false}) {
        const auto y = call<MatMulInteger>({a, b}, {}, std::nullopt, OpContext{simd});
        check_exact(y, ys, want, type_of(a).str() + " x " + type_of(b).str());
    }
    ++cases;
}

TEST_CASE("ConvInteger and MatMulInteger equal plain integer loops exactly, int8 and uint8 in every pairing") {
    std::mt19937 rng(20261203);
    int conv = 0, mm = 0;
    for (int i = 0; i < 12; ++i) {
        conv_case<std::int8_t, std::int8_t>(rng, conv);
        conv_case<std::uint8_t, std::int8_t>(rng, conv);
        conv_case<std::uint8_t, std::uint8_t>(rng, conv);
        conv_case<std::int8_t, std::uint8_t>(rng, conv);
        matmul_case<std::int8_t, std::int8_t>(rng, mm);
        matmul_case<std::uint8_t, std::int8_t>(rng, mm);
        matmul_case<std::uint8_t, std::uint8_t>(rng, mm);
        matmul_case<std::int8_t, std::uint8_t>(rng, mm);
    }
    CHECK(conv == 48);
    CHECK(mm == 48);
}

TEST_CASE("MatMulInteger: per-row A and per-column B together (no scales meet)") {
    // A [2, 3] with zero points 1, -1 per row; B [3, 2] with zero points 2, 0 per column.
    const auto qa = numeric::make_quant_per_axis(DType::i8, {1.0f, 1.0f}, {1, -1}, 0, Shape{2, 3}).value();
    const auto qb = numeric::make_quant_per_axis(DType::i8, {1.0f, 1.0f}, {2, 0}, 1, Shape{3, 2}).value();
    const Tensor a = Tensor::from<std::int8_t>(Shape{2, 3}, {1, 2, 3, -1, 0, 1}, qa);
    const Tensor b = Tensor::from<std::int8_t>(Shape{3, 2}, {2, 1, 3, 0, 4, -1}, qb);
    const auto y = call<MatMulInteger>({a, b}, {});
    REQUIRE(y.ok());
    // a - zp: [[0, 1, 2], [0, 1, 2]]; b - zp: [[0, 1], [1, 0], [2, -1]] -> [[5, -2], [5, -2]]
    CHECK(y->to_vector<std::int32_t>() == std::vector<std::int32_t>{5, -2, 5, -2});
    // MatMul refuses the same pairing: with scales it would need a 2-D multiplier table
    CHECK_RULE(MatMul::infer(std::vector<TensorType>{type_of(a), type_of(b)}, {}), "one-per-axis-operand");
}

TEST_CASE("ConvInteger and MatMulInteger: every error rule") {
    const auto q8 = [](std::int32_t zp) { return numeric::make_quant(DType::i8, 1.0f, zp).value(); };
    const TensorType x{DType::i8, Shape{1, 2, 4, 4}, q8(3)};
    const TensorType w{DType::i8, Shape{3, 2, 3, 3}, q8(0)};
    const TensorType raw{DType::i8, Shape{1, 2, 4, 4}, std::nullopt};
    const TensorType fx{DType::f32, Shape{1, 2, 4, 4}, std::nullopt};
    CHECK(ConvInteger::infer(std::vector<TensorType>{x, w}, {}).value() ==
          TensorType{DType::i32, Shape{1, 3, 2, 2}, std::nullopt});
    CHECK_RULE(ConvInteger::infer(std::vector<TensorType>{raw, w}, {}), "quantized-input");
    CHECK_RULE(ConvInteger::infer(std::vector<TensorType>{fx, w}, {}), "quantized-input");
    CHECK_RULE(ConvInteger::infer(std::vector<TensorType>{x}, {}), "input-count");
    TensorType xa = x;
    xa.quant = numeric::make_quant_per_axis(DType::i8, {1.0f, 1.0f}, {0, 1}, 1, x.shape).value();
    CHECK_RULE(ConvInteger::infer(std::vector<TensorType>{xa, w}, {}), "per-tensor-quantization");
    TensorType wa = w;
    wa.quant = numeric::make_quant_per_axis(DType::i8, {1.0f, 1.0f}, {0, 1}, 1, w.shape).value();
    CHECK_RULE(ConvInteger::infer(std::vector<TensorType>{x, wa}, {}), "weight-quant-axis");
    const Tensor xt = Tensor::zeros(DType::i8, x.shape, x.quant), wt = Tensor::zeros(DType::i8, w.shape, w.quant);
    CHECK_RULE(call<ConvInteger>({xt, wt}, {}, TensorType{DType::i8, Shape{1, 3, 2, 2}, q8(0)}),
               "output-type-matches-inference");
    CHECK_RULE(ConvInteger::run(std::vector<Tensor>{xt, wt}, {}, TensorType{DType::i8, Shape{1, 3, 2, 2}, q8(0)}, {}),
               "output-dtype");
    const Tensor at = Tensor::zeros(DType::i8, Shape{2, 5}, q8(0)), bt = Tensor::zeros(DType::i8, Shape{5, 3}, q8(0));
    CHECK_RULE(
        MatMulInteger::run(std::vector<Tensor>{at, bt}, {}, TensorType{DType::i32, Shape{3, 2}, std::nullopt}, {}),
        "output-dtype");

    const TensorType a{DType::u8, Shape{2, 5}, numeric::make_quant(DType::u8, 1.0f, 128).value()};
    const TensorType b{DType::i8, Shape{5, 3}, q8(0)};
    CHECK(MatMulInteger::infer(std::vector<TensorType>{a, b}, {}).value() ==
          TensorType{DType::i32, Shape{2, 3}, std::nullopt});
    CHECK_RULE(MatMulInteger::infer(std::vector<TensorType>{a, TensorType{DType::i8, Shape{4, 3}, q8(0)}}, {}),
               "matmul-inner-dims-match");
    CHECK_RULE(MatMulInteger::infer(std::vector<TensorType>{a, TensorType{DType::i8, Shape{5, 3}, std::nullopt}}, {}),
               "quantized-input");
    TensorType bk = b;  // per-axis along K: one sum would mix zero points of different rows of B
    bk.quant = numeric::make_quant_per_axis(DType::i8, std::vector<float>(5, 1.0f), std::vector<std::int32_t>(5, 0), 0,
                                            b.shape)
                   .value();
    CHECK_RULE(MatMulInteger::infer(std::vector<TensorType>{a, bk}, {}), "matmul-b-quant-axis");
    CHECK_RULE(MatMulInteger::infer(std::vector<TensorType>{TensorType{DType::i8, Shape{}, q8(0)}, b}, {}),
               "matmul-rank-at-least-1");

    // Headroom is proved, not assumed: int8 x int8 with zero points at the far ends reaches 255 * 255 per product,
    // so K = 33,026 products can leave int32 (K = 33,025 cannot).
    for (std::int64_t K : {33025, 33026}) {
        const Tensor ta = Tensor::zeros(DType::i8, Shape{1, K}, numeric::make_quant(DType::i8, 1.0f, 127).value());
        const Tensor tb = Tensor::zeros(DType::i8, Shape{K, 1}, numeric::make_quant(DType::i8, 1.0f, 127).value());
        const auto y = call<MatMulInteger>({ta, tb}, {});
        if (K == 33025) {
            REQUIRE(y.ok());
            CHECK(y->to_vector<std::int32_t>() == std::vector<std::int32_t>{static_cast<std::int32_t>(K * 127 * 127)});
        } else {
            CHECK_RULE(y, "accumulator-fits-int32");
        }
    }
}

}  // namespace integer_test
