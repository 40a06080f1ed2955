#pragma once
// Lowering of int8 data movement (ops/movement.hpp) and of the int8 -> int8 Requantize (ops/quantize.hpp) to the
// vnpu's DMA, with lut.apply where the values are requantized.
//
// Layout: a DramArray is an int8 tensor in a DRAM region, "rows of the innermost axis padded to a pitch":
//     element (i0, ..., i{r-1}) lives at   offset + row(i0, ..., i{r-2}) * pitch + i{r-1}
// where row() is the row-major index over the outer axes (outer axes dense in the pitch). rank 1..5; the pitch is a
// multiple of 16 >= the innermost extent; the bytes between the innermost extent and the pitch are padding, whose
// value is unspecified (loaded, requantized and stored like data). NHWC images (DramImage) and matrices (DramMatrix)
// are the rank-3 and rank-2 cases. The descriptor also carries the values' quantization (or none).
//
// One definition: every index mapping is the host's own. Slice, Transpose, Expand run the op's move() on the
// descriptor's byte layout (layout/view.hpp gives the source bytes of every output element); Concat and Pad slice
// the output's byte layout as their host kernels do (Concat::plan, Pad::plan / Pad::table / Pad::fill_values);
// Reshape, Flatten, Squeeze, Unsqueeze take their shape from Op::infer. Requantization tables are computed by the
// host's data-movement kernel (ops::materialize, which Requantize and every movement op run) on all 256 int8 values.
//
// Code. Every copy is a set of ROWS: the source row of the innermost axis, round16(extent) bytes at a 16-B aligned
// address, goes to a 16-B aligned destination row. The outer axes become multi-row DMA transfers (dma.cfg rows,
// src_stride, dst_stride; stride 0 repeats a source row: Expand) through an LMEM staging buffer (DRAM -> LMEM ->
// DRAM; the vnpu has no DRAM -> DRAM transfer), the remaining axes are unrolled when emitting. Negative or
// unencodable strides fall back to one row per transfer. A pure DMA sequence needs no event: the DMA queue is in
// order. With a requantization table, each staged chunk is rewritten in place by lut.apply: the load signals L,
// lut.apply waits L and signals V, the store waits V (every signal waited for once).
//
// The innermost axis. The DMA moves 16-B granules at 16-B aligned addresses, and VEC / LUT read and write 16-B
// aligned operands too, so no DMA, VEC or LUT instruction can shift bytes within a row. A copy whose row starts at
// a byte offset that is not a multiple of 16 (an innermost slice start, concat offset or pad, a step on the
// innermost axis, a broadcast of it, a transpose that moves it) is refused with lower-<op>-inner. (The one exact
// byte-granular path on the vnpu would be the MAC array: mac.mm by a 0/1 selection matrix, then vec.rq with
// multiplier 1; it is not lowered.)
//
// Rules (each refusal leaves nothing in the builder): lower-<op>-layout (a descriptor that is malformed, does not
// match the op's output shape, or overlaps another), lower-<op>-inner (above), lower-<op>-per-axis (a per-axis
// requantization: one LUT table maps the whole tensor), lower-<op>-budget (no LMEM for the staging buffer),
// lower-requantize-type (a uint8 output), lower-pad-inner (edge / reflect on the innermost axis), plus the host op's
// own rules (attributes, quantization presence), unchanged.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <janus/emit/elementwise.hpp>
#include <janus/layout/view.hpp>
#include <janus/ops/copy.hpp>
#include <janus/ops/movement.hpp>
#include <janus/ops/quantize.hpp>

namespace janus::emit {

/// An int8 tensor in a DRAM region, rows of the innermost axis padded to `pitch` bytes (see the header comment).
struct DramArray {
    int region = 2;
    std::uint32_t offset = 0;                   ///< multiple of 16
    std::vector<std::int64_t> shape;            ///< rank 1..5
    std::int64_t pitch = 0;                     ///< bytes between rows: a multiple of 16 >= shape.back()
    std::optional<numeric::QuantParams> quant;  ///< the values' quantization (int8), or none

