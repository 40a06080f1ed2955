#pragma once
// Lowering a whole graph to one vnpu program: the NPU segment of the graph, its DRAM plan and the host nodes around it.
//
// Contract (docs/janusc.md "Lowering a graph"):
//   - Pipeline (docs/janusc.md "The lowering pipeline"). One attempt is four passes with typed results:
//     partition_pass -> Partition, fusion_pass -> FusionPlan, memory planning (MemoryPlanner -> MemoryPlan) and
//     emission_pass -> the program. A pass reads the graph and the earlier passes' results only; emission gives
//     each node to its op's registry entry (OpLowering, through NodeLowering), which places its output with the
//     memory planner and emits its kernel. Memory planning fixes lifetimes and the input region before emission,
//     the other offsets as emission reaches each node (a lowering decides views and borrows kernel scratch).
//     LoweredGraph keeps the results of the attempt that lowered; lowering_dump prints them as `;` lines
//     (--dump-ir=after:partition, after:fusion, after:memory, after:lower).
//   - Partition. Nodes marked @host, and nodes whose data inputs or output are not int8 (except ConvInteger and
//     MatMulInteger on int8 inputs: their int32 sums are stored from ACC), run on the host: before the
//     first NPU node (the prologue: QuantizeLinear of a float input, the uint8 -> int8 Requantize of a QOperator
//     input), after the last one (the epilogue: DequantizeLinear of an output), or between NPU nodes (a float op in
//     the middle of a quantized model). In node order, each maximal run of NPU nodes is a *segment*: its code ends
//     with halt, and the host runs the host nodes that follow it before the next segment starts at its entry pc
//     (LoweredSegment; vnpu::sim::Options::entry). A host node that reads nothing the NPU computes (directly or
//     through other host nodes) joins the prologue instead of splitting the program. DRAM keeps its bytes between
//     segments, so a value one segment leaves in scratch is read by a later one where it is; a value crossing to the
//     host is in the output region, a value crossing back in the input region.
//   - Host fallback, loudly. A node the lowering refuses (no NPU lowering for its op or form, a plan or an emitter
//     refusal) is rolled back and runs on the host like any other host node; the NPU segments resume after it. Every
//     host node has its reason in LoweredGraph::host_placements (graph/compile.hpp placement_text prints them;
//     --strict refuses the quantized ones, strict_placement), and each refusal is a `host` line at the top of the log.
//   - Layout (seed B3). A rank-4 [1, C, H, W] value is an NHWC image, pixels round16(C) bytes apart (the padding
//     lanes are never read as data); a rank-2 [M, K] value is a matrix, rows round16(K) bytes apart. An int32 value
//     (a ConvInteger / MatMulInteger output) has 4-byte little-endian elements: pixels round16(4 C), rows
//     round16(4 K) bytes apart (Placement::elem); only the host reads it. Flatten or
//     Reshape of an image to [1, C*H*W] is a view of the same bytes and emits no code: its logical column
//     c*H*W + p is byte p*pitch + c, and a MatMul / Gemm reading it permutes its constant weight rows to match. A
//     rank-3 [B, M, K] value is a stack: B matrices, each laid out as the rank-2 form (M rows round16(K) bytes
//     apart), batch after batch with no gap, so element [b, m, k] is byte (b*M + m)*round16(K) + k and the stack's
//     bytes are those of the matrix [B*M, K]. Any other rank, or an image batch other than 1, is refused
//     (lower-layout).
//   - Batched MatMul (a rank-3 output): activations [B, M, K] (a stack) or [M, K] (a matrix, broadcast over the
//     batch) times a constant weight [B, K, N] or [K, N] (numpy broadcasting; a batch of 1 broadcasts) lower as one
//     emit::lower_matmul kernel over the B products (MatmulOptions::batch: per-product base offsets, B blocks packed
//     one per product or shared). Refused: a rank-3 product with the weight on the left, or operands of another
//     form (lower-matmul-batch); two activations (lower-matmul-operands), as for rank 2. Elementwise ops, LUTs and
//     Requantize stream a stack's bytes like a matrix's (same_layout compares the batch); data movement sees it as
//     the row-major array [B, M, K], and a Reshape between stacks and matrices is a row-major copy or view.
//   - Data movement, reductions, Resize (lower_array_op): the op runs on its operands' physical arrays (an image is
//     the row-major [1, H, W, C]) with its attributes renumbered from logical to physical axes; an op whose
//     physical result is not the output's physical order is refused (lower-layout), and what the DMA cannot move
//     inside a 16-B granule is the emitter's lower-<op>-inner. ConvTranspose stuffs its input into a scratch buffer
//     that lives for its own kernel.
//   - Memory (seed C5). The values crossing into a segment are in the input region (2), the values the host reads
//     after it in the output region (3), constants in the weights region (0), and every other value in the scratch
//     region (1). An int8 constant that is an operand of an elementwise op or of data movement (a Concat with a
//     constant block) is laid out there like an activation of its shape (NHWC image, padded matrix). Scratch is a
//     first-fit arena: a buffer is freed after its last NPU reader, and an output is placed before its inputs are
//     freed, so a kernel never overwrites what it reads. `keep_intermediates` gives every value its own buffer
//     (janusc verify reads them all back, but for the fused ones and those kept in LMEM). `scratch_peak` is the
//     arena's size.
//   - LMEM between kernels (MemoryPlanner::keep_in_lmem). A value that one streaming kernel writes and only
//     streaming kernels read (OpLowering::streams_lmem: the elementwise ops, emit/stream.hpp), within one segment,
//     with only streaming kernels in between, stays in LMEM: no DRAM buffer, no store and no load. At most 64 KiB
//     a value and 128 KiB kept at once (lmem_keep_value, lmem_keep_total); its LMEM is freed after its last reader.
//     Neither `run` nor `verify` can read it back (it is not in DRAM): verify lists it as not compared, and its
//     readers' values are.
//   - Kernel barrier (seed C2 across kernels, emit::KernelBarrier): between two kernels every unit signals one event
//     reserved for the whole program and SEQ waits for all four signals, so no event signal crosses a kernel
//     boundary and a value kept in LMEM is complete before the next kernel reads it. Within a kernel, sync is the
//     emitter's.
//   - Activation fusion (seeds B10, B11): a unary elementwise op that is the only reader of a Conv / MatMul / Gemm
//     output is computed by the producer's kernel: by its requantization when its table is exactly a clamp of the
//     codes (emit::Clamp), or otherwise by lut.apply on each output tile (MatmulOptions::lut, ConvOptions::lut, the
//     depthwise kernel's `lut`). The producer's value is then not materialized (LoweredNode::fused) and the
//     activation emits no code. Each refusal (other readers, a view in between, the host reading the product) is a
//     `fuse` line of the log.
//   - Each NPU node's instructions are [code_begin, code_end) of the program (the debug map); the barrier
//     instructions between them belong to no node.
// The emitters check everything else (budgets, zero points, layouts) and their errors are returned with the node
// named. The simulator's race detector checks the sync of every run.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <janus/emit/conv.hpp>
#include <janus/emit/depthwise.hpp>
#include <janus/emit/elementwise.hpp>
#include <janus/emit/matmul.hpp>
#include <janus/emit/movement.hpp>
#include <janus/emit/pool.hpp>
#include <janus/emit/reduce.hpp>
#include <janus/emit/resize.hpp>
#include <janus/graph/ir.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/conv.hpp>
#include <janus/ops/matmul.hpp>
#include <janus/ops/pool.hpp>
#include <janus/ops/reduction.hpp>
#include <janus/ops/resize.hpp>
#include <janus/ops/unary.hpp>

namespace janus::graph {

/// Where and how the NPU keeps one value.
struct Placement {
    /// image: [1, C, H, W] as NHWC; matrix: [M, K]; stack: [B, M, K], `batch` matrices one after the other.
    enum class Form : std::uint8_t { image, matrix, stack };
    Form form = Form::image;
    int region = 1;
    std::uint32_t offset = 0;
    std::int64_t h = 1, w = 1, c = 0;  ///< image: H x W pixels of C channels; matrix, stack: h rows of c columns
    std::int64_t pitch = 0;            ///< bytes between pixels (image) or rows (matrix, stack)
    std::int64_t batch = 1;            ///< stack: how many matrices (each h * pitch bytes, the next right after)
    std::int64_t elem = 1;             ///< bytes per element: 1 (int8), 4 (int32: ConvInteger / MatMulInteger sums)
    /// Matrix only: the byte within a row of each logical column, when it is not the column itself (a flattened
    /// NHWC image: column c * H * W + pixel is at byte pixel * pitch + c). Empty: column j is byte j.
    std::vector<std::int64_t> columns;
    std::int64_t bytes() const { return (form == Form::image ? h * w : form == Form::stack ? batch * h : h) * pitch; }
    /// The columns a row physically has (the matrix an emitter sees).
    std::int64_t physical_columns() const { return columns.empty() ? c : pitch; }
    emit::DramImage image() const { return {region, offset, h, w, c, pitch}; }
    /// A matrix, or a stack's first matrix (the next ones are matrix_bytes() further each).
    emit::DramMatrix matrix() const { return {region, offset, h, physical_columns(), pitch}; }
    std::int64_t matrix_bytes() const { return h * pitch; }
    emit::DramTensor flat() const { return {region, offset, bytes(), 0}; }
    /// The first byte of element `i` (row-major over the logical shape: NCHW for an image); `elem` bytes from there.
    std::int64_t byte_of(std::int64_t i) const {
        if (form == Form::stack) return (i / c) * pitch + elem * (i % c);  // row i / c of the B * h rows
        if (form == Form::matrix) return (i / c) * pitch + (columns.empty() ? elem * (i % c) : columns[i % c]);
        return (i % (h * w)) * pitch + elem * (i / (h * w));
    }
    friend bool operator==(const Placement&, const Placement&) = default;
    /// Kept in LMEM between two kernels (emit::lmem_region): `offset` is its LMEM address, no DRAM holds it.
    bool in_lmem() const { return region == emit::lmem_region; }
    /// "scratch @4096 +4096 B": the region and the bytes.
    std::string where() const {
        static constexpr const char* regions[] = {"weights", "scratch", "input", "output"};
        return std::string(in_lmem() ? "LMEM" : regions[region & 3]) + " @" + std::to_string(offset) + " +" +
               std::to_string(bytes()) + " B";
    }
    /// "scratch @4096 +4096 B: NHWC 16x16x8, pixels 16 B apart" (IR dumps and the lowering log).
    std::string str() const {
        std::string s = where() + ": ";
        const std::string wide = elem == 4 ? " int32" : "";
        if (form == Form::image)
            return s + "NHWC " + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c) + wide +
                   ", pixels " + std::to_string(pitch) + " B apart";
        if (form == Form::stack) s += std::to_string(batch) + " matri" + (batch == 1 ? "x" : "ces") + " of ";
        s += std::to_string(h) + " row" + (h == 1 ? "" : "s") + " of " + std::to_string(c) + wide + ", " +
             std::to_string(pitch) + " B apart";
        return columns.empty() ? s : s + ", column c*H*W+p at byte p*pixel pitch+c (a flattened NHWC image)";
    }
};

/// Do two placements store the same logical elements at the same relative bytes (so that an elementwise op may
/// stream them side by side)?
inline bool same_layout(const Placement& a, const Placement& b) {
    return a.form == b.form && a.h == b.h && a.w == b.w && a.c == b.c && a.pitch == b.pitch && a.batch == b.batch &&
           a.elem == b.elem &&
           a.columns == b.columns;
}

class NodeLowering;

/// How a producer's kernel can compute a unary activation that only it reads (NodeLowering::clamp, lut; the fusion
/// pass), declared by its lowering (OpLowering::fuses).
enum class Fuses : std::uint8_t {
    no,
    clamp_or_table,  ///< a kernel with a requantization (Conv, MatMul, Gemm): a clamp there, or a LUT epilogue
    table,           ///< a streaming kernel (the binary ops): a LUT on each tile after its own computation
    composed_table,  ///< a kernel that is a table itself (the unary ops, Requantize): the two tables composed
};

/// One op's NPU lowering: the registry entry lower_graph finds by the node's op name (Lowerings: the caller's own
/// entries, LowerOptions::lowerings, before the built-in ones). `lower` places the node's output and emits its
/// kernel through NodeLowering, or returns the refusal that puts the node on the host (host fallback).
struct OpLowering {
    std::string_view op;
    Status (*lower)(NodeLowering&) = nullptr;
    /// Whether and how its kernel computes a unary activation fused into it.
    Fuses fuses = Fuses::no;
    /// Its kernel streams (emit/stream.hpp) and takes data inputs and an output kept in LMEM between kernels
    /// (emit::lmem_region) as they come: the elementwise ops. Memory planning keeps a value in LMEM only from such a
    /// kernel to such kernels ("LMEM between kernels" in the contract above).
    bool streams_lmem = false;
};

/// The registry entry of op type O (its name is the op's own, ops::Op::name).
template <ops::Op O>
OpLowering lowering_of(Status (*lower)(NodeLowering&), Fuses fuses = Fuses::no, bool streams_lmem = false) {
    return {O::name.view(), lower, fuses, streams_lmem};
}

struct LowerOptions {
    bool keep_intermediates = false;  ///< no scratch reuse: every value keeps its bytes until the end
    bool kernel_barriers = true;      ///< false only for the negative control of tests/graph/lower.cpp
    /// A compiler's own op lowerings (examples/custom_op), found before the built-in ones; they must outlive the call.
    std::span<const OpLowering> lowerings = {};
    /// The rounding of every requantization the NPU program makes: each op's plan is made with it, and the host
    /// engine must run with the same (ops::OpContext::rounding) for the two to agree (`janusc --rounding`).
    numeric::Rounding rounding = numeric::default_rounding_mode;
    /// Keep values in LMEM between streaming kernels (MemoryPlanner::keep_in_lmem); false puts every value in DRAM
    /// (the comparison of tests/graph/lmem.cpp and bench/RESULTS.md).
    bool lmem_between_kernels = true;
};

