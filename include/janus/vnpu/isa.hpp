#pragma once
// The vnpu instruction table: ONE row per instruction, from which the encoder, the decoder and the assembly printer
// below are derived (and, in later steps, the parser, the generated reference of docs/vnpu.md and the simulator's
// dispatch). No other file states a field's position, width or range (seeds D9, D12).
//
// Word format (64 bits, stored little endian):
//   bits 63..58  opcode
//   bit  57      wait flag      bits 56..53  wait event   (must be 0 when the flag is clear)
//   bit  52      signal flag    bits 51..48  signal event (must be 0 when the flag is clear)
//   bits 47..0   payload: the row's fields; every bit no field covers must be 0 (reserved)
// A row may also fix some payload bits (`fixed`): ALU's function selector, so that `alu.add` and `alu.sub` are two
// rows sharing opcode 4. Field kinds say how a logical operand value is stored:
//   reg / event   r0..r15 / e0..e15 in 4 bits
//   uimm          unsigned; stored = value / scale (value must be a multiple of scale: alignment)
//   simm          two's complement of value / scale
//   count         scale..2^width * scale, stored as value / scale - 1 (counts and sizes, never 0)
//   mask          unsigned bit mask, printed in hex (SYNC's event masks)
//   region        a DRAM region 0..3, written by name: weights, scratch, input, output
// Contract: encode() refuses any operand outside its field's range or alignment, decode() refuses unknown opcodes,
// non-zero reserved bits and clear-flag event bits, and for every word decode() accepts, encode(decode(w)) == w.
// Errors name the input ("word 12" / the mnemonic), the field and the rule.
//
// Each row also names what the simulator executes (`sem`, vnpu/sim/simulator.hpp, whose element math is the plain code
// of vnpu/semantics.hpp) and how its cycles count (`cost`); the reference in docs/vnpu.md is generated from the rows
// (vnpu/reference.hpp). The parameter tables vec.rq and vec.ew read are described in vnpu/params.hpp.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <janus/core/error.hpp>

namespace janus::vnpu {

using Word = std::uint64_t;

enum class Unit : std::uint8_t { seq, dma, mac, vec, lut };

inline constexpr std::string_view unit_name(Unit u) {
    constexpr std::string_view names[] = {"SEQ", "DMA", "MAC", "VEC", "LUT"};
    return names[static_cast<int>(u)];
}

enum class FieldKind : std::uint8_t { reg, event, uimm, simm, count, mask, region };

/// DRAM regions, in `region` field order; the host sets each one's contents and size.
inline constexpr std::array<std::string_view, 4> region_names = {"weights", "scratch", "input", "output"};

/// What executes a row: the simulator dispatches on it (Simulator::execute handles every value; -Wswitch checks).
enum class Sem : std::uint8_t {
    nop, halt, li, addi, alu, loop, sync,
    dma_cfg, dma_load, dma_store, dma_move, dma_fill,
    mac_cfg, mac_mm,
    vec_rq, vec_ew, vec_acc, vec_mac, vec_minmax, vec_i32, vec_sel,
    lut_apply,
};

/// How a row's cycles are counted (docs/vnpu.md "Timing model").
enum class Cost : std::uint8_t { seq, config, dma, mac, vec, lut };

struct Field {
    std::string_view name;
    std::uint8_t lo = 0;     ///< first payload bit
    std::uint8_t width = 0;  ///< bits
    FieldKind kind = FieldKind::uimm;
    std::int64_t scale = 1;  ///< stored = value / scale (uimm, simm)

