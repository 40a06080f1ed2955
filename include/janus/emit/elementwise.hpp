#pragma once
// Lowering of the elementwise families to the vnpu, from the same definitions the host kernels run:
//   binary (Add, Sub, Mul, Min, Max; ops/binary.hpp)  ->  vec.ew.<kind> with the op's BinaryQuantPlan as the
//       parameter block (vnpu/params.hpp), rounding named in the block
//   unary (every op of ops/unary.hpp)                   ->  lut.apply with the op's own 256-entry table
//   binary, then a unary op on its result (fused)     ->  vec.ew.<kind>, then lut.apply on each tile before its store
// Both stream their tensors through LMEM with emit/stream.hpp, into one Scheduler per kernel (emit/schedule.hpp):
// every instruction is queued with the bytes it reads and writes, and the events between DMA, VEC and LUT are derived
// from those accesses, none placed by hand. The parameter block and the table are constants of the weights region
// (identical ones stored once) loaded by DMA before the first tile.
//
// Contract: int8 tensors of equal element count (no broadcast yet: rule lower-broadcast), contiguous and padded
// to 16 B in DRAM. The result equals ops::call<Op> on the same tensors bit for bit (tests/emit/).
// Transactional: on any error, nothing of the kernel stays in the builder (seed C7).
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/emit/stream.hpp>
#include <janus/numeric/rounding.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/expr.hpp>
#include <janus/vnpu/params.hpp>