struct LoweredNode {
    std::size_t node = 0;
    std::size_t code_begin = 0, code_end = 0;
    /// The node's value is not materialized: the unary op after it is computed by its kernel (its requantization's
    /// clamp, seed B10, or its LUT epilogue, seed B11), and its bytes hold that op's output. The op's own entry has
    /// no code.
    bool fused = false;
};

/// One segment of the program: a maximal run of NPU nodes in node order, its code ending with halt.
struct LoweredSegment {
    std::uint32_t entry = 0;                   ///< the pc of its first instruction
    std::vector<std::size_t> host_before;      ///< the host nodes that run just before it (LoweredGraph::host_before
                                               ///< for segment 0, which this then repeats)
    std::size_t first_input = 0;               ///< segment_inputs[first_input, next's) are placed just before it runs
    std::size_t first_output = 0;              ///< segment_outputs[first_output, next's) are written by it
    std::size_t first_node = 0, end_node = 0;  ///< its nodes: npu[first_node, end_node)
};

/// Why a node runs on the host. Every host node has one (LoweredGraph::host_placements, in node order); `janusc`
/// prints one line per host node and `--strict` refuses the quantized ones.
struct HostPlacement {
    std::size_t node = 0;
    /// place-marked (the IR marks it @host), place-type (its values are not int8 / int32 sums: a float op, a
    /// conversion at a float boundary, int64 indices) or the lowering's own refusal (lower-op, lower-layout, ...)
    std::string rule;
    std::string why;
    /// A compute node on quantized values (int8 in and out, or ConvInteger / MatMulInteger int32 sums) that the
    /// lowering refused: the NPU could have taken its types. `--strict` makes these errors.
    bool quantized = false;
    friend bool operator==(const HostPlacement&, const HostPlacement&) = default;
};

namespace lower_detail {

/// A first-fit arena of 16-byte aligned blocks: a block goes to the lowest free gap that holds it, else after the
/// last block. The free gaps below the end are kept (free_), so an allocation looks at the gaps only, not at every
/// live block: with every value kept (verify's keep_intermediates) nothing is freed, there are no gaps, and a chain of
/// N nodes allocates in O(N log N) where the scan of all live blocks was O(N^2) (issue 26: verify of a 40,000-node
/// QDQ chain took 39 s). The offsets are the ones that scan gave.
class Arena {
public:
    std::uint32_t allocate(std::int64_t bytes) {
        bytes = emit::round16(std::max<std::int64_t>(bytes, 16));
        std::int64_t at = end_;
        for (auto it = free_.begin(); it != free_.end(); ++it)
            if (it->second >= bytes) {
                at = it->first;
                if (it->second > bytes) free_.emplace(at + bytes, it->second - bytes);
                free_.erase(it);
                break;
            }
        used_.emplace(at, bytes);
        end_ = std::max(end_, at + bytes);
        peak_ = std::max(peak_, at + bytes);
        return static_cast<std::uint32_t>(at);
    }
    void release(std::uint32_t at) {
        const auto it = used_.find(at);
        if (it == used_.end()) return;
        const std::int64_t off = it->first, end = off + it->second;
        const std::int64_t prev_end = it == used_.begin() ? 0 : std::prev(it)->first + std::prev(it)->second;
        const auto next = std::next(it);
        free_.erase(prev_end);  // the gap before the block, if any, joins the one it leaves
        if (next == used_.end()) {  // the last block: the end moves back to the previous block's end
            end_ = prev_end;
        } else {
            free_.erase(end);  // the gap after it, if any
            free_[prev_end] = next->first - prev_end;
        }
        used_.erase(it);
    }
    std::int64_t peak() const { return peak_; }

private:
    std::map<std::int64_t, std::int64_t> used_;  ///< offset -> bytes
    std::map<std::int64_t, std::int64_t> free_;  ///< the gaps below end_: offset -> bytes
    std::int64_t end_ = 0;                       ///< the end of the last block
    std::int64_t peak_ = 0;
};

/// LMEM between kernels: the most bytes one value, and all the values kept over one value's life, may hold there
/// (of the 256 KiB LMEM: the streaming kernels that run meanwhile keep at least half of it for their tiles).
inline constexpr std::int64_t lmem_keep_value = 64 * 1024, lmem_keep_total = 128 * 1024;

/// A node the lowering refused in one attempt, with the refusal (the emitter's or the plan's error, node named).
struct Refusal {
    std::size_t node = 0;
    Error error;
};

}  // namespace lower_detail

// ---- The lowering pipeline. One lowering attempt runs four passes, each with a typed result: partition_pass
// (Partition), fusion_pass (FusionPlan), memory planning (MemoryPlanner, whose result is a MemoryPlan) and
// emission_pass (the program). lower_graph repeats the attempt while the lowering refuses nodes (host fallback);
// LoweredGraph keeps the results of the attempt that lowered, and lowering_dump prints them
// (--dump-ir=after:partition, after:fusion, after:memory, after:lower).

/// Pass 1, partition (partition_pass): which nodes the NPU takes, the host nodes around them, the segments, and
/// which values cross from the NPU to the host.
struct Partition {
    std::vector<bool> on_npu;                          ///< per node: an NPU node of this attempt
    std::vector<bool> hoisted;                         ///< per node: a host node between NPU nodes run in the prologue
    std::optional<std::size_t> first, last;            ///< the first and the last NPU node; none when there is none
    std::vector<std::size_t> host_before, host_after;  ///< as LoweredGraph::host_before, host_after
    std::vector<LoweredSegment> segments;              ///< with host_before only: the later passes fill the rest
    std::vector<std::int64_t> seg_at;                  ///< per node: the segment it starts, or -1
    std::vector<bool> produced_on_npu;                 ///< per value
    std::vector<bool> read_by_host;                    ///< per value: the host reads it after a segment, or an output
    std::vector<std::string> log;                      ///< the hoisting decisions
};

/// What a producer's kernel computes for the unary activation fused into it (seeds B10, B11).
struct Fusion {
    std::size_t act = 0;                ///< the activation node
    emit::Clamp clamp;                  ///< a clamp of the codes, in the requantization
    std::optional<expr::Table256> lut;  ///< or a LUT on each output tile
};

/// Pass 2, activation fusion (fusion_pass): which activation each producer's kernel computes.
struct FusionPlan {
    std::vector<std::optional<Fusion>> producer;  ///< per node: the activation its kernel computes
    std::vector<std::int64_t> fused_into;         ///< per node: the producer whose kernel computes it, or -1
    std::vector<std::string> log;                 ///< `fuse` lines: each fusion and each refusal with its reason
};

/// Pass 3, memory planning (MemoryPlanner): the DRAM plan of the attempt.
struct MemoryPlan {
    std::vector<std::optional<Placement>> placement;  ///< per value; empty for values the NPU never holds
    std::vector<ValueId> root;                ///< per value: the value owning its buffer (itself, a view's source, or
                                              ///< the activation a fused producer writes)
    std::vector<std::int64_t> last_read;      ///< per value: its last NPU reader, or -1
    std::vector<std::int64_t> buffer_last;    ///< per root: the last NPU reader of any value sharing its buffer
    std::vector<bool> keep_buffer;            ///< per root: the host reads a view of it (never freed)
    /// per value: kept in LMEM from its producer's kernel to its last reader's (decided before emission; its
    /// placement is then emit::lmem_region, or scratch when LMEM had no room at emission)
    std::vector<bool> in_lmem;
    std::vector<std::string> lmem_log;        ///< `lmem` lines: each value kept in LMEM, and why a candidate was not
    std::vector<ValueId> segment_inputs;      ///< host -> NPU (input region), ordered by segment
    std::vector<ValueId> segment_outputs;     ///< NPU -> host (output region), ordered by segment
    std::vector<std::size_t> segment_first_input;  ///< per segment: its first entry of segment_inputs
    std::int64_t input_bytes = 0, output_bytes = 0;
    lower_detail::Arena scratch;              ///< the scratch region; its peak is LoweredGraph::scratch_peak
};

struct LoweredGraph {
    emit::Program program;
    std::vector<std::optional<Placement>> placement;   ///< per value; empty for values the NPU never holds
    std::vector<std::size_t> host_before, host_after;  ///< before the first segment and after the last, graph order
    std::vector<LoweredSegment> segments;              ///< in program order; empty when no node runs on the NPU
    std::vector<LoweredNode> npu;                      ///< NPU nodes, in program order
    std::vector<ValueId> segment_inputs;               ///< host -> NPU (input region), ordered by segment
    std::vector<ValueId> segment_outputs;              ///< NPU -> host (output region), ordered by segment
    std::int64_t input_bytes = 0, output_bytes = 0, scratch_peak = 0;
    std::vector<HostPlacement> host_placements;  ///< every host node with its reason, in node order
    std::size_t attempts = 0;  ///< lowering attempts: 1, plus one per round of refusals (host fallback)
    std::vector<std::string> log;     ///< one line per decision (placement, strategy, emitter log)
    /// LowerOptions::keep_intermediates: every NPU value in DRAM is readable after a run (not the fused ones or
    /// the ones kept in LMEM between kernels)
    bool intermediates_kept = false;
    /// LowerOptions::rounding: the program's requantizations round so; the host nodes must run with it (the package
    /// records it).
    numeric::Rounding rounding = numeric::default_rounding_mode;
    Partition partition;              ///< the passes' results (lowering_dump)
    FusionPlan fusion;
    MemoryPlan memory;
    /// How many nodes run on the host: before, between and after the segments.
    std::size_t host_nodes() const {
        std::size_t n = host_before.size() + host_after.size();
        for (std::size_t s = 1; s < segments.size(); ++s) n += segments[s].host_before.size();
        return n;
    }
};