    /// The smallest pitch: the innermost extent rounded up to 16 (at least 16).
    static DramArray packed(int region, std::uint32_t offset, std::vector<std::int64_t> shape,
                            std::optional<numeric::QuantParams> quant = std::nullopt) {
        const std::int64_t inner = shape.empty() ? 1 : shape.back();
        const std::int64_t pitch = std::max<std::int64_t>(16, round16(inner));
        return DramArray{region, offset, std::move(shape), pitch, std::move(quant)};
    }
    int rank() const { return static_cast<int>(shape.size()); }
    std::int64_t inner() const { return shape.back(); }
    /// Rows: the product of the outer extents.
    std::int64_t rows() const {
        std::int64_t n = 1;
        for (std::size_t k = 0; k + 1 < shape.size(); ++k) n *= shape[k];
        return n;
    }
    std::int64_t elements() const { return rows() * inner(); }
    /// Bytes of storage: rows x pitch.
    std::int64_t bytes() const { return rows() * pitch; }
    Shape dims() const {
        Shape s;
        for (auto d : shape) s.push_back(d);
        return s;
    }
    /// The byte layout, relative to `offset`: innermost stride 1, outer strides dense in the pitch.
    Layout layout() const {
        Layout l{dims(), Dims::filled(rank(), 0), 0, 1};
        std::int64_t s = pitch;
        l.strides[rank() - 1] = 1;
        for (int k = rank() - 2; k >= 0; --k) {
            l.strides[k] = s;
            s *= shape[static_cast<std::size_t>(k)];
        }
        return l;
    }
    ops::TensorType type() const { return ops::TensorType{DType::i8, dims(), quant}; }
};

namespace move_detail {

using Lut = std::array<std::uint8_t, 256>;
constexpr std::int64_t max_stride = 4194288;  // dma.cfg's stride fields
constexpr std::int64_t max_rows = 4096;       // dma.cfg's row count
constexpr std::int64_t stage_cap = 65536;     // staging buffer: larger chunks save little (DMA latency 64 cycles)

inline std::string shape_str(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t k = 0; k < s.size(); ++k) r += (k ? "," : "") + std::to_string(s[k]);
    return r + "]";
}
inline std::string describe(const DramArray& a) {
    return shape_str(a.shape) + " pitch " + std::to_string(a.pitch) + " at region " + std::to_string(a.region) + " + " +
           std::to_string(a.offset);
}

/// Rule lower-<op>-layout: a well-formed descriptor of an int8 tensor. An operand may be read from any region (an
/// int8 constant in the weights region, 0, included); a result is written to scratch, input or output (1..3).
inline Status check_array(const DramArray& a, const std::string& what, const std::string& op, const std::string& name,
                          bool written = false) {
    const auto refuse = [&](const std::string& why) {
        return make_error(what, name, "lower-" + op + "-layout", name + " " + describe(a) + ": " + why);
    };
    if (a.rank() < 1 || a.rank() > 5) return refuse("the rank must be 1..5");
    for (auto d : a.shape)
        if (d < 0 || d > max_elements) return refuse("an extent is negative or above 2^40");
    if (a.region < (written ? 1 : 0) || a.region > 3)
        return refuse(written ? "a result's region must be scratch (1), input (2) or output (3)"
                              : "the region must be weights (0), scratch (1), input (2) or output (3)");
    if (a.pitch < 16 || a.pitch % 16 != 0 || a.pitch < a.inner())
        return refuse("the pitch must be a multiple of 16 >= the innermost extent");
    if (a.offset % 16 != 0) return refuse("the offset must be a multiple of 16");
    if (a.rows() > (std::int64_t{1} << 31) / a.pitch ||
        static_cast<std::int64_t>(a.offset) + a.bytes() > (std::int64_t{1} << 31))
        return refuse("the tensor must end below 2^31 bytes (li's immediate)");
    if (a.quant && a.quant->dtype != DType::i8) return refuse("the values are int8; the quantization is not");
    return ok_status();
}

/// Rule lower-<op>-layout: the destination must not share bytes with a source.
inline Status check_disjoint(const DramArray& x, const DramArray& y, const std::string& what, const std::string& op) {
    const std::int64_t x0 = x.offset, x1 = x0 + x.bytes(), y0 = y.offset, y1 = y0 + y.bytes();
    if (x.region == y.region && x0 < y1 && y0 < x1 && x.bytes() > 0 && y.bytes() > 0)
        return make_error(what, "output", "lower-" + op + "-layout",
                          "the output " + describe(y) + " overlaps the input " + describe(x) +
                              ": the copy would read bytes it has already written");
    return ok_status();
}

/// A per-tensor view of a quantization: per-axis with one channel is per-tensor (ops/movement.hpp); more channels
/// refuse with lower-<op>-per-axis.
inline Result<numeric::QuantParams> per_tensor(const numeric::QuantParams& q, const std::string& what,
                                               const std::string& op) {
    if (q.per_tensor()) return q;
    if (q.channels() == 1) return ops::movement::per_tensor_of(q);
    return make_error(what, "axis " + std::to_string(*q.axis), "lower-" + op + "-per-axis",
                      "a per-axis requantization (" + std::to_string(q.channels()) +
                          " channels): lut.apply maps a whole 16-B aligned range through ONE 256-entry table, and a "
                          "channel is not a 16-B aligned range; the host runs it");
}

/// The int8 -> int8 requantization from `in` to `out` as a LUT table, computed by the host's data-movement kernel
/// (ops::materialize, the kernel of Requantize and of every movement op) on all 256 int8 values.
inline Result<Lut> requant_table(const numeric::QuantParams& in, const numeric::QuantParams& out,
                                 numeric::Rounding rounding, const std::string& what) {
    std::vector<std::int8_t> all(256);
    for (int k = 0; k < 256; ++k) all[static_cast<std::size_t>(k)] = static_cast<std::int8_t>(k - 128);
    const Tensor x = Tensor::from<std::int8_t>(Shape{256}, all, in);
    JANUS_TRY(Tensor y, ops::materialize(x, ops::TensorType{DType::i8, Shape{256}, out}, ops::OpContext{true, rounding}, what));
    const auto v = y.to_vector<std::int8_t>();
    Lut t{};
    for (std::size_t k = 0; k < 256; ++k) t[k] = static_cast<std::uint8_t>(v[k]);
    return t;
}

/// The table that takes values quantized as `moved` to `out`: none when the parameters are equal (a bit copy, as on
/// the host) or the table is the identity. Rule lower-<op>-per-axis.
inline Result<std::optional<Lut>> decide_table(const std::optional<numeric::QuantParams>& moved,
                                               const std::optional<numeric::QuantParams>& out,
                                               numeric::Rounding rounding, const std::string& what,
                                               const std::string& op) {
    if (moved == out || !moved || !out) return std::optional<Lut>{};
    JANUS_TRY(numeric::QuantParams in, per_tensor(*moved, what, op));
    JANUS_TRY(numeric::QuantParams to, per_tensor(*out, what, op));
    JANUS_TRY(Lut t, requant_table(in, to, rounding, what));
    bool identity = true;
    for (std::size_t k = 0; k < 256; ++k) identity = identity && t[k] == static_cast<std::uint8_t>(k - 128);
    if (identity) return std::optional<Lut>{};
    return std::optional<Lut>{t};
}

/// One set of row copies: for every index i of the outer extents `n`, the `bytes` at
///   src_base + sum_k i_k src[k]  (DRAM region src_region; a fill of `value` when src_region < 0)
/// go to dst_base + sum_k i_k dst[k] (region dst_region). Bases and strides are multiples of 16.
struct RowCopy {
    std::vector<std::int64_t> n, src, dst;
    int src_region = -1;
    std::int64_t src_base = 0;
    int dst_region = 3;
    std::int64_t dst_base = 0;
    std::int64_t bytes = 0;
    std::int8_t value = 0;
    const Lut* table = nullptr;
    bool empty = false;  ///< no element: nothing to emit
};

/// Rule lower-<op>-inner: the view's rows must start at 16-B aligned bytes and be contiguous.
inline Status check_rows(const Layout& l, const std::string& side, const std::string& what, const std::string& op) {
    const auto refuse = [&](const std::string& why) {
        return make_error(what, side, "lower-" + op + "-inner",
                          why +
                              ": the DMA moves 16-B granules at 16-B aligned addresses and VEC / LUT operands are "
                              "16-B aligned as well, so no DMA, VEC or LUT instruction can shift bytes within a row "
                              "(the host runs it)");
    };
    const int r = l.rank();
    if (l.shape[r - 1] > 1 && l.strides[r - 1] != 1)
        return refuse("the innermost axis is not contiguous in the " + side + " (stride " +
                      std::to_string(l.strides[r - 1]) + ": a step, a broadcast or a transpose of that axis)");
    if (l.offset % 16 != 0)
        return refuse("a row of the " + side + " starts at byte " + std::to_string(l.offset % 16) +
                      " of a 16-B granule (an innermost offset that is not a multiple of 16)");
    for (int k = 0; k + 1 < r; ++k)
        if (l.shape[k] > 1 && l.strides[k] % 16 != 0)
            return refuse("rows of the " + side + " are " + std::to_string(l.strides[k]) + " bytes apart along axis " +
                          std::to_string(k) + ", not a multiple of 16");
    return ok_status();
}

/// The rows of the view `s` (over the source's bytes) copied to the view `d` (over the destination's bytes; same
/// shape); a fill when `src` is null. Rule lower-<op>-inner.
inline Result<RowCopy> view_copy(const Layout* s, const DramArray* src, const Layout& d, const DramArray& dst,
                                 const std::string& what, const std::string& op) {
    RowCopy c;
    const int r = d.rank();
    if (d.elements() == 0) {
        c.empty = true;
        return c;
    }
    if (s) JANUS_CHECK(check_rows(*s, "input", what, op));
    JANUS_CHECK(check_rows(d, "output", what, op));
    for (int k = 0; k + 1 < r; ++k) {
        c.n.push_back(d.shape[k]);
        c.src.push_back(s ? s->strides[k] : 0);
        c.dst.push_back(d.strides[k]);
    }
    if (s) c.src_region = src->region, c.src_base = src->offset + s->offset;
    c.dst_region = dst.region;
    c.dst_base = dst.offset + d.offset;
    c.bytes = round16(d.shape[r - 1]);
    return c;
}

/// Drop extent-1 axes, merge axes that are one run on both sides, and merge the last axis into the row when the rows
/// are back to back on both sides (a fill's source is any).
inline void simplify(RowCopy& c) {
    const bool fill = c.src_region < 0;
    std::vector<std::int64_t> n, s, d;
    for (std::size_t k = 0; k < c.n.size(); ++k)
        if (c.n[k] != 1) n.push_back(c.n[k]), s.push_back(c.src[k]), d.push_back(c.dst[k]);
    for (std::size_t k = n.size(); k-- > 1;) {  // merge axis k - 1 into axis k when they form one run
        if ((fill || s[k - 1] == s[k] * n[k]) && d[k - 1] == d[k] * n[k]) {
            n[k] *= n[k - 1];
            n.erase(n.begin() + static_cast<std::ptrdiff_t>(k - 1));
            s.erase(s.begin() + static_cast<std::ptrdiff_t>(k - 1));
            d.erase(d.begin() + static_cast<std::ptrdiff_t>(k - 1));
        }
    }
    if (!n.empty() && (fill || s.back() == c.bytes) && d.back() == c.bytes) {
        c.bytes *= n.back();
        n.pop_back(), s.pop_back(), d.pop_back();
    }
    c.n = std::move(n), c.src = std::move(s), c.dst = std::move(d);
}

inline bool encodable(std::int64_t stride) { return stride >= 0 && stride <= max_stride; }

/// Emits RowCopy sets through one LMEM staging buffer (the DMA queue orders them; events only around lut.apply).
class Mover {
public:
    Mover(Builder& b, std::string what, std::string op) : b_(b), what_(std::move(what)), op_(std::move(op)) {}