    /// Smallest and largest logical value the field holds.
    constexpr std::int64_t min() const {
        switch (kind) {
            case FieldKind::simm: return -(std::int64_t{1} << (width - 1)) * scale;
            case FieldKind::count: return scale;
            default: return 0;
        }
    }
    constexpr std::int64_t max() const {
        switch (kind) {
            case FieldKind::simm: return ((std::int64_t{1} << (width - 1)) - 1) * scale;
            case FieldKind::count: return (std::int64_t{1} << width) * scale;
            default: return ((std::int64_t{1} << width) - 1) * scale;
        }
    }
    constexpr std::uint64_t mask() const { return ((std::uint64_t{1} << width) - 1) << lo; }
};

inline constexpr int max_fields = 6;

struct Fixed {
    std::uint8_t lo = 0, width = 0;
    std::uint64_t value = 0;
    constexpr std::uint64_t mask() const { return width == 0 ? 0 : ((std::uint64_t{1} << width) - 1) << lo; }
};

struct InstrInfo {
    std::string_view mnemonic;
    std::uint8_t opcode = 0;
    Unit unit = Unit::seq;
    std::array<Field, max_fields> fields{};  ///< in assembly operand order
    int n_fields = 0;
    Fixed fixed{};                  ///< payload bits the row fixes (ALU's function)
    std::string_view semantics;     ///< at most two lines, for the generated reference
    Sem sem = Sem::nop;             ///< what the simulator executes
    Cost cost = Cost::seq;          ///< how its cycles are counted
    std::int64_t func = 0;          ///< the function a shared Sem selects (ALU op, VEC.EW op, min/max, int32 op)