namespace lower_detail {

inline std::string node_what(const Graph& g, std::size_t k) {
    const Node& n = g.nodes[k];
    return "node " + std::to_string(k) + " (" + n.op + (n.origin.empty() ? "" : " " + n.origin) + ")";
}

inline bool int8_value(const Value& v) { return v.type.dtype == DType::i8 && v.type.quant.has_value(); }

/// Per value, the nodes reading it, in node order (Graph::consumers, for every value at once: that one scans every
/// node, and a pass asking it for each node would be quadratic in the graph).
inline std::vector<std::vector<std::size_t>> readers_index(const Graph& g) {
    std::vector<std::vector<std::size_t>> r(g.values.size());
    for (std::size_t j = 0; j < g.nodes.size(); ++j)
        for (ValueId x : g.nodes[j].inputs)
            if (x != no_value) {
                auto& v = r[static_cast<std::size_t>(x)];
                if (v.empty() || v.back() != j) v.push_back(j);
            }
    return r;
}

/// The data (non-constant) inputs of a node.
inline std::vector<ValueId> data_inputs(const Graph& g, const Node& n) {
    std::vector<ValueId> r;
    for (ValueId x : n.inputs)
        if (x != no_value && g.value(x).kind != ValueKind::constant) r.push_back(x);
    return r;
}

/// ConvInteger / MatMulInteger with its int32 output (the accumulator the emitters store from ACC).
inline bool integer_sum(const Graph& g, const Node& n) {
    if (n.op != "ConvInteger" && n.op != "MatMulInteger") return false;
    const auto& t = g.value(n.outputs[0]).type;
    return t.dtype == DType::i32 && !t.quant;
}

/// Why the partition keeps node k on the host, or nothing when the NPU could take it: not marked host, int8 in and
/// out (or int8 in and int32 out for ConvInteger and MatMulInteger), one output, a data input. (The lowering may
/// still refuse it: host fallback.) Rules: place-outputs, place-type, place-constant, place-marked.
inline std::optional<HostPlacement> partition_host_reason(const Graph& g, std::size_t k) {
    const Node& n = g.nodes[k];
    const auto type_of = [&](ValueId v) {
        return g.value(v).name + " is " + g.value(v).type.str() + "; the NPU computes on int8 values (and int32 sums)";
    };
    if (n.outputs.size() != 1)
        return HostPlacement{k, "place-outputs",
                             "it has " + std::to_string(n.outputs.size()) + " outputs; the NPU lowers nodes of one output",
                             false};
    if (!int8_value(g.value(n.outputs[0])) && !integer_sum(g, n))
        return HostPlacement{k, "place-type", "its output " + type_of(n.outputs[0]), false};
    const auto ins = data_inputs(g, n);
    for (ValueId x : ins)
        if (!int8_value(g.value(x))) return HostPlacement{k, "place-type", "its input " + type_of(x), false};
    if (ins.empty()) return HostPlacement{k, "place-constant", "it reads constants only", false};
    if (n.target == Target::host) return HostPlacement{k, "place-marked", "the IR marks it @host", false};
    return std::nullopt;
}

/// The placement form of a value of this shape, or an error naming the rule.
inline Result<Placement> shape_form(const Value& v, const std::string& what) {
    const Shape& s = v.type.shape;
    Placement p;
    if (s.size() == 4 && s[0] == 1) {
        p.form = Placement::Form::image;
        p.c = s[1], p.h = s[2], p.w = s[3];
    } else if (s.size() == 2) {
        p.form = Placement::Form::matrix;
        p.h = s[0], p.c = s[1];
    } else if (s.size() == 3) {
        p.form = Placement::Form::stack;
        p.batch = s[0], p.h = s[1], p.c = s[2];
    } else {
        return make_error(what, v.name, "lower-layout",
                          "the NPU keeps [1, C, H, W] values as NHWC images, [M, K] values as matrices and [B, M, K] "
                          "values as stacks of matrices; " +
                              v.name + " is " + s.str());
    }
    p.elem = v.type.dtype == DType::i32 ? 4 : 1;
    p.pitch = emit::round16(p.elem * p.c);
    return p;
}

template <class A>
Result<A> attrs_of(const ops::AttrMap& m, const auto& schema, const std::string& what) {
    A a{};
    JANUS_CHECK(ops::parse_attrs(schema, m, a, what));
    return a;
}

/// The plan of a unary elementwise op (ops/unary.hpp: its 256-entry table), or nullptr for any other op.
inline Result<std::shared_ptr<const expr::Table256>> unary_table(const Node& n, const ops::TensorType& in,
                                                                 const ops::TensorType& out,
                                                                 numeric::Rounding rounding) {
    std::optional<Result<std::shared_ptr<const expr::Table256>>> r;
    ops::for_each_op([&](auto t) {
        using O = typename decltype(t)::type;
        if constexpr (std::is_base_of_v<ops::unary_elementwise<O>, O>)
            if (!r && O::name.view() == n.op) r = ops::plan_with<O>(std::span(&in, 1), n.attrs, out, rounding);
    });
    if (!r) return std::shared_ptr<const expr::Table256>{};
    return std::move(*r);
}

/// A placement as emit/movement.hpp's row-major array in PHYSICAL axis order: an image [1, C, H, W] is the array
/// [1, H, W, C], a matrix [M, K] or a stack [B, M, K] is itself. Physical axis j holds logical axis order[j]. A
/// matrix whose columns are mapped (a flattened image's view) has no such array.
struct PhysicalArray {
    emit::DramArray array;
    std::vector<std::int64_t> order;
    /// The physical axis of logical axis `a` (normalized).
    std::int64_t axis(std::int64_t a) const { return std::find(order.begin(), order.end(), a) - order.begin(); }
};

inline Result<PhysicalArray> physical(const Placement& p, const ops::TensorType& t, const std::string& what) {
    if (!p.columns.empty())
        return make_error(what, "", "lower-layout",
                          "a flattened image (its columns are NHWC bytes) is read by a MatMul or Gemm only");
    PhysicalArray a;
    std::vector<std::int64_t> shape;
    if (p.form == Placement::Form::image)
        a.order = {0, 2, 3, 1}, shape = {1, p.h, p.w, p.c};
    else if (p.form == Placement::Form::stack)
        a.order = {0, 1, 2}, shape = {p.batch, p.h, p.c};
    else
        a.order = {0, 1}, shape = {p.h, p.c};
    std::optional<numeric::QuantParams> q = t.quant;
    if (q && q->axis) q->axis = static_cast<int>(a.axis(*q->axis));
    a.array = emit::DramArray{p.region, p.offset, std::move(shape), p.pitch, std::move(q)};
    return a;
}

/// `a` normalized against `rank` (the op's own checks have accepted it: the reference engine ran the node).
inline std::int64_t norm_axis(std::int64_t a, std::size_t rank) {
    return a < 0 ? a + static_cast<std::int64_t>(rank) : a;
}

/// Layout assignment for ops that move, reduce or resample (seed B3): the op runs on its operands' physical arrays
/// with its attributes renumbered from logical to physical axes, so the emitter, which applies the host's own index
/// mapping to the arrays it is given, moves exactly the bytes the logical op moves. Reductions combine the same
/// elements in either order (integer sums, max, min). An op whose physical result would not be the output's
/// physical order (a reshape between images, a reduction that drops an axis the output keeps in another place) is
/// refused with lower-layout. `how` is the log's description.
inline Status lower_array_op(emit::Builder& b, const Node& n, std::span<const PhysicalArray> xs, const PhysicalArray& y,
                             numeric::Rounding rounding, const std::string& what, std::string& how) {
    const PhysicalArray& x = xs[0];
    const std::size_t rank = x.order.size();
    const auto same_order = [&]() -> Status {
        for (const auto& o : xs)
            if (o.order != y.order)
                return make_error(what, "", "lower-layout",
                                  n.op +
                                      " between an image and a matrix or stack changes the physical axis order; it "
                                      "is not lowered");
        return ok_status();
    };
    const auto reduce = [&]<class Op>(auto lower) -> Status {
        JANUS_TRY(auto a, attrs_of<typename Op::Attrs>(n.attrs, Op::schema, what));
        std::vector<std::int64_t> logical = a.axes;
        if (logical.empty() && a.noop_with_empty_axes == 0)
            for (std::size_t k = 0; k < rank; ++k) logical.push_back(static_cast<std::int64_t>(k));
        std::vector<bool> reduced(rank, false);
        for (auto ax : logical) reduced[static_cast<std::size_t>(norm_axis(ax, rank))] = true;
        a.axes.clear();
        for (std::size_t j = 0; j < rank; ++j)
            if (reduced[static_cast<std::size_t>(x.order[j])]) a.axes.push_back(static_cast<std::int64_t>(j));
        // the physical result's axes, as logical axes of the output, must be the output's physical order
        std::vector<std::int64_t> result;
        for (std::size_t j = 0; j < rank; ++j) {
            const auto l = x.order[j];
            if (a.keepdims) {
                result.push_back(l);
            } else if (!reduced[static_cast<std::size_t>(l)]) {
                std::int64_t below = 0;
                for (std::int64_t m = 0; m < l; ++m) below += reduced[static_cast<std::size_t>(m)] ? 1 : 0;
                result.push_back(l - below);
            }
        }
        if (result != y.order)
            return make_error(what, "", "lower-layout",
                              n.op +
                                  " over these axes does not keep the NHWC order of what remains; it is not "
                                  "lowered");
        const ops::TensorType xt{DType::i8, x.array.dims(), x.array.quant};
        const ops::TensorType yt{DType::i8, y.array.dims(), y.array.quant};
        JANUS_TRY(const ops::ReducePlan plan, Op::plan(std::span<const ops::TensorType>(&xt, 1), a, yt, rounding));
        how = "lower_" + n.op + " over physical axes" + [&] {
            std::string s;
            for (auto ax : a.axes) s += " " + std::to_string(ax);
            return s;
        }();
        const emit::DramRows xr{x.array.region, x.array.offset, x.array.dims(), x.array.pitch};
        const emit::DramRows yr{y.array.region, y.array.offset, y.array.dims(), y.array.pitch};
        return lower(b, plan, xr, yr, emit::ReduceTiles{});
    };
    if (n.op == "ReduceSum") return reduce.template operator()<ops::ReduceSum>(&emit::lower_reduce_sum);
    if (n.op == "ReduceMean") return reduce.template operator()<ops::ReduceMean>(&emit::lower_reduce_mean);
    if (n.op == "ReduceMax") return reduce.template operator()<ops::ReduceMax>(&emit::lower_reduce_max);
    if (n.op == "ReduceMin") return reduce.template operator()<ops::ReduceMin>(&emit::lower_reduce_min);
    if (n.op == "Resize") {  // emit::lower_resize takes the logical (NCHW) attributes and an NHWC image
        if (x.order.size() != 4 || y.order.size() != 4)
            return make_error(what, "", "lower-layout", "Resize lowers on [1, C, H, W] images");
        JANUS_TRY(auto a, attrs_of<ops::Resize::Attrs>(n.attrs, ops::Resize::schema, what));
        how = "lower_resize";
        return emit::lower_resize(b, a, x.array, y.array, rounding);
    }
    if (n.op == "Reshape" || n.op == "Flatten" || n.op == "Squeeze" || n.op == "Unsqueeze") {
        // matrices and stacks (any mix of them): the logical order is the physical one, row-major on both sides
        if (x.order.size() == 4 || y.order.size() == 4)
            return make_error(what, "", "lower-layout",
                              n.op +
                                  " to or from an image is lowered only as the flatten view [1, C, H, W] -> "
                                  "[1, C*H*W]");
        JANUS_TRY(auto a,
                  attrs_of<ops::Reshape::Attrs>(ops::AttrMap{{"shape", y.array.shape}}, ops::Reshape::schema, what));
        how = "lower_reshape";
        return emit::lower_reshape(b, a, x.array, y.array, rounding);
    }
    JANUS_CHECK(same_order());
    if (n.op == "Transpose") {
        JANUS_TRY(auto a, attrs_of<ops::Transpose::Attrs>(n.attrs, ops::Transpose::schema, what));
        std::vector<std::int64_t> perm = a.perm;
        if (perm.empty())
            for (std::size_t k = rank; k-- > 0;) perm.push_back(static_cast<std::int64_t>(k));
        a.perm.clear();  // output physical axis i is output logical axis y.order[i] = input logical perm[that]
        for (std::size_t i = 0; i < rank; ++i) a.perm.push_back(x.axis(perm[static_cast<std::size_t>(y.order[i])]));
        how = "lower_transpose";
        return emit::lower_transpose(b, a, x.array, y.array, rounding);
    }
    if (n.op == "Slice") {
        JANUS_TRY(auto a, attrs_of<ops::Slice::Attrs>(n.attrs, ops::Slice::schema, what));
        if (a.axes.empty())
            for (std::size_t k = 0; k < a.starts.size(); ++k) a.axes.push_back(static_cast<std::int64_t>(k));
        for (auto& ax : a.axes) ax = x.axis(norm_axis(ax, rank));
        how = "lower_slice";
        return emit::lower_slice(b, a, x.array, y.array, rounding);
    }
    if (n.op == "Pad") {
        JANUS_TRY(auto a, attrs_of<ops::Pad::Attrs>(n.attrs, ops::Pad::schema, what));
        if (a.pads.size() == 2 * rank) {
            std::vector<std::int64_t> p(2 * rank);
            for (std::size_t j = 0; j < rank; ++j) {
                p[j] = a.pads[static_cast<std::size_t>(x.order[j])];
                p[rank + j] = a.pads[rank + static_cast<std::size_t>(x.order[j])];
            }
            a.pads = std::move(p);
        }
        how = "lower_pad";
        return emit::lower_pad(b, a, x.array, y.array, rounding);
    }
    if (n.op == "Concat") {
        JANUS_TRY(auto a, attrs_of<ops::Concat::Attrs>(n.attrs, ops::Concat::schema, what));
        a.axis = x.axis(norm_axis(a.axis, rank));
        std::vector<emit::DramArray> arrays;
        for (const auto& o : xs) arrays.push_back(o.array);
        how = "lower_concat";
        return emit::lower_concat(b, a, arrays, y.array, rounding);
    }
    if (n.op == "Expand") {
        JANUS_TRY(auto a, attrs_of<ops::Expand::Attrs>(n.attrs, ops::Expand::schema, what));
        a.shape = y.array.shape;
        how = "lower_expand";
        return emit::lower_expand(b, a, x.array, y.array, rounding);
    }
    return make_error(what, "", "lower-op", n.op + " is not an array op");
}

template <class T>
std::vector<T> const_data(const Value& v) {
    return v.data->to_vector<T>();
}

/// A Conv / ConvTranspose's optional third input: a constant int32 bias (rule lower-conv-bias), or none.
inline Result<std::vector<std::int32_t>> conv_bias(const Graph& g, const Node& n, const std::string& what) {
    if (n.inputs.size() < 3 || n.inputs[2] == no_value) return std::vector<std::int32_t>{};
    const Value& bv = g.value(n.inputs[2]);
    if (bv.kind != ValueKind::constant || bv.type.dtype != DType::i32)
        return make_error(what, "bias", "lower-conv-bias", "the bias must be a constant int32 tensor");
    return const_data<std::int32_t>(bv);
}

}  // namespace lower_detail

namespace lower_detail {

/// Pass 1, partition: node k runs on the NPU unless `host[k]` (the lowering refused it in an earlier attempt) or
/// partition_host_reason keeps it on the host. A host node between NPU nodes that reads nothing the NPU computed,
/// directly or through other host nodes, is hoisted into the prologue: it would split the program for nothing (a
/// halt and a host round trip). In node order, each maximal run of NPU nodes is a segment, with the host nodes just
/// before it. A value crosses to the host when a host node reads it or it is a graph output; a Flatten / Reshape
/// on the NPU may become a view (no code) of its input's bytes, so when the host reads such a value the input it
/// views crosses too: a package then hands the host that input, in a layout it can describe, and runs the reshape
/// on the host (graph/compile.hpp, host form).
inline Partition partition_pass(const Graph& g, const std::vector<bool>& host) {
    Partition P;
    P.on_npu.assign(g.nodes.size(), false);
    P.hoisted.assign(g.nodes.size(), false);
    P.seg_at.assign(g.nodes.size(), -1);
    for (std::size_t k = 0; k < g.nodes.size(); ++k)
        if (!host[k] && !partition_host_reason(g, k)) {
            P.on_npu[k] = true;
            if (!P.first) P.first = k;
            P.last = k;
        }
    const auto& first = P.first;
    const auto& last = P.last;
    std::vector<bool> from_npu(g.values.size(), false);
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        bool reads_npu = false;
        for (ValueId x : g.nodes[k].inputs)
            reads_npu = reads_npu || (x != no_value && from_npu[static_cast<std::size_t>(x)]);
        for (ValueId o : g.nodes[k].outputs) from_npu[static_cast<std::size_t>(o)] = P.on_npu[k] || reads_npu;
        if (P.on_npu[k]) continue;
        P.hoisted[k] = first && k > *first && k < *last && !reads_npu;
        if (first && k > *last)
            P.host_after.push_back(k);
        else if (!first || k < *first || P.hoisted[k])
            P.host_before.push_back(k);
        if (P.hoisted[k])
            P.log.push_back("host   " + node_what(g, k) + ": reads nothing the NPU computes, runs before it");
    }
    P.produced_on_npu.assign(g.values.size(), false);
    P.read_by_host.assign(g.values.size(), false);
    if (!first) return P;
    std::vector<std::size_t> before = P.host_before;
    bool split = true;  // a host node that stays between NPU nodes ran since the last NPU node
    for (std::size_t k = *first; k <= *last; ++k) {
        if (!P.on_npu[k]) {
            if (!P.hoisted[k]) {
                before.push_back(k);
                split = true;
            }
            continue;
        }
        if (!split) continue;
        split = false;
        P.seg_at[k] = static_cast<std::int64_t>(P.segments.size());
        P.segments.push_back({});
        P.segments.back().host_before = std::move(before);
        before.clear();
    }
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const Node& n = g.nodes[k];
        if (!P.on_npu[k])
            for (ValueId x : n.inputs)
                if (x != no_value) P.read_by_host[static_cast<std::size_t>(x)] = true;
        if (P.on_npu[k]) P.produced_on_npu[static_cast<std::size_t>(n.outputs[0])] = true;
    }
    for (ValueId o : g.outputs) P.read_by_host[static_cast<std::size_t>(o)] = true;
    for (std::size_t k = *last + 1; k-- > *first;) {
        const Node& n = g.nodes[k];
        if (P.on_npu[k] && (n.op == "Flatten" || n.op == "Reshape") && !n.inputs.empty() &&
            P.read_by_host[static_cast<std::size_t>(n.outputs[0])])
            P.read_by_host[static_cast<std::size_t>(n.inputs[0])] = true;
    }
    return P;
}

