// Differential verification of the int32 accumulator output (ConvInteger's plan, MatmulOptions::int32_output):
// emit -> simulate -> compare with the host's ConvInteger / MatMulInteger kernels (ops::call) bit for bit, no fault,
// no race. The sums are stored from ACC as little-endian int32 (4 bytes per element, pitch round16(4 C)); the cases
// use channel counts that are not multiples of 16 (a last N tile narrower than 16 lanes), zero points at both ends
// of int8 in x and w, per-channel w zero points (w - zw in 2 and 3 int8 parts), padding, strides, dilation, groups,
// forced tiling, sums beyond 16 bits (so every byte of a lane matters), a negative control (the store's wait on the
// product removed: the race detector reports it) and the refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <janus/emit/conv.hpp>
#include <janus/emit/matmul.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../emit/conv_support.hpp"
#include "../emit/emit_support.hpp"
#include "../support/check_rule.hpp"

using namespace janus;
using namespace janus::emit;

// Test executables build as one unity TU per directory: this file's helpers live in their own namespace.
namespace integer_test {

namespace {

/// A little-endian int32 assembled byte by byte (not memcpy: the test states the byte order it expects).
std::int32_t le32(const std::vector<std::uint8_t>& mem, std::size_t at) {
    std::uint32_t u = 0;
    for (std::size_t k = 0; k < 4; ++k) u |= static_cast<std::uint32_t>(mem[at + k]) << (8 * k);
    return static_cast<std::int32_t>(u);
}

/// The sums are not small: some need more than 16 bits and both signs occur (a wrong byte order or a truncation to
/// fewer bytes shows).
void check_spread(const std::vector<std::int32_t>& want) {
    std::int64_t big = 0, neg = 0;
    for (auto v : want) big += (v > 65535 || v < -65536), neg += v < 0;
    CHECK(big > 0);
    CHECK(neg > 0);
}

struct ConvCase {
    std::int64_t C, H, W, Co;
    et::ConvSpec k;
    std::int32_t zp_x;
    std::vector<std::int32_t> zp_w;  ///< cycled over the output channels
    ConvOptions opt{};
    std::int64_t extra_pitch = 0;  ///< y's pixels this many bytes further apart than round16(4 Co)
};

/// The host's ConvInteger and the emitted kernel; returns the run's report. `mutate`: a deliberate bug (et::run).
vnpu::sim::Report check_conv(const ConvCase& t, std::uint32_t seed, std::vector<std::string>* log = nullptr,
                             const std::function<void(std::vector<vnpu::Instr>&)>& mutate = {},
                             std::vector<std::int32_t>* sums = nullptr) {
    CAPTURE(t.C);
    CAPTURE(t.H);
    CAPTURE(t.W);
    CAPTURE(t.Co);
    CAPTURE(t.k.kh);
    CAPTURE(t.k.kw);
    CAPTURE(t.k.a.strides[0]);
    CAPTURE(t.k.a.group);
    CAPTURE(t.zp_x);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    const et::ConvSpec& k = t.k;
    const std::int64_t C = t.C, H = t.H, W = t.W, Co = t.Co, Cg = C / k.a.group, Cp = round16(C);
    const std::int64_t Yp = round16(4 * Co) + t.extra_pitch;
    std::vector<std::int8_t> x(static_cast<std::size_t>(C * H * W)), w(static_cast<std::size_t>(Co * Cg * k.kh * k.kw));
    for (auto& v : x) v = static_cast<std::int8_t>(byte(rng));
    for (auto& v : w) v = static_cast<std::int8_t>(byte(rng));
    std::vector<std::int32_t> zw(static_cast<std::size_t>(Co));
    for (std::size_t c = 0; c < zw.size(); ++c) zw[c] = t.zp_w[c % t.zp_w.size()];
    // ConvInteger's zero points are the operands' quantization with scale 1 (the importer's form)
    const auto qx = numeric::make_quant(DType::i8, 1.0f, t.zp_x).value();
    const auto qw =
        numeric::make_quant_per_axis(DType::i8, std::vector<float>(zw.size(), 1.0f), zw, 0, Shape{Co, Cg, k.kh, k.kw})
            .value();
    const Tensor tx = Tensor::from<std::int8_t>(Shape{1, C, H, W}, x, qx);
    const Tensor tw = Tensor::from<std::int8_t>(Shape{Co, Cg, k.kh, k.kw}, w, qw);
    const ops::ConvInteger::Attrs& at = k.a;
    const ops::TensorType types[2] = {ops::type_of(tx), ops::type_of(tw)};
    const auto shape = ops::ConvInteger::infer(types, at);
    REQUIRE(shape.ok());
    const std::int64_t Ho = shape->shape[2], Wo = shape->shape[3];
    const ops::TensorType out{DType::i32, shape->shape, std::nullopt};
    const auto host = ops::call<ops::ConvInteger>({tx, tw}, at, out);
    REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
    const auto want = host->to_vector<std::int32_t>();
    if (sums) *sums = want;

    const auto plan = ops::ConvInteger::plan(types, at, out, numeric::Rounding::round_double);
    REQUIRE(plan.ok());
    Builder b("conv");
    const DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, Ho, Wo, Co, Yp};
    const auto st = lower_conv(b, *plan, X, w, {}, Y, t.opt);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    if (log) *log = b.log();
    vnpu::sim::Machine m;
    m.dram[2] = et::to_nhwc(x, C, H * W, Cp, 0x5a);  // padding channels hold anything
    m.dram[3].assign(static_cast<std::size_t>(Ho * Wo * Yp), 0xa5);
    const auto r = et::run(b, m, mutate);
    if (mutate) return r;
    std::vector<std::int32_t> got(want.size());
    for (std::int64_t c = 0; c < Co; ++c)
        for (std::int64_t p = 0; p < Ho * Wo; ++p)
            got[static_cast<std::size_t>(c * Ho * Wo + p)] = le32(m.dram[3], static_cast<std::size_t>(p * Yp + 4 * c));
    CHECK(got == want);
    // bytes past round16(4 Co) in a pixel are never written
    for (std::int64_t p = 0; p < Ho * Wo; ++p)
        for (std::int64_t e = round16(4 * Co); e < Yp; ++e)
            CHECK(m.dram[3][static_cast<std::size_t>(p * Yp + e)] == 0xa5);
    return r;
}

using et::window;

struct MatmulCase {
    std::int64_t M, K, N;
    std::vector<std::int32_t> zp_a;  ///< cycled over the rows; one value: per tensor
    std::vector<std::int32_t> zp_b;  ///< cycled over the columns
    MatmulOptions opt{};
};

vnpu::sim::Report check_matmul(const MatmulCase& t, std::uint32_t seed, std::vector<std::string>* log = nullptr) {
    CAPTURE(t.M);
    CAPTURE(t.K);
    CAPTURE(t.N);
    CAPTURE(t.zp_a.size());
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    const std::int64_t M = t.M, K = t.K, N = t.N, pa = round16(K) + 16, py = round16(4 * N);
    std::vector<std::int8_t> a(static_cast<std::size_t>(M * K)), w(static_cast<std::size_t>(K * N));
    for (auto& v : a) v = static_cast<std::int8_t>(byte(rng));
    for (auto& v : w) v = static_cast<std::int8_t>(byte(rng));
    std::vector<std::int32_t> zb(static_cast<std::size_t>(N));
    for (std::size_t n = 0; n < zb.size(); ++n) zb[n] = t.zp_b[n % t.zp_b.size()];
    std::vector<std::int32_t> za(static_cast<std::size_t>(M));
    for (std::size_t r = 0; r < za.size(); ++r) za[r] = t.zp_a[r % t.zp_a.size()];
    const auto qa =
        t.zp_a.size() == 1
            ? numeric::make_quant(DType::i8, 1.0f, t.zp_a[0]).value()
            : numeric::make_quant_per_axis(DType::i8, std::vector<float>(za.size(), 1.0f), za, 0, Shape{M, K}).value();
    const auto qb =
        numeric::make_quant_per_axis(DType::i8, std::vector<float>(zb.size(), 1.0f), zb, 1, Shape{K, N}).value();
    const Tensor ta = Tensor::from<std::int8_t>(Shape{M, K}, a, qa);
    const Tensor tb = Tensor::from<std::int8_t>(Shape{K, N}, w, qb);
    const auto host =
        ops::call<ops::MatMulInteger>({ta, tb}, {}, ops::TensorType{DType::i32, Shape{M, N}, std::nullopt});
    REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
    const auto want = host->to_vector<std::int32_t>();

    const ops::TensorType types[2] = {ops::type_of(ta), ops::type_of(tb)};
    const auto plan =
        ops::MatMulInteger::plan(types, {}, ops::TensorType{DType::i32, Shape{M, N}, std::nullopt}, numeric::Rounding::round_double);
    REQUIRE(plan.ok());
    Builder b("mm");
    MatmulOptions opt = t.opt;
    opt.int32_output = true;
    const DramMatrix A{2, 0, M, K, pa}, Y{3, 0, M, N, py};
    const auto st = lower_matmul(b, *plan, A, w, K, N, Y, opt);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    if (log) *log = b.log();
    vnpu::sim::Machine m;
    m.dram[2].assign(static_cast<std::size_t>(M * pa), 0x5a);  // padding bytes are arbitrary
    for (std::int64_t r = 0; r < M; ++r)
        std::memcpy(&m.dram[2][static_cast<std::size_t>(r * pa)], &a[static_cast<std::size_t>(r * K)],
                    static_cast<std::size_t>(K));
    m.dram[3].assign(static_cast<std::size_t>(M * py), 0xa5);
    const auto r = et::run_clean(b, m);
    std::vector<std::int32_t> got(want.size());
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t n = 0; n < N; ++n)
            got[static_cast<std::size_t>(i * N + n)] = le32(m.dram[3], static_cast<std::size_t>(i * py + 4 * n));
    CHECK(got == want);
    return r;
}