    /// Allocate the staging buffer (at most `want` bytes) and the address registers. Rule lower-<op>-budget.
    Status init(std::int64_t want) {
        const std::int64_t free = b_.largest_free(Mem::lmem) / 16 * 16;
        cap_ = std::min<std::int64_t>({free, stage_cap, std::max<std::int64_t>(16, round16(want))});
        if (cap_ < 16)
            return make_error(what_, "", "lower-" + op_ + "-budget",
                              "no 16 B of LMEM left for the staging buffer (largest free block " +
                                  std::to_string(b_.largest_free(Mem::lmem)) + " B)");
        JANUS_TRY(stage_, b_.alloc(Mem::lmem, static_cast<std::uint32_t>(cap_), op_ + " staging"));
        JANUS_TRY(rl_, b_.reg(op_ + " staging address"));
        JANUS_TRY(rs_, b_.reg(op_ + " source address"));
        JANUS_TRY(rd_, b_.reg(op_ + " destination address"));
        return b_.emit("li", {rl_, stage_.address()});
    }

    Status run(RowCopy c) {
        if (c.empty) return ok_status();
        simplify(c);
        if (c.bytes == 0) return ok_status();
        for (auto e : c.n)
            if (e == 0) return ok_status();
        const bool fill = c.src_region < 0;
        if (c.table && !fill) JANUS_CHECK(use_table(*c.table));
        const std::int64_t rows = c.n.empty() ? 1 : c.n.back();
        const std::int64_t ss = c.n.empty() ? 0 : c.src.back(), ds = c.n.empty() ? 0 : c.dst.back();
        const std::size_t outer = c.n.empty() ? 0 : c.n.size() - 1;
        ++copies_;
        if (fill) {  // one filled row in the staging buffer, stored with source stride 0
            JANUS_CHECK(b_.emit("dma.cfg", {1, 0, 0}));
            JANUS_CHECK(b_.emit("dma.fill", {rl_, static_cast<std::int64_t>(c.value), std::min(c.bytes, cap_)}));
        }
        std::vector<std::int64_t> idx(outer, 0);
        while (true) {
            std::int64_t sa = c.src_base, da = c.dst_base;
            for (std::size_t k = 0; k < outer; ++k) sa += idx[k] * c.src[k], da += idx[k] * c.dst[k];
            JANUS_CHECK(rows_run(c, sa, da, rows, ss, ds));
            std::size_t k = outer;
            while (k > 0 && ++idx[k - 1] == c.n[k - 1]) idx[--k] = 0;
            if (k == 0) break;
        }
        return ok_status();
    }