/// Pass 2, activation fusion (seeds B10, B11). A unary elementwise op (Relu, Clip, Sigmoid, ...) whose one data
/// input is the output of a producer whose lowering fuses an activation (`fuses_activation(op)`: the producer's
/// OpLowering::fuses) and that nothing else reads (no other node, not the host, not a graph output) is
/// computed by the producer's kernel:
///   - when both have the same int8 quantization and the op's own 256-entry table is exactly a clamp of the codes
///     to [lo, hi], by the requantization of a producer that has one (Fuses::clamp_or_table: Conv, MatMul, Gemm;
///     vec.rq's lo, hi): sat8(clamp(rq + zp, lo, hi)) equals clamp(sat8(rq + zp), lo, hi) for -128 <= lo <= hi <=
///     127;
///   - otherwise by its table: lut.apply on each output tile before it is stored (lower_conv, lower_depthwise,
///     lower_matmul, lower_matmul_left, and a binary op's stream: emit::lower_binary's epilogue, Fuses::table), or,
///     when the producer is a table itself (Fuses::composed_table: a unary op, Requantize), composed with the
///     producer's table (one lut.apply).
/// A node whose kernel computes an activation is not itself fused into another producer, and an activation fused
/// into a producer does not take one of its own: a chain of unary ops fuses in pairs.
/// The graph keeps both nodes and the quantization between them; the producer's own value is not materialized
/// (LoweredNode::fused) and the activation emits no code. Every refusal is a `fuse` line of the log (seed B11:
/// other readers, a view in between, a dependency boundary).
template <class FusesActivation>
FusionPlan fusion_pass(const Graph& g, const Partition& part, const FusesActivation& fuses_activation,
                       numeric::Rounding rounding) {
    FusionPlan F;
    F.producer.resize(g.nodes.size());
    F.fused_into.assign(g.nodes.size(), -1);
    if (!part.first) return F;
    const auto unary_reader = [&](std::size_t r) { return ops::is_unary_elementwise(g.nodes[r].op); };
    const auto readers_of = readers_index(g);
    for (std::size_t k = *part.first; k <= *part.last; ++k) {
        const Node& n = g.nodes[k];
        const Fuses how = part.on_npu[k] && F.fused_into[k] < 0 ? fuses_activation(std::string_view(n.op)) : Fuses::no;
        if (how == Fuses::no) continue;
        const ValueId o = n.outputs[0];
        const auto& readers = readers_of[static_cast<std::size_t>(o)];
        const std::string pwhat = node_what(g, k);
        for (std::size_t r : readers) {  // an activation behind a view: fusion does not cross it
            const auto& behind = readers_of[static_cast<std::size_t>(g.nodes[r].outputs[0])];
            if ((g.nodes[r].op == "Flatten" || g.nodes[r].op == "Reshape") && behind.size() == 1 &&
                unary_reader(behind[0]))
                F.log.push_back("fuse   " + node_what(g, behind[0]) + " after " + pwhat +
                                ": kept as a kernel, it reads a view (" + g.nodes[r].op + ") of the product");
        }
        const auto act = std::find_if(readers.begin(), readers.end(), unary_reader);
        if (act == readers.end()) continue;
        const std::size_t j = *act;
        const Node& an = g.nodes[j];
        const std::string what = "fuse   " + node_what(g, j) + " after " + pwhat;
        const auto& q = g.value(o).type.quant;
        const auto& qa = g.value(an.outputs[0]).type.quant;
        if (readers.size() != 1) {
            F.log.push_back(what + ": kept as a kernel, " + g.value(o).name + " has " + std::to_string(readers.size()) +
                            " readers (the unfused value is needed)");
            continue;
        }
        if (part.read_by_host[static_cast<std::size_t>(o)] || g.is_output(o)) {
            F.log.push_back(what + ": kept as a kernel, the host reads " + g.value(o).name +
                            " (a dependency boundary)");
            continue;
        }
        if (!part.on_npu[j] || !q || !qa || data_inputs(g, an) != std::vector<ValueId>{o}) {
            F.log.push_back(what + ": kept, the activation does not run on the NPU on this value alone");
            continue;
        }
        const auto table = unary_table(an, g.value(o).type, g.value(an.outputs[0]).type, rounding);
        if (!table.ok() || !*table || (*table)->in != DType::i8 || (*table)->out != DType::i8) continue;
        const auto& v = (*table)->values;  // v[c + 128] for code c
        Fusion f{j, {v[0], v[255]}, std::nullopt};
        bool clamp = how == Fuses::clamp_or_table && *qa == *q && f.clamp.lo <= f.clamp.hi && f.clamp.lo >= -128 &&
                     f.clamp.hi <= 127;
        for (int i = 0; i < 256 && clamp; ++i)
            clamp = v[static_cast<std::size_t>(i)] == std::clamp(i - 128, f.clamp.lo, f.clamp.hi);
        if (clamp) {
            F.log.push_back(what + ": fused into its requantization, codes clamped to [" + std::to_string(f.clamp.lo) +
                            ", " + std::to_string(f.clamp.hi) + "]");
        } else {  // every producer kernel has a LUT epilogue, or is a table itself
            f.clamp = {};
            f.lut = **table;
            F.log.push_back(what + (how == Fuses::composed_table
                                        ? ": fused, its table composed with the producer's (one lut.apply)"
                                             : ": fused as a lut.apply on each output tile before the store"));
        }
        F.producer[k] = std::move(f);
        F.fused_into[j] = static_cast<std::int64_t>(k);
    }
    return F;
}

/// Pass 3, memory planning: the DRAM plan of one attempt (MemoryPlan). Before emission (the constructor and
/// place_inputs) it knows every value's last NPU reader and lays out the input region. During emission each kernel's
/// lowering asks it for its output's bytes (place_output: the output region when the host reads the value, else a
/// first-fit scratch buffer), it records the values that share a buffer (view, place_fused: `root`), and
/// release_dead frees a buffer after the last NPU reader of any value sharing it; an output is placed before its
/// inputs are freed, so a kernel never overwrites what it reads. Scratch offsets are decided during emission, not
/// before: whether a node's output is a view, and the scratch its kernel borrows, are its lowering's decisions
/// (docs/janusc.md "The lowering pipeline").
class MemoryPlanner {
public:
    MemoryPlanner(const Graph& g, const Partition& part, bool keep_intermediates, std::vector<std::string>& log)
        : g_(g), part_(part), keep_(keep_intermediates), log_(log), released_(g.values.size(), false) {
        plan_.placement.resize(g.values.size());
        plan_.root.resize(g.values.size());
        for (std::size_t i = 0; i < plan_.root.size(); ++i) plan_.root[i] = static_cast<ValueId>(i);
        plan_.last_read.assign(g.values.size(), -1);
        for (std::size_t k = 0; k < g.nodes.size(); ++k)
            if (part.on_npu[k])
                for (ValueId x : g.nodes[k].inputs)
                    if (x != no_value) plan_.last_read[static_cast<std::size_t>(x)] = static_cast<std::int64_t>(k);
        plan_.buffer_last = plan_.last_read;
        plan_.keep_buffer.assign(g.values.size(), false);
        plan_.in_lmem.assign(g.values.size(), false);
    }

    /// LMEM between kernels: keep value o in LMEM, not DRAM, from its producer's kernel to its readers' when
    ///   - the kernel writing it and every reader stream (OpLowering::streams_lmem; the kernel writing an activation
    ///     fused into its producer is the producer's), and each reader's output has o's shape (a kept input is never
    ///     a broadcast row);
    ///   - the host does not read it and it is not a graph output;
    ///   - every NPU node from its producer to its last reader streams too, in one segment (the kernels in between
    ///     share the LMEM that o holds, and only a streaming kernel takes whatever LMEM is left);
    ///   - it fits: at most lmem_keep_value B, and at most lmem_keep_total B kept over its life.
    /// The kernel barrier orders its writer before its readers. Decided before emission, in node order.
    template <class Streams>
    void keep_in_lmem(const FusionPlan& fusion, const Streams& streams) {
        if (!part_.first) return;
        // a kernel that streams (a node whose activation is fused into its producer emits no kernel)
        const auto streaming = [&](std::size_t j) {
            return part_.on_npu[j] && fusion.fused_into[j] < 0 && streams(std::string_view(g_.nodes[j].op));
        };
        // n log n in the graph: next_stop[j] is the first node >= j where a segment starts or an NPU kernel does not
        // stream (what may not come between a producer and its last reader), and the values kept so far, by their
        // last reader, give the bytes kept at node k
        std::vector<std::size_t> next_stop(g_.nodes.size() + 1, g_.nodes.size());
        for (std::size_t j = g_.nodes.size(); j-- > 0;)
            next_stop[j] = part_.seg_at[j] >= 0 || (part_.on_npu[j] && fusion.fused_into[j] < 0 && !streaming(j))
                               ? j
                               : next_stop[j + 1];
        const auto readers_of = readers_index(g_);
        std::multimap<std::size_t, std::int64_t> live;  // last reader -> bytes, of the values kept and alive
        std::int64_t live_bytes = 0;
        for (std::size_t k = *part_.first; k <= *part_.last; ++k) {
            for (auto it = live.begin(); it != live.end() && it->first < k; it = live.erase(it))
                live_bytes -= it->second;
            if (!streaming(k) || g_.nodes[k].outputs.size() != 1) continue;
            // the value kernel k writes: its own, or the activation's fused into it
            const ValueId o = g_.nodes[fusion.producer[k] ? fusion.producer[k]->act : k].outputs[0];
            const auto oi = static_cast<std::size_t>(o);
            const auto& readers = readers_of[oi];
            if (readers.empty() || part_.read_by_host[oi] || g_.is_output(o)) continue;
            const auto form = shape_form(g_.value(o), "");
            if (!form.ok() || form->elem != 1) continue;
            const std::size_t last = readers.back();  // readers_index lists them in node order
            const std::string what = "lmem   %" + g_.value(o).name + " of " + node_what(g_, k);
            std::string why;
            for (std::size_t r : readers)
                if (why.empty() &&
                    (!streaming(r) || g_.value(g_.nodes[r].outputs[0]).type.shape != g_.value(o).type.shape))
                    why = node_what(g_, r) + " reads it and does not stream it as it is";
            if (const std::size_t j = next_stop[k + 1]; why.empty() && j <= last)
                why = part_.seg_at[j] >= 0 ? "a segment starts at " + node_what(g_, j) + " before its last reader"
                                           : node_what(g_, j) + " runs before its last reader and does not stream";
            const std::int64_t bytes = emit::round16(form->bytes()), total = live_bytes + bytes;
            if (why.empty() && bytes > lmem_keep_value)
                why = std::to_string(bytes) + " B, above the " + std::to_string(lmem_keep_value) +
                      " B one value may keep";
            else if (why.empty() && total > lmem_keep_total)
                why = "with the values kept over its life, " + std::to_string(total) + " B, above " +
                      std::to_string(lmem_keep_total) + " B";
            if (!why.empty()) {  // a line for every streaming producer: kept, or why not
                plan_.lmem_log.push_back(what + ": in DRAM, " + why);
                continue;
            }
            plan_.in_lmem[oi] = true;
            live.emplace(last, bytes);
            live_bytes += bytes;
            plan_.lmem_log.push_back(what + ": kept in LMEM to " + node_what(g_, last) + ", " + std::to_string(bytes) +
                                     " B");
        }
        log_.insert(log_.end(), plan_.lmem_log.begin(), plan_.lmem_log.end());
    }
    /// The builder emission allocates kept values' LMEM from (without one, place_output keeps nothing in LMEM).
    void attach(emit::Builder& b) { b_ = &b; }
    /// Value o goes to DRAM after all (the output of a refused node: its readers are tried with it in DRAM).
    void keep_in_dram(ValueId o) { plan_.in_lmem[static_cast<std::size_t>(o)] = false; }

