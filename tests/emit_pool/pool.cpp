// Differential verification of the pooling lowerings (emit/pool.hpp): emit -> simulate -> compare with
// ops::call<MaxPool / GlobalMaxPool / GlobalAveragePool / AveragePool> (NCHW on the host, NHWC on the vnpu) bit for
// bit, no fault, no race, no leaked event. Matrix: C = 1, 13, 16, 40; kernels 2x2, 3x3, 3x2; strides 1 and 2;
// symmetric and asymmetric pads; dilation and ceil_mode; input zero points -128 and 127; output quantization equal
// to and different from the input's; the clamp of the average epilogue acting and not; forced tiles; MobileNet
// sizes. Mutations of the emitted border / accumulator fill values must make the comparison fail. Refusals.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <janus/emit/pool.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../emit/emit_support.hpp"
#include "../support/check_rule.hpp"

using namespace janus;
using namespace janus::emit;

namespace {

numeric::QuantParams quant(float s, std::int32_t zp) { return numeric::make_quant(DType::i8, s, zp).value(); }

ops::MaxPoolAttrs max_attrs(std::int64_t kh, std::int64_t kw, std::int64_t s, std::vector<std::int64_t> pads,
                            std::vector<std::int64_t> dil = {}, std::int64_t ceil = 0) {
    ops::MaxPoolAttrs a;
    a.kernel_shape = {kh, kw};
    a.strides = {s, s};
    a.pads = std::move(pads);
    a.dilations = std::move(dil);
    a.ceil_mode = ceil;
    return a;
}

ops::AveragePoolAttrs avg_attrs(std::int64_t kh, std::int64_t kw, std::int64_t s, std::vector<std::int64_t> pads,
                                std::int64_t include_pad) {
    ops::AveragePoolAttrs a;
    a.kernel_shape = {kh, kw};
    a.strides = {s, s};
    a.pads = std::move(pads);
    a.count_include_pad = include_pad;
    return a;
}

/// What one run gives: the host's and the vnpu's outputs (NCHW order), the debug log and the report.
struct Outcome {
    std::vector<std::int8_t> want, got;
    std::vector<std::string> log;
    vnpu::sim::Report report;
};

/// uniform: every int8 value; mostly_lowest: 95% -128; extreme: odd channels in [100, 127], even in [-128, -100].
enum class Data { uniform, mostly_lowest, extreme };

/// Emit `Op` for a 1 x C x H x W int8 input, run it (with `mutate` applied to the program first, if given), and
/// return both outputs. `lower(b, plan, X, Y)` is the lowering under test.
template <class Op, class Lower>
Outcome run(const typename Op::Attrs& a, std::int64_t C, std::int64_t H, std::int64_t W, numeric::QuantParams qi,
            std::optional<numeric::QuantParams> qo, std::uint32_t seed, Lower&& lower, Data data = Data::uniform,
            const std::function<void(std::vector<vnpu::Instr>&)>& mutate = {}) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127), percent(0, 99);
    const std::int64_t Cp = (C + 15) / 16 * 16;
    std::vector<std::int8_t> x(static_cast<std::size_t>(C * H * W));
    for (std::size_t i = 0; i < x.size(); ++i) {
        const bool odd = (static_cast<std::int64_t>(i) / (H * W)) % 2 == 1;
        const int v = data == Data::extreme         ? (odd ? 127 : -128) + (odd ? -1 : 1) * (byte(rng) + 128) / 10
                      : data == Data::mostly_lowest ? (percent(rng) < 5 ? byte(rng) : -128)
                                                    : byte(rng);
        x[i] = static_cast<std::int8_t>(v);
    }
    const Tensor tx = Tensor::from<std::int8_t>(Shape{1, C, H, W}, x, qi);
    const ops::TensorType tin = ops::type_of(tx);
    const auto inferred = Op::infer(std::span<const ops::TensorType>(&tin, 1), a);
    REQUIRE_MESSAGE(inferred.ok(), (inferred.ok() ? std::string() : inferred.error().message()));
    const ops::TensorType out{DType::i8, inferred->shape, qo ? qo : inferred->quant};
    const auto host = ops::call<Op>({tx}, a, out);
    REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
    const auto plan = Op::plan(std::span(&tin, 1), a, out, janus::numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    const std::int64_t Ho = out.shape[2], Wo = out.shape[3];
    Outcome o;
    o.want = host->template to_vector<std::int8_t>();

    Builder b("pool");
    const DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, Ho, Wo, C, Cp};
    const Status st = lower(b, *plan, X, Y);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    o.log = b.log();
    vnpu::sim::Machine m;
    m.dram[2] = et::to_nhwc(x, C, H * W, Cp, 0x5a);  // padding channels hold anything
    m.dram[3].assign(static_cast<std::size_t>(Ho * Wo * Cp), 0xee);
    o.report = et::run(b, m, mutate);
    o.got = et::from_nhwc(m.dram[3], C, Ho * Wo, Cp);
    return o;
}

