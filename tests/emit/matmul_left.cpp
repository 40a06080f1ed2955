// Seed B12, the weight on the left (emit/matmul.hpp lower_matmul_left): Y = W X with a constant W [M, K] (per-row or
// per-tensor scales, symmetric) and activations X [K, N] with a zero point; emit -> simulate -> compare with
// ops::call<ops::MatMul>({W, X}) bit for bit, no fault, no race. X's zero point at both ends (it enters as a per-row
// constant), odd shapes, forced M and N tiles; and the refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <janus/emit/matmul.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../support/check_rule.hpp"
#include "emit_support.hpp"

using namespace janus;
using namespace janus::emit;

// Test executables build as one unity TU per directory: this file's helpers and tests live in their own
// namespace, so their names hide (never overload) a sibling file's helpers of the same name.
namespace matmul_left_test {

namespace {

void check(std::int64_t M, std::int64_t K, std::int64_t N, std::int32_t zx, bool per_row, std::uint32_t seed,
           MatmulOptions opt = {}) {
    CAPTURE(M);
    CAPTURE(K);
    CAPTURE(N);
    CAPTURE(zx);
    CAPTURE(per_row);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::uniform_real_distribution<float> scale(0.002f, 0.05f);
    std::vector<std::int8_t> w(static_cast<std::size_t>(M * K)), x(static_cast<std::size_t>(K * N));
    for (auto& v : w) v = static_cast<std::int8_t>(byte(rng));
    for (auto& v : x) v = static_cast<std::int8_t>(byte(rng));
    ops::TensorType tw{DType::i8, Shape{M, K}, numeric::make_quant(DType::i8, 0.01f, 0).value()};
    if (per_row) {
        std::vector<float> s(static_cast<std::size_t>(M));
        for (auto& v : s) v = scale(rng);
        tw.quant =
            numeric::make_quant_per_axis(DType::i8, s, std::vector<std::int32_t>(s.size(), 0), 0, Shape{M, K}).value();
    }
    const ops::TensorType tx{DType::i8, Shape{K, N}, numeric::make_quant(DType::i8, 0.05f, zx).value()};
    const float sy = 0.05f * 0.03f * 74.0f * 74.0f * std::sqrt(static_cast<float>(K)) * 3.0f / 127.0f;
    const ops::TensorType ty{DType::i8, Shape{M, N}, numeric::make_quant(DType::i8, sy, -2).value()};
    const auto host = ops::call<ops::MatMul>(
        {Tensor::from<std::int8_t>(tw.shape, w, *tw.quant), Tensor::from<std::int8_t>(tx.shape, x, *tx.quant)}, {}, ty);
    REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
    auto want = host->to_vector<std::int8_t>();
    for (auto& v : want) v = static_cast<std::int8_t>(std::clamp<int>(v, opt.clamp.lo, opt.clamp.hi));
    if (opt.lut)  // then a fused epilogue table (MatmulOptions::lut): T[c + 128]
        for (auto& v : want) v = static_cast<std::int8_t>(opt.lut->values[static_cast<std::size_t>(v + 128)]);
    int saturated = 0;
    for (auto v : want) saturated += (v == -128 || v == 127);
    CHECK(saturated * 4 < static_cast<int>(want.size()) + 4);

    const ops::TensorType types[2] = {tw, tx};
    const auto plan = ops::MatMul::plan(types, {}, ty, janus::numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    const std::int64_t px = round16(N) + 32, py = round16(N);  // X's pitch wider than needed
    Builder b("mmL");
    const DramMatrix X{2, 0, K, N, px}, Y{3, 0, M, N, py};
    const auto st = lower_matmul_left(b, *plan, w, M, K, X, Y, opt);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    vnpu::sim::Machine m;
    m.dram[2].assign(static_cast<std::size_t>(K * px), 0x5a);  // padding bytes are arbitrary
    for (std::int64_t k = 0; k < K; ++k)
        std::memcpy(&m.dram[2][static_cast<std::size_t>(k * px)], &x[static_cast<std::size_t>(k * N)],
                    static_cast<std::size_t>(N));
    m.dram[3].resize(static_cast<std::size_t>(M * py));
    et::run_clean(b, m);
    std::vector<std::int8_t> got(want.size());
    for (std::int64_t i = 0; i < M; ++i)
        std::memcpy(&got[static_cast<std::size_t>(i * N)], &m.dram[3][static_cast<std::size_t>(i * py)],
                    static_cast<std::size_t>(N));
    CHECK(got == want);
}

}  // namespace

TEST_CASE("MatMul with the weight on the left (seed B12): X's zero point as a per-row constant, per-row scales") {
    check(1, 1, 1, 0, false, 1);
    check(7, 13, 5, -128, true, 2);
    check(16, 40, 33, 127, true, 3);
    check(30, 100, 70, -5, false, 4);
    check(64, 257, 20, 90, true, 5);
}

TEST_CASE("weight on the left: forced M and N tiles, W double buffered") {
    check(37, 50, 90, -100, true, 11, MatmulOptions{16, 8, {}, {}});  // 5 M tiles x 6 N tiles
    check(20, 33, 16, 3, true, 12, MatmulOptions{16, 1, {}, {}});     // one row per M tile
}

TEST_CASE("weight on the left: a fused clamp, and a fused epilogue table on each output tile (seed B11)") {
    check(20, 40, 33, -7, true, 21, MatmulOptions{0, 0, {-20, 60}, {}});
    expr::Table256 t;  // a scramble of the codes: any mistake in which code meets which entry shows
    for (std::size_t i = 0; i < 256; ++i) t.values[i] = static_cast<std::int32_t>((i * 77 + 13) % 256) - 128;
    check(37, 50, 90, -100, true, 22, MatmulOptions{16, 8, {}, t});  // partial M and N tiles
    check(9, 24, 16, 4, false, 23, MatmulOptions{0, 0, {}, t});
}

TEST_CASE("weight on the left: refusals") {
    ops::MatMulQuantPlan plan;
    plan.zp_a.assign(4, 0);
    plan.zp_b.assign(16, 5);
    plan.multipliers.assign(1, numeric::QuantizedMultiplier{1 << 30, -3});
    const std::vector<std::int8_t> w(4 * 16, 1);
    Builder b("mmL");
    REQUIRE(b.emit("nop", {}).ok());
    const DramMatrix X{2, 0, 16, 16, 16}, Y{3, 0, 4, 16, 16};
    auto bad = plan;
    bad.zp_a[1] = 3;
    CHECK_RULE(lower_matmul_left(b, bad, w, 4, 16, X, Y), "lower-matmul-zero-point");
    bad = plan;
    bad.zp_b[7] = 6;
    CHECK_RULE(lower_matmul_left(b, bad, w, 4, 16, X, Y), "lower-matmul-zero-point");
    bad = plan;
    bad.per_axis = ops::MatMulPerAxis::columns;
    bad.multipliers.assign(16, numeric::QuantizedMultiplier{1 << 30, -3});
    CHECK_RULE(lower_matmul_left(b, bad, w, 4, 16, X, Y), "lower-matmul-per-column");
    bad = plan;
    bad.negate = true;
    CHECK_RULE(lower_matmul_left(b, bad, w, 4, 16, X, Y), "lower-matmul-alpha");
    CHECK_RULE(lower_matmul_left(b, plan, w, 4, 16, DramMatrix{2, 0, 16, 16, 8}, Y), "lower-matmul-layout");
    const std::vector<std::int8_t> huge(static_cast<std::size_t>(4) * 300000, 1);
    CHECK_RULE(lower_matmul_left(b, plan, huge, 4, 300000, DramMatrix{2, 0, 300000, 16, 16}, Y), "lower-matmul-budget");
    CHECK(b.size() == 1);
    CHECK(b.weights().empty());
    CHECK(b.holders().empty());
}

}  // namespace matmul_left_test
