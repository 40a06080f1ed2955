// Differential verification of the elementwise lowerings (emit/elementwise.hpp): emit -> simulate -> compare with
// the host kernel of the same op (ops::call) bit for bit, with no fault and no race, over a matrix of sizes (odd
// widths 1, 7, 13; tiling forced by the real LMEM budget and by small tiles) and quantization parameters (zero points
// at both ends of int8, extreme scale ratios, all three rounding modes of the parameter block).
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <janus/emit/elementwise.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/unary.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../support/check_rule.hpp"
#include "emit_support.hpp"
#include "support/quant_plan.hpp"

using namespace janus;
using namespace janus::emit;

// Test executables build as one unity TU per directory: this file's helpers and tests live in their own
// namespace, so their names hide (never overload) a sibling file's helpers of the same name.
namespace elementwise_test {

namespace {

std::vector<std::int8_t> random_bytes(std::int64_t n, std::mt19937& rng) {
    std::uniform_int_distribution<int> byte(-128, 127);
    std::vector<std::int8_t> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = static_cast<std::int8_t>(byte(rng));
    return v;
}

void put(std::vector<std::uint8_t>& region, const DramTensor& t, const std::vector<std::int8_t>& v) {
    if (region.size() < t.offset + static_cast<std::size_t>(t.padded()))
        region.resize(t.offset + static_cast<std::size_t>(t.padded()));
    std::memcpy(region.data() + t.offset, v.data(), v.size());
}

std::vector<std::int8_t> get(const std::vector<std::uint8_t>& region, const DramTensor& t) {
    std::vector<std::int8_t> v(static_cast<std::size_t>(t.elements));
    std::memcpy(v.data(), region.data() + t.offset, v.size());
    return v;
}

numeric::QuantParams q8(float scale, std::int32_t zp) { return numeric::make_quant(DType::i8, scale, zp).value(); }

template <class Op, expr::BinOp Kind, class R = numeric::default_rounding>
void check_binary(std::int64_t n, numeric::QuantParams qa, numeric::QuantParams qb, numeric::QuantParams qo,
                  std::uint32_t seed, std::int64_t max_tile = 0) {
    CAPTURE(n);
    CAPTURE(max_tile);
    std::mt19937 rng(seed);
    const auto a = random_bytes(n, rng), c = random_bytes(n, rng);
    const Tensor ta = Tensor::from<std::int8_t>(Shape{n}, a, qa), tc = Tensor::from<std::int8_t>(Shape{n}, c, qb);
    // the host op and the emitter both round as the plan says (numeric::rounding_of<R>)
    const auto plan = janus_test::binary_plan<Kind>(qa, qb, qo, numeric::rounding_of<R>);
    REQUIRE(plan.ok());
    const auto host = ops::call<Op>({ta, tc}, {}, ops::TensorType{DType::i8, Shape{n}, qo},
                                    ops::OpContext{true, numeric::rounding_of<R>});
    REQUIRE(host.ok());
    const std::vector<std::int8_t> want = host->template to_vector<std::int8_t>();
    const DramTensor A{2, 0, n}, B{2, static_cast<std::uint32_t>(DramTensor{2, 0, n}.padded()), n}, O{3, 0, n};
    vnpu::sim::Machine m;
    put(m.dram[2], A, a);
    put(m.dram[2], B, c);
    m.dram[3].resize(static_cast<std::size_t>(O.padded()));
    Builder b(std::string(ew_mnemonic(Kind)));
    REQUIRE(lower_binary<Kind>(b, *plan, A, B, O, StreamOptions{max_tile}).ok());
    et::run_clean(b, m);
    CHECK(get(m.dram[3], O) == want);
}

template <class Op, expr::BinOp Kind>
void binary_matrix(std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> scale(0.005f, 4.0f);
    std::uniform_int_distribution<int> zp(-128, 127);
    for (const std::int64_t n : {1, 7, 13, 16, 1000, 4099}) {
        check_binary<Op, Kind>(n, q8(scale(rng), zp(rng)), q8(scale(rng), zp(rng)), q8(scale(rng), zp(rng)),
                               seed + static_cast<std::uint32_t>(n));
    }
    // zero points at the ends of int8, extreme scale ratios
    check_binary<Op, Kind>(333, q8(0.001f, -128), q8(0.5f, 127), q8(0.2f, -128), seed + 1);
    check_binary<Op, Kind>(333, q8(8.0f, 127), q8(0.0001f, -128), q8(0.01f, 127), seed + 2);
    // tiling: small tiles (odd count), and the real LMEM budget (300000 B per input does not fit in 256 KiB)
    check_binary<Op, Kind>(1000, q8(0.1f, 3), q8(0.2f, -3), q8(0.3f, 0), seed + 3, 64);
    check_binary<Op, Kind>(300000, q8(0.1f, 3), q8(0.2f, -3), q8(0.3f, 0), seed + 4);
}

}  // namespace

TEST_CASE("Add, Sub, Mul, Min, Max lowered to vec.ew: bit-exact against the host kernels, no race") {
    binary_matrix<ops::Add, expr::BinOp::add>(100);
    binary_matrix<ops::Sub, expr::BinOp::sub>(200);
    binary_matrix<ops::Mul, expr::BinOp::mul>(300);
    binary_matrix<ops::Min, expr::BinOp::min>(400);
    binary_matrix<ops::Max, expr::BinOp::max>(500);
}

TEST_CASE("the parameter block's rounding: Add and Mul with round_single and round_half_even") {
    check_binary<ops::Add, expr::BinOp::add, numeric::round_single>(999, q8(0.1f, 1), q8(0.3f, -7), q8(0.07f, 2), 7);
    check_binary<ops::Add, expr::BinOp::add, numeric::round_half_even>(999, q8(0.1f, 1), q8(0.3f, -7), q8(0.07f, 2), 8);
    check_binary<ops::Mul, expr::BinOp::mul, numeric::round_single>(999, q8(0.1f, 1), q8(0.3f, -7), q8(0.07f, 2), 9);
    check_binary<ops::Mul, expr::BinOp::mul, numeric::round_half_even>(999, q8(0.1f, 1), q8(0.3f, -7), q8(0.07f, 2),
                                                                       10);
}

namespace {
template <class Op>
void check_unary(std::int64_t n, numeric::QuantParams qi, numeric::QuantParams qo, const typename Op::Attrs& attrs,
                 std::uint32_t seed, std::int64_t max_tile = 0) {
    CAPTURE(std::string(Op::name.view()));
    CAPTURE(n);
    std::mt19937 rng(seed);
    const auto x = random_bytes(n, rng);
    const Tensor tx = Tensor::from<std::int8_t>(Shape{n}, x, qi);
    const auto host = ops::call<Op>({tx}, attrs, ops::TensorType{DType::i8, Shape{n}, qo});
    REQUIRE(host.ok());
    const DramTensor X{2, 0, n}, O{3, 16, n};  // the output not at offset 0
    vnpu::sim::Machine m;
    put(m.dram[2], X, x);
    m.dram[3].resize(static_cast<std::size_t>(16 + O.padded()));
    Builder b(std::string(Op::name.view()));
    REQUIRE(lower_lut(b, *janus_test::quant_plan<Op>({qi}, qo, janus::numeric::Rounding::round_double, attrs).value(), X, O, StreamOptions{max_tile}).ok());
    et::run_clean(b, m);
    CHECK(get(m.dram[3], O) == host->template to_vector<std::int8_t>());
}

template <class Op>
void unary_matrix(const typename Op::Attrs& attrs, std::uint32_t seed) {
    for (const std::int64_t n : {1, 7, 13, 16, 1000})
        check_unary<Op>(n, q8(0.05f, -10), q8(0.03f, 20), attrs, seed + static_cast<std::uint32_t>(n));
    check_unary<Op>(500, q8(0.5f, -128), q8(0.004f, 127), attrs, seed + 1);
    check_unary<Op>(500, q8(0.002f, 127), q8(1.5f, -128), attrs, seed + 2, 48);
    check_unary<Op>(300000, q8(0.1f, 0), q8(0.1f, 0), attrs, seed + 3);
}
}  // namespace

TEST_CASE("unary ops lowered to lut.apply with their own tables: bit-exact against the host kernels, no race") {
    unary_matrix<ops::Relu>({}, 1);
    unary_matrix<ops::Sigmoid>({}, 2);
    unary_matrix<ops::Tanh>({}, 3);
    unary_matrix<ops::Abs>({}, 4);
    unary_matrix<ops::Neg>({}, 5);
    unary_matrix<ops::HardSwish>({}, 6);
    unary_matrix<ops::Gelu>({}, 7);
    ops::LeakyRelu::Attrs leaky;
    leaky.alpha = 0.1f;
    unary_matrix<ops::LeakyRelu>(leaky, 8);
    ops::Clip::Attrs clip;
    clip.min = -1.0f;
    clip.max = 2.5f;
    unary_matrix<ops::Clip>(clip, 9);
    unary_matrix<ops::Sign>({}, 10);
    unary_matrix<ops::HardSigmoid>({}, 11);
    unary_matrix<ops::Exp>({}, 12);
    unary_matrix<ops::Erf>({}, 13);
    unary_matrix<ops::Sqrt>({}, 14);
    unary_matrix<ops::Reciprocal>({}, 15);
}

TEST_CASE("two kernels chained in one program: Add then Sigmoid on its output, no race, equal to the host chain") {
    const std::int64_t n = 5000;
    std::mt19937 rng(77);
    const auto a = random_bytes(n, rng), c = random_bytes(n, rng);
    const auto qa = q8(0.1f, 5), qb = q8(0.05f, -5), qs = q8(0.12f, 1), qo = q8(1.0f / 256, -128);
    const auto sum =
        ops::call<ops::Add>({Tensor::from<std::int8_t>(Shape{n}, a, qa), Tensor::from<std::int8_t>(Shape{n}, c, qb)},
                            {}, ops::TensorType{DType::i8, Shape{n}, qs});
    REQUIRE(sum.ok());
    const auto want = ops::call<ops::Sigmoid>({*sum}, {}, ops::TensorType{DType::i8, Shape{n}, qo});
    REQUIRE(want.ok());
    const DramTensor A{2, 0, n}, B{2, 5008, n}, S{1, 0, n}, O{3, 0, n};
    vnpu::sim::Machine m;
    put(m.dram[2], A, a);
    put(m.dram[2], B, c);
    m.dram[1].resize(5008);
    m.dram[3].resize(5008);
    Builder b("add_sigmoid");
    REQUIRE(lower_binary<expr::BinOp::add>(b, *janus_test::binary_plan<expr::BinOp::add>(qa, qb, qs, janus::numeric::default_rounding_mode), A, B, S,
                                           StreamOptions{1024})
                .ok());
    REQUIRE(lower_lut(b, *janus_test::quant_plan<ops::Sigmoid>({qs}, qo, janus::numeric::Rounding::round_double, ops::NoAttrs{}).value(), S, O, StreamOptions{1024}).ok());
    et::run_clean(b, m);
    CHECK(get(m.dram[3], O) == want->to_vector<std::int8_t>());
}

namespace {

/// The chain S1 = a + c, S2 = Sigmoid(S1), S3 = S2 * z, O1 = S3 - S2, O2 = S2 + z with S1, S2 and S3 kept in LMEM
/// between the kernels (emit::lmem_region): every way a stream meets a kept tensor (loaded inputs -> kept output;
/// kept -> kept with no buffer at all; kept and loaded -> kept; two kept -> stored through the staging buffers;
/// kept and loaded -> stored in the loaded input's buffer). With `barriers` a KernelBarrier separates the kernels,
/// as lower_graph does, and the outputs are compared with the host chain; the simulator's report is returned.
vnpu::sim::Report kept_chain(std::int64_t n, std::int64_t max_tile, bool barriers) {
    CAPTURE(n);
    CAPTURE(max_tile);
    std::mt19937 rng(static_cast<std::uint32_t>(n + max_tile));
    const auto a = random_bytes(n, rng), c = random_bytes(n, rng), z = random_bytes(n, rng);
    const auto qa = q8(0.1f, 5), qc = q8(0.05f, -5), qz = q8(0.02f, 3), q1 = q8(0.12f, 1), q2 = q8(1.0f / 256, -128),
               q3 = q8(0.004f, -7), qo1 = q8(0.006f, 2), qo2 = q8(0.02f, -1);
    const auto r = numeric::default_rounding_mode;
    const auto t = [&](const std::vector<std::int8_t>& v, numeric::QuantParams q) {
        return Tensor::from<std::int8_t>(Shape{n}, v, q);
    };
    const auto type = [&](numeric::QuantParams q) { return ops::TensorType{DType::i8, Shape{n}, q}; };
    const auto s1 = ops::call<ops::Add>({t(a, qa), t(c, qc)}, {}, type(q1));
    REQUIRE(s1.ok());
    const auto s2 = ops::call<ops::Sigmoid>({*s1}, {}, type(q2));
    REQUIRE(s2.ok());
    const auto s3 = ops::call<ops::Mul>({*s2, t(z, qz)}, {}, type(q3));
    REQUIRE(s3.ok());
    const auto o1 = ops::call<ops::Sub>({*s3, *s2}, {}, type(qo1));
    const auto o2 = ops::call<ops::Add>({*s2, t(z, qz)}, {}, type(qo2));
    REQUIRE(o1.ok());
    REQUIRE(o2.ok());

    const std::int64_t p = round16(n);
    const DramTensor A{2, 0, n}, C{2, static_cast<std::uint32_t>(p), n}, Z{2, static_cast<std::uint32_t>(2 * p), n},
        O1{3, 0, n}, O2{3, static_cast<std::uint32_t>(p), n};
    vnpu::sim::Machine m;
    put(m.dram[2], A, a);
    put(m.dram[2], C, c);
    put(m.dram[2], Z, z);
    m.dram[3].resize(static_cast<std::size_t>(2 * p));
    Builder b("kept");
    auto barrier = KernelBarrier::make(b);
    REQUIRE(barrier.ok());
    const auto between = [&] {
        if (barriers) REQUIRE(barrier->emit(b).ok());
    };
    const auto kept = [&](const char* name) {
        auto buf = b.alloc(Mem::lmem, static_cast<std::uint32_t>(p), name);
        REQUIRE(buf.ok());
        return std::move(*buf);
    };
    const StreamOptions opt{max_tile};
    Buffer b1 = kept("S1"), b2 = kept("S2"), b3 = kept("S3");
    const DramTensor S1{lmem_region, b1.address(), n}, S2{lmem_region, b2.address(), n},
        S3{lmem_region, b3.address(), n};
    using expr::BinOp;
    REQUIRE(lower_binary<BinOp::add>(b, *janus_test::binary_plan<BinOp::add>(qa, qc, q1, r), A, C, S1, opt).ok());
    between();
    const auto sigmoid = janus_test::quant_plan<ops::Sigmoid>({q1}, q2, r, ops::NoAttrs{});
    REQUIRE(sigmoid.ok());
    REQUIRE(lower_lut(b, **sigmoid, S1, S2, opt).ok());
    between();
    REQUIRE(lower_binary<BinOp::mul>(b, *janus_test::binary_plan<BinOp::mul>(q2, qz, q3, r), S2, Z, S3, opt).ok());
    between();
    REQUIRE(lower_binary<BinOp::sub>(b, *janus_test::binary_plan<BinOp::sub>(q3, q2, qo1, r), S3, S2, O1, opt).ok());
    between();
    REQUIRE(lower_binary<BinOp::add>(b, *janus_test::binary_plan<BinOp::add>(q2, qz, qo2, r), S2, Z, O2, opt).ok());
    b1.release(), b2.release(), b3.release();
    barrier->release();
    const auto report = et::run(b, m, barriers ? std::function<void(std::vector<vnpu::Instr>&)>{}
                                               : [](std::vector<vnpu::Instr>&) {});
    if (barriers) {  // without them the reads race the writes, and the values are whatever the timing gave
        CHECK(get(m.dram[3], O1) == o1->to_vector<std::int8_t>());
        CHECK(get(m.dram[3], O2) == o2->to_vector<std::int8_t>());
    }
    return report;
}

}  // namespace

TEST_CASE("tensors kept in LMEM between kernels: every stream form, bit-exact, no race; without barriers, races") {
    for (const std::int64_t n : {13, 1000, 5000})
        for (const std::int64_t max_tile : {0, 64, 1024}) {
            const auto r = kept_chain(n, max_tile, true);
            CHECK(r.races.empty());
        }
    // the kernel barrier is what orders a kept tensor's writer before its reader: without it, the race detector
    // sees the reads of S1, S2 and S3 racing their writes
    CHECK_FALSE(kept_chain(5000, 1024, false).races.empty());
}

TEST_CASE("a binary op with a fused unary epilogue: vec.ew then lut.apply on each tile, bit-exact, no race") {
    for (const std::int64_t n : {13, 1000, 5000})
        for (const std::int64_t max_tile : {0, 64, 1024})
            for (const bool kept_out : {false, true}) {
                CAPTURE(n);
                CAPTURE(max_tile);
                CAPTURE(kept_out);
                std::mt19937 rng(static_cast<std::uint32_t>(n * 3 + max_tile));
                const auto a = random_bytes(n, rng), c = random_bytes(n, rng);
                const auto qa = q8(0.1f, 5), qc = q8(0.05f, -5), qs = q8(0.12f, 1), qo = q8(1.0f / 256, -128);
                const auto r = numeric::default_rounding_mode;
                const auto sum = ops::call<ops::Add>(
                    {Tensor::from<std::int8_t>(Shape{n}, a, qa), Tensor::from<std::int8_t>(Shape{n}, c, qc)}, {},
                    ops::TensorType{DType::i8, Shape{n}, qs});
                REQUIRE(sum.ok());
                const auto want = ops::call<ops::Sigmoid>({*sum}, {}, ops::TensorType{DType::i8, Shape{n}, qo});
                REQUIRE(want.ok());
                const auto table = janus_test::quant_plan<ops::Sigmoid>({qs}, qo, r, ops::NoAttrs{});
                REQUIRE(table.ok());
                const std::int64_t p = round16(n);
                const DramTensor A{2, 0, n}, C{2, static_cast<std::uint32_t>(p), n}, O{3, 0, n};
                vnpu::sim::Machine m;
                put(m.dram[2], A, a);
                put(m.dram[2], C, c);
                m.dram[3].resize(static_cast<std::size_t>(p));
                Builder b("add_sigmoid");
                auto barrier = KernelBarrier::make(b);
                REQUIRE(barrier.ok());
                auto kept = b.alloc(Mem::lmem, static_cast<std::uint32_t>(p), "kept");
                REQUIRE(kept.ok());
                const DramTensor S = kept_out ? DramTensor{lmem_region, kept->address(), n} : O;
                REQUIRE(lower_binary<expr::BinOp::add>(b, *janus_test::binary_plan<expr::BinOp::add>(qa, qc, qs, r),
                                                       A, C, S, StreamOptions{max_tile}, **table)
                            .ok());
                if (kept_out) {  // the kept result goes to DRAM through an identity table, after the barrier
                    expr::Table256 id;
                    for (int i = 0; i < 256; ++i) id.values[static_cast<std::size_t>(i)] = i - 128;
                    REQUIRE(barrier->emit(b).ok());
                    REQUIRE(lower_lut(b, id, S, O, StreamOptions{max_tile}).ok());
                }
                kept->release();
                barrier->release();
                et::run_clean(b, m);
                CHECK(get(m.dram[3], O) == want->to_vector<std::int8_t>());
            }
}

TEST_CASE("a kept tensor is never loaded or stored: the stream's log and its DMA count") {
    const auto q = q8(0.1f, 0);
    const auto plan = janus_test::binary_plan<expr::BinOp::add>(q, q, q, numeric::default_rounding_mode).value();
    const auto count_dma = [](const Builder& b) {
        std::size_t dma = 0;
        for (const auto& i : b.code()) dma += i.info->unit == vnpu::Unit::dma ? 1 : 0;
        return dma;
    };
    Builder dram("k");
    REQUIRE(lower_binary<expr::BinOp::add>(dram, plan, DramTensor{2, 0, 4096}, DramTensor{2, 4096, 4096},
                                           DramTensor{3, 0, 4096}, StreamOptions{1024})
                .ok());
    Builder lmem("k");
    auto x = lmem.alloc(Mem::lmem, 4096, "x"), y = lmem.alloc(Mem::lmem, 4096, "y");
    auto o = lmem.alloc(Mem::lmem, 4096, "o");
    REQUIRE(lower_binary<expr::BinOp::add>(lmem, plan, DramTensor{lmem_region, x->address(), 4096},
                                           DramTensor{lmem_region, y->address(), 4096},
                                           DramTensor{lmem_region, o->address(), 4096}, StreamOptions{1024})
                .ok());
    CHECK(lmem.log().back() == "k: stream of 4096 B x 2 input(s): 4 tile(s) of 1024 B, no buffers, 3 tensor(s) kept in "
                               "LMEM (no DMA)");
    // DRAM: the parameter block's load, 2 loads and a store per tile, and the configuration; kept: the block's load
    // and the configurations (the first compute waits for the block's load itself: the scheduler sees it read)
    CHECK(count_dma(dram) == 2 + 4 * 3 + 1);
    CHECK(count_dma(lmem) == 2 + 1);
    // the order comes from the declared accesses: one channel DMA -> VEC and one VEC -> DMA in DRAM (no sync), one
    // DMA -> VEC when everything is kept (the parameter block's load before the first compute)
    const auto events = [](const Builder& b) {
        std::set<int> used;
        int syncs = 0;
        for (const auto& i : b.code()) {
            if (i.wait) used.insert(*i.wait);
            if (i.signal) used.insert(*i.signal);
            syncs += i.info->mnemonic == "sync" ? 1 : 0;
        }
        return std::pair{used.size(), syncs};
    };
    CHECK(events(dram) == std::pair<std::size_t, int>{2, 0});
    CHECK(events(lmem) == std::pair<std::size_t, int>{1, 0});
    // a kept input must have the output's size: it is never a repeated row
    Builder bad("k");
    Scheduler bq(bad, "k");
    CHECK_RULE(stream(bad, bq, std::vector<DramTensor>{DramTensor{lmem_region, 0, 16}}, DramTensor{3, 0, 64}, {},
                      [](const Tile&) { return ok_status(); }),
               "stream-shape");
}

TEST_CASE("identical tables are stored once; the debug log says when double buffering is off and why") {
    Builder b("k");
    const auto t = janus_test::quant_plan<ops::Relu>({q8(0.1f, 0)}, q8(0.1f, 0), janus::numeric::Rounding::round_double, ops::NoAttrs{}).value();
    REQUIRE(lower_lut(b, *t, DramTensor{2, 0, 32}, DramTensor{3, 0, 32}).ok());
    REQUIRE(lower_lut(b, *t, DramTensor{3, 0, 32}, DramTensor{3, 32, 32}).ok());
    CHECK(b.weights().size() == 256);
    REQUIRE(b.log().size() == 2);
    CHECK(b.log()[0] == "k: stream of 32 B x 1 input(s): 1 tile(s) of 32 B; double buffering off: a single tile");
    Builder c("k");
    REQUIRE(lower_lut(c, *t, DramTensor{2, 0, 100}, DramTensor{3, 0, 100}, StreamOptions{32}).ok());
    CHECK(c.log()[0] == "k: stream of 112 B x 1 input(s): 4 tile(s) of 32 B, double buffered");
}

TEST_CASE("refusals are clean and transactional: broadcast, a non-int8 table, no room in LMEM") {
    Builder b("k");
    REQUIRE(b.emit("nop", {}).ok());
    const auto plan = janus_test::binary_plan<expr::BinOp::add>(q8(0.1f, 0), q8(0.1f, 0), q8(0.1f, 0), janus::numeric::default_rounding_mode).value();
    CHECK_RULE(
        lower_binary<expr::BinOp::add>(b, plan, DramTensor{2, 0, 16}, DramTensor{2, 16, 1}, DramTensor{3, 0, 16}),
        "lower-broadcast");
    expr::Table256 u8;
    u8.out = DType::u8;
    CHECK_RULE(lower_lut(b, u8, DramTensor{2, 0, 16}, DramTensor{3, 0, 16}), "lower-lut-type");
    auto hog = b.alloc(Mem::lmem, 256 * 1024 - 64, "hog");
    REQUIRE(hog.ok());
    CHECK_RULE(
        lower_binary<expr::BinOp::add>(b, plan, DramTensor{2, 0, 16}, DramTensor{2, 16, 16}, DramTensor{3, 0, 16}),
        "lmem-budget");
    CHECK(b.size() == 1);  // only the nop: the failed kernels left nothing
    CHECK(b.weights().empty());
    CHECK(b.holders() == "LMEM +0 262080 B 'hog'\n");
}

}  // namespace elementwise_test
