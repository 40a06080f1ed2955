// Broadcasting binary ops on the vnpu (emit/stream.hpp repeated rows, emit/elementwise.hpp broadcast_row_constant),
// seed A7: a per-channel operand [C] against an NHWC activation [H W, C] is loaded per tile by stride-0 DMA rows and
// never materialized over the whole tensor. Runtime rows (C a multiple of 16) and constant rows of any C (repeated to
// lcm(C, 16) bytes only); emit -> simulate -> compare with ops::call on the same shapes, bit for bit.
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <janus/emit/elementwise.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/binary.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../support/check_rule.hpp"
#include "emit_support.hpp"
#include "support/quant_plan.hpp"

using namespace janus;
using namespace janus::emit;

namespace {

numeric::QuantParams q8(float s, std::int32_t z) { return numeric::make_quant(DType::i8, s, z).value(); }

/// out[p, c] = Op(x[p, c], row[c]) for P pixels of C channels; `constant`: the row is a compile-time constant
/// (broadcast_row_constant), else a runtime row in DRAM (C a multiple of 16). `row_first`: the row is the left input.
template <class Op, expr::BinOp Kind>
void check(std::int64_t P, std::int64_t C, bool constant, bool row_first, std::uint32_t seed,
           std::int64_t max_tile = 0) {
    CAPTURE(P);
    CAPTURE(C);
    CAPTURE(constant);
    CAPTURE(row_first);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::vector<std::int8_t> x(static_cast<std::size_t>(P * C)), row(static_cast<std::size_t>(C));
    for (auto& v : x) v = static_cast<std::int8_t>(byte(rng));
    for (auto& v : row) v = static_cast<std::int8_t>(byte(rng));
    const auto qx = q8(0.05f, -3), qr = q8(0.02f, 7), qo = q8(0.06f, 2);
    const Tensor tx = Tensor::from<std::int8_t>(Shape{P, C}, x, qx), tr = Tensor::from<std::int8_t>(Shape{C}, row, qr);
    const auto host = row_first ? ops::call<Op>({tr, tx}, {}, ops::TensorType{DType::i8, Shape{P, C}, qo})
                                : ops::call<Op>({tx, tr}, {}, ops::TensorType{DType::i8, Shape{P, C}, qo});
    REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
    const auto want = host->template to_vector<std::int8_t>();
    const auto plan =
        row_first ? janus_test::binary_plan<Kind>(qr, qx, qo, janus::numeric::default_rounding_mode) : janus_test::binary_plan<Kind>(qx, qr, qo, janus::numeric::default_rounding_mode);
    REQUIRE(plan.ok());

    Builder b("bcast");
    const DramTensor X{2, 0, P * C}, O{3, 0, P * C};
    const DramTensor R =
        constant ? broadcast_row_constant(b, row) : DramTensor{2, static_cast<std::uint32_t>(X.padded()), C};
    if (constant) CHECK(R.elements == std::lcm(C, std::int64_t{16}));
    const Status st = row_first ? lower_binary<Kind>(b, *plan, R, X, O, StreamOptions{max_tile})
                                : lower_binary<Kind>(b, *plan, X, R, O, StreamOptions{max_tile});
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    // seed A7: the constants hold the parameter block and at most one repeated row, never a tensor-sized vector
    CHECK(static_cast<std::int64_t>(b.weights().size()) <= 64 + (constant ? R.elements : 0));
    vnpu::sim::Machine m;
    m.dram[2].assign(static_cast<std::size_t>(X.padded() + (constant ? 0 : C)), 0);
    std::memcpy(m.dram[2].data(), x.data(), x.size());
    if (!constant) std::memcpy(m.dram[2].data() + X.padded(), row.data(), row.size());
    m.dram[3].resize(static_cast<std::size_t>(O.padded()));
    et::run_clean(b, m);
    std::vector<std::int8_t> got(want.size());
    std::memcpy(got.data(), m.dram[3].data(), got.size());
    CHECK(got == want);
}

}  // namespace

TEST_CASE("per-channel broadcast via stride-0 rows: runtime rows of 16, 32 and 48 channels, either side (A7)") {
    check<ops::Add, expr::BinOp::add>(49, 16, false, false, 1);
    check<ops::Mul, expr::BinOp::mul>(100, 32, false, true, 2);
    check<ops::Sub, expr::BinOp::sub>(37, 48, false, true, 3);  // row - x
    check<ops::Max, expr::BinOp::max>(3000, 64, false, false, 4);
    check<ops::Add, expr::BinOp::add>(200, 48, false, false, 5, 96);  // tiles forced to 96 B: two rows per tile
}

TEST_CASE("constant rows of any length, repeated to lcm(C, 16) bytes only") {
    check<ops::Add, expr::BinOp::add>(49, 3, true, false, 11);     // a period of 48 B; 147 elements: a partial period
    check<ops::Mul, expr::BinOp::mul>(50, 13, true, false, 12);    // 208 B
    check<ops::Min, expr::BinOp::min>(7, 1, true, true, 13);       // a scalar: 16 B
    check<ops::Sub, expr::BinOp::sub>(1000, 24, true, false, 14);  // 48 B
}

TEST_CASE("broadcast refusals: a runtime row that is not a multiple of 16 elements") {
    const auto plan = janus_test::binary_plan<expr::BinOp::add>(q8(0.05f, 0), q8(0.05f, 0), q8(0.1f, 0), janus::numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    Builder b("bcast");
    REQUIRE(b.emit("nop", {}).ok());
    CHECK_RULE(
        lower_binary<expr::BinOp::add>(b, *plan, DramTensor{2, 0, 130}, DramTensor{2, 256, 13}, DramTensor{3, 0, 130}),
        "lower-broadcast");
    CHECK_RULE(
        lower_binary<expr::BinOp::add>(b, *plan, DramTensor{2, 0, 100}, DramTensor{2, 256, 32}, DramTensor{3, 0, 100}),
        "lower-broadcast");  // 32 does not divide 100
    CHECK(b.size() == 1);
    CHECK(b.holders().empty());
}