namespace janus::emit {

using vnpu::rounding_code;

/// A plan's vec.ew parameter block (vnpu/params.hpp ew_layout), in the plan's rounding.
inline vnpu::EwParams ew_params(const ops::BinaryQuantPlan& p) {
    using vnpu::stored_right_shift;
    return {p.zp_a,           p.zp_b,                   p.zp_out,           p.left_shift,
            p.m_a.multiplier, stored_right_shift(p.m_a), p.m_b.multiplier, stored_right_shift(p.m_b),
            p.m_out.multiplier, stored_right_shift(p.m_out), p.acc_limit,    rounding_code(p.rounding)};
}

/// The 48-byte vec.ew parameter block of a plan, encoded.
inline std::array<std::uint8_t, vnpu::ew_layout.size> ew_block(const ops::BinaryQuantPlan& p) {
    std::array<std::uint8_t, vnpu::ew_layout.size> out{};
    vnpu::encode(vnpu::ew_layout, ew_params(p), out);
    return out;
}

/// Append one vec.rq requantization table (vnpu/params.hpp) to `out`: the header (zp, lo, hi, the plan's `rounding`)
/// and one entry per channel c < channels with bias(c) and the multiplier mult(c). The one place the emitter writes
/// it.
template <class Bias, class Mult>
void append_rq_table(std::vector<std::uint8_t>& out, numeric::Rounding rounding, std::int32_t zp, std::int32_t lo,
                     std::int32_t hi, std::int64_t channels, Bias&& bias, Mult&& mult) {
    const std::size_t at = out.size();
    out.resize(at + static_cast<std::size_t>(vnpu::rq_table_bytes(channels)), 0);
    const std::span<std::uint8_t> bytes(out);
    vnpu::encode(vnpu::rq_header_layout, vnpu::RqHeader{zp, lo, hi, rounding_code(rounding)},
                 bytes.subspan(at, vnpu::rq_header_layout.size));
    for (std::int64_t c = 0; c < channels; ++c) {
        const numeric::QuantizedMultiplier q = mult(c);
        const std::size_t entry = at + static_cast<std::size_t>(vnpu::rq_table_bytes(c));
        vnpu::encode(vnpu::rq_channel_layout, vnpu::RqChannel{bias(c), q.multiplier, vnpu::stored_right_shift(q)},
                     bytes.subspan(entry, vnpu::rq_channel_layout.size));
    }
}

/// An activation clamp fused into a requantization (vec.rq's header lo, hi): output codes outside [lo, hi] become
/// lo or hi, after the zero point is added. The default is no clamp beyond int8's range. graph/lower.hpp sets it
/// when a Relu / Clip after a Conv / MatMul / Gemm is exactly this clamp on its codes (seed B10).
struct Clamp {
    std::int32_t lo = -128, hi = 127;
    friend bool operator==(const Clamp&, const Clamp&) = default;
};

/// The rq tables of N tiles of `nt` output channels (matmul columns, conv output channels), appended to `out`, and
/// their offsets in it: channel c of tile j is j nt + c, its bias bias[c] (0 when `bias` is empty) and multiplier
/// mult[c] (mult[0] when there is one); channels past `channels` are padding, computed and never stored: bias 0
/// and the last channel's multiplier.
inline std::vector<std::uint32_t> append_tile_tables(std::vector<std::uint8_t>& out, numeric::Rounding rounding,
                                                     std::int32_t zp_y, std::int64_t channels, std::int64_t nt,
                                                     std::span<const std::int32_t> bias,
                                              std::span<const numeric::QuantizedMultiplier> mult, Clamp clamp = {}) {
    std::vector<std::uint32_t> at;
    for (std::int64_t j = 0; j * nt < channels; ++j) {
        at.push_back(static_cast<std::uint32_t>(out.size()));
        append_rq_table(
            out, rounding, zp_y, clamp.lo, clamp.hi, nt,
            [&](std::int64_t n) {
                return !bias.empty() && j * nt + n < channels ? bias[static_cast<std::size_t>(j * nt + n)] : 0;
            },
            [&](std::int64_t n) {
                const std::int64_t c = std::min(j * nt + n, channels - 1);
                return mult[mult.size() == 1 ? 0 : static_cast<std::size_t>(c)];
            });
    }
    return at;
}

constexpr std::string_view ew_mnemonic(expr::BinOp k) {
    switch (k) {
        case expr::BinOp::add:
            return "vec.ew.add";
        case expr::BinOp::sub:
            return "vec.ew.sub";
        case expr::BinOp::mul:
            return "vec.ew.mul";
        case expr::BinOp::min:
            return "vec.ew.min";
        case expr::BinOp::max:
            return "vec.ew.max";
        default:
            return "";
    }
}

/// Load `bytes` constant bytes of the weights region into a fresh buffer of `mem` (one DMA row), queued into the
/// kernel's scheduler `q` with what it reads and writes (emit/schedule.hpp): the instructions that read the buffer
/// wait for the load through the scheduler.
inline Result<Buffer> load_constant(Builder& b, Scheduler& q, Mem mem, std::span<const std::uint8_t> bytes,
                                    const std::string& what) {
    const std::uint32_t at = b.constant(bytes);
    JANUS_TRY(Buffer buf, b.alloc(mem, static_cast<std::uint32_t>(bytes.size()), what));
    auto scope = b.scope("load " + what);
    JANUS_TRY(Reg dst, b.reg(what + " address"));
    JANUS_TRY(Reg src, b.reg(what + " weights offset"));
    const std::int64_t n = round16(static_cast<std::int64_t>(bytes.size()));
    JANUS_CHECK(q.add("li", {dst, buf.address()}));
    JANUS_CHECK(q.add("li", {src, at}));
    JANUS_CHECK(q.add("dma.cfg", {1, 0, 0}));
    JANUS_CHECK(q.add("dma.load", {dst, 0, src, n}, {reads(dram_span(0, at, n)), writes(span_of(buf, 0, n))}));
    return buf;
}

/// The same, emitted at once: a kernel that orders its instructions with events of its own, after this load on the
/// in-order DMA queue.
inline Result<Buffer> load_constant(Builder& b, Mem mem, std::span<const std::uint8_t> bytes, const std::string& what) {
    Scheduler q(b, what);
    JANUS_TRY(Buffer buf, load_constant(b, q, mem, bytes, what));
    JANUS_CHECK(q.finish());
    return buf;
}

/// A constant row (e.g. a per-channel operand of C values) as a repeatable DramTensor in the weights region: the row
/// repeated to lcm(C, 16) bytes, and no more (seed A7: never a vector over the whole tensor).
inline DramTensor broadcast_row_constant(Builder& b, std::span<const std::int8_t> row) {
    const auto n = static_cast<std::int64_t>(row.size());
    const std::int64_t period = std::lcm(n, std::int64_t{16});
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(period));
    for (std::int64_t i = 0; i < period; ++i)
        bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(row[static_cast<std::size_t>(i % n)]);
    return DramTensor{0, b.constant(bytes), period, n};
}

/// An int8 -> int8 table's 256 bytes loaded into LUT RAM (a table that is already there is shared: load_constant).
inline Result<Buffer> load_lut_table(Builder& b, Scheduler& q, const expr::Table256& table, const std::string& what) {
    std::array<std::uint8_t, 256> bytes{};
    for (std::size_t j = 0; j < 256; ++j) bytes[j] = static_cast<std::uint8_t>(table.values[j]);
    return load_constant(b, q, Mem::lut, bytes, what);
}
inline Result<Buffer> load_lut_table(Builder& b, const expr::Table256& table, const std::string& what) {
    Scheduler q(b, what);
    JANUS_TRY(Buffer buf, load_lut_table(b, q, table, what));
    JANUS_CHECK(q.finish());
    return buf;
}
/// Rule lower-lut-type: a table the LUT unit applies after another unit (a fused epilogue: lower_binary, lower_conv,
/// lower_depthwise, lower_matmul, lower_matmul_left) maps int8 to int8.
inline Status check_epilogue_table(Builder& b, const expr::Table256& t, const std::string& who) {
    if (t.in != DType::i8 || t.out != DType::i8)
        return make_error(b.name(), who, "lower-lut-type", "a fused epilogue table maps int8 to int8");
    return ok_status();
}
/// lut.apply's `table` operand of a table in LUT RAM.
inline std::int64_t lut_slot(const Buffer& table) { return (table.address() - vnpu::sim::lut_base) / 256; }