const auto max_pool = [](Builder& b, const ops::PoolPlan& p, const DramImage& x, const DramImage& y) {
    return lower_max_pool(b, p, x, y);
};
const auto avg_pool = [](Builder& b, const ops::PoolPlan& p, const DramImage& x, const DramImage& y) {
    return lower_average_pool(b, p, x, y);
};
std::function<Status(Builder&, const ops::PoolPlan&, const DramImage&, const DramImage&)> global_max(
    std::int64_t tile) {
    return [tile](Builder& b, const ops::PoolPlan& p, const DramImage& x, const DramImage& y) {
        return lower_global_max_pool(b, p, x, y, tile);
    };
}
std::function<Status(Builder&, const ops::PoolPlan&, const DramImage&, const DramImage&)> global_avg(
    std::int64_t tile) {
    return [tile](Builder& b, const ops::PoolPlan& p, const DramImage& x, const DramImage& y) {
        return lower_global_average_pool(b, p, x, y, tile);
    };
}

/// Set every dma.fill of value `from` to `to`.
std::function<void(std::vector<vnpu::Instr>&)> refill(std::int64_t from, std::int64_t to, int* count) {
    return [=](std::vector<vnpu::Instr>& code) {
        for (auto& in : code)
            if (in.info->mnemonic == "dma.fill" && in.operands[1] == from) {
                in.operands[1] = to;
                ++*count;
            }
    };
}

