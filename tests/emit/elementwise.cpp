// Differential verification of the elementwise lowerings (emit/elementwise.hpp): emit -> simulate -> compare with
// the host kernel of the same op (ops::call) bit for bit, with no fault and no race, over a matrix of sizes (odd
// widths 1, 7, 13; tiling forced by the real LMEM budget and by small tiles) and quantization parameters (zero points
// at both ends of int8, extreme scale ratios, all three rounding modes of the parameter block).
#include <doctest/doctest.h>

#include <cstring>
#include <random>
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