    /// The input region: every data input of an NPU node not produced on the NPU, in first-use order. A value with
    /// no NPU form (shape_form) refuses the node reading it.
    void place_inputs(const std::string& gwhat, std::vector<Refusal>& refused) {
        plan_.segment_first_input.assign(part_.segments.size(), 0);
        if (!part_.first) return;
        for (std::size_t k = *part_.first; k <= *part_.last; ++k) {
            if (part_.seg_at[k] >= 0)
                plan_.segment_first_input[static_cast<std::size_t>(part_.seg_at[k])] = plan_.segment_inputs.size();
            if (!part_.on_npu[k]) continue;
            for (ValueId x : data_inputs(g_, g_.nodes[k])) {
                auto& p = plan_.placement[static_cast<std::size_t>(x)];
                if (part_.produced_on_npu[static_cast<std::size_t>(x)] || p) continue;
                auto form = shape_form(g_.value(x), gwhat + ": " + node_what(g_, k));
                if (!form.ok()) {
                    refused.push_back({k, form.error()});
                    continue;
                }
                Placement q = *form;
                q.region = 2, q.offset = static_cast<std::uint32_t>(plan_.input_bytes);
                plan_.input_bytes += emit::round16(q.bytes());
                p = q;
                plan_.segment_inputs.push_back(x);
                log_.push_back("input  " + g_.value(x).name + ": " + q.str());
            }
        }
    }
    const std::optional<Placement>& placement(ValueId v) const { return plan_.placement[static_cast<std::size_t>(v)]; }
    /// Value o, computed by a kernel, laid out as `form`: the output region when the host reads it, else scratch.
    Placement place_output(ValueId o, const Placement& form) {
        Placement p = form;
        if (plan_.in_lmem[static_cast<std::size_t>(o)] && b_) {  // LMEM between kernels, while there is room
            auto buf = b_->alloc(emit::Mem::lmem, static_cast<std::uint32_t>(emit::round16(p.bytes())),
                                 "%" + g_.value(o).name + " kept in LMEM");
            if (buf.ok()) {
                p.region = emit::lmem_region, p.offset = buf->address();
                lmem_[o] = std::move(*buf);
            } else {
                log_.push_back("lmem   %" + g_.value(o).name + ": in DRAM after all: " + buf.error().detail);
                plan_.in_lmem[static_cast<std::size_t>(o)] = false;
            }
        }
        if (p.in_lmem()) {
            // placed above
        } else if (part_.read_by_host[static_cast<std::size_t>(o)]) {
            p.region = 3, p.offset = static_cast<std::uint32_t>(plan_.output_bytes);
            plan_.output_bytes += emit::round16(p.bytes());
            plan_.segment_outputs.push_back(o);
        } else {
            p.region = 1, p.offset = plan_.scratch.allocate(p.bytes());
        }
        plan_.placement[static_cast<std::size_t>(o)] = p;
        log_.push_back("value  " + g_.value(o).name + ": " + p.str());
        return p;
    }
    /// A producer o whose kernel computes the activation `act` (fused) writes act's bytes: o shares act's buffer.
    Placement place_fused(ValueId o, ValueId act, const Placement& form) {
        const Placement p = place_output(act, form);
        plan_.placement[static_cast<std::size_t>(o)] = p;
        plan_.root[static_cast<std::size_t>(o)] = act;
        return p;
    }
    /// Value o is a view (no code) of value x's bytes, laid out as `p`: it shares x's buffer, which then lives until
    /// o's last NPU reader too, and to the end of the run when the host reads o.
    void view(ValueId o, ValueId x, const Placement& p) {
        plan_.placement[static_cast<std::size_t>(o)] = p;
        const ValueId r = plan_.root[static_cast<std::size_t>(x)];
        plan_.root[static_cast<std::size_t>(o)] = r;
        plan_.buffer_last[static_cast<std::size_t>(r)] =
            std::max(plan_.buffer_last[static_cast<std::size_t>(r)], plan_.last_read[static_cast<std::size_t>(o)]);
        if (part_.read_by_host[static_cast<std::size_t>(o)]) {
            plan_.keep_buffer[static_cast<std::size_t>(r)] = true;
            plan_.segment_outputs.push_back(o);
        }
    }
    /// An int8 constant operand laid out in the weights region (the caller has materialized its bytes there).
    void place_constant(ValueId x, const Placement& p) {
        plan_.placement[static_cast<std::size_t>(x)] = p;
        log_.push_back("const  " + g_.value(x).name + ": " + p.str());
    }
    /// Free the buffers whose last NPU reader is node k (after k's kernel): the LMEM of values kept there, and the
    /// scratch buffers (none under keep_intermediates).
    void release_dead(std::size_t k) {
        for (ValueId x : g_.nodes[k].inputs)  // LMEM between kernels: freed after the last reader, kept or not
            if (const auto it = lmem_.find(x); it != lmem_.end() && plan_.last_read[static_cast<std::size_t>(x)] ==
                                                                          static_cast<std::int64_t>(k)) {
                it->second.release();
                lmem_.erase(it);
            }
        if (keep_) return;
        for (ValueId x : g_.nodes[k].inputs) {
            if (x == no_value) continue;
            const auto r = static_cast<std::size_t>(plan_.root[static_cast<std::size_t>(x)]);
            const auto& p = plan_.placement[r];
            if (p && p->region == 1 && !plan_.keep_buffer[r] && !released_[r] &&
                plan_.buffer_last[r] == static_cast<std::int64_t>(k)) {
                plan_.scratch.release(p->offset);
                released_[r] = true;
            }
        }
    }
    /// A scratch buffer for one kernel only (released by that kernel).
    std::uint32_t scratch(std::int64_t bytes) { return plan_.scratch.allocate(bytes); }
    void release_scratch(std::uint32_t at) { plan_.scratch.release(at); }
    const MemoryPlan& plan() const { return plan_; }
    MemoryPlan take() { return std::move(plan_); }

private:
    const Graph& g_;
    const Partition& part_;
    bool keep_;
    std::vector<std::string>& log_;
    MemoryPlan plan_;
    std::vector<bool> released_;  ///< per root: its scratch buffer was freed
    emit::Builder* b_ = nullptr;
    std::map<ValueId, emit::Buffer> lmem_;  ///< the LMEM of the values kept there, until their last reader
};

/// What a node's lowering works with during emission (pass 4): the attempt's builder, its fusion plan and its
/// memory planner, and the lowered graph it adds its log lines to.
struct AttemptState {
    const Graph& g;
    LoweredGraph& L;
    emit::Builder& b;
    const FusionPlan& fusion;
    MemoryPlanner& mem;
    numeric::Rounding rounding;  ///< LowerOptions::rounding: every plan of the attempt is made with it
};

}  // namespace lower_detail

/// A node being lowered, as its op's lowering (OpLowering) sees it: the node, its operands and output form, the
/// builder, and the attempt's DRAM plan. A lowering reads its operands' placements (input, operand), places its
/// output (place_output, or place_result when its kernel computes a fused activation: clamp, lut), emits its kernel
/// through builder(), and returns ok or the refusal that sends the node to the host. Errors it makes itself name
/// what() as their input, so a refusal names the node.
class NodeLowering {
public:
    NodeLowering(lower_detail::AttemptState& s, std::size_t k, std::string what, Placement form)
        : s_(s), k_(k), what_(std::move(what)), form_(std::move(form)) {
        for (ValueId x : node().inputs)
            if (x != no_value) {
                types_.push_back(s_.g.value(x).type);
                if (s_.g.value(x).kind != ValueKind::constant) ins_.push_back(x);
            }
    }
    const Graph& graph() const { return s_.g; }
    const Node& node() const { return s_.g.nodes[k_]; }
    std::size_t index() const { return k_; }
    /// "graph G: node K (Op origin)": the input of the errors a lowering makes.
    const std::string& what() const { return what_; }
    emit::Builder& builder() { return s_.b; }
    /// The rounding every plan of this lowering is made with (LowerOptions::rounding).
    numeric::Rounding rounding() const { return s_.rounding; }
    const Value& output() const { return s_.g.value(node().outputs[0]); }
    /// The output's placement form (shape_form: image, matrix or stack); place_output gives it a region and offset.
    const Placement& form() const { return form_; }
    /// The node's data (non-constant) inputs, in order; each has a placement (input).
    const std::vector<ValueId>& data_inputs() const { return ins_; }
    /// The types of every present input, constants included, in order.
    const std::vector<ops::TensorType>& types() const { return types_; }
    /// Where data input i is.
    Placement input(std::size_t i) const { return *s_.mem.placement(ins_[i]); }
    /// Input i of types(): a value the NPU holds, or an int8 constant laid out like an activation of its shape
    /// (NHWC image or padded matrix) in the weights region, materialized once per constant.
    Result<Placement> operand(std::size_t i) {
        std::size_t seen = 0;
        ValueId x = no_value;
        for (ValueId v : node().inputs)
            if (v != no_value && seen++ == i) x = v;
        if (const auto& p = s_.mem.placement(x)) return *p;
        const Value& v = s_.g.value(x);
        if (v.kind != ValueKind::constant || !lower_detail::int8_value(v))
            return make_error(what_, v.name, "lower-operand", "the operand is neither on the NPU nor an int8 constant");
        JANUS_TRY(Placement q, lower_detail::shape_form(v, what_));
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(q.bytes()), 0);
        const auto data = lower_detail::const_data<std::int8_t>(v);
        for (std::size_t e = 0; e < data.size(); ++e)
            bytes[static_cast<std::size_t>(q.byte_of(static_cast<std::int64_t>(e)))] = static_cast<std::uint8_t>(data[e]);
        q.region = 0, q.offset = s_.b.constant(bytes);
        s_.mem.place_constant(x, q);
        return q;
    }
    /// Place the output: the output region when the host reads it, else a scratch buffer.
    Placement place_output(const Placement& form) { return s_.mem.place_output(node().outputs[0], form); }
    /// place_output, or, when an activation is fused into this node's kernel, the activation's output.
    Placement place_result(const Placement& form) {
        if (!fused()) return place_output(form);
        return s_.mem.place_fused(node().outputs[0], s_.g.nodes[fused()->act].outputs[0], form);
    }
    /// The output is a view of data input 0's bytes laid out as `p`: no code, no buffer of its own.
    void view_of_input(const Placement& p) { s_.mem.view(node().outputs[0], ins_[0], p); }
    /// A scratch buffer for this kernel only (release it before returning).
    std::uint32_t scratch(std::int64_t bytes) { return s_.mem.scratch(bytes); }
    void release_scratch(std::uint32_t at) { s_.mem.release_scratch(at); }
    /// What the kernel applies for a fused activation: a clamp of the codes (the full range when none) ...
    emit::Clamp clamp() const { return fused() ? fused()->clamp : emit::Clamp{}; }
    /// ... or a table on each output tile.
    std::optional<expr::Table256> lut() const { return fused() ? fused()->lut : std::nullopt; }
    /// One line of the lowering log: "node   node K (Op origin): how".
    void log(const std::string& how) { s_.L.log.push_back("node   " + lower_detail::node_what(s_.g, k_) + ": " + how); }
    void note(std::string line) { s_.L.log.push_back(std::move(line)); }
    /// Everything a lowering reads, for a structured binding: `auto [g, n, what, out, ins, types, form, b] = nl.parts();`
    struct Parts {
        const Graph& g;
        const Node& n;
        const std::string& what;
        const Value& out;
        const std::vector<ValueId>& ins;
        const std::vector<ops::TensorType>& types;
        const Placement& form;
        emit::Builder& b;
    };
    Parts parts() { return {graph(), node(), what(), output(), data_inputs(), types(), form(), builder()}; }
    /// An emitter's or a plan's status with the node named.
    Status named(const Status& s) const { return s.ok() ? s : Status(s.error().within(what_, "")); }

private:
    /// The activation fused into this node's kernel (FusionPlan), if any.
    const std::optional<Fusion>& fused() const { return s_.fusion.producer[k_]; }
    lower_detail::AttemptState& s_;
    std::size_t k_;
    std::string what_;
    Placement form_;
    std::vector<ValueId> ins_;
    std::vector<ops::TensorType> types_;
};

// Compile time: lower_graph instantiates every emitter (about a minute of g++ -O2 per translation unit). As with the
// registry's dispatch (ops/registry.hpp), a program with several TUs may compile it once: define
// JANUS_OUT_OF_LINE_LOWERING in every TU (this header then only declares lower_graph) and, in exactly one TU, also
// JANUS_DEFINE_LOWERING before including it (tools/common/lowering.cpp for janusc, the tests and the fuzzers).
// Without the macros it is inline, as usual.
#if defined(JANUS_DEFINE_LOWERING)
#define JANUS_LOWERING_LINKAGE
#else
#define JANUS_LOWERING_LINKAGE inline
#endif