    constexpr std::span<const Field> operands() const { return {fields.data(), static_cast<std::size_t>(n_fields)}; }
};

namespace detail {
constexpr Field reg(std::string_view n, int lo) { return {n, static_cast<std::uint8_t>(lo), 4, FieldKind::reg, 1}; }
constexpr Field simm(std::string_view n, int lo, int w) {
    return {n, static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(w), FieldKind::simm, 1};
}
constexpr Field uimm(std::string_view n, int lo, int w, int scale = 1) {
    return {n, static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(w), FieldKind::uimm, scale};
}
constexpr Field count(std::string_view n, int lo, int w, int scale = 1) {
    return {n, static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(w), FieldKind::count, scale};
}
constexpr Field mask(std::string_view n, int lo, int w) {
    return {n, static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(w), FieldKind::mask, 1};
}
constexpr Field region(std::string_view n, int lo) { return {n, static_cast<std::uint8_t>(lo), 2, FieldKind::region, 1}; }
/// A byte count: 16 .. 1 MiB in steps of 16 (bits 15..0).
constexpr Field bytes16(std::string_view n) { return count(n, 0, 16, 16); }
/// An element count for VEC / LUT: 16 .. 256 Ki in steps of 16 (bits 13..0).
constexpr Field elems(std::string_view n) { return count(n, 0, 14, 16); }

struct RowSpec {
    Sem sem = Sem::nop;
    Cost cost = Cost::seq;
    Fixed fixed{};
    std::int64_t func = 0;
};
constexpr InstrInfo row(std::string_view m, int op, Unit u, std::initializer_list<Field> f, std::string_view text,
                        RowSpec spec) {
    InstrInfo r{m, static_cast<std::uint8_t>(op), u, {}, 0, spec.fixed, text, spec.sem, spec.cost, spec.func};
    for (const Field& x : f) r.fields[static_cast<std::size_t>(r.n_fields++)] = x;
    return r;
}
constexpr Fixed func_bits(int lo, int width, int value) {
    return Fixed{static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(width), static_cast<std::uint64_t>(value)};
}
constexpr InstrInfo alu(std::string_view m, int func, std::string_view text) {
    return row(m, 4, Unit::seq, {reg("rd", 40), reg("rs1", 36), reg("rs2", 32)}, text,
               {Sem::alu, Cost::seq, func_bits(44, 4, func), func});
}
/// VEC.EW functions: add 0, sub 1, mul 2, min 3, max 4 (semantics::EwFunc, vnpu/semantics.hpp).
constexpr InstrInfo vec_ew(std::string_view m, int func, std::string_view text) {
    return row(m, 21, Unit::vec, {reg("rd", 40), reg("ra", 36), reg("rb", 32), reg("rp", 28), elems("n")}, text,
               {Sem::vec_ew, Cost::vec, func_bits(44, 4, func), func});
}
/// The int32 ACC -> ACC functions of opcode 25 (shift, rounding shift, abs, add), selected by bits 47..44.
constexpr InstrInfo vec_i32(std::string_view m, int func, std::initializer_list<Field> f, std::string_view text) {
    return row(m, 25, Unit::vec, f, text, {Sem::vec_i32, Cost::vec, func_bits(44, 4, func), func});
}
}  // namespace detail

// Operand meaning: rd / rs / ra / rb / rx / rw / rp / acc are REGISTERS holding addresses (read when SEQ dispatches
// the instruction); local addresses are 20-bit (docs/vnpu.md "Memories"), DRAM addresses are region offsets.
// clang-format off
inline constexpr std::array instruction_table = {
    // ---- SEQ
    detail::row("nop", 0, Unit::seq, {}, "Does nothing (its wait and signal still act).", {Sem::nop}),
    detail::row("halt", 1, Unit::seq, {}, "Ends the program once every queue has drained; a non-zero event counter is a leaked event.", {Sem::halt}),
    detail::row("li", 2, Unit::seq, {detail::reg("rd", 44), detail::simm("imm", 0, 32)}, "rd = imm.", {Sem::li}),
    detail::row("addi", 3, Unit::seq, {detail::reg("rd", 44), detail::reg("rs", 40), detail::simm("imm", 0, 32)},
                "rd = rs + imm (32-bit wrap-around).", {Sem::addi}),
    detail::alu("alu.add", 0, "rd = rs1 + rs2 (32-bit wrap-around)."),
    detail::alu("alu.sub", 1, "rd = rs1 - rs2 (32-bit wrap-around)."),
    detail::alu("alu.mul", 2, "rd = low 32 bits of rs1 * rs2."),
    detail::alu("alu.shl", 3, "rd = rs1 << (rs2 & 31)."),
    detail::alu("alu.sra", 4, "rd = rs1 >> (rs2 & 31), arithmetic."),
    detail::alu("alu.srl", 5, "rd = rs1 >> (rs2 & 31), logical."),
    detail::alu("alu.and", 6, "rd = rs1 & rs2."),
    detail::alu("alu.or", 7, "rd = rs1 | rs2."),
    detail::alu("alu.xor", 8, "rd = rs1 ^ rs2."),
    detail::alu("alu.min", 9, "rd = min(rs1, rs2), signed."),
    detail::alu("alu.max", 10, "rd = max(rs1, rs2), signed."),
    detail::row("loop", 5, Unit::seq, {detail::count("count", 0, 14), detail::count("body", 14, 10)},
                "Runs the next `body` instructions `count` times; loops nest at most 2 deep.", {Sem::loop}),
    detail::row("sync", 6, Unit::seq, {detail::mask("waits", 16, 16), detail::mask("signals", 0, 16)},
                "Waits on every event in `waits` (each > 0, then decremented), then signals every event in `signals`.",
                {Sem::sync}),
    // ---- DMA (rows and strides come from the last dma.cfg executed by the DMA queue; at reset rows = 1)
    detail::row("dma.cfg", 8, Unit::dma, {detail::count("rows", 0, 12), detail::uimm("src_stride", 12, 18, 16), detail::uimm("dst_stride", 30, 18, 16)},
                "Sets the row count and the source / destination row strides (bytes) of the following DMA transfers.",
                {Sem::dma_cfg, Cost::config}),
    detail::row("dma.load", 9, Unit::dma, {detail::reg("rd", 44), detail::region("region", 40), detail::reg("rs", 36), detail::bytes16("bytes")},
                "For each row r: local[rd + r*dst_stride ..+bytes] = region[rs + r*src_stride ..+bytes] (LMEM, ACC or LUT RAM).",
                {Sem::dma_load, Cost::dma}),
    detail::row("dma.store", 10, Unit::dma, {detail::region("region", 44), detail::reg("rd", 40), detail::reg("rs", 36), detail::bytes16("bytes")},
                "For each row r: region[rd + r*dst_stride ..+bytes] = local[rs + r*src_stride ..+bytes] (LMEM, ACC or LUT RAM;\n"
                "ACC's int32 lanes leave as their little-endian bytes: ConvInteger / MatMulInteger sums).",
                {Sem::dma_store, Cost::dma}),
    detail::row("dma.move", 11, Unit::dma, {detail::reg("rd", 44), detail::reg("rs", 40), detail::bytes16("bytes")},
                "For each row r: local[rd + r*dst_stride ..+bytes] = local[rs + r*src_stride ..+bytes] (each row copied as a whole).",
                {Sem::dma_move, Cost::dma}),
    detail::row("dma.fill", 12, Unit::dma, {detail::reg("rd", 44), detail::simm("value", 16, 8), detail::bytes16("bytes")},
                "For each row r: every byte of local[rd + r*dst_stride ..+bytes] = value (padding, clearing ACC).",
                {Sem::dma_fill, Cost::dma}),
    // ---- MAC
    detail::row("mac.cfg", 16, Unit::mac, {detail::count("m", 0, 10), detail::count("k", 10, 10, 16), detail::count("n", 20, 10, 16), detail::uimm("a_stride", 30, 18, 16)},
                "Sets the shape of the following mac.mm: A is m x k int8 (row stride a_stride), B is k x n int8 (dense), C m x n int32.",
                {Sem::mac_cfg, Cost::config}),
    detail::row("mac.mm", 17, Unit::mac, {detail::reg("acc", 40), detail::reg("ra", 36), detail::reg("rb", 32), detail::simm("zp", 0, 9)},
                "ACC[acc + 4(i*n + j)] = sum_k (A[ra + i*a_stride + k] - zp) * B[rb + k*n + j]; A, B in LMEM.",
                {Sem::mac_mm, Cost::mac, detail::func_bits(47, 1, 0), 0}),
    detail::row("mac.mma", 17, Unit::mac, {detail::reg("acc", 40), detail::reg("ra", 36), detail::reg("rb", 32), detail::simm("zp", 0, 9)},
                "As mac.mm, but adds to ACC (32-bit wrap-around) instead of overwriting it.",
                {Sem::mac_mm, Cost::mac, detail::func_bits(47, 1, 1), 1}),
    // ---- VEC
    detail::row("vec.rq", 20, Unit::vec, {detail::reg("rd", 44), detail::reg("rs", 40), detail::reg("rp", 36), detail::count("channels", 0, 10, 16), detail::count("rows", 10, 12)},
                "dst[rd + r*C + c] = sat8(clamp(rq(ACC[rs + 4(r*C + c)] + bias[c], M[c]) + zp, lo, hi)), C = channels;\n"
                "rq rounds as the table header says (round_double, round_single or round_half_even); parameters from the table at rp.",
                {Sem::vec_rq, Cost::vec}),
    detail::vec_ew("vec.ew.add", 0, "dst[i] = sat8(rq(clamp(rq(a' << ls, M_a) + rq(b' << ls, M_b), -L, L), M_out) + zp_out), a' = a[i] - zp_a,\n"
                                    "b' = b[i] - zp_b, L = acc_limit, for i < n; rounding and parameters from the block at rp."),
    detail::vec_ew("vec.ew.sub", 1, "As vec.ew.add with rq(a' << ls, M_a) - rq(b' << ls, M_b)."),
    detail::vec_ew("vec.ew.mul", 2, "dst[i] = sat8(rq(clamp(a' * b', -L, L), M_out) + zp_out), a', b', L as in vec.ew.add."),
    detail::vec_ew("vec.ew.min", 3, "dst[i] = sat8(min(rq(a', M_a), rq(b', M_b)) + zp_out): both rescaled to the output, then min."),
    detail::vec_ew("vec.ew.max", 4, "dst[i] = sat8(max(rq(a', M_a), rq(b', M_b)) + zp_out)."),
    detail::row("vec.acc", 22, Unit::vec, {detail::reg("acc", 44), detail::reg("rx", 40), detail::simm("zp", 16, 9), detail::elems("n")},
                "ACC[acc + 4i] += x[rx + i] - zp for i < n (32-bit wrap-around): pooling sums and reductions.",
                {Sem::vec_acc, Cost::vec}),
    detail::row("vec.mac", 23, Unit::vec, {detail::reg("acc", 44), detail::reg("rx", 40), detail::reg("rw", 36), detail::simm("zp", 16, 9), detail::elems("n")},
                "ACC[acc + 4i] += (x[rx + i] - zp) * w[rw + i] for i < n (32-bit wrap-around): depthwise convolution.",
                {Sem::vec_mac, Cost::vec}),
    detail::row("vec.max", 24, Unit::vec, {detail::reg("rd", 40), detail::reg("ra", 36), detail::reg("rb", 32), detail::elems("n")},
                "dst[rd + i] = max(a[ra + i], b[rb + i]), int8, for i < n (max pooling on one scale).",
                {Sem::vec_minmax, Cost::vec, detail::func_bits(47, 1, 0), 0}),
    detail::row("vec.min", 24, Unit::vec, {detail::reg("rd", 40), detail::reg("ra", 36), detail::reg("rb", 32), detail::elems("n")},
                "dst[rd + i] = min(a[ra + i], b[rb + i]), int8, for i < n.",
                {Sem::vec_minmax, Cost::vec, detail::func_bits(47, 1, 1), 1}),
    detail::vec_i32("vec.shl32", 0, {detail::reg("rd", 40), detail::reg("rs", 36), detail::uimm("shift", 16, 5), detail::elems("n")},
                    "ACC[rd + 4i] = ACC[rs + 4i] << shift for i < n (32-bit wrap-around)."),
    detail::vec_i32("vec.rshr32", 1, {detail::reg("rd", 40), detail::reg("rs", 36), detail::uimm("shift", 16, 5), detail::elems("n")},
                    "ACC[rd + 4i] = round(ACC[rs + 4i] / 2^shift), ties away from zero (numeric::rounding_divide_by_pot), for i < n."),
    detail::vec_i32("vec.abs32", 2, {detail::reg("rd", 40), detail::reg("rs", 36), detail::elems("n")},
                    "ACC[rd + 4i] = |ACC[rs + 4i]| for i < n (|INT32_MIN| wraps to INT32_MIN)."),
    detail::vec_i32("vec.add32", 3, {detail::reg("rd", 40), detail::reg("ra", 36), detail::reg("rb", 32), detail::elems("n")},
                    "ACC[rd + 4i] = ACC[ra + 4i] + ACC[rb + 4i] for i < n (32-bit wrap-around): joins partial sums."),
    detail::row("vec.sel", 26, Unit::vec, {detail::reg("rd", 40), detail::reg("rc", 36), detail::reg("ra", 32), detail::reg("rb", 28), detail::elems("n")},
                "dst[rd + i] = c[rc + i] != 0 ? a[ra + i] : b[rb + i], int8, for i < n (Where on one scale).",
                {Sem::vec_sel, Cost::vec}),
    // ---- LUT
    detail::row("lut.apply", 28, Unit::lut, {detail::reg("rd", 44), detail::reg("rs", 40), detail::uimm("table", 36, 2), detail::elems("n")},
                "dst[rd + i] = T[x + 128] for x = src[rs + i], i < n; T is LUT RAM table `table`.",
                {Sem::lut_apply, Cost::lut}),
};
// clang-format on

namespace detail {
inline constexpr int opcode_lo = 58, wait_flag = 57, wait_lo = 53, signal_flag = 52, signal_lo = 48;
inline constexpr std::uint64_t payload_mask = (std::uint64_t{1} << 48) - 1;

constexpr bool table_is_consistent() {
    for (std::size_t i = 0; i < instruction_table.size(); ++i) {
        const InstrInfo& r = instruction_table[i];
        if (r.opcode >= 64) return false;
        std::uint64_t used = r.fixed.mask();
        for (const Field& f : r.operands()) {
            if (f.width == 0 || f.lo + f.width > 48) return false;  // inside the payload
            if (f.scale < 1 || (f.kind == FieldKind::region && f.width != 2)) return false;
            if ((used & f.mask()) != 0) return false;                // no overlap
            used |= f.mask();
        }
        if ((r.fixed.value & ~((std::uint64_t{1} << r.fixed.width) - 1)) != 0) return false;
        for (std::size_t j = i + 1; j < instruction_table.size(); ++j) {
            const InstrInfo& s = instruction_table[j];
            if (r.mnemonic == s.mnemonic) return false;
            // two rows of one opcode must differ in their fixed bits (so decoding is unambiguous)
            if (r.opcode == s.opcode && (r.fixed.mask() != s.fixed.mask() || r.fixed.value == s.fixed.value))
                return false;
        }
    }
    return true;
}
static_assert(table_is_consistent(),
              "vnpu::instruction_table: a field leaves the payload or overlaps another, a mnemonic repeats, or two "
              "rows of one opcode are not told apart by their fixed bits");
}  // namespace detail

/// One instruction: the row, its operand values (logical, in operand order) and its event actions.
struct Instr {
    const InstrInfo* info = nullptr;
    std::array<std::int64_t, max_fields> operands{};
    std::optional<int> wait;    ///< event 0..15 to wait on
    std::optional<int> signal;  ///< event 0..15 to signal