    std::int64_t transfers() const { return transfers_; }
    int copies() const { return copies_; }
    bool requantized() const { return static_cast<bool>(lut_); }
    std::int64_t staging() const { return cap_; }

private:
    Status use_table(const Lut& t) {
        if (lut_ && current_ == t) return ok_status();
        if (!loaded_) {
            JANUS_TRY(loaded_, b_.event(op_ + " chunk staged"));
            JANUS_TRY(done_, b_.event(op_ + " chunk requantized"));
        }
        lut_ = Buffer{};  // the previous table's slot: its last reader was waited for by a store before this load
        JANUS_TRY(lut_, load_constant(b_, Mem::lut, t, op_ + " requantization table"));
        current_ = t;
        return ok_status();
    }

    Status cfg(std::int64_t rows, std::int64_t s, std::int64_t d) { return b_.emit("dma.cfg", {rows, s, d}); }
    Status li(const Reg& r, std::int64_t v) { return b_.emit("li", {r, v}); }

    /// Load `rows` rows of `bytes` (source stride `s`) into the staging buffer, requantize, store (stride `d`).
    Status chunk(const RowCopy& c, std::int64_t sa, std::int64_t da, std::int64_t rows, std::int64_t s, std::int64_t d,
                 std::int64_t bytes) {
        const bool lut = c.table != nullptr;
        JANUS_CHECK(cfg(rows, rows > 1 ? s : 0, bytes));
        JANUS_CHECK(li(rs_, sa));
        JANUS_CHECK(b_.emit("dma.load", {rl_, c.src_region, rs_, bytes}, Sync{nullptr, lut ? &loaded_ : nullptr}));
        if (lut) {
            const std::int64_t slot = (lut_.address() - vnpu::sim::lut_base) / 256;
            JANUS_CHECK(b_.emit("lut.apply", {rl_, rl_, slot, rows * bytes}, Sync{&loaded_, &done_}));
        }
        JANUS_CHECK(cfg(rows, bytes, rows > 1 ? d : 0));
        JANUS_CHECK(li(rd_, da));
        JANUS_CHECK(b_.emit("dma.store", {c.dst_region, rd_, rl_, bytes}, Sync{lut ? &done_ : nullptr, nullptr}));
        transfers_ += 2;
        return ok_status();
    }

    /// Store the staged row (a fill, or a loaded broadcast row) `rows` times with source stride 0.
    /// The first store waits on `wait` (the lut.apply that rewrote the staged row), if given.
    Status repeat(const RowCopy& c, std::int64_t da, std::int64_t rows, std::int64_t d, std::int64_t bytes,
                  const Event* wait = nullptr) {
        const std::int64_t per = encodable(d) ? max_rows : 1;
        for (std::int64_t r0 = 0; r0 < rows; r0 += per) {
            const std::int64_t rc = std::min(per, rows - r0);
            JANUS_CHECK(cfg(rc, 0, rc > 1 ? d : 0));
            JANUS_CHECK(li(rd_, da + r0 * d));
            JANUS_CHECK(b_.emit("dma.store", {c.dst_region, rd_, rl_, bytes}, Sync{r0 == 0 ? wait : nullptr, nullptr}));
            ++transfers_;
        }
        return ok_status();
    }

    Status rows_run(const RowCopy& c, std::int64_t sa, std::int64_t da, std::int64_t rows, std::int64_t s,
                    std::int64_t d) {
        const bool fill = c.src_region < 0;
        for (std::int64_t p = 0; p < c.bytes; p += cap_) {  // rows wider than the staging buffer go in pieces
            const std::int64_t pb = std::min(cap_, c.bytes - p);
            if (fill) {
                JANUS_CHECK(repeat(c, da + p, rows, d, pb));
            } else if (s == 0 && rows > 1) {  // a broadcast row: stage it once, store it `rows` times
                const bool lut = c.table != nullptr;
                JANUS_CHECK(cfg(1, 0, 0));
                JANUS_CHECK(li(rs_, sa + p));
                JANUS_CHECK(b_.emit("dma.load", {rl_, c.src_region, rs_, pb}, Sync{nullptr, lut ? &loaded_ : nullptr}));
                ++transfers_;
                if (lut) {
                    const std::int64_t slot = (lut_.address() - vnpu::sim::lut_base) / 256;
                    JANUS_CHECK(b_.emit("lut.apply", {rl_, rl_, slot, pb}, Sync{&loaded_, &done_}));
                }
                JANUS_CHECK(repeat(c, da + p, rows, d, pb, lut ? &done_ : nullptr));
            } else {
                const bool strided = encodable(s) && encodable(d);
                const std::int64_t per = strided ? std::min(max_rows, std::max<std::int64_t>(1, cap_ / pb)) : 1;
                for (std::int64_t r0 = 0; r0 < rows; r0 += per) {
                    const std::int64_t rc = std::min(per, rows - r0);
                    JANUS_CHECK(chunk(c, sa + r0 * s + p, da + r0 * d + p, rc, s, d, pb));
                }
            }
        }
        return ok_status();
    }

