// Three implementations of each arithmetic rule, compared bit for bit:
//   host     the host kernel of ops/ (ops::call<Add>, the op's quantized expression under ops::run_map, Conv's
//            requantization epilogue, ops::call<MatMulInteger>),
//   emitted  the program the emitters write for it, run on the simulator (whose element math is vnpu/semantics.hpp),
//   isa      the ISA semantics of vnpu/semantics.hpp called directly on parameters decoded from the emitted bytes.
// The host and the vnpu share no arithmetic code (CTest vnpu-independent-of-ops), so an agreement is evidence, not a
// formula agreeing with itself; the mutation tests feed a deliberately wrong host epilogue through the same
// comparison and require it to report mismatches.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <janus/emit/elementwise.hpp>
#include <janus/emit/matmul.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/conv.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/matmul.hpp>
#include <janus/vnpu/params.hpp>
#include <janus/vnpu/semantics.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "emit_support.hpp"
#include "support/quant_plan.hpp"

using namespace janus;
using namespace janus::emit;

namespace isa_three_way_test {

namespace {

numeric::QuantParams q8(float scale, std::int32_t zp) { return numeric::make_quant(DType::i8, scale, zp).value(); }

/// Where three result vectors disagree: counts per pair and the first index that differs.
struct Agreement {
    std::int64_t host_vs_isa = 0, emitted_vs_isa = 0;
    std::int64_t first = -1;
    bool all() const { return host_vs_isa == 0 && emitted_vs_isa == 0; }
};
template <class T>
Agreement compare(const std::vector<T>& host, const std::vector<T>& emitted, const std::vector<T>& isa) {
    REQUIRE(host.size() == isa.size());
    REQUIRE(emitted.size() == isa.size());
    Agreement a;
    for (std::size_t i = 0; i < isa.size(); ++i) {
        const bool h = host[i] != isa[i], e = emitted[i] != isa[i];
        a.host_vs_isa += h;
        a.emitted_vs_isa += e;
        if ((h || e) && a.first < 0) a.first = static_cast<std::int64_t>(i);
    }
    return a;
}

// ------------------------------------------------------------------------------------------------ vec.ew
/// Every (a, b) pair of int8 values: a = i / 256 - 128, b = i % 256 - 128.
struct AllPairs {
    std::vector<std::int8_t> a, b;
    AllPairs() : a(65536), b(65536) {
        for (std::size_t i = 0; i < 65536; ++i) {
            a[i] = static_cast<std::int8_t>(static_cast<int>(i / 256) - 128);
            b[i] = static_cast<std::int8_t>(static_cast<int>(i % 256) - 128);
        }
    }
};
const AllPairs& all_pairs() {
    static const AllPairs p;
    return p;
}

/// The host's result on the two input tensors.
using HostEw = std::function<std::vector<std::int8_t>(const Tensor&, const Tensor&, const numeric::QuantParams&)>;

/// The quantized expression of Kind with rounding R over the plan `plan`, run by the host map primitive.
template <expr::BinOp Kind, class R>
std::vector<std::int8_t> host_expr(const ops::BinaryQuantPlan& plan, const Tensor& a, const Tensor& b,
                                   const numeric::QuantParams& qo) {
    Tensor y = Tensor::zeros(DType::i8, a.shape(), qo);
    const Tensor ins[2] = {a, b};
    ops::BinaryQuantPlan p = plan;
    p.rounding = numeric::rounding_of<R>;
    const auto st = ops::run_map(ops::binary_quant_expr<Kind, std::int8_t, std::int8_t>(p),
                                 std::span<const Tensor>(ins), y, ops::MapOptions{}, "host");
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    return y.to_vector<std::int8_t>();
}

/// The three results of vec.ew.<Kind> with rounding R on every int8 pair under (qa, qb, qo); `host` computes the
/// host's side.
template <expr::BinOp Kind, class R>
Agreement three_way_ew(numeric::QuantParams qa, numeric::QuantParams qb, numeric::QuantParams qo, const HostEw& host) {
    const AllPairs& in = all_pairs();
    const auto n = static_cast<std::int64_t>(in.a.size());
    const auto plan = janus_test::binary_plan<Kind>(qa, qb, qo, numeric::rounding_of<R>);
    REQUIRE(plan.ok());
    // host
    const Tensor ta = Tensor::from<std::int8_t>(Shape{n}, in.a, qa), tb = Tensor::from<std::int8_t>(Shape{n}, in.b, qb);
    const std::vector<std::int8_t> h = host(ta, tb, qo);
    // emitted
    const DramTensor A{2, 0, n}, B{2, static_cast<std::uint32_t>(n), n}, O{3, 0, n};
    vnpu::sim::Machine m;
    m.dram[2].resize(static_cast<std::size_t>(2 * n));
    std::memcpy(m.dram[2].data(), in.a.data(), in.a.size());
    std::memcpy(m.dram[2].data() + n, in.b.data(), in.b.size());
    m.dram[3].resize(static_cast<std::size_t>(n));
    Builder b(std::string(ew_mnemonic(Kind)));
    REQUIRE(lower_binary<Kind>(b, *plan, A, B, O).ok());
    et::run_clean(b, m);
    std::vector<std::int8_t> e(static_cast<std::size_t>(n));
    std::memcpy(e.data(), m.dram[3].data(), e.size());
    // isa: the emitted block decoded, the row's func, semantics called per element
    const auto block = ew_block(*plan);
    const auto params = vnpu::decode(vnpu::ew_layout, block, "ew block");
    REQUIRE(params.ok());
    const vnpu::InstrInfo* row = vnpu::find_instruction(ew_mnemonic(Kind));
    REQUIRE(row != nullptr);
    std::vector<std::int8_t> isa(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < isa.size(); ++i)
        isa[i] = vnpu::semantics::elementwise(row->func, in.a[i], in.b[i], *params);
    return compare(h, e, isa);
}

/// The host op's own kernel, ops::call<Op>, run with rounding R (OpContext::rounding).
template <class Op, class R>
HostEw host_op() {
    return [](const Tensor& a, const Tensor& b, const numeric::QuantParams& qo) -> std::vector<std::int8_t> {
        const auto y = ops::call<Op>({a, b}, {}, ops::TensorType{DType::i8, a.shape(), qo},
                                     ops::OpContext{true, numeric::rounding_of<R>});
        REQUIRE_MESSAGE(y.ok(), (y.ok() ? std::string() : y.error().message()));
        return y->template to_vector<std::int8_t>();
    };
}

/// Quantizations of the sweep: similar scales, far-apart scales with zero points at the ends of int8, and an output
/// finer than both inputs (most results saturate, the ones that do not are rounded finely).
struct EwQuant {
    numeric::QuantParams a, b, out;
};
std::vector<EwQuant> ew_quantizations() {
    return {{q8(0.05f, 3), q8(0.04f, -7), q8(0.07f, 1)},
            {q8(0.002f, -128), q8(0.9f, 127), q8(0.3f, -128)},
            {q8(0.5f, 10), q8(0.25f, -20), q8(0.013f, 0)}};
}

template <class Op, class R>
void sweep_ew() {
    for (const EwQuant& q : ew_quantizations()) {
        CAPTURE(q.a.scale());
        CAPTURE(q.b.scale());
        CAPTURE(q.out.scale());
        const Agreement a = three_way_ew<Op::kind, R>(q.a, q.b, q.out, host_op<Op, R>());
        CAPTURE(a.first);
        CHECK(a.host_vs_isa == 0);
        CHECK(a.emitted_vs_isa == 0);
    }
}

template <class R>
void sweep_ew_all_funcs() {
    CAPTURE(std::string(R::name));
    sweep_ew<ops::Add, R>();
    sweep_ew<ops::Sub, R>();
    sweep_ew<ops::Mul, R>();
    sweep_ew<ops::Min, R>();
    sweep_ew<ops::Max, R>();
}

// ------------------------------------------------------------------------------------------------ vec.rq
/// Accumulators for vec.rq: the int32 extremes and values next to them, powers of two and their neighbours, small
/// values, then random int32; `count` values (a multiple of 16).
std::vector<std::int32_t> accumulators(std::size_t count, std::uint32_t seed) {
    constexpr std::int32_t lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
    std::vector<std::int32_t> v = {lo, lo + 1, lo + 2, hi, hi - 1, hi - 2, 0, 1, -1, 2, -2, 3, -3};
    for (int s = 1; s < 31; ++s) {
        const std::int32_t p = std::int32_t{1} << s;
        for (const std::int32_t x : {p, p - 1, p + 1, -p, -p + 1, -p - 1}) v.push_back(x);
    }
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::int32_t> any(lo, hi);
    std::uniform_int_distribution<std::int32_t> small(-100000, 100000);
    while (v.size() < count) v.push_back(v.size() % 2 ? any(rng) : small(rng));
    v.resize(count);
    return v;
}

/// 16 channel multipliers across the valid range: ratios far below 1, near 1 and above 1 (left shifts).
std::vector<numeric::QuantizedMultiplier> channel_multipliers(std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::int32_t> mantissa(std::int32_t{1} << 30, std::numeric_limits<std::int32_t>::max());
    std::vector<numeric::QuantizedMultiplier> m = {{0, 0}, {1 << 30, 0}, {1 << 30, -31}, {1 << 30, 30},
                                                   {std::numeric_limits<std::int32_t>::max(), 30}};
    const std::int32_t shifts[] = {-31, -20, -12, -8, -3, -1, 0, 1, 4, 12, 25};
    for (const std::int32_t s : shifts) m.push_back({mantissa(rng), s});
    REQUIRE(m.size() == 16);
    for (const auto& q : m) REQUIRE(numeric::is_valid(q));
    return m;
}

/// The host's requantization: Conv's epilogue sat(rq<R>(acc, M[c]) + zp) over a [rows, C] accumulator, channel
/// axis 1.
using HostRq = std::function<std::vector<std::int8_t>(const Tensor&, std::int32_t zp,
                                                       const std::vector<numeric::QuantizedMultiplier>&)>;
template <class R>
HostRq host_rq() {
    return [](const Tensor& acc, std::int32_t zp, const std::vector<numeric::QuantizedMultiplier>& mult) -> std::vector<std::int8_t> {
        ops::ConvQuantPlan plan;
        plan.zp_y = zp;
        plan.multipliers = mult;
        plan.rounding = numeric::rounding_of<R>;
        Tensor y = Tensor::zeros(DType::i8, acc.shape(), q8(1.0f, zp));
        const Tensor ins[1] = {acc};
        const auto st = ops::run_map(ops::conv_epilogue<std::int8_t>(plan), std::span<const Tensor>(ins), y,
                                     ops::MapOptions{true, 1}, "host");
        REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
        return y.to_vector<std::int8_t>();
    };
}

/// The three results of vec.rq with rounding R (header zp, no clamp, bias 0: Conv's epilogue) on `acc`.
template <class R>
Agreement three_way_rq(const std::vector<std::int32_t>& acc, std::int32_t zp,
                       const std::vector<numeric::QuantizedMultiplier>& mult, const HostRq& host) {
    const auto C = static_cast<std::int64_t>(mult.size());
    const auto rows = static_cast<std::int64_t>(acc.size()) / C;
    const std::vector<std::int8_t> h = host(Tensor::from<std::int32_t>(Shape{rows, C}, acc), zp, mult);
    // emitted: the accumulators and the table as constants loaded into ACC and LMEM, one vec.rq, one store
    std::vector<std::uint8_t> table;
    append_rq_table(
        table, numeric::rounding_of<R>, zp, -128, 127, C, [](std::int64_t) { return 0; },
        [&](std::int64_t c) { return mult[static_cast<std::size_t>(c)]; });
    std::vector<std::uint8_t> acc_bytes(acc.size() * 4);
    std::memcpy(acc_bytes.data(), acc.data(), acc_bytes.size());
    const std::int64_t n = rows * C;
    Builder b("rq");
    {
        auto acc_buf = load_constant(b, Mem::acc, acc_bytes, "accumulators");
        auto params = load_constant(b, Mem::lmem, table, "rq table");
        REQUIRE(acc_buf.ok());
        REQUIRE(params.ok());
        auto out = b.alloc(Mem::lmem, static_cast<std::uint32_t>(n), "out");
        auto loaded = b.event("loaded");
        auto done = b.event("requantized");
        auto rd = b.reg("out"), rs = b.reg("acc"), rp = b.reg("table"), ro = b.reg("output offset");
        REQUIRE((out.ok() && loaded.ok() && done.ok() && rd.ok() && rs.ok() && rp.ok() && ro.ok()));
        REQUIRE(b.emit("li", {*rd, out->address()}).ok());
        REQUIRE(b.emit("li", {*rs, acc_buf->address()}).ok());
        REQUIRE(b.emit("li", {*rp, params->address()}).ok());
        REQUIRE(b.emit("li", {*ro, 0}).ok());
        REQUIRE(b.emit("dma.cfg", {1, 0, 0}, Sync{nullptr, &*loaded}).ok());  // after both loads (DMA is in order)
        REQUIRE(b.emit("vec.rq", {*rd, *rs, *rp, C, rows}, Sync{&*loaded, &*done}).ok());
        REQUIRE(b.emit("dma.store", {3, *ro, *rd, n}, Sync{&*done, nullptr}).ok());
    }
    vnpu::sim::Machine m;
    m.dram[3].resize(static_cast<std::size_t>(n));
    et::run_clean(b, m);
    std::vector<std::int8_t> e(static_cast<std::size_t>(n));
    std::memcpy(e.data(), m.dram[3].data(), e.size());
    // isa: the emitted table decoded, semantics::requantize per element
    const auto header = vnpu::decode(vnpu::rq_header_layout, std::span<const std::uint8_t>(table), "rq table", "header");
    REQUIRE(header.ok());
    std::vector<vnpu::RqChannel> channels;
    for (std::int64_t c = 0; c < C; ++c) {
        const auto e_c = vnpu::decode(vnpu::rq_channel_layout,
                                      std::span<const std::uint8_t>(table).subspan(
                                          static_cast<std::size_t>(vnpu::rq_table_bytes(c)), vnpu::rq_channel_layout.size),
                                      "rq table", "channel " + std::to_string(c));
        REQUIRE(e_c.ok());
        channels.push_back(*e_c);
    }
    std::vector<std::int8_t> isa(acc.size());
    for (std::size_t i = 0; i < acc.size(); ++i)
        isa[i] = vnpu::semantics::requantize(acc[i], *header, channels[i % static_cast<std::size_t>(C)]);
    return compare(h, e, isa);
}

template <class R>
void sweep_rq(std::uint32_t seed) {
    CAPTURE(std::string(R::name));
    for (const std::int32_t zp : {0, -128, 127, 37}) {
        CAPTURE(zp);
        const Agreement a = three_way_rq<R>(accumulators(16 * 256, seed), zp, channel_multipliers(seed + 1), host_rq<R>());
        CAPTURE(a.first);
        CHECK(a.host_vs_isa == 0);
        CHECK(a.emitted_vs_isa == 0);
        ++seed;
    }
}

}  // namespace

TEST_CASE("vec.ew: host kernel, emitted program and ISA semantics agree on all 65536 int8 pairs, each func") {
    sweep_ew_all_funcs<numeric::round_double>();
}

TEST_CASE("vec.ew: the three agree with the block's other roundings (round_single, round_half_even)") {
    sweep_ew_all_funcs<numeric::round_single>();
    sweep_ew_all_funcs<numeric::round_half_even>();
}

TEST_CASE("vec.rq: Conv's epilogue, the emitted vec.rq and the ISA semantics agree on int32 extremes, each rounding") {
    sweep_rq<numeric::round_double>(10);
    sweep_rq<numeric::round_single>(20);
    sweep_rq<numeric::round_half_even>(30);
}

TEST_CASE("mac.mm: MatMulInteger, the emitted int32-output matmul and the ISA product agree, zero points at the ends") {
    struct Case {
        std::int64_t M, K, N;
        std::int32_t zp_a;
        std::uint32_t seed;
    };
    for (const Case c : {Case{1, 1, 1, 0, 1}, Case{33, 100, 70, -128, 2}, Case{17, 16, 16, 127, 3},
                         Case{9, 515, 40, 5, 4}}) {
        CAPTURE(c.M);
        CAPTURE(c.K);
        CAPTURE(c.N);
        CAPTURE(c.zp_a);
        std::mt19937 rng(c.seed);
        std::uniform_int_distribution<int> byte(-128, 127);
        std::vector<std::int8_t> a(static_cast<std::size_t>(c.M * c.K)), w(static_cast<std::size_t>(c.K * c.N));
        for (auto& v : a) v = static_cast<std::int8_t>(byte(rng));
        for (auto& v : w) v = static_cast<std::int8_t>(byte(rng));
        a[0] = -128, w[0] = -128;  // the largest product magnitude
        if (a.size() > 1) a[1] = 127;
        // host
        const Tensor ta = Tensor::from<std::int8_t>(Shape{c.M, c.K}, a, q8(1.0f, c.zp_a));
        const Tensor tb = Tensor::from<std::int8_t>(Shape{c.K, c.N}, w, q8(1.0f, 0));
        const auto host = ops::call<ops::MatMulInteger>({ta, tb}, {}, ops::TensorType{DType::i32, Shape{c.M, c.N}, std::nullopt});
        REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
        // emitted
        const ops::TensorType types[2] = {ops::type_of(ta), ops::type_of(tb)};
        const auto plan = ops::MatMulInteger::plan(types, {}, ops::TensorType{DType::i32, Shape{c.M, c.N}, std::nullopt},
                                                   numeric::Rounding::round_double);
        REQUIRE(plan.ok());
        const std::int64_t pa = round16(c.K), py = round16(4 * c.N);
        Builder b("mm");
        MatmulOptions opt;
        opt.int32_output = true;
        REQUIRE(lower_matmul(b, *plan, DramMatrix{2, 0, c.M, c.K, pa}, w, c.K, c.N, DramMatrix{3, 0, c.M, c.N, py}, opt)
                    .ok());
        vnpu::sim::Machine m;
        m.dram[2].assign(static_cast<std::size_t>(c.M * pa), 0x5a);
        for (std::int64_t r = 0; r < c.M; ++r)
            std::memcpy(&m.dram[2][static_cast<std::size_t>(r * pa)], &a[static_cast<std::size_t>(r * c.K)],
                        static_cast<std::size_t>(c.K));
        m.dram[3].assign(static_cast<std::size_t>(c.M * py), 0xa5);
        et::run_clean(b, m);
        std::vector<std::int32_t> e(static_cast<std::size_t>(c.M * c.N));
        for (std::int64_t i = 0; i < c.M; ++i)
            std::memcpy(&e[static_cast<std::size_t>(i * c.N)], &m.dram[3][static_cast<std::size_t>(i * py)],
                        static_cast<std::size_t>(4 * c.N));
        // isa
        std::vector<std::int32_t> isa(e.size());
        vnpu::semantics::mac_mm(a.data(), c.K, c.zp_a, w.data(), c.M, c.K, c.N, isa.data(), false);
        const Agreement agree = compare(host->to_vector<std::int32_t>(), e, isa);
        CAPTURE(agree.first);
        CHECK(agree.host_vs_isa == 0);
        CHECK(agree.emitted_vs_isa == 0);
    }
}

TEST_CASE("mutation: a host epilogue whose output shift is off by one is caught by the three-way comparison") {
    for (const EwQuant& q : ew_quantizations()) {
        const HostEw wrong = [](const Tensor& a, const Tensor& b, const numeric::QuantParams& qo) -> std::vector<std::int8_t> {
            auto plan = janus_test::binary_plan<expr::BinOp::add>(*a.quant, *b.quant, qo, numeric::Rounding::round_double);
            REQUIRE(plan.ok());
            plan->m_out.shift -= 1;  // the bug: the output multiplier halved
            return host_expr<expr::BinOp::add, numeric::round_double>(*plan, a, b, qo);
        };
        const Agreement a = three_way_ew<expr::BinOp::add, numeric::round_double>(q.a, q.b, q.out, wrong);
        CHECK_FALSE(a.all());
        CHECK(a.host_vs_isa > 0);
        CHECK(a.emitted_vs_isa == 0);  // the emitted program and the ISA still agree with each other
    }
}

TEST_CASE("mutation: a host epilogue rounding half-even where the block says round_double is caught") {
    const EwQuant q{q8(0.5f, 3), q8(0.25f, -5), q8(0.5f, 1)};  // a product ratio of 1/4: products 2 mod 4 are ties
    const HostEw wrong = [](const Tensor& a, const Tensor& b, const numeric::QuantParams& qo) -> std::vector<std::int8_t> {
        const auto plan = janus_test::binary_plan<expr::BinOp::mul>(*a.quant, *b.quant, qo, numeric::Rounding::round_double);
        REQUIRE(plan.ok());
        return host_expr<expr::BinOp::mul, numeric::round_half_even>(*plan, a, b, qo);
    };
    const Agreement a = three_way_ew<expr::BinOp::mul, numeric::round_double>(q.a, q.b, q.out, wrong);
    CHECK_FALSE(a.all());
    CHECK(a.host_vs_isa > 0);
    // and vec.rq: a host requantizing with round_single where the table says round_half_even
    const Agreement r = three_way_rq<numeric::round_half_even>(accumulators(16 * 256, 5), 0, channel_multipliers(6),
                                                                host_rq<numeric::round_single>());
    CHECK_FALSE(r.all());
    CHECK(r.host_vs_isa > 0);
    CHECK(r.emitted_vs_isa == 0);
}

}  // namespace isa_three_way_test
