// Differential verification of the batched MatMul lowering (emit/matmul.hpp, MatmulOptions::batch): a rank-3
// MatMul [G, M, K] x [G, K, N] and its numpy broadcasts ([G, M, K] x [K, N], [M, K] x [G, K, N], a batch of 1 on
// either side) as one lower_matmul kernel with per-product base offsets; emit -> simulate -> compare with
// ops::call<ops::MatMul> on the rank-3 tensors bit for bit, no fault, no race. Batch counts 1 to 5, shapes that are
// not multiples of 16, A zero points at both ends of int8, B's zero points (b - zp_b in int8 parts, per tensor and
// per column), per-tensor and per-column scales, forced M and N tiles, strides wider than the matrices, a fused
// epilogue table; and the refusals of a malformed batch.
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
#include "matmul_host.hpp"

using namespace janus;
using namespace janus::emit;

// Test executables build as one unity TU per directory: this file's helpers live in their own namespace.
namespace matmul_batch_test {

namespace {

/// One batched problem. A is [ga, M, K] (or [M, K] when a_rank2), B is [gb, K, N] (or [K, N] when b_rank2); the
/// product has G = max(ga, gb) matrices. B's zero points cycle `zps` over the columns.
struct Case {
    std::int64_t ga, gb, M, K, N;
    bool a_rank2 = false, b_rank2 = false;
    std::int32_t zp_a = 0;
    bool per_column = false;
    std::vector<std::int32_t> zps = {0};
    MatmulOptions opt = {};
};

struct Problem {
    Case c;
    std::int64_t G;
    std::vector<std::int8_t> a, w;
    ops::TensorType ta, tb, ty;
};

Problem make_problem(const Case& c, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::uniform_real_distribution<float> scale(0.002f, 0.05f);
    Problem p{c, std::max(c.ga, c.gb), {}, {}, {}, {}, {}};
    p.a.resize(static_cast<std::size_t>(c.ga * c.M * c.K));
    p.w.resize(static_cast<std::size_t>(c.gb * c.K * c.N));
    for (auto& x : p.a) x = static_cast<std::int8_t>(byte(rng));
    for (auto& x : p.w) x = static_cast<std::int8_t>(byte(rng));
    const Shape sa = c.a_rank2 ? Shape{c.M, c.K} : Shape{c.ga, c.M, c.K};
    const Shape sb = c.b_rank2 ? Shape{c.K, c.N} : Shape{c.gb, c.K, c.N};
    p.ta = {DType::i8, sa, numeric::make_quant(DType::i8, 0.05f, c.zp_a).value()};
    std::vector<std::int32_t> zps(static_cast<std::size_t>(c.N));
    for (std::size_t n = 0; n < zps.size(); ++n) zps[n] = c.zps[n % c.zps.size()];
    const bool zp_varies = std::any_of(zps.begin(), zps.end(), [&](std::int32_t z) { return z != zps[0]; });
    if (c.per_column || zp_varies) {
        std::vector<float> s(static_cast<std::size_t>(c.N), 0.01f);
        if (c.per_column)
            for (auto& x : s) x = scale(rng);
        p.tb = {DType::i8, sb,
                numeric::make_quant_per_axis(DType::i8, s, zps, static_cast<int>(sb.size()) - 1, sb).value()};
    } else {
        p.tb = {DType::i8, sb, numeric::make_quant(DType::i8, 0.01f, zps[0]).value()};
    }
    // an output scale that keeps most results inside int8 (about 3 standard deviations of the products; b - zp_b
    // spreads wider when B has a zero point)
    const bool zp_b = std::any_of(zps.begin(), zps.end(), [](std::int32_t z) { return z != 0; });
    const float sy =
        0.05f * 0.03f * 74.0f * 74.0f * std::sqrt(static_cast<float>(c.K)) * 3.0f / 127.0f * (zp_b ? 2.0f : 1.0f);
    p.ty = {DType::i8, Shape{p.G, c.M, c.N}, numeric::make_quant(DType::i8, sy, 3).value()};
    return p;
}

/// The host's MatMul on the rank-3 (or rank-2) tensors: G x M x N values.
std::vector<std::int8_t> host(const Problem& p) { return et::host_matmul(p); }

/// Emit one batched kernel, run it, return Y (G x M x N) and the builder's log. A's matrices are laid out
/// `a_gap` bytes apart beyond their rows and Y's `y_gap` bytes apart (strides wider than the matrices).
std::vector<std::int8_t> npu(const Problem& p, std::vector<std::string>* log = nullptr,
                             vnpu::sim::Report* report = nullptr, std::int64_t a_gap = 32, std::int64_t y_gap = 16) {
    const Case& c = p.c;
    const std::int64_t pa = emit::round16(c.K) + 16, py = emit::round16(c.N);  // A's pitch wider than needed
    const ops::TensorType types[2] = {p.ta, p.tb};
    const auto plan = ops::MatMul::plan(types, {}, p.ty, janus::numeric::default_rounding_mode);
    REQUIRE_MESSAGE(plan.ok(), (plan.ok() ? std::string() : plan.error().message()));
    MatmulOptions opt = c.opt;
    const std::int64_t as = c.M * pa + a_gap, ys = c.M * py + y_gap;
    opt.batch = {p.G, c.ga > 1 ? as : 0, ys};
    Builder b("mmb");
    const DramMatrix A{2, 16, c.M, c.K, pa}, Y{3, 32, c.M, c.N, py};
    const auto st = lower_matmul(b, *plan, A, p.w, c.K, c.N, Y, opt);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    if (log) *log = b.log();
    vnpu::sim::Machine m;
    m.dram[2].assign(static_cast<std::size_t>(16 + c.ga * as), 0x5a);  // padding and gaps are arbitrary
    for (std::int64_t g = 0; g < c.ga; ++g)
        for (std::int64_t r = 0; r < c.M; ++r)
            std::memcpy(&m.dram[2][static_cast<std::size_t>(16 + g * as + r * pa)],
                        &p.a[static_cast<std::size_t>((g * c.M + r) * c.K)], static_cast<std::size_t>(c.K));
    m.dram[3].assign(static_cast<std::size_t>(32 + p.G * ys), 0xa5);
    const auto r = et::run_clean(b, m);
    if (report) *report = r;
    std::vector<std::int8_t> y(static_cast<std::size_t>(p.G * c.M * c.N));
    for (std::int64_t g = 0; g < p.G; ++g)
        for (std::int64_t i = 0; i < c.M; ++i)
            std::memcpy(&y[static_cast<std::size_t>((g * c.M + i) * c.N)],
                        &m.dram[3][static_cast<std::size_t>(32 + g * ys + i * py)], static_cast<std::size_t>(c.N));
    // the gaps between Y's matrices are not written
    for (std::int64_t g = 0; g < p.G; ++g)
        for (std::int64_t e = c.M * py; e < ys; ++e)
            CHECK(m.dram[3][static_cast<std::size_t>(32 + g * ys + e)] == 0xa5);
    return y;
}

void check(const Case& c, std::uint32_t seed, std::vector<std::string>* log = nullptr) {
    CAPTURE(c.ga);
    CAPTURE(c.gb);
    CAPTURE(c.M);
    CAPTURE(c.K);
    CAPTURE(c.N);
    CAPTURE(c.zp_a);
    CAPTURE(c.per_column);
    CAPTURE(c.opt.max_m_tile);
    CAPTURE(c.opt.max_n_tile);
    const Problem p = make_problem(c, seed);
    auto want = host(p);
    if (c.opt.lut)  // then the fused epilogue table: T[c + 128]
        for (auto& v : want) v = static_cast<std::int8_t>(c.opt.lut->values[static_cast<std::size_t>(v + 128)]);
    const auto got = npu(p, log);
    CHECK(got == want);
    int saturated = 0;
    for (auto v : want) saturated += (v == -128 || v == 127);
    CHECK(saturated * 4 < static_cast<int>(want.size()) + 4);  // the data is not all clamped
    // the products differ from each other (a kernel computing one product for all would fail above)
    if (p.G > 1) {
        const auto per = static_cast<std::ptrdiff_t>(c.M * c.N);
        CHECK(!std::equal(want.begin(), want.begin() + per, want.begin() + per));
    }
}

bool has(const std::vector<std::string>& log, const std::string& s) {
    return std::any_of(log.begin(), log.end(), [&](const std::string& l) { return l.find(s) != std::string::npos; });
}

}  // namespace

TEST_CASE("batched MatMul [G, M, K] x [G, K, N]: one B block per product, odd shapes, zero points at the ends") {
    check({2, 2, 2, 4, 3, false, false, 0, false, {114 - 128}}, 1);  // the node test's QLinearMatMul 3D, as int8
    check({3, 3, 7, 13, 5, false, false, -128, true}, 2);
    check({4, 4, 17, 16, 16, false, false, 127, false}, 3);
    check({5, 5, 5, 40, 33, false, false, -7, true, {5, -77, 100, 0, -128, 127}}, 4);  // b - zp_b in 3 parts
    check({1, 1, 9, 37, 21, false, false, 11, false}, 5);                              // a batch of one
}

TEST_CASE("batched MatMul, numpy broadcasting over the batch: a shared B, a shared A, a batch of 1 on either side") {
    std::vector<std::string> log;
    check({3, 1, 7, 50, 45, false, true, 9, true, {-3}}, 11, &log);  // [3, M, K] x [K, N]: B packed once
    CHECK(has(log, "B shared (each N tile loaded once for the batch)"));
    CHECK(has(log, "B loaded once"));
    check({4, 1, 6, 20, 19, false, false, -5, false}, 12, &log);  // [4, M, K] x [1, K, N]
    CHECK(has(log, "B shared"));
    check({1, 4, 5, 30, 17, true, false, 20, true}, 13, &log);  // [M, K] x [4, K, N]: A broadcast
    CHECK(has(log, "A broadcast, B one per product"));
    check({1, 3, 8, 24, 40, false, false, -128, false, {127}}, 14, &log);  // [1, M, K] x [3, K, N]
    CHECK(has(log, "A broadcast"));
}

TEST_CASE("batched MatMul tiling: forced M and N tiles, B tiles double buffered across products") {
    std::vector<std::string> log;
    check({3, 3, 37, 50, 70, false, false, 11, true, {0}, MatmulOptions{16, 5, {}, {}}}, 21, &log);
    CHECK(has(log, "3 x 37x50x70 as 8 M tile(s) of 5 x 5 N tile(s) of 16; B double buffered"));
    check({2, 2, 33, 70, 40, false, false, -3, true, {5, -77, 100}, MatmulOptions{16, 8, {}, {}}}, 22, &log);
    check({3, 1, 37, 50, 70, false, true, 0, false, {0}, MatmulOptions{32, 16, {}, {}}}, 23, &log);  // shared B
    // one N tile and one M tile per product: only the per-product B blocks double buffer
    check({4, 4, 3, 20, 10, false, false, 1, false}, 24, &log);
    CHECK(has(log, "4 x 3x20x10 as 1 M tile(s) of 3 x 1 N tile(s) of 16; B double buffered"));
    check({2, 2, 3, 2000, 200, false, false, 9, true}, 25, &log);  // Kp x N of B exceeds LMEM: several N tiles
}

TEST_CASE("batched MatMul with a fused epilogue table on every product's tiles") {
    expr::Table256 t;  // a scramble of the codes: any mistake in which code meets which entry shows
    for (std::size_t i = 0; i < 256; ++i) t.values[i] = static_cast<std::int32_t>((i * 77 + 13) % 256) - 128;
    check({3, 3, 21, 50, 35, false, false, 11, true, {0}, MatmulOptions{16, 5, {}, t}}, 31);
    check({2, 1, 9, 40, 33, false, true, -7, false, {0}, MatmulOptions{0, 0, {}, t}}, 32);
}

TEST_CASE("a malformed batch is refused with lower-matmul-layout and leaves nothing in the builder") {
    const Problem p = make_problem({2, 2, 4, 16, 16}, 41);
    const ops::TensorType types[2] = {p.ta, p.tb};
    const auto plan = ops::MatMul::plan(types, {}, p.ty, janus::numeric::default_rounding_mode).value();
    const DramMatrix A{2, 0, 4, 16, 16}, Y{3, 0, 4, 16, 16};
    Builder b("mmb");
    REQUIRE(b.emit("nop", {}).ok());
    const auto with = [](std::int64_t count, std::int64_t as, std::int64_t ys) {
        MatmulOptions o;
        o.batch = {count, as, ys};
        return o;
    };
    CHECK(lower_matmul(b, plan, A, p.w, 16, 16, Y, with(2, 64, 64)).ok());  // the well-formed batch
    const std::size_t size = b.size(), weights = b.weights().size();
    CHECK_RULE(lower_matmul(b, plan, A, p.w, 16, 16, Y, with(0, 64, 64)), "lower-matmul-layout");  // no product
    CHECK_RULE(lower_matmul(b, plan, A, p.w, 16, 16, Y, with(2, 40, 64)), "lower-matmul-layout");  // A stride % 16
    CHECK_RULE(lower_matmul(b, plan, A, p.w, 16, 16, Y, with(2, 64, -64)), "lower-matmul-layout");
    CHECK_RULE(lower_matmul(b, plan, A, p.w, 16, 16, Y, with(2, 64, 48)), "lower-matmul-layout");  // Y overlaps
    CHECK_RULE(lower_matmul(b, plan, A, p.w, 16, 16, Y, with(3, 64, 64)), "lower-matmul-layout");  // 2 blocks for 3
    const std::vector<std::int8_t> odd(p.w.begin(), p.w.end() - 1);
    CHECK_RULE(lower_matmul(b, plan, A, odd, 16, 16, Y, with(2, 64, 64)), "lower-matmul-layout");
    CHECK_RULE(lower_matmul_left(b, plan, std::span<const std::int8_t>(p.w).first(64), 4, 16,
                                 DramMatrix{2, 0, 16, 16, 16}, Y, with(2, 64, 64)),
               "lower-matmul-layout");  // a batch is lower_matmul's only
    CHECK(b.size() == size);
    CHECK(b.weights().size() == weights);
}

}  // namespace matmul_batch_test