    Builder& b_;
    std::string what_, op_;
    std::int64_t cap_ = 0;
    Buffer stage_, lut_;
    Reg rl_, rs_, rd_;
    Event loaded_, done_;
    Lut current_{};
    std::int64_t transfers_ = 0;
    int copies_ = 0;
};

/// Emit `copies` (already checked) in one transaction and scope, and log what was done.
inline Status emit_copies(Builder& b, const std::string& what, const std::string& op, std::vector<RowCopy>& copies,
                          const std::string& summary) {
    std::int64_t want = 0;
    for (const auto& c : copies) {
        if (c.empty) continue;
        std::int64_t rows = 1;
        for (auto e : c.n) rows *= e;
        want = std::max(want, rows * c.bytes);
    }
    auto txn = b.transaction();
    {
        auto scope = b.scope(op);
        Mover m(b, what, op);
        JANUS_CHECK(m.init(want));
        for (auto& c : copies) JANUS_CHECK(m.run(c));
        b.note(what + ": " + summary + "; " + std::to_string(m.transfers()) + " DMA transfer(s) through a " +
               std::to_string(m.staging()) + " B staging buffer" +
               (m.requantized() ? ", requantized in LMEM by lut.apply" : ", no event (DMA queue in order)"));
    }
    JANUS_CHECK(b.status());
    txn.commit();
    return ok_status();
}

inline std::vector<std::int64_t> all_axes(int r) {
    std::vector<std::int64_t> a;
    for (int k = 0; k < r; ++k) a.push_back(k);
    return a;
}

/// Rule lower-<op>-layout: the descriptor's shape is the host's output shape.
inline Status check_shape(const DramArray& y, const Shape& want, const std::string& what, const std::string& op) {
    if (!(y.dims() == want))
        return make_error(
            what, "output", "lower-" + op + "-layout",
            "the output descriptor " + describe(y) + " does not have the op's output shape " + want.str());
    return ok_status();
}

/// Ops whose output is an affine view of the input (Slice, Transpose, Expand): the host's move() on the
/// descriptor's byte layout gives the source bytes of every output element.
template <class Op>
Status lower_view_op(Builder& b, const typename Op::Attrs& a, const DramArray& x, const DramArray& y,
                     numeric::Rounding rounding, const std::string& op) {
    const std::string what = b.name() + ": " + op;
    JANUS_CHECK(check_array(x, what, op, "input"));
    JANUS_CHECK(check_array(y, what, op, "output", true));
    JANUS_CHECK(check_disjoint(x, y, what, op));
    JANUS_CHECK(ops::validate_attrs(Op::schema, a, ops::op_what<Op>()));
    JANUS_CHECK(ops::movement::check_input(x.type(), ops::op_what<Op>(0)));
    JANUS_TRY(ops::movement::Moved m, Op::move(x.layout(), x.quant, a));
    JANUS_CHECK(check_shape(y, m.layout.shape, what, op));
    JANUS_CHECK(
        ops::movement::check_output(ops::TensorType{DType::i8, m.layout.shape, m.quant}, y.type(), ops::op_what<Op>()));
    JANUS_TRY(std::optional<Lut> table, decide_table(m.quant, y.quant, rounding, what, op));
    JANUS_TRY(RowCopy c, view_copy(&m.layout, &x, y.layout(), y, what, op));
    c.table = table ? &*table : nullptr;
    std::vector<RowCopy> copies{c};
    return emit_copies(b, what, op, copies,
                       "view " + m.layout.str() + " of " + describe(x) + " -> " + describe(y) + " (copy)");
}

/// Reshape, Flatten, Squeeze, Unsqueeze: the same row-major element order (shape from the host's Op::infer).
template <class Op>
Status lower_reshape_op(Builder& b, const typename Op::Attrs& a, const DramArray& x, const DramArray& y,
                        numeric::Rounding rounding, const std::string& op) {
    const std::string what = b.name() + ": " + op;
    JANUS_CHECK(check_array(x, what, op, "input"));
    JANUS_CHECK(check_array(y, what, op, "output", true));
    JANUS_CHECK(ops::validate_attrs(Op::schema, a, ops::op_what<Op>()));
    const ops::TensorType xt = x.type();
    JANUS_TRY(ops::TensorType t, Op::infer(std::span<const ops::TensorType>(&xt, 1), a));
    JANUS_CHECK(check_shape(y, t.shape, what, op));
    JANUS_CHECK(ops::movement::check_output(t, y.type(), ops::op_what<Op>()));
    JANUS_TRY(std::optional<Lut> table, decide_table(t.quant, y.quant, rounding, what, op));
    const std::int64_t ni = x.inner(), no = y.inner(), pi = x.pitch, po = y.pitch;
    // the same bytes: equal rows (inner extent and pitch), or both sides dense (inner == pitch)
    const bool same_rows = (ni == no && pi == po) || (ni == pi && no == po) || x.elements() == 0;
    if (same_rows && x.region == y.region && x.offset == y.offset) {
        if (!table) {
            b.note(what + ": " + describe(x) + " -> " + describe(y) + ": a view of the same bytes, no code");
            return ok_status();
        }
        b.note(what + ": " + describe(x) + " -> " + describe(y) +
               ": a view of the same bytes, requantized in place by lut.apply");
        expr::Table256 t;
        for (std::size_t k = 0; k < 256; ++k) t.values[k] = static_cast<std::int8_t>((*table)[k]);
        return lower_lut(b, t, DramTensor{x.region, x.offset, x.bytes()}, DramTensor{y.region, y.offset, y.bytes()});
    }
    JANUS_CHECK(check_disjoint(x, y, what, op));
    // a repacking copy over a common shape: equal rows, rows merged (no a multiple of ni), or rows split
    Layout s, d;
    if (ni == no) {
        s = Layout{Shape{x.rows(), ni}, Dims{pi, 1}, 0, 1};
        d = Layout{Shape{y.rows(), no}, Dims{po, 1}, 0, 1};
    } else if (ni > 0 && no % ni == 0) {
        const std::int64_t k = no / ni;
        s = Layout{Shape{y.rows(), k, ni}, Dims{k * pi, pi, 1}, 0, 1};
        d = Layout{Shape{y.rows(), k, ni}, Dims{po, ni, 1}, 0, 1};
    } else if (no > 0 && ni % no == 0) {
        const std::int64_t k = ni / no;
        s = Layout{Shape{x.rows(), k, no}, Dims{pi, no, 1}, 0, 1};
        d = Layout{Shape{x.rows(), k, no}, Dims{k * po, po, 1}, 0, 1};
    } else {
        return make_error(what, "output", "lower-" + op + "-inner",
                          "rows of " + std::to_string(ni) + " elements become rows of " + std::to_string(no) +
                              ", neither a multiple of the other: the elements would move by bytes within rows, and "
                              "the DMA moves 16-B granules at 16-B aligned addresses (VEC / LUT operands are 16-B "
                              "aligned as well); the host runs it");
    }
    JANUS_TRY(RowCopy c, view_copy(&s, &x, d, y, what, op));
    c.table = table ? &*table : nullptr;
    std::vector<RowCopy> copies{c};
    return emit_copies(
        b, what, op, copies,
        describe(x) + " -> " + describe(y) + ": not a view of the same bytes, a repacking copy of rows " + s.str());
}

}  // namespace move_detail