bool has(const std::vector<std::string>& log, const std::string& part) {
    for (const auto& l : log)
        if (l.find(part) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("MaxPool on vec.max: C, kernels, strides, pads, zero points, equal and different output quantization") {
    const std::int64_t channels[] = {1, 13, 16, 40};
    const std::array<std::int64_t, 2> kernels[] = {{2, 2}, {3, 3}, {3, 2}};
    const std::vector<std::int64_t> pads[] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {1, 0, 0, 1}};
    std::uint32_t seed = 100;
    int runs = 0, requantized = 0;
    for (const auto C : channels)
        for (const auto& k : kernels)
            for (const std::int64_t s : {1, 2})
                for (const auto& p : pads)
                    for (const std::int32_t zp : {-128, 127})
                        for (const bool same : {true, false}) {
                            // the matrix is large: every combination of C x kernel x stride, pads and quant rotate
                            if ((runs + static_cast<int>(C)) % 3 != 0 && C != 13) {
                                ++runs;
                                continue;
                            }
                            CAPTURE(C);
                            CAPTURE(k[0]);
                            CAPTURE(k[1]);
                            CAPTURE(s);
                            CAPTURE(p[0] + 2 * p[1] + 4 * p[2] + 8 * p[3]);
                            CAPTURE(zp);
                            CAPTURE(same);
                            const auto qi = quant(0.05f, zp);
                            const auto qo = same ? qi : quant(0.07f, -5);
                            const auto o =
                                run<ops::MaxPool>(max_attrs(k[0], k[1], s, p), C, 7, 9, qi, qo, ++seed, max_pool);
                            CHECK(o.got == o.want);
                            requantized += has(o.log, "requantized by vec.acc + vec.rq");
                            CHECK(has(o.log, "no post") == same);
                            ++runs;
                        }
    CHECK(requantized > 20);
}

TEST_CASE("MaxPool dilation, ceil_mode overhang, stride 3, a 1x1 kernel and a 1xN kernel (no VEC stage)") {
    const auto q = quant(0.1f, 3);
    const auto qo = quant(0.03f, -100);
    std::uint32_t seed = 300;
    for (const bool same : {true, false}) {
        CAPTURE(same);
        const auto o = same ? std::optional<numeric::QuantParams>{} : std::optional{qo};
        auto r = run<ops::MaxPool>(max_attrs(3, 3, 1, {2, 2, 2, 2}, {2, 2}), 16, 8, 9, q, o, ++seed, max_pool);
        CHECK(r.got == r.want);
        r = run<ops::MaxPool>(max_attrs(3, 2, 2, {1, 0, 1, 1}, {1, 3}), 13, 9, 10, q, o, ++seed, max_pool);
        CHECK(r.got == r.want);
        r = run<ops::MaxPool>(max_attrs(3, 3, 2, {0, 0, 1, 1}, {}, 1), 40, 8, 8, q, o, ++seed, max_pool);  // ceil
        CHECK(r.got == r.want);
        r = run<ops::MaxPool>(max_attrs(2, 3, 3, {0, 1, 0, 1}, {}, 1), 16, 10, 11, q, o, ++seed, max_pool);
        CHECK(r.got == r.want);
        r = run<ops::MaxPool>(max_attrs(1, 1, 2, {}), 13, 5, 6, q, o, ++seed, max_pool);  // subsampling only
        CHECK(r.got == r.want);
        r = run<ops::MaxPool>(max_attrs(1, 3, 1, {0, 1, 0, 1}), 16, 4, 6, q, o, ++seed, max_pool);
        CHECK(r.got == r.want);
    }
}

TEST_CASE("MaxPool border fill: the -128 fill matters (a mutated fill of -127 breaks the comparison)") {
    const auto q = quant(0.05f, -128);
    const auto a = max_attrs(3, 3, 2, {1, 1, 1, 1});
    const auto good = run<ops::MaxPool>(a, 16, 9, 9, q, std::nullopt, 7, max_pool, Data::mostly_lowest);
    CHECK(good.got == good.want);
    int mutated = 0;
    const auto bad =
        run<ops::MaxPool>(a, 16, 9, 9, q, std::nullopt, 7, max_pool, Data::mostly_lowest, refill(-128, -127, &mutated));
    CHECK(mutated > 0);
    CHECK(bad.want == good.want);
    CHECK(bad.got != bad.want);
    // the global pool's running max starts at -128 as well
    mutated = 0;
    const auto g = run<ops::GlobalMaxPool>({}, 13, 3, 4, q, std::nullopt, 8, global_max(5), Data::mostly_lowest);
    CHECK(g.got == g.want);
    const auto gbad = run<ops::GlobalMaxPool>({}, 13, 3, 4, q, std::nullopt, 8, global_max(5), Data::mostly_lowest,
                                              refill(-128, -127, &mutated));
    CHECK(mutated == 1);
    CHECK(gbad.got != gbad.want);
}

TEST_CASE("MaxPool 3x3 / 2 pad 1 at ResNet / MobileNet size 56x56x64") {
    const auto q = quant(0.05f, -7);
    const auto o = run<ops::MaxPool>(max_attrs(3, 3, 2, {1, 1, 1, 1}), 64, 56, 56, q, std::nullopt, 11, max_pool);
    CHECK(o.got == o.want);
    REQUIRE(!o.log.empty());
    CHECK(o.log.back() ==
          "pool: max pool: 28 output rows of 28 x 64 B, 3x3 window: rows combined over 57 pixels, then 2 tap(s) at "
          "stride 1 over 55 pixels, pixels 2 apart stored by a strided dma.store; output quantization = input's: no "
          "post, double buffered");
    MESSAGE("MaxPool 56x56x64 3x3/2: " << o.report.cycles << " cycles");
}

TEST_CASE("GlobalMaxPool: C, sizes, forced tiles (one, two, many sets), zero points, quantization") {
    std::uint32_t seed = 500;
    for (const std::int64_t C : {1, 13, 16, 40})
        for (const std::int64_t tile : {0, 1, 4, 64})
            for (const std::int32_t zp : {-128, 127})
                for (const bool same : {true, false}) {
                    CAPTURE(C);
                    CAPTURE(tile);
                    CAPTURE(zp);
                    CAPTURE(same);
                    const auto qi = quant(0.02f, zp);
                    const auto qo = same ? qi : quant(0.05f, 10);
                    const auto o = run<ops::GlobalMaxPool>({}, C, 5, 7, qi, qo, ++seed, global_max(tile));
                    CHECK(o.got == o.want);
                }
    const auto one = run<ops::GlobalMaxPool>({}, 16, 1, 1, quant(0.02f, 0), std::nullopt, 9, global_max(0));
    CHECK(one.got == one.want);
}

TEST_CASE("GlobalAveragePool: the host's epilogue, with the clamp never acting and acting (emulated by masks)") {
    std::uint32_t seed = 700;
    int emulated = 0, plain = 0;
    for (const std::int64_t C : {1, 13, 16, 40})
        for (const std::int32_t zp : {-128, 127})
            for (const float ratio : {1.0f, 0.3f, 50.0f})  // s_in / s_out; 50: Lc far below the reachable sum
                for (const std::int64_t tile : {0, 3}) {
                    CAPTURE(C);
                    CAPTURE(zp);
                    CAPTURE(ratio);
                    CAPTURE(tile);
                    const auto qi = quant(0.05f, zp), qo = quant(0.05f / ratio, zp == 127 ? -20 : 20);
                    const auto o = run<ops::GlobalAveragePool>({}, C, 5, 7, qi, qo, ++seed, global_avg(tile));
                    CHECK(o.got == o.want);
                    emulated += has(o.log, "clamp emulated by masks");
                    plain += has(o.log, "clamp never acts");
                }
    CHECK(emulated == 16);
    CHECK(plain == 32);
}

TEST_CASE("GlobalAveragePool clamp emulation: extreme sums on both sides, and the masks matter") {
    // s_in / s_out = 50 over 35 pixels: Lc = 359, the sums reach 35 x 255 and their shift by S wraps int32
    const auto qi = quant(0.5f, 0), qo = quant(0.01f, 0);
    const auto o = run<ops::GlobalAveragePool>({}, 40, 5, 7, qi, qo, 12, global_avg(0), Data::extreme);
    CHECK(o.got == o.want);
    int hi = 0, lo = 0;
    for (auto v : o.want) hi += v == 127, lo += v == -128;
    CHECK(hi > 0);
    CHECK(lo > 0);
    // drop the two vec.sel: the wrapped shifted sums then give wrong results
    const auto drop_sel = [](std::vector<vnpu::Instr>& code) {
        for (auto& in : code)
            if (in.info->mnemonic == "vec.sel") in.operands[2] = in.operands[3];  // both sides the output: a no-op
    };
    const auto bad = run<ops::GlobalAveragePool>({}, 40, 5, 7, qi, qo, 12, global_avg(0), Data::extreme, drop_sel);
    CHECK(bad.got != bad.want);
}

TEST_CASE("GlobalAveragePool at MobileNet size 7x7x1280") {
    const auto o = run<ops::GlobalAveragePool>({}, 1280, 7, 7, quant(0.03f, -9), quant(0.02f, 4), 13, global_avg(0));
    CHECK(o.got == o.want);
    REQUIRE(!o.log.empty());
    CHECK(o.log.back() ==
          "pool: global average pool: 49 pixels of 1280 B in 7 tile(s) of 7 pixels into a 7-pixel vec.acc row, "
          "halved 3 times; clamp never acts, double buffered");
    MESSAGE("GlobalAveragePool 7x7x1280: " << o.report.cycles << " cycles");
}

TEST_CASE("AveragePool with one count everywhere: no padding, or count_include_pad without overhang") {
    std::uint32_t seed = 900;
    const std::array<std::int64_t, 2> kernels[] = {{2, 2}, {3, 3}, {3, 2}};
    for (const std::int64_t C : {1, 13, 40})
        for (const auto& k : kernels)
            for (const std::int64_t s : {1, 2})
                for (const std::int32_t zp : {-128, 127}) {
                    CAPTURE(C);
                    CAPTURE(k[0]);
                    CAPTURE(k[1]);
                    CAPTURE(s);
                    CAPTURE(zp);
                    const auto qi = quant(0.05f, zp), qo = quant(zp > 0 ? 0.04f : 0.002f, -3);
                    auto o = run<ops::AveragePool>(avg_attrs(k[0], k[1], s, {}, 0), C, 7, 9, qi, qo, ++seed, avg_pool);
                    CHECK(o.got == o.want);
                    o = run<ops::AveragePool>(avg_attrs(k[0], k[1], s, {1, 1, 1, 1}, 1), C, 7, 9, qi, qo, ++seed,
                                              avg_pool);
                    CHECK(o.got == o.want);
                }
    // the border fill is zp_in: padding adds nothing (a mutated fill breaks the comparison)
    const auto qi = quant(0.05f, 37), qo = quant(0.03f, 0);
    const auto a = avg_attrs(3, 3, 1, {1, 0, 1, 2}, 1);
    const auto good = run<ops::AveragePool>(a, 16, 6, 6, qi, qo, 5, avg_pool);
    CHECK(good.got == good.want);
    int mutated = 0;
    const auto bad = run<ops::AveragePool>(a, 16, 6, 6, qi, qo, 5, avg_pool, Data::uniform, refill(37, 60, &mutated));
    CHECK(mutated == 2);  // the right border (pads 2), both buffer sets
    CHECK(bad.got != bad.want);
}

TEST_CASE("pool refusals name the rule and leave nothing in the builder") {
    const auto q = quant(0.05f, 0);
    const auto type = [&](Shape s) { return ops::TensorType{DType::i8, s, q}; };
    Builder b("pool");
    REQUIRE(b.emit("nop", {}).ok());
    const auto mp = ops::MaxPool::plan(std::array{type({1, 16, 8, 8})}, max_attrs(3, 3, 1, {1, 1, 1, 1}), type({1, 16, 8, 8}), janus::numeric::default_rounding_mode);
    REQUIRE(mp.ok());
    const DramImage X{2, 0, 8, 8, 16, 16}, Y{3, 0, 8, 8, 16, 16};
    CHECK(lower_max_pool(b, *mp, X, Y).ok());  // the plan itself is lowerable; the refusals below break one thing each
    Builder c("pool");
    REQUIRE(c.emit("nop", {}).ok());
    CHECK_RULE(lower_max_pool(c, *mp, X, DramImage{3, 0, 8, 7, 16, 16}), "lower-pool-layout");  // Y's width
    CHECK_RULE(lower_max_pool(c, *mp, DramImage{2, 0, 8, 8, 16, 8}, Y), "lower-pool-layout");   // pitch < C
    CHECK_RULE(lower_max_pool(c, *mp, DramImage{2, 0, 8, 9, 16, 16}, Y), "lower-pool-layout");  // X's width
    const auto mp1 = ops::MaxPool::plan(std::array{type({1, 16, 8})}, [] {
            ops::MaxPoolAttrs a;
            a.kernel_shape = {3};
            return a;
        }(), type({1, 16, 6}), janus::numeric::default_rounding_mode);
    REQUIRE(mp1.ok());
    CHECK_RULE(lower_max_pool(c, *mp1, X, Y), "lower-pool-layout");  // one spatial axis
    // a row of 4000 pixels x 64 B: 3 row slots of 256 KB do not fit LMEM
    const auto wide = ops::MaxPool::plan(std::array{type({1, 64, 8, 4000})}, max_attrs(3, 3, 1, {}), type({1, 64, 6, 3998}), janus::numeric::default_rounding_mode);
    REQUIRE(wide.ok());
    CHECK_RULE(lower_max_pool(c, *wide, DramImage{2, 0, 8, 4000, 64, 64}, DramImage{3, 0, 6, 3998, 64, 64}),
               "lower-pool-budget");
    // count_include_pad = 0 with padding: the count varies at the border
    const auto ap =
        ops::AveragePool::plan(std::array{type({1, 16, 8, 8})}, avg_attrs(3, 3, 1, {1, 1, 1, 1}, 0), type({1, 16, 8, 8}), janus::numeric::default_rounding_mode);
    REQUIRE(ap.ok());
    CHECK_RULE(lower_average_pool(c, *ap, X, Y), "lower-pool-count");
    // ceil-mode overhang with count_include_pad = 1: the overhang does not count
    ops::AveragePoolAttrs ceil = avg_attrs(2, 2, 2, {}, 1);
    ceil.ceil_mode = 1;
    const auto apc = ops::AveragePool::plan(std::array{type({1, 16, 7, 7})}, ceil, type({1, 16, 4, 4}), janus::numeric::default_rounding_mode);
    REQUIRE(apc.ok());
    CHECK_RULE(lower_average_pool(c, *apc, DramImage{2, 0, 7, 7, 16, 16}, DramImage{3, 0, 4, 4, 16, 16}),
               "lower-pool-count");
    // a 4096 x 4096 global average: 2^24 x 255 exceeds int32
    const auto big = ops::GlobalAveragePool::plan(std::array{type({1, 16, 4096, 4096})}, {}, type({1, 16, 1, 1}), janus::numeric::default_rounding_mode);
    REQUIRE(big.ok());
    CHECK_RULE(lower_global_average_pool(c, *big, DramImage{2, 0, 4096, 4096, 16, 16}, DramImage{3, 0, 1, 1, 16, 16}),
               "lower-pool-range");
    // a pixel of 64 KiB does not fit the ACC row of a global average
    const auto fat = ops::GlobalAveragePool::plan(std::array{type({1, 16384, 2, 2})}, {}, type({1, 16384, 1, 1}), janus::numeric::default_rounding_mode);
    REQUIRE(fat.ok());
    CHECK_RULE(
        lower_global_average_pool(c, *fat, DramImage{2, 0, 2, 2, 16384, 16384}, DramImage{3, 0, 1, 1, 16384, 16384}),
        "lower-pool-budget");
    CHECK(c.size() == 1);
    CHECK(c.weights().empty());
    CHECK(c.holders().empty());
}
