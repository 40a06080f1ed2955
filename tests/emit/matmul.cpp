// Differential verification of the MatMul lowering (emit/matmul.hpp): emit -> simulate -> compare with
// ops::call<ops::MatMul> bit for bit, no fault, no race. Shapes with odd K and N (padding of B's rows and columns),
// tiling of M and N (forced and by the real budgets), per-tensor and per-column weight scales, A zero points at both
// ends of int8; the FC 1024 -> 1000 and 1x1-conv shapes of the utilization bench; and the refusals.
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

// Test executables build as one unity TU per directory: this file's helpers and tests live in their own
// namespace, so their names hide (never overload) a sibling file's helpers of the same name.
namespace matmul_test {

namespace {

struct Problem {
    std::int64_t M, K, N;
    std::vector<std::int8_t> a, w;
    ops::TensorType ta, tb, ty;
};

Problem make_problem(std::int64_t M, std::int64_t K, std::int64_t N, std::int32_t zp_a, bool per_column,
                     std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::uniform_real_distribution<float> scale(0.002f, 0.05f);
    Problem p{M,
              K,
              N,
              std::vector<std::int8_t>(static_cast<std::size_t>(M * K)),
              std::vector<std::int8_t>(static_cast<std::size_t>(K * N)),
              {},
              {},
              {}};
    for (auto& x : p.a) x = static_cast<std::int8_t>(byte(rng));
    for (auto& x : p.w) x = static_cast<std::int8_t>(byte(rng));
    p.ta = {DType::i8, Shape{M, K}, numeric::make_quant(DType::i8, 0.05f, zp_a).value()};
    if (per_column) {
        std::vector<float> s(static_cast<std::size_t>(N));
        for (auto& x : s) x = scale(rng);
        p.tb = {DType::i8, Shape{K, N},
                numeric::make_quant_per_axis(DType::i8, s, std::vector<std::int32_t>(static_cast<std::size_t>(N), 0), 1,
                                             Shape{K, N})
                    .value()};
    } else {
        p.tb = {DType::i8, Shape{K, N}, numeric::make_quant(DType::i8, 0.01f, 0).value()};
    }
    // an output scale that keeps most results inside int8 (about 3 standard deviations of the products)
    const float sy = 0.05f * 0.03f * 74.0f * 74.0f * std::sqrt(static_cast<float>(K)) * 3.0f / 127.0f;
    p.ty = {DType::i8, Shape{M, N}, numeric::make_quant(DType::i8, sy, 3).value()};
    return p;
}

std::vector<std::int8_t> host(const Problem& p) { return et::host_matmul(p); }

/// Emit, run, return Y (M x N) and the report.
std::vector<std::int8_t> npu(const Problem& p, const MatmulOptions& opt, vnpu::sim::Report* report = nullptr,
                             std::vector<std::string>* log = nullptr) {
    const std::int64_t pa = emit::round16(p.K) + 16,
                       py = emit::round16(p.N);  // A's pitch wider than needed
    const ops::TensorType types[2] = {p.ta, p.tb};
    const auto plan = ops::MatMul::plan(types, {}, p.ty, janus::numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    Builder b("mm");
    const DramMatrix A{2, 0, p.M, p.K, pa}, Y{3, 0, p.M, p.N, py};
    const auto st = lower_matmul(b, *plan, A, p.w, p.K, p.N, Y, opt);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    if (log) *log = b.log();
    vnpu::sim::Machine m;
    m.dram[2].assign(static_cast<std::size_t>(p.M * pa), 0x5a);  // padding bytes are arbitrary
    for (std::int64_t r = 0; r < p.M; ++r)
        std::memcpy(&m.dram[2][static_cast<std::size_t>(r * pa)], &p.a[static_cast<std::size_t>(r * p.K)],
                    static_cast<std::size_t>(p.K));
    m.dram[3].resize(static_cast<std::size_t>(p.M * py));
    const auto r = et::run_clean(b, m);
    if (report) *report = r;
    std::vector<std::int8_t> y(static_cast<std::size_t>(p.M * p.N));
    for (std::int64_t i = 0; i < p.M; ++i)
        std::memcpy(&y[static_cast<std::size_t>(i * p.N)], &m.dram[3][static_cast<std::size_t>(i * py)],
                    static_cast<std::size_t>(p.N));
    return y;
}

void check(std::int64_t M, std::int64_t K, std::int64_t N, std::int32_t zp_a, bool per_column, std::uint32_t seed,
           MatmulOptions opt = {}) {
    CAPTURE(M);
    CAPTURE(K);
    CAPTURE(N);
    CAPTURE(zp_a);
    CAPTURE(per_column);
    CAPTURE(opt.max_m_tile);
    CAPTURE(opt.max_n_tile);
    CAPTURE(opt.clamp.lo);
    CAPTURE(opt.clamp.hi);
    const Problem p = make_problem(M, K, N, zp_a, per_column, seed);
    auto want = host(p);  // then a fused activation clamp (MatmulOptions::clamp) of its codes
    for (auto& v : want) v = static_cast<std::int8_t>(std::clamp<int>(v, opt.clamp.lo, opt.clamp.hi));
    if (opt.lut)  // then a fused epilogue table (MatmulOptions::lut): T[c + 128]
        for (auto& v : want) v = static_cast<std::int8_t>(opt.lut->values[static_cast<std::size_t>(v + 128)]);
    const auto got = npu(p, opt);
    CHECK(got == want);
    int saturated = 0, low = 0, high = 0;
    for (auto v : want) {
        saturated += (v == -128 || v == 127);
        low += v == opt.clamp.lo;
        high += v == opt.clamp.hi;
    }
    CHECK(saturated * 4 < static_cast<int>(want.size()) + 4);   // the data is not all clamped
    if (!(opt.clamp == Clamp{})) CHECK((low > 0 && high > 0));  // the clamp cut both ends
}

}  // namespace

TEST_CASE("MatMul on the MAC array: odd shapes, per-tensor and per-column scales, zero points at the ends") {
    check(1, 1, 1, 0, false, 1);
    check(7, 13, 5, -128, true, 2);
    check(17, 16, 16, 127, false, 3);
    check(33, 100, 70, 5, true, 4);
    check(5, 40, 33, -7, true, 5);
}

TEST_CASE("a fused activation clamp in the requantization equals the MatMul followed by the clamp of its codes") {
    check(37, 50, 70, 11, true, 21, MatmulOptions{16, 5, {3, 90}, {}});
    check(20, 40, 33, -7, false, 22, MatmulOptions{0, 0, {-20, -2}, {}});
}

TEST_CASE("a fused epilogue table: lut.apply on each output tile equals the MatMul followed by the table") {
    expr::Table256 t;  // a scramble of the codes: any mistake in which code meets which entry shows
    for (std::size_t i = 0; i < 256; ++i) t.values[i] = static_cast<std::int32_t>((i * 77 + 13) % 256) - 128;
    check(37, 50, 70, 11, true, 23, MatmulOptions{16, 5, {}, t});  // partial M and N tiles
    check(20, 40, 33, -7, false, 24, MatmulOptions{0, 0, {}, t});
}

TEST_CASE("MatMul tiling: forced M and N tiles (partial last tiles, B double buffered) and the real budgets") {
    check(37, 50, 70, 11, true, 6, MatmulOptions{16, 5, {}, {}});
    check(64, 64, 48, -3, false, 7, MatmulOptions{16, 0, {}, {}});
    check(200, 300, 130, 0, true, 8);  // ACC limits the M tile
    check(3, 2000, 200, 9, true, 9);   // Kp x N of B exceeds LMEM: several N tiles
}

TEST_CASE("MatMul at MobileNet sizes: FC 1024 -> 1000 and the 1x1 conv 56x56x64 -> 64 as a matmul") {
    std::vector<std::string> log;
    vnpu::sim::Report r;
    {
        const Problem p = make_problem(1, 1024, 1000, -5, true, 10);
        CHECK(npu(p, {}, &r, &log) == host(p));
        CHECK(r.macs == static_cast<std::uint64_t>(1024) * 1008);
        REQUIRE(!log.empty());
        CHECK(log.back().find("B double buffered") != std::string::npos);
    }
    {
        const Problem p = make_problem(56 * 56, 64, 64, 2, true, 11);
        CHECK(npu(p, {}, &r, &log) == host(p));
        CHECK(log.back().find("B loaded once") != std::string::npos);
    }
}

TEST_CASE("Gemm with C as a per-column int32 bias: the bias enters the rq table, bit-exact against ops::Gemm") {
    for (const std::int64_t N : {16, 45}) {
        CAPTURE(N);
        const std::int64_t M = 9, K = 70;
        const Problem p = make_problem(M, K, N, -20, true, 13);
        std::vector<std::int32_t> c(static_cast<std::size_t>(N));
        std::vector<float> cs(static_cast<std::size_t>(N));
        for (std::int64_t n = 0; n < N; ++n) {
            c[static_cast<std::size_t>(n)] = static_cast<std::int32_t>((n * 7919) % 40001) - 20000;
            cs[static_cast<std::size_t>(n)] =
                static_cast<float>(static_cast<double>(p.ta.quant->scale(0)) *
                                   static_cast<double>(p.tb.quant->scale(static_cast<std::size_t>(n))));
        }
        const auto qc = numeric::make_quant_per_axis(
            DType::i32, cs, std::vector<std::int32_t>(static_cast<std::size_t>(N), 0), 0, Shape{N});
        REQUIRE(qc.ok());
        const Tensor a = Tensor::from<std::int8_t>(p.ta.shape, p.a, *p.ta.quant);
        const Tensor b = Tensor::from<std::int8_t>(p.tb.shape, p.w, *p.tb.quant);
        const Tensor tc = Tensor::from<std::int32_t>(Shape{N}, c, *qc);
        const auto want = ops::call<ops::Gemm>({a, b, tc}, {}, p.ty);
        REQUIRE_MESSAGE(want.ok(), (want.ok() ? std::string() : want.error().message()));
        const ops::TensorType types[3] = {p.ta, p.tb, ops::type_of(tc)};
        const auto plan = ops::Gemm::plan(types, {}, p.ty, janus::numeric::default_rounding_mode);
        REQUIRE(plan.ok());
        Builder bld("gemm");
        const std::int64_t py = emit::round16(N);
        REQUIRE(
            lower_matmul(bld, *plan, DramMatrix{2, 0, M, K, 80}, p.w, K, N, DramMatrix{3, 0, M, N, py}, {}, c).ok());
        vnpu::sim::Machine m;
        m.dram[2].assign(static_cast<std::size_t>(M * 80), 0);
        for (std::int64_t r = 0; r < M; ++r)
            std::memcpy(&m.dram[2][static_cast<std::size_t>(r * 80)], &p.a[static_cast<std::size_t>(r * K)],
                        static_cast<std::size_t>(K));
        m.dram[3].resize(static_cast<std::size_t>(M * py));
        et::run_clean(bld, m);
        const auto w = want->to_vector<std::int8_t>();
        for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t n = 0; n < N; ++n)
                CHECK(static_cast<std::int8_t>(m.dram[3][static_cast<std::size_t>(i * py + n)]) ==
                      w[static_cast<std::size_t>(i * N + n)]);
    }
}

TEST_CASE("B's zero points: b - zp_b in int8 parts, one mac.mma per part (QLinearMatMul's uint8 weights)") {
    struct ZpCase {
        std::int64_t M, K, N;
        std::vector<std::int32_t> zps;  // cycled over the columns
        std::int64_t parts;
        MatmulOptions opt;
    };
    const std::vector<ZpCase> cases{
        {2, 4, 3, {114 - 128}, 2, {}},                                  // the node test's QLinearMatMul, as int8
        {9, 37, 21, {127}, 2, {}},                                      // b - zp in [-255, 0]
        {9, 37, 21, {-128}, 3, {}},                                     // [0, 255]: uint8 weights of zero point 0
        {33, 70, 40, {5, -77, 100, 0, -128, 127}, 3, {16, 8, {}, {}}},  // per column; tiles, B double buffered
    };
    std::uint32_t seed = 60;
    for (const auto& c : cases) {
        CAPTURE(c.N);
        CAPTURE(c.parts);
        Problem p = make_problem(c.M, c.K, c.N, 0, true, ++seed);
        std::vector<std::int32_t> zps(static_cast<std::size_t>(c.N));
        for (std::size_t n = 0; n < zps.size(); ++n) zps[n] = c.zps[n % c.zps.size()];
        p.tb.quant = numeric::make_quant_per_axis(DType::i8, p.tb.quant->scales, zps, 1, p.tb.shape).value();
        const float sy = p.ty.quant->scale() * 2.0f;  // b - zp spreads about twice as wide
        p.ty.quant = numeric::make_quant(DType::i8, sy, 3).value();
        const auto want = host(p);
        int saturated = 0;
        for (auto v : want) saturated += (v == -128 || v == 127);
        CHECK(saturated * 4 < static_cast<int>(want.size()) + 4);
        std::vector<std::string> log;
        CHECK(npu(p, c.opt, nullptr, &log) == want);
        const std::string note = "mm: matmul: B's zero points: b - zp_b in " + std::to_string(c.parts) +
                                 " int8 parts, " + std::to_string(c.parts) + " MACs per step";
        CHECK(std::find(log.begin(), log.end(), note) != log.end());
    }
}

TEST_CASE("MatMul refusals name the rule and leave nothing in the builder") {
    const Problem p = make_problem(4, 16, 16, 0, true, 12);
    const ops::TensorType types[2] = {p.ta, p.tb};
    auto plan = ops::MatMul::plan(types, {}, p.ty, janus::numeric::default_rounding_mode).value();
    const DramMatrix A{2, 0, 4, 16, 16}, Y{3, 0, 4, 16, 16};
    Builder b("mm");
    REQUIRE(b.emit("nop", {}).ok());
    auto bad = plan;
    bad.zp_b.pop_back();  // a zero point per column
    CHECK_RULE(lower_matmul(b, bad, A, p.w, 16, 16, Y), "lower-matmul-layout");
    bad = plan;
    bad.zp_a[2] = 1;
    CHECK_RULE(lower_matmul(b, bad, A, p.w, 16, 16, Y), "lower-matmul-zero-point");
    bad = plan;
    bad.per_axis = ops::MatMulPerAxis::rows;
    CHECK_RULE(lower_matmul(b, bad, A, p.w, 16, 16, Y), "lower-matmul-per-row");
    bad = plan;
    bad.negate = true;
    CHECK_RULE(lower_matmul(b, bad, A, p.w, 16, 16, Y), "lower-matmul-alpha");
    // a plan without multipliers (MatMulInteger's zero points only) on a requantized output: refused, not read past
    bad = plan;
    bad.multipliers.clear();
    CHECK_RULE(lower_matmul(b, bad, A, p.w, 16, 16, Y), "lower-matmul-layout");
    CHECK_RULE(lower_matmul(b, plan, DramMatrix{2, 0, 4, 16, 8}, p.w, 16, 16, Y), "lower-matmul-layout");
    CHECK_RULE(lower_matmul(b, plan, A, p.w, 16, 16, DramMatrix{3, 8, 4, 16, 16}), "lower-matmul-layout");
    auto hog = b.alloc(Mem::lmem, 256 * 1024 - 256, "hog");
    CHECK_RULE(lower_matmul(b, plan, A, p.w, 16, 16, Y), "lower-matmul-budget");
    CHECK(b.size() == 1);
    CHECK(b.weights().empty());
    CHECK(b.holders() == "LMEM +0 261888 B 'hog'\n");
}

}  // namespace matmul_test