// ----------------------------------------------------------------------------------------------------------------
// The lowerings. x: the input, y: the output (shape = the op's, quantization = the caller's: when it differs from
// the moved input's, the values are requantized like the host's copy does).

/// Requantize (ops/quantize.hpp), int8 -> int8, per-tensor: lut.apply with the host kernel's table. Equal pitches
/// stream the whole storage (emit/stream.hpp, double buffered); different pitches go row by row through the DMA.
/// Rules: lower-requantize-type (dtype "uint8"), lower-requantize-per-axis, lower-requantize-layout.
inline Status lower_requantize(Builder& b, const ops::Requantize::Attrs& a, const DramArray& x, const DramArray& y,
                    numeric::Rounding rounding) {
    const std::string op = "requantize", what = b.name() + ": " + op;
    JANUS_CHECK(move_detail::check_array(x, what, op, "input"));
    JANUS_CHECK(move_detail::check_array(y, what, op, "output", true));
    JANUS_CHECK(move_detail::check_disjoint(x, y, what, op));
    JANUS_CHECK(ops::validate_attrs(ops::Requantize::schema, a, ops::op_what<ops::Requantize>()));
    if (a.dtype == "uint8")
        return make_error(what, "attribute dtype", "lower-requantize-type",
                          "a uint8 output: the vnpu's tensors are int8 (lut.apply indexes T[x + 128] by an int8 x); "
                          "the host runs it");
    const ops::TensorType xt = x.type();
    JANUS_TRY(ops::TensorType t, ops::Requantize::infer(std::span<const ops::TensorType>(&xt, 1), a));
    JANUS_CHECK(move_detail::check_shape(y, t.shape, what, op));
    if (!y.quant)
        return make_error(ops::op_what<ops::Requantize>(), "output", "output-quantization-required",
                          "Requantize needs the output's scale and zero point; they are never copied from the input");
    JANUS_TRY(std::optional<move_detail::Lut> table, move_detail::decide_table(x.quant, y.quant, rounding, what, op));
    if (table && x.pitch == y.pitch) {
        b.note(what + ": " + move_detail::describe(x) + " -> " + move_detail::describe(y) +
               ": lut.apply streamed over " + std::to_string(x.bytes()) + " B");
        expr::Table256 lut;
        for (std::size_t k = 0; k < 256; ++k) lut.values[k] = static_cast<std::int8_t>((*table)[k]);
        return lower_lut(b, lut, DramTensor{x.region, x.offset, x.bytes()}, DramTensor{y.region, y.offset, y.bytes()});
    }
    const Layout xl = x.layout();
    JANUS_TRY(move_detail::RowCopy c, move_detail::view_copy(&xl, &x, y.layout(), y, what, op));
    c.table = table ? &*table : nullptr;
    std::vector<move_detail::RowCopy> copies{c};
    return move_detail::emit_copies(
        b, what, op, copies,
        move_detail::describe(x) + " -> " + move_detail::describe(y) + (table ? "" : ": equal parameters, a bit copy"));
}

/// Slice on any axes with any steps (ONNX clamping; negative steps): rows by strided DMA. The innermost axis may be
/// sliced with step 1 from a multiple of 16. Rules: lower-slice-inner, lower-slice-per-axis, lower-slice-layout.
inline Status lower_slice(Builder& b, const ops::Slice::Attrs& a, const DramArray& x, const DramArray& y,
                    numeric::Rounding rounding) {
    return move_detail::lower_view_op<ops::Slice>(b, a, x, y, rounding, "slice");
}

/// Transpose permuting the outer axes (the innermost axis stays innermost): multi-row DMA with the permuted
/// strides. Rules: lower-transpose-inner (the innermost axis moves), lower-transpose-per-axis,
/// lower-transpose-layout.
inline Status lower_transpose(Builder& b, const ops::Transpose::Attrs& a, const DramArray& x, const DramArray& y,
                    numeric::Rounding rounding) {
    return move_detail::lower_view_op<ops::Transpose>(b, a, x, y, rounding, "transpose");
}