/// Lower the NPU part of `g`, segment by segment (see the contract above).
#if defined(JANUS_OUT_OF_LINE_LOWERING) && !defined(JANUS_DEFINE_LOWERING)
Result<LoweredGraph> lower_graph(const Graph& g, const LowerOptions& opt = {});
namespace lower_detail {
/// The built-in lowering registry (defined with lower_graph).
const std::vector<OpLowering>& builtin_lowerings();
}  // namespace lower_detail
#else
namespace lower_detail {

/// Conv (grouped; depthwise on VEC) and ConvInteger (its int32 sums stored from ACC).
inline Status lower_conv_node(NodeLowering& nl) {
    [[maybe_unused]] auto [g, n, what, out, ins, types, form, b] = nl.parts();
    Status st = ok_status();
    // ConvInteger: the same kernel storing its int32 sums from ACC (ConvOptions::int32_output)
    const bool integer = n.op == "ConvInteger";
    JANUS_TRY(auto a, attrs_of<ops::Conv::Attrs>(n.attrs, ops::Conv::schema, what));
    if (n.inputs.size() < 2 || g.value(n.inputs[1]).kind != ValueKind::constant || ins.size() != 1)
        return make_error(what, "", "lower-conv-weights", "the weights must be a constant");
    const Value& wv = g.value(n.inputs[1]);
    if (nl.input(0).form != Placement::Form::image || wv.type.shape.size() != 4)
        return make_error(what, "", "lower-layout", "only 2-D convolutions of [1, C, H, W] images lower");
    JANUS_TRY(const ops::ConvPlan plan, integer ? ops::ConvInteger::plan(types, a, out.type, nl.rounding())
                                                : ops::Conv::plan(types, a, out.type, nl.rounding()));
    JANUS_TRY(const std::vector<std::int32_t> bias, conv_bias(g, n, what));
    const auto w = const_data<std::int8_t>(wv);
    const Placement x = nl.input(0);
    const Placement y = nl.place_result(form);
    // the depthwise kernel requantizes on VEC (vec.mac): an int32 output takes lower_conv's block diagonal
    const std::int64_t groups = plan.geometry.conv.groups, co = plan.geometry.out_shape[1];
    const bool depthwise = !integer && groups == x.c && co == x.c && wv.type.shape[1] == 1 && groups > 1;
    nl.log((depthwise ? "lower_depthwise" : "lower_conv"));
    const emit::Clamp clamp = nl.clamp();
    st = depthwise ? emit::lower_depthwise(b, plan, x.image(), w, bias, y.image(), clamp, nl.lut())
                   : emit::lower_conv(b, plan, x.image(), w, bias, y.image(), {0, 0, clamp, nl.lut()});
    return nl.named(st);
}

/// ConvTranspose: its input zero-stuffed into a scratch image that lives for this kernel only.
inline Status lower_conv_transpose_node(NodeLowering& nl) {
    [[maybe_unused]] auto [g, n, what, out, ins, types, form, b] = nl.parts();
    Status st = ok_status();
    // the input zero-stuffed into a DRAM scratch image, then a Conv (emit/conv.hpp lower_conv_transpose)
    JANUS_TRY(auto a, attrs_of<ops::ConvTranspose::Attrs>(n.attrs, ops::ConvTranspose::schema, what));
    if (n.inputs.size() < 2 || g.value(n.inputs[1]).kind != ValueKind::constant || ins.size() != 1)
        return make_error(what, "", "lower-conv-weights", "the weights must be a constant");
    const Value& wv = g.value(n.inputs[1]);
    if (nl.input(0).form != Placement::Form::image || form.form != Placement::Form::image ||
        wv.type.shape.size() != 4)
        return make_error(what, "", "lower-layout", "only 2-D convolutions of [1, C, H, W] images lower");
    JANUS_TRY(const ops::ConvPlan plan, ops::ConvTranspose::plan(types, a, out.type, nl.rounding()));
    JANUS_TRY(const std::vector<std::int32_t> bias, conv_bias(g, n, what));
    const Placement x = nl.input(0);
    const Placement y = nl.place_output(form);
    JANUS_TRY(emit::DramImage stuffed, emit::conv_transpose_scratch(plan, 1, 0));
    // the stuffed image lives for this kernel only: the barrier before the next kernel ends its last read
    stuffed.offset = nl.scratch(stuffed.h * stuffed.w * stuffed.cpitch);
    nl.log("lower_conv_transpose (stuffed input: scratch @" +
                    std::to_string(stuffed.offset) + ", " + std::to_string(stuffed.h) + "x" +
                    std::to_string(stuffed.w) + ")");
    st = emit::lower_conv_transpose(b, plan, *wv.data, bias, x.image(), stuffed, y.image());
    nl.release_scratch(stuffed.offset);
    return nl.named(st);
}

/// MatMul with the constant weight on the left (seed B12).
inline Status lower_matmul_left(NodeLowering& nl) {
    [[maybe_unused]] auto [g, n, what, out, ins, types, form, b] = nl.parts();
    Status st = ok_status();
    // seed B12: the weight on the left, Y = W X, lowered as it stands (emit::lower_matmul_left: the rows carry
    // the scales), not rewritten into a transposed product whose names and quantization axis would move
    const Value& wv = g.value(n.inputs[0]);
    if (form.form == Placement::Form::stack || wv.type.shape.size() != 2)
        return make_error(what, "", "lower-matmul-batch",
                          "a batched MatMul (rank 3) lowers with the constant weight on the right only; the "
                          "weight " +
                              wv.name + " " + wv.type.shape.str() + " is on the left");
    if (nl.input(0).form != Placement::Form::matrix || !nl.input(0).columns.empty())
        return make_error(what, "", "lower-layout", "the activation on the right must be a matrix [K, N]");
    JANUS_TRY(auto plan, ops::MatMul::plan(types, {}, out.type, nl.rounding()));
    const Placement x = nl.input(0);
    const Placement y = nl.place_result(form);
    nl.log("lower_matmul_left M=" + std::to_string(wv.type.shape[0]) +
                    " K=" + std::to_string(wv.type.shape[1]));
    st = emit::lower_matmul_left(b, plan, const_data<std::int8_t>(wv), wv.type.shape[0], wv.type.shape[1],
                                 x.matrix(), y.matrix(), {0, 0, nl.clamp(), nl.lut()});
    return nl.named(st);
}

/// MatMul with a rank-3 product: one lower_matmul kernel over the batch.
inline Status lower_matmul_batch(NodeLowering& nl) {
    [[maybe_unused]] auto [g, n, what, out, ins, types, form, b] = nl.parts();
    Status st = ok_status();
    // A batched MatMul (a rank-3 product, numpy broadcasting over the batch): activations [B, M, K] (a
    // stack) or [M, K] (a matrix, broadcast) times a constant weight [B, K, N] (one block per product)
    // or [K, N] (shared), as ONE lower_matmul kernel with per-product base offsets (MatmulOptions::batch)
    const Value& wv = g.value(n.inputs[1]);
    const Placement x = nl.input(0);
    const Shape& ws = wv.type.shape;
    if ((x.form != Placement::Form::stack && x.form != Placement::Form::matrix) || !x.columns.empty() ||
        ws.size() < 2 || ws.size() > 3)
        return make_error(what, "", "lower-matmul-batch",
                          "a batched MatMul lowers as [B, M, K] or [M, K] activations times a constant "
                          "[B, K, N] or [K, N] weight; here " +
                              g.value(ins[0]).type.shape.str() + " x " + ws.str());
    JANUS_TRY(auto plan, ops::MatMul::plan(types, {}, out.type, nl.rounding()));
    const std::int64_t K = ws[ws.size() - 2], N = ws[ws.size() - 1];
    const Placement y = nl.place_result(form);
    emit::MatmulOptions mo{0, 0, nl.clamp(), nl.lut()};
    mo.batch = {form.batch, x.form == Placement::Form::stack && x.batch > 1 ? x.matrix_bytes() : 0,
                y.matrix_bytes()};
    nl.log("lower_matmul, a batch of " + std::to_string(form.batch) +
                    " K=" + std::to_string(K) + " N=" + std::to_string(N) +
                    (mo.batch.a_stride == 0 ? " (A broadcast)" : "") +
                    (ws.size() == 2 || ws[0] == 1 ? " (B shared)" : ""));
    st = emit::lower_matmul(b, plan, x.matrix(), const_data<std::int8_t>(wv), K, N, y.matrix(), mo);
    return nl.named(st);
}

/// Gemm, MatMul and MatMulInteger with the constant weight on the right.
inline Status lower_matmul_right(NodeLowering& nl) {
    [[maybe_unused]] auto [g, n, what, out, ins, types, form, b] = nl.parts();
    Status st = ok_status();
    // MatMulInteger: the same kernel storing its int32 sums from ACC (MatmulOptions::int32_output)
    const bool integer = n.op == "MatMulInteger";
    if (n.inputs.size() < 2 || g.value(n.inputs[1]).kind != ValueKind::constant || ins.size() != 1 ||
        ins[0] != n.inputs[0])
        return make_error(what, "", "lower-matmul-operands",
                          "an activation times a constant weight on the right lowers; two activations, or "
                          "the weight on the left, are not lowered yet");
    const Value& wv = g.value(n.inputs[1]);
    if (nl.input(0).form != Placement::Form::matrix)
        return make_error(what, "", "lower-layout", "the activation must be a matrix [M, K]");
    if (wv.type.shape.size() != 2)
        return make_error(what, "", "lower-layout",
                          "the weight must be a matrix [K, N] (or, for a batched MatMul, [B, K, N]); " +
                              wv.name + " is " + wv.type.shape.str());
    std::vector<std::int8_t> w = const_data<std::int8_t>(wv);
    std::int64_t K = wv.type.shape[0], N = wv.type.shape[1];
    Result<ops::MatMulQuantPlan> plan = make_error(what, "", "lower-matmul", "no plan");
    std::vector<std::int32_t> bias;
    if (n.op == "Gemm") {
        JANUS_TRY(auto a, attrs_of<ops::Gemm::Attrs>(n.attrs, ops::Gemm::schema, what));
        if (a.transA) return make_error(what, "transA", "lower-matmul-trans", "transA is not lowered yet");
        if (a.transB) {  // the emitter takes B as [K, N]: transpose the constant
            std::swap(K, N);
            std::vector<std::int8_t> t(w.size());
            for (std::int64_t r = 0; r < K; ++r)
                for (std::int64_t c = 0; c < N; ++c)
                    t[static_cast<std::size_t>(r * N + c)] = w[static_cast<std::size_t>(c * K + r)];
            w = std::move(t);
        }
        plan = ops::Gemm::plan(types, a, out.type, nl.rounding());
        if (plan.ok() && plan->add_c) {
            const Value& cv = g.value(n.inputs[2]);
            if (cv.kind != ValueKind::constant || cv.type.dtype != DType::i32 || cv.type.shape.size() != 1 ||
                cv.type.shape[0] != N || a.beta != a.alpha)
                return make_error(what, "C", "lower-matmul-bias",
                                  "C lowers as a constant int32 [N] bias with beta == alpha");
            bias = const_data<std::int32_t>(cv);
        }
    } else if (integer) {
        plan = ops::MatMulInteger::plan(types, {}, out.type, nl.rounding());
    } else {
        plan = ops::MatMul::plan(types, {}, out.type, nl.rounding());
    }
    if (!plan.ok()) return nl.named(plan.error());
    const Placement x = nl.input(0);
    if (!x.columns.empty()) {  // the activation's columns are NHWC bytes: move the weight rows with them
        const std::int64_t kp = x.physical_columns();
        std::vector<std::int8_t> t(static_cast<std::size_t>(kp * N), 0);
        for (std::int64_t r = 0; r < K; ++r)
            std::copy_n(&w[static_cast<std::size_t>(r * N)], N,
                        &t[static_cast<std::size_t>(x.columns[static_cast<std::size_t>(r)] * N)]);
        w = std::move(t);
        K = kp;
    }
    const Placement y = nl.place_result(form);
    nl.log("lower_matmul K=" + std::to_string(K) +
                    " N=" + std::to_string(N));
    st = emit::lower_matmul(b, *plan, x.matrix(), w, K, N, y.matrix(), {0, 0, nl.clamp(), nl.lut(), integer},
                            bias);
    return nl.named(st);
}

/// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool on images: the op's plan, then its emitter.
template <class O>
Status lower_pool_node(NodeLowering& nl) {
    [[maybe_unused]] auto [g, n, what, out, ins, types, form, b] = nl.parts();
    if (nl.input(0).form != Placement::Form::image)
        return make_error(what, "", "lower-layout", "pooling lowers on [1, C, H, W] images");
    const Placement x = nl.input(0);
    const auto plan = ops::plan_with<O>(types, n.attrs, out.type, nl.rounding());
    if (!plan.ok()) return nl.named(plan.error());
    const Placement y = nl.place_output(form);
    nl.log("lower_" + n.op);
    if constexpr (std::is_same_v<O, ops::MaxPool>) return nl.named(emit::lower_max_pool(b, *plan, x.image(), y.image()));
    if constexpr (std::is_same_v<O, ops::AveragePool>)
        return nl.named(emit::lower_average_pool(b, *plan, x.image(), y.image()));
    if constexpr (std::is_same_v<O, ops::GlobalAveragePool>)
        return nl.named(emit::lower_global_average_pool(b, *plan, x.image(), y.image()));
    if constexpr (std::is_same_v<O, ops::GlobalMaxPool>)
        return nl.named(emit::lower_global_max_pool(b, *plan, x.image(), y.image()));
}

/// Add, Sub, Mul, Min, Max: operands of the output's layout, or one a [1, C, 1, 1] broadcast over the pixels.
template <class O>
Status lower_binary_node(NodeLowering& nl) {
    // plain references, not a structured binding: the lambdas below capture them (clang 14 cannot capture bindings)
    const Node& n = nl.node();
    const std::string& what = nl.what();
    const Value& out = nl.output();
    const std::vector<ops::TensorType>& types = nl.types();
    const Placement& form = nl.form();
    emit::Builder& b = nl.builder();
    Status st = ok_status();
    // Each operand has the output's layout, or is a [1, C, 1, 1] image broadcast over the output's pixels
    // (its one pixel, `pitch` bytes, repeated: a stride-0 row, seed A7).
    const auto operand = [&](std::size_t i) -> std::optional<emit::DramTensor> {
        const auto xp = nl.operand(i);
        if (!xp.ok()) return std::nullopt;
        const Placement& x = *xp;
        if (same_layout(x, form)) return x.flat();
        if (x.form == Placement::Form::image && form.form == Placement::Form::image && x.h == 1 && x.w == 1 &&
            x.c == form.c && x.pitch == form.pitch)
            return emit::DramTensor{x.region, x.offset, x.pitch, 0};
        return std::nullopt;
    };
    if (types.size() != 2 || n.inputs.size() != 2 || !operand(0) || !operand(1))
        return make_error(what, "", "lower-broadcast",
                          "elementwise ops lower on two operands (activations or int8 constants) of the "
                          "output's layout, or one of them a [1, C, 1, 1] broadcast over the pixels; other "
                          "broadcasts (a scalar, a row) are not lowered yet");
    const emit::DramTensor x = *operand(0), z = *operand(1);
    const Placement y = nl.place_result(form);
    nl.log(nl.lut() ? "lower_binary, the fused activation's table on each tile" : "lower_binary");
    JANUS_TRY(const typename O::Plan plan, ops::plan_with<O>(types, n.attrs, out.type, nl.rounding()));
    st = emit::lower_binary<O::kind>(b, plan, x, z, y.flat(), {}, nl.lut());
    return nl.named(st);
}

/// `first`, then `then` when there is one: one int8 -> int8 table computing both (a unary op and the activation
/// fused into it; both are exact tables of int8 codes, so the composition is exact).
inline expr::Table256 then_table(const expr::Table256& first, const std::optional<expr::Table256>& then) {
    if (!then) return first;
    expr::Table256 t = first;
    t.out = then->out;
    for (std::size_t j = 0; j < 256; ++j)
        t.values[j] = then->values[static_cast<std::size_t>(std::clamp(first.values[j], -128, 127) + 128)];
    return t;
}

/// Requantize int8 -> int8.
inline Status lower_requantize_node(NodeLowering& nl) {
    [[maybe_unused]] auto [g, n, what, out, ins, types, form, b] = nl.parts();
    Status st = ok_status();
    if (ins.size() != 1 || !types[0].quant || !out.type.quant)
        return make_error(what, "", "lower-op", "Requantize lowers from a quantized int8 tensor to another");
    // int8 -> int8 (an int8 output is an NPU candidate): the copy kernel's own map as a LUT (emit/movement.hpp)
    JANUS_TRY(const auto qin, emit::move_detail::per_tensor(*types[0].quant, what, "requantize"));
    JANUS_TRY(const auto qout, emit::move_detail::per_tensor(*out.type.quant, what, "requantize"));
    JANUS_TRY(const auto lut, emit::move_detail::requant_table(qin, qout, nl.rounding(), what));
    expr::Table256 table;
    for (std::size_t j = 0; j < 256; ++j) table.values[j] = static_cast<std::int8_t>(lut[j]);
    const Placement x = nl.input(0);
    const Placement y = nl.place_result(form);
    nl.log(nl.lut() ? "lower_lut (the requantization's table, then the fused activation's)"
                    : "lower_lut (the requantization's table)");
    st = emit::lower_lut(b, then_table(table, nl.lut()), x.flat(), y.flat());
    return nl.named(st);
}

/// Data movement, reductions and Resize on the operands' physical arrays (lower_array_op).
inline Status lower_array_node(NodeLowering& nl) {
    [[maybe_unused]] auto [g, n, what, out, ins, types, form, b] = nl.parts();
    Status st = ok_status();
    std::vector<PhysicalArray> xs;
    for (std::size_t i = 0; i < types.size(); ++i) {
        JANUS_TRY(const Placement xp, nl.operand(i));
        JANUS_TRY(PhysicalArray a, physical(xp, types[i], what));
        xs.push_back(std::move(a));
    }
    const Placement y = nl.place_output(form);
    JANUS_TRY(const PhysicalArray ya, physical(y, out.type, what));
    std::string how;
    st = lower_array_op(b, n, xs, ya, nl.rounding(), what, how);
    if (st.ok()) nl.log(how);
    return nl.named(st);
}

/// A unary elementwise op (Relu, Sigmoid, Clip, ...): its 256-entry table on the LUT unit.
inline Status lower_unary_node(NodeLowering& nl) {
    [[maybe_unused]] auto [g, n, what, out, ins, types, form, b] = nl.parts();
    Status st = ok_status();
    std::shared_ptr<const expr::Table256> table;
    if (ins.size() == 1 && types[0].quant && out.type.quant) {
        JANUS_TRY(table, unary_table(n, types[0], out.type, nl.rounding()));
    }
    if (!table)
        return make_error(what, "", "lower-op",
                          n.op +
                              " on int8 is not lowered by janusc yet (see docs/emit_support.md for the "
                              "emitters)");
    const Placement x = nl.input(0);
    const Placement y = nl.place_result(form);
    nl.log(nl.lut() ? "lower_lut (its table, then the fused activation's)" : "lower_lut");
    st = emit::lower_lut(b, then_table(*table, nl.lut()), x.flat(), y.flat());
    return nl.named(st);
}

/// Flatten and Reshape: [1, C, H, W] -> [1, C*H*W] is a view of the NHWC bytes (no code; a MatMul reading it
/// permutes its constant weight rows to match, seed B3); any other reshape moves data (lower_array_node).
inline Status lower_reshape_node(NodeLowering& nl) {
    [[maybe_unused]] auto [g, n, what, out, ins, types, form, b] = nl.parts();
    if (ins.size() != 1 || nl.input(0).form != Placement::Form::image || form.form != Placement::Form::matrix ||
        form.h != 1 || form.c != nl.input(0).c * nl.input(0).h * nl.input(0).w ||
        out.type.quant != g.value(ins[0]).type.quant)
        return lower_array_node(nl);
    // [1, C, H, W] -> [1, C*H*W]: a view of the NHWC bytes. A 1x1 image is the row itself; otherwise the
    // logical column c*H*W + pixel is byte pixel*pitch + c, and a MatMul reading it permutes its constant
    // weight rows to match (layout assignment without data movement, seed B3).
    const Placement x = nl.input(0);
    Placement p = x;
    p.form = Placement::Form::matrix, p.h = 1, p.w = 1, p.c = form.c;
    if (x.h * x.w > 1) {
        p.pitch = x.h * x.w * x.pitch;
        p.columns.resize(static_cast<std::size_t>(form.c));
        for (std::int64_t j = 0; j < form.c; ++j)
            p.columns[static_cast<std::size_t>(j)] = (j % (x.h * x.w)) * x.pitch + j / (x.h * x.w);
    }
    nl.view_of_input(p);
    nl.note("value  " + out.name + ": a view of " + g.value(ins[0]).name +
            (p.columns.empty() ? " (no code)" : " (no code; columns are NHWC bytes)"));
    return ok_status();
}

/// MatMul: the constant weight on the left, a batched (rank-3) product, or the weight on the right.
inline Status lower_matmul_node(NodeLowering& nl) {
    const Graph& g = nl.graph();
    const Node& n = nl.node();
    const std::vector<ValueId>& ins = nl.data_inputs();
    const bool one_activation = n.inputs.size() == 2 && ins.size() == 1;
    if (one_activation && g.value(n.inputs[0]).kind == ValueKind::constant && ins[0] == n.inputs[1])
        return lower_matmul_left(nl);
    if (one_activation && nl.form().form == Placement::Form::stack &&
        g.value(n.inputs[1]).kind == ValueKind::constant && ins[0] == n.inputs[0])
        return lower_matmul_batch(nl);
    return lower_matmul_right(nl);
}

/// The built-in lowerings, one entry per op type; the unary elementwise ops of the op registry all share
/// lower_unary_node, so a new unary op reaches the NPU with no entry of its own.
JANUS_LOWERING_LINKAGE const std::vector<OpLowering>& builtin_lowerings() {
    static const std::vector<OpLowering> table = [] {
        std::vector<OpLowering> t = {
            // op lowering, fuses an activation, streams through LMEM
            lowering_of<ops::Conv>(&lower_conv_node, Fuses::clamp_or_table),
            lowering_of<ops::ConvInteger>(&lower_conv_node),
            lowering_of<ops::ConvTranspose>(&lower_conv_transpose_node),
            lowering_of<ops::MatMul>(&lower_matmul_node, Fuses::clamp_or_table),
            lowering_of<ops::Gemm>(&lower_matmul_right, Fuses::clamp_or_table),
            lowering_of<ops::MatMulInteger>(&lower_matmul_right),
            lowering_of<ops::MaxPool>(&lower_pool_node<ops::MaxPool>),
            lowering_of<ops::AveragePool>(&lower_pool_node<ops::AveragePool>),
            lowering_of<ops::GlobalAveragePool>(&lower_pool_node<ops::GlobalAveragePool>),
            lowering_of<ops::GlobalMaxPool>(&lower_pool_node<ops::GlobalMaxPool>),
            lowering_of<ops::Add>(&lower_binary_node<ops::Add>, Fuses::table, true),
            lowering_of<ops::Sub>(&lower_binary_node<ops::Sub>, Fuses::table, true),
            lowering_of<ops::Mul>(&lower_binary_node<ops::Mul>, Fuses::table, true),
            lowering_of<ops::Min>(&lower_binary_node<ops::Min>, Fuses::table, true),
            lowering_of<ops::Max>(&lower_binary_node<ops::Max>, Fuses::table, true),
            lowering_of<ops::Requantize>(&lower_requantize_node, Fuses::composed_table, true),
            lowering_of<ops::Flatten>(&lower_reshape_node),
            lowering_of<ops::Reshape>(&lower_reshape_node),
            lowering_of<ops::Squeeze>(&lower_array_node),
            lowering_of<ops::Unsqueeze>(&lower_array_node),
            lowering_of<ops::Transpose>(&lower_array_node),
            lowering_of<ops::Slice>(&lower_array_node),
            lowering_of<ops::Pad>(&lower_array_node),
            lowering_of<ops::Concat>(&lower_array_node),
            lowering_of<ops::Expand>(&lower_array_node),
            lowering_of<ops::ReduceSum>(&lower_array_node),
            lowering_of<ops::ReduceMean>(&lower_array_node),
            lowering_of<ops::ReduceMax>(&lower_array_node),
            lowering_of<ops::ReduceMin>(&lower_array_node),
            lowering_of<ops::Resize>(&lower_array_node),
        };
        ops::for_each_op([&](auto tag) {
            using O = typename decltype(tag)::type;
            if constexpr (std::is_base_of_v<ops::unary_elementwise<O>, O>)
                t.push_back(lowering_of<O>(&lower_unary_node, Fuses::composed_table, true));
        });
        return t;
    }();
    return table;
}

/// The lowering registry of one lower_graph call: the caller's entries (LowerOptions::lowerings) before the
/// built-in ones, so a compiler built on these headers adds its own ops or replaces a built-in lowering.
class Lowerings {
public:
    explicit Lowerings(std::span<const OpLowering> own) {
        for (const OpLowering& e : own) by_op_.emplace(e.op, &e);  // the first entry of an op wins
        for (const OpLowering& e : builtin_lowerings()) by_op_.emplace(e.op, &e);
    }
    const OpLowering* find(std::string_view op) const {
        const auto it = by_op_.find(op);
        return it == by_op_.end() ? nullptr : it->second;
    }

private:
    std::map<std::string_view, const OpLowering*, std::less<>> by_op_;
};

/// Pass 4, emission: each NPU node in node order through its op's lowering (the registry: Lowerings), with a kernel
/// barrier between kernels and a halt between segments; it fills L's segments and NPU nodes and the memory planner
/// places the values. Each node is emitted inside a builder transaction: a node whose emission fails is rolled back
/// and refused (`refuse`), and emission goes on as if it had run (its output keeps the placement it got, if any; a
/// node reading a value that got none is skipped and tried in the next attempt), so one attempt finds every refusal
/// that does not depend on the others.
template <class Refuse>
Status emission_pass(const Graph& g, const LowerOptions& opt, const Lowerings& lowerings, const Partition& part,
                     const FusionPlan& fusion, MemoryPlanner& mem, const std::vector<bool>& refused_before,
                     const Refuse& refuse, emit::Builder& b, LoweredGraph& L) {
    const std::string gwhat = "graph " + g.name;
    AttemptState S{g, L, b, fusion, mem, opt.rounding};
    L.segments = part.segments;

    // Kernel barrier (seed C2 across kernels, emit::KernelBarrier): between two kernels, so that no signal crosses a
    // kernel boundary and a value kept in LMEM is complete before its reader starts.
    JANUS_TRY(emit::KernelBarrier barrier, emit::KernelBarrier::make(b));
    const auto kernel_barrier = [&]() -> Status { return barrier.emit(b); };

    std::size_t log_seen = 0;
    std::vector<bool> kernel_refused(g.nodes.size(), false);  // per node: refused in this attempt
    bool kernel_before = false;  // a kernel has emitted code since the last barrier (a view or a fused node has none)
    // a refusal of this attempt, by memory planning or here: the attempt makes no program
    bool refused_any = std::find(refused_before.begin(), refused_before.end(), true) != refused_before.end();
    for (std::size_t k = *part.first; k <= *part.last; ++k) {
        if (!part.on_npu[k]) continue;  // a host node between segments: it runs after the previous segment's halt
        if (const std::int64_t s = part.seg_at[k]; s >= 0) {
            LoweredSegment& sg = L.segments[static_cast<std::size_t>(s)];
            if (s > 0) {  // the previous segment ends: nothing is in flight at its halt, no barrier is needed
                JANUS_TRY(sg.entry, b.end_segment());
                L.segments[static_cast<std::size_t>(s) - 1].end_node = L.npu.size();
                kernel_before = false;
            }
            sg.first_input = mem.plan().segment_first_input[static_cast<std::size_t>(s)];
            sg.first_node = L.npu.size();
            sg.first_output = mem.plan().segment_outputs.size();
            std::string host;
            for (std::size_t h : sg.host_before) host += " " + node_what(g, h);
            L.log.push_back("segment " + std::to_string(s) + ": from pc " + std::to_string(sg.entry) +
                            (host.empty() ? std::string() : ", after the host ran" + host));
        }
        // computed by its producer's kernel, into its own placement; when this attempt refused the producer, the
        // activation is tried on its own (it may run on the NPU without it), so a chain of refusals is still found
        // in one attempt
        if (fusion.fused_into[k] >= 0 && !kernel_refused[static_cast<std::size_t>(fusion.fused_into[k])]) {
            L.log.push_back("node   " + node_what(g, k) + ": fused (no code)");
            L.npu.push_back({k, b.size(), b.size()});
            mem.release_dead(k);
            continue;
        }
        // A refused node's output still gets a placement when it has an NPU form, so that its readers are tried in
        // this same attempt: a chain of refused nodes is found in one attempt, not one attempt per node.
        const auto place_refused = [&](std::size_t r) {
            kernel_refused[r] = true;
            const ValueId o = g.nodes[r].outputs[0];
            if (mem.placement(o)) return;
            mem.keep_in_dram(o);
            if (const auto f = shape_form(g.value(o), gwhat); f.ok()) mem.place_output(o, *f);
        };
        // A node that emits nothing in this attempt still frees what it was the last to read, as if it had run: a
        // value it held in LMEM must not shrink the LMEM of the kernels after it (a spurious lmem-budget refusal
        // would move one to the host for good).
        if (refused_before[k]) {  // a value it reads from the host has no NPU form (memory planning refused it)
            place_refused(k);
            mem.release_dead(k);
            continue;
        }
        // A value it reads has no placement: a refused producer's output with no NPU form refuses this node for the
        // same reason; otherwise (a producer skipped itself) it is tried in the next attempt.
        std::optional<Error> unplaced;
        bool skip = false;
        for (ValueId x : data_inputs(g, g.nodes[k]))
            if (!mem.placement(x)) {
                const auto f = shape_form(g.value(x), gwhat + ": " + node_what(g, k));
                if (!f.ok()) unplaced = f.error();
                skip = true;
                break;
            }
        if (unplaced) {
            refuse(k, *unplaced);
            refused_any = true;
            kernel_refused[k] = true;
        }
        if (skip) {
            mem.release_dead(k);
            continue;
        }
        // the node's emission is one transaction: a refusal takes back its code, constants and borrows
        auto node_tx = b.transaction();
        if (opt.kernel_barriers && kernel_before) JANUS_CHECK(kernel_barrier());
        kernel_before = false;
        const std::size_t begin = b.size();
        const std::string what = gwhat + ": " + node_what(g, k);
        const Status node_status = [&]() -> Status {
            const Node& n = g.nodes[k];
            const OpLowering* e = lowerings.find(n.op);
            if (!e)
                return make_error(what, "", "lower-op",
                                  n.op + " on int8 is not lowered by janusc yet (see docs/emit_support.md for the "
                                         "emitters)");
            JANUS_TRY(Placement form, shape_form(g.value(n.outputs[0]), what));
            NodeLowering nl(S, k, what, std::move(form));
            return e->lower(nl);
        }();
        if (!node_status.ok()) {
            refuse(k, node_status.error());
            refused_any = true;
            place_refused(k);
            mem.release_dead(k);
            continue;  // node_tx rolls the node back
        }
        node_tx.commit();
        for (; log_seen < b.log().size(); ++log_seen) L.log.push_back("  emit " + b.log()[log_seen]);
        L.npu.push_back({k, begin, b.size(), fusion.producer[k].has_value()});
        kernel_before = kernel_before || b.size() > begin;
        mem.release_dead(k);
    }
    if (refused_any) return ok_status();  // not a program: the caller moves the refused nodes to the host
    barrier.release();
    L.segments.back().end_node = L.npu.size();
    return ok_status();
}

/// One attempt at lowering `g` with the nodes marked in `host` kept on the host: the four passes. The result is the
/// lowering only when `refused` stays empty.
inline Result<LoweredGraph> lower_attempt(const Graph& g, const LowerOptions& opt, const Lowerings& lowerings,
                                          const std::vector<bool>& host, std::vector<Refusal>& refused) {
    LoweredGraph L;
    L.intermediates_kept = opt.keep_intermediates;
    std::vector<bool> refused_here(g.nodes.size(), false);
    const auto refuse = [&](std::size_t k, const Error& e) {
        if (refused_here[k]) return;
        refused_here[k] = true;
        refused.push_back({k, e});
    };

    L.partition = partition_pass(g, host);
    const Partition& part = L.partition;
    L.log = part.log;
    L.host_before = part.host_before;
    L.host_after = part.host_after;
    L.fusion = fusion_pass(
        g, part,
        [&](std::string_view op) {
            const OpLowering* e = lowerings.find(op);
            return e ? e->fuses : Fuses::no;
        },
        opt.rounding);
    L.log.insert(L.log.end(), L.fusion.log.begin(), L.fusion.log.end());

    emit::Builder b(g.name);  // before the planner, which holds LMEM of it until it is destroyed
    MemoryPlanner mem(g, part, opt.keep_intermediates, L.log);
    std::vector<Refusal> input_refusals;
    mem.place_inputs("graph " + g.name, input_refusals);
    for (const Refusal& r : input_refusals) refuse(r.node, r.error);
    if (opt.lmem_between_kernels)
        mem.keep_in_lmem(L.fusion, [&](std::string_view op) {
            const OpLowering* e = lowerings.find(op);
            return e && e->streams_lmem;
        });
    mem.attach(b);
    if (!part.first) {  // every pass's result is there, empty: the dumps print them too
        L.memory = mem.take();
        L.placement = L.memory.placement;
        JANUS_TRY(L.program, b.finish());
        L.log.push_back("no node runs on the NPU");
        return L;
    }

    const std::vector<bool> refused_before = refused_here;
    JANUS_CHECK(emission_pass(g, opt, lowerings, part, L.fusion, mem, refused_before, refuse, b, L));
    L.memory = mem.take();
    if (!refused.empty()) return L;  // not a lowering: the caller moves the refused nodes to the host and retries
    L.placement = L.memory.placement;
    L.segment_inputs = L.memory.segment_inputs;
    L.segment_outputs = L.memory.segment_outputs;
    JANUS_TRY(L.program, b.finish());
    L.input_bytes = L.memory.input_bytes, L.output_bytes = L.memory.output_bytes;
    L.scratch_peak = L.memory.scratch.peak();
    L.log.push_back("memory: input " + std::to_string(L.input_bytes) + " B, output " + std::to_string(L.output_bytes) +
                    " B, scratch peak " + std::to_string(L.scratch_peak) + " B, constants " +
                    std::to_string(L.program.weights.size()) + " B");
    return L;
}

}  // namespace lower_detail