/// out = Kind(a, b) under `plan` (the binary op's plan, ops::Add::plan ...), with its rounding. Either input may be a
/// row repeated along the output (emit/stream.hpp): its element count a multiple of 16 that divides the output's.
/// With an `epilogue` (an int8 -> int8 table: the unary op after it, fused by graph/lower.hpp), each tile goes
/// through lut.apply after vec.ew, before its store: out = epilogue(Kind(a, b)). Rule lower-lut-type.
template <expr::BinOp Kind>
Status lower_binary(Builder& b, const ops::BinaryQuantPlan& plan, const DramTensor& x, const DramTensor& y,
                    const DramTensor& out, const StreamOptions& opt = {},
                    const std::optional<expr::Table256>& epilogue = std::nullopt) {
    constexpr std::string_view mnemonic = ew_mnemonic(Kind);
    static_assert(!mnemonic.empty(), "vec.ew has add, sub, mul, min and max");
    for (const DramTensor* t : {&x, &y})
        if (t->elements != out.elements &&
            (t->elements % 16 != 0 || t->elements == 0 || out.elements % (t->row ? t->row : t->elements) != 0))
            return make_error(b.name(), std::string(mnemonic), "lower-broadcast",
                              "inputs of " + std::to_string(x.elements) + " and " + std::to_string(y.elements) +
                                  " elements for an output of " + std::to_string(out.elements) +
                                  ": a broadcast input must be a row of a multiple of 16 elements repeated along the "
                                  "output (a constant row of any length: broadcast_row_constant); the host runs it");
    if (epilogue) JANUS_CHECK(check_epilogue_table(b, *epilogue, std::string(mnemonic)));
    auto txn = b.transaction();
    Scheduler q(b, b.name() + " " + std::string(mnemonic));
    const auto block = ew_block(plan);
    JANUS_TRY(Buffer params, load_constant(b, q, Mem::lmem, block, std::string(mnemonic) + " parameters"));
    JANUS_TRY(Reg rp, b.reg(std::string(mnemonic) + " parameters"));
    JANUS_CHECK(q.add("li", {rp, params.address()}));
    std::optional<Buffer> table;
    if (epilogue) {
        JANUS_TRY(table, load_lut_table(b, q, *epilogue, std::string(mnemonic) + " epilogue lut"));
    }
    const DramTensor ins[2] = {x, y};
    JANUS_CHECK(stream(b, q, ins, out, opt, [&](const Tile& t) -> Status {
        JANUS_CHECK(t.queue->add(mnemonic, {*t.out, *t.in[0], *t.in[1], rp, t.bytes},
                                 {reads(t.in_span[0]), reads(t.in_span[1]), reads(span_of(params)),
                                  writes(t.out_span)}));
        if (!table) return ok_status();
        // then LUT on the same bytes, before the store
        return t.queue->add("lut.apply", {*t.out, *t.out, lut_slot(*table), t.bytes},
                            {reads(t.out_span), reads(span_of(*table)), writes(t.out_span)});
    }));
    JANUS_CHECK(q.finish());
    txn.commit();
    return ok_status();
}

/// out = table[x + 128] for an int8 -> int8 table (a unary op's quantized kernel, ops/unary.hpp).
/// Rule: lower-lut-type (the table is not int8 -> int8).
inline Status lower_lut(Builder& b, const expr::Table256& table, const DramTensor& x, const DramTensor& out,
                        const StreamOptions& opt = {}) {
    if (table.in != DType::i8 || table.out != DType::i8)
        return make_error(b.name(), "lut.apply", "lower-lut-type",
                          std::string("the LUT unit maps int8 to int8; this table maps ") +
                              std::string(dtype_name(table.in)) + " to " + std::string(dtype_name(table.out)));
    auto txn = b.transaction();
    Scheduler q(b, b.name() + " lut.apply");
    JANUS_TRY(Buffer lut, load_lut_table(b, q, table, "lut table"));
    const std::int64_t slot = lut_slot(lut);
    const DramTensor ins[1] = {x};
    JANUS_CHECK(stream(b, q, ins, out, opt, [&](const Tile& t) {
        return t.queue->add("lut.apply", {*t.out, *t.in[0], slot, t.bytes},
                            {reads(t.in_span[0]), reads(span_of(lut)), writes(t.out_span)});
    }));
    JANUS_CHECK(q.finish());
    txn.commit();
    return ok_status();
}

}  // namespace janus::emit