/// Expand (numpy broadcast) of outer axes: a broadcast row is staged once and stored with source stride 0; nothing
/// is materialized in the constants (seed A7). Rules: lower-expand-inner (the innermost axis is broadcast 1 -> N),
/// lower-expand-per-axis, lower-expand-layout.
inline Status lower_expand(Builder& b, const ops::Expand::Attrs& a, const DramArray& x, const DramArray& y,
                    numeric::Rounding rounding) {
    return move_detail::lower_view_op<ops::Expand>(b, a, x, y, rounding, "expand");
}

/// Reshape: no code when x and y are the same bytes (the same rows at the same place: a view, logged), else a
/// repacking copy when rows stay, merge (n_out a multiple of n_in) or split (n_in a multiple of n_out) at 16-B
/// aligned offsets. Rules: lower-reshape-inner, lower-reshape-per-axis, lower-reshape-layout.
inline Status lower_reshape(Builder& b, const ops::Reshape::Attrs& a, const DramArray& x, const DramArray& y,
                    numeric::Rounding rounding) {
    return move_detail::lower_reshape_op<ops::Reshape>(b, a, x, y, rounding, "reshape");
}
/// Flatten: as lower_reshape. Rules: lower-flatten-*.
inline Status lower_flatten(Builder& b, const ops::Flatten::Attrs& a, const DramArray& x, const DramArray& y,
                    numeric::Rounding rounding) {
    return move_detail::lower_reshape_op<ops::Flatten>(b, a, x, y, rounding, "flatten");
}
/// Squeeze: as lower_reshape. Rules: lower-squeeze-*.
inline Status lower_squeeze(Builder& b, const ops::Squeeze::Attrs& a, const DramArray& x, const DramArray& y,
                    numeric::Rounding rounding) {
    return move_detail::lower_reshape_op<ops::Squeeze>(b, a, x, y, rounding, "squeeze");
}
/// Unsqueeze: as lower_reshape. Rules: lower-unsqueeze-*.
inline Status lower_unsqueeze(Builder& b, const ops::Unsqueeze::Attrs& a, const DramArray& x, const DramArray& y,
                    numeric::Rounding rounding) {
    return move_detail::lower_reshape_op<ops::Unsqueeze>(b, a, x, y, rounding, "unsqueeze");
}

/// Concat along any axis: input k is copied into the output's slice [off_k, off_k + n_k) along the axis (the host's
/// own slicing), requantized to the output's parameters when they differ (one table per input). Along the innermost
/// axis every offset must be a multiple of 16 (an input's rounded-up tail is overwritten by the next input, which
/// is copied after it). Rules: lower-concat-inner, lower-concat-per-axis, lower-concat-layout.
inline Status lower_concat(Builder& b, const ops::Concat::Attrs& a, std::span<const DramArray> xs, const DramArray& y,
                           numeric::Rounding rounding) {
    const std::string op = "concat", what = b.name() + ": " + op;
    JANUS_CHECK(move_detail::check_array(y, what, op, "output", true));
    std::vector<ops::TensorType> types;
    for (std::size_t k = 0; k < xs.size(); ++k) {
        JANUS_CHECK(move_detail::check_array(xs[k], what, op, "input " + std::to_string(k)));
        JANUS_CHECK(move_detail::check_disjoint(xs[k], y, what, op));
        types.push_back(xs[k].type());
    }
    JANUS_CHECK(ops::validate_attrs(ops::Concat::schema, a, ops::op_what<ops::Concat>()));
    // the plan checks the output descriptor's type (shape, dtype, quantization) against the inputs
    JANUS_TRY(const ops::Concat::Plan p, ops::Concat::plan(types, a, y.type(), rounding));
    std::vector<move_detail::Lut> tables;
    tables.reserve(xs.size());  // the copies point into it
    std::vector<move_detail::RowCopy> copies;
    int requantized = 0;
    const Layout yl = y.layout();
    for (std::size_t k = 0; k < xs.size(); ++k) {
        const std::int64_t n = xs[k].shape[static_cast<std::size_t>(p.axis)], off = p.offsets[k];
        JANUS_TRY(std::optional<move_detail::Lut> t,
                  move_detail::decide_table(xs[k].quant, p.into[k], rounding, what, op));
        const std::int64_t ax[1] = {p.axis}, st[1] = {off}, en[1] = {off + n};
        JANUS_TRY(Layout dl, slice(yl, ax, st, en, {}, what));
        const Layout xl = xs[k].layout();
        JANUS_TRY(move_detail::RowCopy c, move_detail::view_copy(&xl, &xs[k], dl, y, what, op));
        if (t) {
            tables.push_back(*t);
            c.table = &tables.back();
            ++requantized;
        }
        copies.push_back(std::move(c));
    }
    return move_detail::emit_copies(b, what, op, copies,
                                    std::to_string(xs.size()) + " input(s) along axis " + std::to_string(p.axis) +
                                        " into " + move_detail::describe(y) + ", " + std::to_string(requantized) +
                                        " requantized");
}