// Host fallback: any node the NPU cannot take runs on the host, inside the same program's segments. A node whose
// types are not the NPU's is placed there by the partition; a node the lowering refuses (the op, its layout, a
// plan or an emitter refusal) is rolled back and moved there, and the lowering is tried again without it, until an
// attempt refuses nothing. Each host node gets its reason (host_placements); the log starts with the refusals.
JANUS_LOWERING_LINKAGE Result<LoweredGraph> lower_graph(const Graph& g, const LowerOptions& opt = {}) {
    using namespace lower_detail;
    const Lowerings lowerings(opt.lowerings);
    std::vector<bool> host(g.nodes.size(), false);
    std::vector<std::optional<Error>> refusal(g.nodes.size());
    std::vector<std::string> refusal_log;
    for (std::size_t attempt = 1;; ++attempt) {
        std::vector<Refusal> refused;
        JANUS_TRY(LoweredGraph L, lower_attempt(g, opt, lowerings, host, refused));
        if (refused.empty()) {
            std::vector<bool> on_npu(g.nodes.size(), false);
            for (const LoweredNode& n : L.npu) on_npu[n.node] = true;
            for (std::size_t k = 0; k < g.nodes.size(); ++k) {
                if (on_npu[k]) continue;
                if (refusal[k]) {
                    L.host_placements.push_back({k, refusal[k]->rule, refusal[k]->detail, true});
                } else {
                    auto why = partition_host_reason(g, k);
                    JANUS_ASSERT(why && "a node off the NPU was refused or kept by the partition");
                    if (why) L.host_placements.push_back(std::move(*why));
                }
            }
            L.log.insert(L.log.begin(), refusal_log.begin(), refusal_log.end());
            L.attempts = attempt;
            L.rounding = opt.rounding;
            return L;
        }
        for (Refusal& r : refused) {  // each attempt moves at least one node: at most one attempt per node
            JANUS_ASSERT(!host[r.node]);
            host[r.node] = true;
            refusal_log.push_back("host   " + node_what(g, r.node) + ": refused by the lowering, runs on the host: " +
                                  r.error.detail + " [" + r.error.rule + "]");
            refusal[r.node] = std::move(r.error);
        }
    }
}
#endif