    friend bool operator==(const Instr& a, const Instr& b) {
        return a.info == b.info && a.operands == b.operands && a.wait == b.wait && a.signal == b.signal;
    }
};

/// The row called `mnemonic`, or nullptr.
inline const InstrInfo* find_instruction(std::string_view mnemonic) {
    for (const InstrInfo& r : instruction_table)
        if (r.mnemonic == mnemonic) return &r;
    return nullptr;
}

/// Encode one instruction. Rules: known-instruction, event-range, field-range, field-alignment.
inline Result<Word> encode(const Instr& in, const std::string& what = "instruction") {
    if (in.info == nullptr) return make_error(what, "", "known-instruction", "the instruction has no table row");
    const InstrInfo& r = *in.info;
    Word w = Word{r.opcode} << detail::opcode_lo;
    const auto event = [&](const std::optional<int>& e, int flag, int lo, const char* name) -> Status {
        if (!e) return ok_status();
        if (*e < 0 || *e > 15)
            return make_error(what, std::string(name), "event-range",
                              std::string(r.mnemonic) + ": " + name + " event " + std::to_string(*e) +
                                  " is outside e0..e15");
        w |= Word{1} << flag | static_cast<Word>(*e) << lo;
        return ok_status();
    };
    JANUS_CHECK(event(in.wait, detail::wait_flag, detail::wait_lo, "wait"));
    JANUS_CHECK(event(in.signal, detail::signal_flag, detail::signal_lo, "signal"));
    w |= r.fixed.value << r.fixed.lo;
    for (int k = 0; k < r.n_fields; ++k) {
        const Field& f = r.fields[static_cast<std::size_t>(k)];
        const std::int64_t v = in.operands[static_cast<std::size_t>(k)];
        if (v < f.min() || v > f.max())
            return make_error(what, std::string(f.name), "field-range",
                              std::string(r.mnemonic) + ": " + std::string(f.name) + " = " + std::to_string(v) +
                                  " is outside [" + std::to_string(f.min()) + ", " + std::to_string(f.max()) + "]");
        if (v % f.scale != 0)
            return make_error(what, std::string(f.name), "field-alignment",
                              std::string(r.mnemonic) + ": " + std::string(f.name) + " = " + std::to_string(v) +
                                  " is not a multiple of " + std::to_string(f.scale));
        const std::int64_t stored = f.kind == FieldKind::count ? v / f.scale - 1 : v / f.scale;
        w |= (static_cast<Word>(stored) << f.lo) & f.mask();
    }
    return w;
}

/// Decode one word. Rules: known-opcode, reserved-bits-zero, event-flag-clear.
inline Result<Instr> decode(Word w, const std::string& what = "word") {
    const auto opcode = static_cast<std::uint8_t>(w >> detail::opcode_lo);
    const auto hex = [](Word x) {
        static constexpr char digits[] = "0123456789abcdef";
        std::string s = "0x";
        for (int i = 60; i >= 0; i -= 4) s += digits[(x >> i) & 0xF];
        return s;
    };
    const InstrInfo* r = nullptr;
    for (const InstrInfo& row : instruction_table)
        if (row.opcode == opcode && (w & row.fixed.mask()) == (row.fixed.value << row.fixed.lo)) r = &row;
    if (r == nullptr)
        return make_error(what, "", "known-opcode",
                          hex(w) + ": opcode " + std::to_string(opcode) + " (or its function bits) names no instruction");
    Instr in;
    in.info = r;
    const auto event = [&](int flag, int lo, const char* name, std::optional<int>& out) -> Status {
        const auto e = static_cast<int>((w >> lo) & 0xF);
        if ((w >> flag) & 1) out = e;
        else if (e != 0)
            return make_error(what, name, "event-flag-clear",
                              hex(w) + ": " + name + " event bits are " + std::to_string(e) + " but the " + name +
                                  " flag is clear");
        return ok_status();
    };
    JANUS_CHECK(event(detail::wait_flag, detail::wait_lo, "wait", in.wait));
    JANUS_CHECK(event(detail::signal_flag, detail::signal_lo, "signal", in.signal));
    std::uint64_t used = r->fixed.mask();
    for (int k = 0; k < r->n_fields; ++k) {
        const Field& f = r->fields[static_cast<std::size_t>(k)];
        used |= f.mask();
        const std::uint64_t raw = (w & f.mask()) >> f.lo;
        std::int64_t v = 0;
        switch (f.kind) {
            case FieldKind::simm: {
                const std::uint64_t sign = std::uint64_t{1} << (f.width - 1);
                v = static_cast<std::int64_t>(raw ^ sign) - static_cast<std::int64_t>(sign);
                v *= f.scale;
                break;
            }
            case FieldKind::count: v = (static_cast<std::int64_t>(raw) + 1) * f.scale; break;
            default: v = static_cast<std::int64_t>(raw) * f.scale; break;
        }
        in.operands[static_cast<std::size_t>(k)] = v;
    }
    if (const std::uint64_t reserved = w & detail::payload_mask & ~used; reserved != 0)
        return make_error(what, "", "reserved-bits-zero",
                          hex(w) + ": " + std::string(r->mnemonic) + " leaves payload bits " + hex(reserved) +
                              " reserved; they must be 0");
    return in;
}

/// Canonical assembly text of one instruction: `mnemonic op, op[ wait(eN)][ signal(eN)]`. Registers print as rN,
/// masks in hex with 4 digits, everything else in decimal.
inline std::string print(const Instr& in) {
    const InstrInfo& r = *in.info;
    std::string s(r.mnemonic);
    for (int k = 0; k < r.n_fields; ++k) {
        const Field& f = r.fields[static_cast<std::size_t>(k)];
        const std::int64_t v = in.operands[static_cast<std::size_t>(k)];
        s += k == 0 ? " " : ", ";
        switch (f.kind) {
            case FieldKind::reg: s += "r" + std::to_string(v); break;
            case FieldKind::event: s += "e" + std::to_string(v); break;
            case FieldKind::region: s += region_names[static_cast<std::size_t>(v & 3)]; break;
            case FieldKind::mask: {
                static constexpr char digits[] = "0123456789abcdef";
                s += "0x";
                for (int i = ((f.width + 3) / 4 - 1) * 4; i >= 0; i -= 4) s += digits[(v >> i) & 0xF];
                break;
            }
            default: s += std::to_string(v); break;
        }
    }
    if (in.wait) s += " wait(e" + std::to_string(*in.wait) + ")";
    if (in.signal) s += " signal(e" + std::to_string(*in.signal) + ")";
    return s;
}

}  // namespace janus::vnpu