bool logged(const std::vector<std::string>& log, const std::string& part) {
    return std::any_of(log.begin(), log.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("ConvInteger on the MAC array: int32 sums stored from ACC equal the host kernel") {
    std::vector<std::string> log;
    // the node tests' shapes (one channel, 2x2 / 3x3 kernels), uint8 weights of zero point 0 as int8: zw = -128
    check_conv({1, 3, 3, 1, window(2, 2, 1, {0, 0, 0, 0}), 1 - 128, {-128}}, 1, &log);
    CHECK(logged(log, "int32 accumulator output, stored from ACC"));
    check_conv({1, 5, 5, 1, window(3, 3, 1, {1, 1, 1, 1}), 0, {0}}, 2);
    // C, Co not multiples of 16; zero points at both ends; per-channel zw; padding, strides, dilation
    check_conv({13, 7, 9, 24, window(3, 3, 1, {1, 0, 2, 1}), -128, {127, -128, 0, 5}}, 3, &log);
    CHECK(logged(log, "weight zero points: w - zw in 3 int8 parts"));  // w = 127 meets zw = -128
    check_conv({40, 5, 6, 5, window(5, 3, 1, {2, 1, 2, 1}), 127, {3}}, 4);
    check_conv({3, 9, 9, 7, window(3, 3, 2, {1, 1, 1, 1}), -9, {-77, 100}}, 5);
    check_conv({16, 9, 10, 18, window(3, 3, 1, {2, 2, 2, 2}, 1, 2), 3, {0}}, 6);
    check_conv({13, 11, 8, 3, et::conv_spec(3, 2, 3, 1, 2, 1, {1, 0, 2, 1}), 7, {60, -60, 1}}, 7);
    check_conv({12, 6, 5, 8, window(3, 3, 1, {1, 1, 1, 1}, 4), 60, {-128, 127}}, 8);  // groups: 3 in, 2 out each
    check_conv({40, 4, 5, 130, window(1, 1, 1, {0, 0, 0, 0}), 9, {0}}, 9, nullptr);   // 1x1, Co = 130
}

TEST_CASE("ConvInteger int32 output: forced tiling, a last N tile of 8 channels, a wider output pitch") {
    // 40 channels in 16-channel N tiles: 16, 16, 8 (32 B of the last tile stored); one output row per M tile
    check_conv({24, 7, 9, 40, window(3, 3, 1, {1, 1, 1, 1}), 11, {-128, 127, 3}, ConvOptions{16, 1, {}, {}}}, 11);
    check_conv({24, 9, 6, 33, window(3, 3, 2, {1, 1, 1, 1}), -100, {5}, ConvOptions{16, 2, {}, {}}, 48}, 12);
    std::vector<std::string> log;
    check_conv({16, 6, 7, 5, window(3, 3, 1, {1, 1, 1, 1}), 0, {0}, ConvOptions{}, 32}, 13, &log);
    CHECK(logged(log, "int32 accumulator output"));
}

TEST_CASE("ConvInteger sums need every byte: values beyond 16 bits, both signs") {
    // 40 channels x 9 taps of (x - zx)(w - zw) with zero points at the ends: |sum| far beyond 2^16; the comparison
    // inside check_conv covered every one of these sums
    std::vector<std::int32_t> sums;
    check_conv({40, 5, 6, 20, window(3, 3, 1, {1, 1, 1, 1}), -128, {127, -128}}, 21, nullptr, {}, &sums);
    check_spread(sums);
    check_conv({1, 3, 3, 1, window(2, 2, 1, {0, 0, 0, 0}), 1 - 128, {-128}}, 22, nullptr, {}, &sums);
    std::int64_t above_byte = 0;  // even the node test's 2x2 sums need more than one byte
    for (auto v : sums) above_byte += v > 255 || v < -256;
    CHECK(above_byte > 0);
}

TEST_CASE("MatMulInteger on the MAC array: int32 sums stored from ACC equal the host kernel") {
    std::vector<std::string> log;
    check_matmul({4, 3, 2, {12 - 128}, {-128}}, 31, &log);  // the node test's shape, uint8 operands as int8
    CHECK(logged(log, "int32 accumulator output, stored from ACC"));
    check_matmul({7, 19, 5, {-128}, {127, -128, 0}}, 32);
    check_matmul({33, 70, 40, {127}, {3, -60}}, 33);
    check_matmul({1, 200, 130, {0}, {0}}, 34);
}

TEST_CASE("MatMulInteger with A's zero point per row: one mac.mm per row, bit-exact") {
    std::vector<std::string> log;
    check_matmul({4, 5, 6, {-128, 127, 0, 3}, {5}}, 35, &log);  // the integer_ops fixture's per-row shape
    CHECK(logged(log, "A's zero point varies by row: one mac.mm (m = 1) per row and part"));
    check_matmul({45, 37, 40, {-128, 50, 7, 127, -1}, {-128, 3}, MatmulOptions{16, 8, {}, {}}}, 36);  // tiles
}

TEST_CASE("MatMulInteger int32 output: forced M and N tiles, B double buffered") {
    std::vector<std::string> log;
    check_matmul({45, 37, 40, {-3}, {-128, 50}, MatmulOptions{16, 8, {}, {}}}, 41, &log);  // 6 M tiles x 3 N tiles
    CHECK(logged(log, "3 N tile(s) of 16"));
    check_matmul({9, 64, 33, {100}, {1}, MatmulOptions{16, 4, {}, {}}}, 42);
}

TEST_CASE("negative control: without the store's wait on the product, the race detector reports the ACC read") {
    // Remove each int32 store's wait and the matching signals of the MAC (so no event leaks): the stores then read ACC
    // with nothing ordering them after the mac.mma that wrote it.
    const auto unsync = [](std::vector<vnpu::Instr>& code) {
        std::vector<int> events;
        for (auto& in : code)
            if (in.info->mnemonic == "dma.store" && in.wait) events.push_back(*in.wait), in.wait.reset();
        for (auto& in : code)
            if (in.info->unit == vnpu::Unit::mac && in.signal &&
                std::find(events.begin(), events.end(), *in.signal) != events.end())
                in.signal.reset();
        REQUIRE(!events.empty());
    };
    const auto r = check_conv({16, 6, 7, 5, window(3, 3, 1, {1, 1, 1, 1}), 0, {0}}, 51, nullptr, unsync);
    bool acc_raw = false;
    for (const auto& x : r.races)
        acc_raw = acc_raw || (x.kind == vnpu::sim::RaceKind::raw && x.space == vnpu::sim::Space::acc &&
                              x.first.unit == vnpu::Unit::mac && x.second.unit == vnpu::Unit::dma);
    CHECK(acc_raw);
}

TEST_CASE("int32 output refusals name the rule and leave nothing in the builder") {
    const auto q = numeric::make_quant(DType::i8, 1.0f, 0).value();
    const ops::TensorType types[2] = {{DType::i8, Shape{1, 16, 8, 8}, q}, {DType::i8, Shape{16, 16, 3, 3}, q}};
    const auto plan = ops::ConvInteger::plan(types, window(3, 3, 1, {1, 1, 1, 1}).a,
                                             ops::TensorType{DType::i32, Shape{1, 16, 8, 8}, std::nullopt},
                                             numeric::Rounding::round_double);
    REQUIRE(plan.ok());
    CHECK(plan->quant.multipliers.empty());  // the sums are the result: no requantization
    const std::vector<std::int8_t> w(16 * 16 * 9, 1);
    Builder b("conv");
    REQUIRE(b.emit("nop", {}).ok());
    const DramImage X{2, 0, 8, 8, 16, 16}, Y{3, 0, 8, 8, 16, 64};
    CHECK(lower_conv(b, *plan, X, w, {}, Y).ok());
    Builder c("conv");
    REQUIRE(c.emit("nop", {}).ok());
    CHECK_RULE(lower_conv(c, *plan, X, w, {}, DramImage{3, 0, 8, 8, 16, 48}), "lower-conv-layout");    // < 4 C
    CHECK_RULE(lower_conv(c, *plan, X, w, std::vector<std::int32_t>(16, 1), Y), "lower-conv-layout");  // bias
    ConvOptions lut;
    lut.lut = expr::Table256{};
    CHECK_RULE(lower_conv(c, *plan, X, w, {}, Y, lut), "lower-conv-layout");
    ConvOptions clamp;
    clamp.clamp = {0, 127};
    CHECK_RULE(lower_conv(c, *plan, X, w, {}, Y, clamp), "lower-conv-layout");

    ops::MatMulQuantPlan mp;
    mp.zp_a.assign(4, 0);
    mp.zp_b.assign(20, 0);
    const std::vector<std::int8_t> mw(16 * 20, 1);
    MatmulOptions m32;
    m32.int32_output = true;
    const DramMatrix A{2, 0, 4, 16, 16};
    CHECK_RULE(lower_matmul(c, mp, A, mw, 16, 20, DramMatrix{3, 0, 4, 20, 64}, m32), "lower-matmul-layout");  // < 80
    auto rows = mp;  // A's zero point per row: lowered for the int32 output only
    rows.zp_a = {0, 1, 2, 3};
    rows.multipliers.assign(1, numeric::QuantizedMultiplier{1 << 30, -3});
    CHECK_RULE(lower_matmul(c, rows, A, mw, 16, 20, DramMatrix{3, 0, 4, 20, 32}), "lower-matmul-zero-point");
    CHECK_RULE(lower_matmul(c, mp, A, mw, 16, 20, DramMatrix{3, 0, 4, 20, 80}, m32, std::vector<std::int32_t>(20, 1)),
               "lower-matmul-layout");  // bias
    CHECK_RULE(lower_matmul_left(c, mp, std::vector<std::int8_t>(4 * 16, 1), 4, 16, DramMatrix{2, 0, 16, 20, 32},
                                 DramMatrix{3, 0, 4, 20, 80}, m32),
               "lower-matmul-layout");
    CHECK(c.size() == 1);
    CHECK(c.weights().empty());
    CHECK(c.holders().empty());
}

}  // namespace integer_test