/// --strict: a quantized node on the host is an error (unsupported, rule strict-placement) listing such nodes (the
/// first 16; the count says how many there are, and the placement text lists them all).
inline Status strict_placement(const Graph& g, const LoweredGraph& L, const std::string& input) {
    constexpr std::size_t listed = 16;
    std::string list;
    std::size_t count = 0;
    for (const HostPlacement& h : L.host_placements)
        if (h.quantized && ++count <= listed)
            list += "; " + lower_detail::node_what(g, h.node) + ": " + h.why + " [" + h.rule + "]";
    if (count > listed) list += "; and " + std::to_string(count - listed) + " more";
    if (count == 0) return ok_status();
    Error e = make_error(input, "", "strict-placement",
                         std::to_string(count) + " quantized node" + (count == 1 ? "" : "s") +
                             " would run on the host (--strict)" + list);
    e.kind = ErrorKind::unsupported;
    return e;
}

/// The physical side of an IR dump (seed B4): one comment line per value the NPU holds, with its logical type and
/// where and how its bytes are laid out, then the nodes left on the host. `--dump-ir=after:lower` prints it after the
/// IR text; the lines start with `;`, so the dump still parses as IR.
inline std::string layout_text(const Graph& g, const LoweredGraph& L) {
    std::string s = "; layout: where the NPU keeps each value (logical type -> region, bytes, physical layout)\n";
    for (std::size_t i = 0; i < g.values.size(); ++i)
        if (L.placement[i])
            s += ";   %" + g.values[i].name + ": " + detail::type_text(g.values[i].type) + " -> " +
                 L.placement[i]->str() + "\n";
    std::vector<const std::vector<std::size_t>*> lists{&L.host_before};
    for (std::size_t i = 1; i < L.segments.size(); ++i) lists.push_back(&L.segments[i].host_before);
    lists.push_back(&L.host_after);
    std::string host;
    for (const auto* list : lists)
        for (std::size_t k : *list) host += " " + g.nodes[k].op + " (" + g.nodes[k].origin + ")";
    if (!host.empty()) s += "; on the host:" + host + "\n";
    if (L.segments.size() > 1) s += "; NPU segments: " + std::to_string(L.segments.size()) + "\n";
    return s;
}

/// The lowering passes `--dump-ir=after:PASS` names, in pipeline order; "lower" is emission (layout_text).
inline constexpr std::string_view lowering_passes[] = {"partition", "fusion", "memory", "lower"};

/// After partition: the NPU nodes of each segment, every host node with where it runs and its rule, and the values
/// crossing from the NPU to the host. `;` lines, as layout_text.
inline std::string partition_text(const Graph& g, const LoweredGraph& L) {
    const Partition& P = L.partition;
    std::size_t npu = 0;
    for (bool b : P.on_npu) npu += b ? 1 : 0;
    std::string s = "; partition: " + std::to_string(npu) + " of " + std::to_string(g.nodes.size()) +
                    " nodes on the NPU, " + std::to_string(P.segments.size()) + " segment" +
                    (P.segments.size() == 1 ? "" : "s") + "\n";
    std::vector<std::vector<std::size_t>> nodes(P.segments.size());
    for (std::size_t k = 0, at = 0; k < g.nodes.size(); ++k)
        if (P.on_npu[k]) {
            if (P.seg_at[k] >= 0) at = static_cast<std::size_t>(P.seg_at[k]);
            nodes[at].push_back(k);
        }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        s += ";   segment " + std::to_string(i) + ": node" + (nodes[i].size() == 1 ? "" : "s");
        for (std::size_t k : nodes[i]) s += " " + std::to_string(k);
        s += "\n";
    }
    for (const HostPlacement& h : L.host_placements) {
        const std::size_t k = h.node;
        const bool before = std::find(P.host_before.begin(), P.host_before.end(), k) != P.host_before.end();
        const bool after = std::find(P.host_after.begin(), P.host_after.end(), k) != P.host_after.end();
        s += ";   host " + lower_detail::node_what(g, k) + ": " +
             (P.hoisted[k] ? "the prologue (hoisted: it reads nothing the NPU computes)"
              : before     ? "the prologue"
              : after      ? "the epilogue"
                           : "between segments") +
             " [" + h.rule + "]\n";
    }
    std::string crossing;
    for (std::size_t i = 0; i < g.values.size(); ++i)
        if (P.read_by_host[i] && P.produced_on_npu[i]) crossing += " %" + g.values[i].name;
    if (!crossing.empty()) s += ";   the host reads:" + crossing + "\n";
    return s;
}

/// After fusion: how many activations their producers' kernels compute, then the pass's `fuse` decisions.
inline std::string fusion_text(const Graph&, const LoweredGraph& L) {
    std::size_t fused = 0;
    for (const auto& f : L.fusion.producer) fused += f ? 1 : 0;
    std::string s = "; fusion: " + std::to_string(fused) + " activation" + (fused == 1 ? "" : "s") +
                    " computed by the producer's kernel\n";
    for (const std::string& line : L.fusion.log) s += ";   " + line + "\n";
    return s;
}

/// After memory planning: the region totals, then every value the NPU holds with its bytes and its buffer's life:
/// shared with the value owning it (a view, a fused producer), kept to the end (the output region, the host reads a
/// view of it, keep_intermediates), freed after its last NPU reader, or kept in LMEM until it; then the `lmem`
/// decisions (LMEM between kernels).
inline std::string memory_text(const Graph& g, const LoweredGraph& L) {
    const MemoryPlan& M = L.memory;
    std::string s = "; memory: input " + std::to_string(M.input_bytes) + " B, output " +
                    std::to_string(M.output_bytes) + " B, scratch peak " + std::to_string(M.scratch.peak()) +
                    " B (first-fit), constants " + std::to_string(L.program.weights.size()) + " B\n";
    for (std::size_t i = 0; i < g.values.size(); ++i) {
        if (!M.placement[i]) continue;
        const Placement& p = *M.placement[i];
        s += ";   %" + g.values[i].name + ": " + p.where();
        const auto r = static_cast<std::size_t>(M.root[i]);
        if (r != i) {
            s += ", shares %" + g.values[r].name + "'s buffer\n";
            continue;
        }
        if (p.in_lmem())
            s += ", no DRAM: in LMEM until " + lower_detail::node_what(g, static_cast<std::size_t>(M.last_read[i]));
        else if (p.region == 1 && !L.intermediates_kept && !M.keep_buffer[i] && M.buffer_last[i] >= 0)
            s += ", freed after " + lower_detail::node_what(g, static_cast<std::size_t>(M.buffer_last[i]));
        else if (p.region == 1 || p.region == 3)
            s += ", kept to the end";
        s += "\n";
    }
    for (const std::string& line : M.lmem_log) s += ";   " + line + "\n";
    return s;
}

/// The `;` lines describing lowering pass `pass` (lowering_passes) of L, or nothing for another name.
inline std::optional<std::string> lowering_dump(const Graph& g, const LoweredGraph& L, std::string_view pass) {
    if (pass == "partition") return partition_text(g, L);
    if (pass == "fusion") return fusion_text(g, L);
    if (pass == "memory") return memory_text(g, L);
    if (pass == "lower") return layout_text(g, L);
    return std::nullopt;
}

}  // namespace janus::graph