/// Pad: the interior (the input, cropped by negative pads) is copied into the output, then
///   constant  every pad slab (axis k: the pads of axis k, the interior on axes < k, everything on axes > k) is
///             stored from one staged row of the host's fill value (Pad::fill_values: the pad value quantized with
///             the output's parameters, so 0 becomes the zero point), with source stride 0;
///   edge / reflect  axis by axis from the innermost outer axis outwards, each pad row is copied from the output row
///             Pad::table names (already complete on the axes inside it); DRAM -> LMEM -> DRAM in DMA order.
/// Along the innermost axis only constant pads and crops at multiples of 16 are lowered, and an end pad needs the
/// cropped extent to end at a multiple of 16. Rules: lower-pad-inner, lower-pad-per-axis, lower-pad-layout.
inline Status lower_pad(Builder& b, const ops::Pad::Attrs& a, const DramArray& x, const DramArray& y,
                    numeric::Rounding rounding) {
    const std::string op = "pad", what = b.name() + ": " + op;
    JANUS_CHECK(move_detail::check_array(x, what, op, "input"));
    JANUS_CHECK(move_detail::check_array(y, what, op, "output", true));
    JANUS_CHECK(move_detail::check_disjoint(x, y, what, op));
    JANUS_CHECK(ops::validate_attrs(ops::Pad::schema, a, ops::op_what<ops::Pad>()));
    const ops::TensorType xt = x.type();
    // the plan checks the output descriptor's type (shape, dtype, quantization) against the input
    JANUS_TRY(const ops::Pad::Plan p, ops::Pad::plan(std::span<const ops::TensorType>(&xt, 1), a, y.type(), rounding));
    const int r = x.rank();
    const auto& inner = p.axes[static_cast<std::size_t>(r - 1)];
    if (a.mode != "constant" && (inner.pad_begin > 0 || inner.pad_end > 0))
        return make_error(what, "axis " + std::to_string(r - 1), "lower-pad-inner",
                          a.mode +
                              " padding of the innermost axis copies single bytes to byte offsets within rows: "
                              "the DMA moves 16-B granules at 16-B aligned addresses (VEC / LUT operands are "
                              "16-B aligned as well); the host runs it");
    JANUS_TRY(std::optional<move_detail::Lut> table, move_detail::decide_table(p.moved, y.quant, rounding, what, op));
    std::vector<std::int64_t> m(static_cast<std::size_t>(r)), pb(static_cast<std::size_t>(r)),
        cb(static_cast<std::size_t>(r));
    for (int k = 0; k < r; ++k) {
        const auto& ap = p.axes[static_cast<std::size_t>(k)];
        const auto uk = static_cast<std::size_t>(k);
        m[uk] = x.shape[uk] - ap.crop_begin - ap.crop_end;
        pb[uk] = ap.pad_begin;
        cb[uk] = ap.crop_begin;
    }
    const std::vector<std::int64_t> axes = move_detail::all_axes(r);
    const Layout xl = x.layout(), yl = y.layout();
    std::vector<move_detail::RowCopy> copies;
    // the output view: interior on axes < k, [lo, hi) on axis k, everything on axes > k (k = r: all interior)
    const auto slab = [&](int k, std::int64_t lo, std::int64_t hi) -> Result<Layout> {
        std::vector<std::int64_t> st(static_cast<std::size_t>(r)), en(static_cast<std::size_t>(r));
        for (int j = 0; j < r; ++j) {
            const auto uj = static_cast<std::size_t>(j);
            st[uj] = j < k ? pb[uj] : j == k ? lo : 0;
            en[uj] = j < k ? pb[uj] + m[uj] : j == k ? hi : y.shape[uj];
        }
        return slice(yl, axes, st, en, {}, what);
    };
    {  // the interior
        std::vector<std::int64_t> st(static_cast<std::size_t>(r)), en(static_cast<std::size_t>(r));
        for (int j = 0; j < r; ++j) {
            const auto uj = static_cast<std::size_t>(j);
            st[uj] = cb[uj], en[uj] = cb[uj] + m[uj];
        }
        JANUS_TRY(Layout src, slice(xl, axes, st, en, {}, what));
        JANUS_TRY(Layout dst, slab(r, 0, 0));
        JANUS_TRY(move_detail::RowCopy c, move_detail::view_copy(&src, &x, dst, y, what, op));
        c.table = table ? &*table : nullptr;
        copies.push_back(std::move(c));
    }
    std::string how = "interior copied";
    if (a.mode == "constant") {
        std::int8_t value = 0;
        bool any = false;
        for (const auto& ap : p.axes) any = any || ap.pad_begin > 0 || ap.pad_end > 0;
        if (any) {
            JANUS_TRY(std::vector<double> v, ops::Pad::fill_values(y.type(), a.value));
            for (double e : v)
                if (e != v[0])
                    return make_error(what, "output", "lower-pad-per-axis",
                                      "the pad value differs by channel (a per-axis output); one staged fill row "
                                      "holds one value; the host runs it");
            value = static_cast<std::int8_t>(v[0]);
            how += ", constant slabs filled with " + std::to_string(value);
        }
        for (int k = 0; k < r; ++k) {
            const auto uk = static_cast<std::size_t>(k);
            const std::int64_t ends[2][2] = {{0, pb[uk]}, {pb[uk] + m[uk], y.shape[uk]}};
            for (const auto& e : ends) {
                if (e[1] <= e[0]) continue;
                JANUS_TRY(Layout dst, slab(k, e[0], e[1]));
                JANUS_TRY(move_detail::RowCopy c, move_detail::view_copy(nullptr, nullptr, dst, y, what, op));
                c.value = value;
                copies.push_back(std::move(c));
            }
        }
    } else {
        how += ", " + a.mode + " rows copied from the output, innermost outer axis first";
        for (int k = r - 2; k >= 0; --k) {
            const auto uk = static_cast<std::size_t>(k);
            const auto& ap = p.axes[uk];
            if (ap.pad_begin == 0 && ap.pad_end == 0) continue;
            const std::vector<std::int64_t> t = ops::Pad::table(ap, x.shape[uk], a.mode);
            for (std::int64_t j = 0; j < static_cast<std::int64_t>(t.size()); ++j) {
                if (j >= pb[uk] && j < pb[uk] + m[uk]) continue;
                const std::int64_t from = pb[uk] + (t[static_cast<std::size_t>(j)] - cb[uk]);
                JANUS_TRY(Layout src, slab(k, from, from + 1));
                JANUS_TRY(Layout dst, slab(k, j, j + 1));
                JANUS_TRY(move_detail::RowCopy c, move_detail::view_copy(&src, &y, dst, y, what, op));
                copies.push_back(std::move(c));
            }
        }
    }
    return move_detail::emit_copies(b, what, op, copies,
                                    move_detail::describe(x) + " -> " + move_detail::describe(y) + ": " + how);
}

}  // namespace janus::emit
