#pragma once
// The emission support table: for every op of the registry (ops::all_ops), whether its quantized int8 form lowers to
// the vnpu, through which entry points, which cases are refused with which rule, and which test verifies it bit for
// bit on the simulator. One entry per op; a static_assert proves the table and the registry name the same ops, so
// adding an op without stating its lowering does not compile. docs/emit_support.md is generated from this table
// (support_markdown) and compared with it by tests/emit_support, which also checks that every rule named here is
// raised by an emit header and that every named test exists.
//
// Levels:
//   lowered   every int8 case of the op lowers, within the memory budgets (a budget refusal is still a rule);
//   partial   some int8 cases lower; the others are refused with the rules listed, or are listed as not lowered yet;
//   not_yet   no int8 case lowers yet; `refused` says how it would (this is not a reason to run it on the host)
//   host      the op never runs on the vnpu; `refused` gives the hardware or semantic reason.
// The float32 form of every op runs on the host reference: the vnpu has int8 storage, int32 accumulators and no
// floating-point unit.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include <janus/ops/registry.hpp>

namespace janus::emit {

enum class Support : unsigned char { lowered, partial, not_yet, host };

constexpr std::string_view support_name(Support s) {
    return s == Support::lowered   ? "lowered"
           : s == Support::partial ? "partial"
           : s == Support::not_yet ? "not lowered yet"
                                   : "host";
}

struct OpSupport {
    std::string_view op;
    Support level;
    std::string_view lowering;  ///< entry points (emit/*.hpp), empty for host
    std::string_view cases;     ///< what lowers
    std::string_view refused;   ///< "rule: reason" items separated by "; " (a rule is lower-..., or "not lowered yet")
    std::string_view test;      ///< the differential test (a file or a directory/ under tests/), empty for host
};

namespace support_detail {
inline constexpr std::string_view lut = "lower_lut (lut.apply with the op's own 256-entry table)";
inline constexpr std::string_view lut_cases = "int8 -> int8, any element count; identical tables stored once";
inline constexpr std::string_view lut_refused = "lower-lut-type: a table other than int8 -> int8";
inline constexpr std::string_view ew_cases =
    "int8, per-tensor, the plan's rounding mode; equal element counts, or one input a row repeated along the "
    "output by stride-0 DMA rows (seed A7): a runtime row of a multiple of 16 elements, a constant row of any length";
inline constexpr std::string_view ew_refused =
    "lower-broadcast: any other broadcast (a runtime row that is not a multiple of 16 elements, a broadcast of an "
    "outer axis inside the row: not lowered yet)";
inline constexpr std::string_view unary_test = "emit/elementwise.cpp";
inline constexpr std::string_view row_stats =
    "per-row statistics scale every element by a runtime value (a reciprocal or 1/sqrt computed from the row): the "
    "vnpu has no divide, its scalar unit cannot read LMEM, and vec.rq takes its multipliers from tables";
inline constexpr std::string_view move_test_a = "emit_movement/pad_transpose_reshape.cpp";
inline constexpr std::string_view move_test_b = "emit_movement/slice_concat.cpp";
}  // namespace support_detail

inline constexpr std::array<OpSupport, ops::op_count> op_support{{
    {"Abs", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Neg", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Sign", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Relu", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Clip", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"LeakyRelu", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"HardSigmoid", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"HardSwish", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Sigmoid", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Tanh", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Exp", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Sqrt", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Reciprocal", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Erf", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Gelu", Support::lowered, support_detail::lut, support_detail::lut_cases, support_detail::lut_refused,
     support_detail::unary_test},
    {"Add", Support::partial, "lower_binary<add> (vec.ew.add)", support_detail::ew_cases, support_detail::ew_refused,
     support_detail::unary_test},
    {"Sub", Support::partial, "lower_binary<sub> (vec.ew.sub)", support_detail::ew_cases, support_detail::ew_refused,
     support_detail::unary_test},
    {"Mul", Support::partial, "lower_binary<mul> (vec.ew.mul)", support_detail::ew_cases, support_detail::ew_refused,
     support_detail::unary_test},
    {"Min", Support::partial, "lower_binary<min> (vec.ew.min)", support_detail::ew_cases, support_detail::ew_refused,
     support_detail::unary_test},
    {"Max", Support::partial, "lower_binary<max> (vec.ew.max)", support_detail::ew_cases, support_detail::ew_refused,
     support_detail::unary_test},
    {"ReduceSum", Support::partial,
     "lower_reduce_sum (outer axes: vec.acc partials + vec.add32 halving + vec.rq; innermost: mac.mm with a ones "
     "block)",
     "int8, any rank; reduced outer axes forming one block, or a reduced suffix with the innermost axis; keepdims 0 "
     "and 1",
     "lower-reduce-axes: two reduced blocks of outer axes, or a reduced set with the innermost axis that is not a "
     "suffix; lower-reduce-per-axis: quantized along an outer axis; lower-reduce-type: a float plan or a zero point "
     "outside int8; lower-reduce-layout; lower-reduce-budget: one output reducing more than the free LMEM (K is not "
     "split across loads)",
     "emit_reduce/"},
    {"ReduceMean", Support::partial, "lower_reduce_mean (as ReduceSum, 1 / count in the multiplier)", "as ReduceSum",
     "lower-reduce-axes: two reduced blocks of outer axes, or a reduced set with the innermost axis that is not a "
     "suffix; lower-reduce-per-axis: quantized along an outer axis; lower-reduce-type: a float plan or a zero point "
     "outside int8; lower-reduce-layout; lower-reduce-budget: one output reducing more than the free LMEM (K is not "
     "split across loads)",
     "emit_reduce/"},
    {"ReduceMax", Support::partial,
     "lower_reduce_max (outer axes: vec.max partials from -128, halving, vec.acc + vec.rq)",
     "int8, reduced outer axes forming one block; per-tensor or per-channel along the innermost axis",
     "lower-reduce-inner-minmax: over the innermost axis (vec.max combines lane i with lane i and the DMA moves whole "
     "16-B granules: no instruction brings two elements of one granule together; a MAC permutation path is not lowered "
     "yet); lower-reduce-axes: two reduced blocks of outer axes, or a reduced set with the innermost axis that is not "
     "a suffix; lower-reduce-per-axis: quantized along an outer axis; lower-reduce-type: a float plan or a zero point "
     "outside int8; lower-reduce-layout; lower-reduce-budget: one output reducing more than the free LMEM (K is not "
     "split across loads)",
     "emit_reduce/"},
    {"ReduceMin", Support::partial, "lower_reduce_min (as ReduceMax, partials from 127)", "as ReduceMax",
     "lower-reduce-inner-minmax: over the innermost axis (as ReduceMax); lower-reduce-axes: two reduced blocks of "
     "outer axes, or a reduced set with the innermost axis that is not a suffix; lower-reduce-per-axis: quantized "
     "along an outer axis; lower-reduce-type: a float plan or a zero point outside int8; lower-reduce-layout; "
     "lower-reduce-budget: one output reducing more than the free LMEM (K is not split across loads)",
     "emit_reduce/"},
    {"ArgMax", Support::host, "", "",
     "host: the output is int64 indices; the VEC compares and selects (vec.max, vec.min, vec.sel) are int8 and no ACC "
     "instruction compares or selects, so an index >= 128 cannot be formed",
     ""},
    {"ArgMin", Support::host, "", "",
     "host: the output is int64 indices; the VEC compares and selects (vec.max, vec.min, vec.sel) are int8 and no ACC "
     "instruction compares or selects, so an index >= 128 cannot be formed",
     ""},
    {"Conv", Support::lowered,
     "lower_conv (mac.mm per tap + vec.rq); lower_depthwise (group == C: vec.mac per tap, any strides and dilations)",
     "int8 NHWC, any kernel, strides, dilations, pads and groups (block-diagonal B), per-channel weight scales and "
     "zero points (w - zw in int8 parts, one MAC each), bias",
     "lower-conv-layout: shapes or pitches that do not chain; lower-conv-budget: an output row above 1024 MAC rows or "
     "beyond LMEM (rows are not split)",
     "emit_conv/conv.cpp"},
    {"ConvTranspose", Support::lowered, "lower_conv_transpose (DMA zero-stuffing into DRAM scratch, then lower_conv)",
     "int8 NHWC, any kernel, strides, dilations, pads, output_padding, groups; per-channel weight scales and zero "
     "points on axis 1, bias",
     "lower-conv-layout: a scratch image of the wrong size; "
     "lower-conv-budget: a stuffed row beyond LMEM",
     "emit_conv/conv_transpose.cpp"},
    {"MatMul", Support::partial,
     "lower_matmul (mac.mm + vec.rq, B packed at compile time; MatmulOptions::batch: a batch of products in one "
     "kernel); lower_matmul_left (the weight on the left, seed B12)",
     "int8 activations times a constant int8 weight on either side: A [M, K] x B [K, N] with per-tensor or per-column "
     "scales and zero points (b - zp_b in int8 parts, one MAC each), batched with numpy broadcasting ([B, M, K] x "
     "[B, K, N], [K, N] or [1, K, N]; [M, K] or [1, M, K] x [B, K, N]), or W [M, K] x X [K, N] with per-tensor or "
     "per-row scales",
     "lower-matmul-zero-point: the activation's zero point varies by row (column), or W's on the left is not 0; "
     "lower-matmul-per-row, lower-matmul-per-column: multipliers along the activation's axis; lower-matmul-budget: a "
     "Kp x 16 tile beyond LMEM (K is not tiled yet); lower-matmul-layout: also a malformed batch, or a batch with the "
     "weight on the left; not lowered yet: two activation operands",
     "emit/matmul.cpp"},
    {"Gemm", Support::partial, "lower_matmul with C as a per-column bias",
     "alpha > 0, a constant B (for transB the caller passes B transposed), C of shape [N] with beta == alpha",
     "lower-matmul-alpha: a negative alpha; lower-matmul-zero-point, lower-matmul-per-row, lower-matmul-budget: as "
     "MatMul; not lowered yet: transA, a 2-D C",
     "emit/matmul.cpp"},
    {"ConvInteger", Support::lowered,
     "lower_conv with ConvInteger's plan (int32 sums: mac.mm / mac.mma per tap and weight part; the sums DMA-stored "
     "straight from ACC, no vec.rq)",
     "int8 NHWC (uint8 through the importer's shift by 128), any kernel, strides, dilations, pads and groups; "
     "per-tensor or per-channel weight zero points (w - zw in int8 parts, one MAC each); int32 output pixels "
     "round16(4 C) bytes apart",
     "lower-conv-layout: shapes or pitches that do not chain; lower-conv-budget: an output row above 1024 MAC rows or "
     "beyond LMEM (rows are not split)",
     "emit_conv/integer.cpp"},
    {"MatMulInteger", Support::partial,
     "lower_matmul with MatmulOptions::int32_output (mac.mm / mac.mma per weight part; the int32 sums DMA-stored "
     "straight from ACC, no vec.rq)",
     "int8 activations A [M, K] times a constant int8 B [K, N] (uint8 through the importer's shift by 128); A's zero "
     "point per tensor or per row (one mac.mm per row), B's per tensor or per column; int32 output rows round16(4 N) "
     "bytes apart",
     "lower-matmul-layout: shapes or pitches that do not chain; lower-matmul-budget: a Kp x 16 tile beyond LMEM (K is "
     "not tiled yet); not lowered yet: two activation operands, the weight on the left",
     "emit_conv/integer.cpp"},
    {"AveragePool", Support::partial, "lower_average_pool (vec.acc + vec.add32 per tap, vec.shl32 + vec.rq)",
     "int8 NHWC, any kernel, strides, dilations, where every output position has the same count",
     "lower-pool-count: a count that varies by position (padding with count_include_pad = 0, a ceil overhang): vec.rq "
     "has one multiplier per channel, not per pixel; lower-pool-range: an accumulator that could exceed int32; "
     "lower-pool-layout; lower-pool-budget",
     "emit_pool/pool.cpp"},
    {"MaxPool", Support::lowered, "lower_max_pool (vec.max over rows and taps, strided store)",
     "int8 NHWC, any kernel, pads, strides, dilations, ceil_mode; equal or different output quantization",
     "lower-pool-layout: shapes or pitches that do not chain; lower-pool-budget: rows beyond LMEM (rows are not split)",
     "emit_pool/pool.cpp"},
    {"GlobalAveragePool", Support::lowered,
     "lower_global_average_pool (vec.acc tiles, vec.add32 halving, vec.shl32 + vec.rq)",
     "int8 NHWC, any size; the host's clamp emulated exactly when it can act",
     "lower-pool-range: an accumulator that could exceed int32; lower-pool-layout; lower-pool-budget",
     "emit_pool/pool.cpp"},
    {"GlobalMaxPool", Support::lowered, "lower_global_max_pool (vec.max tiles, halving)", "int8 NHWC, any size",
     "lower-pool-layout; lower-pool-budget", "emit_pool/pool.cpp"},
    {"Resize", Support::partial, "lower_resize (nearest: DMA pixel copies per residue class of output columns)",
     "nearest, every coordinate rule and nearest mode, scales or sizes, int8 NHWC; a different output quantization via "
     "lut.apply",
     "lower-resize-mode: linear mode (not lowered yet: its per-pixel Q.11 weights as vec.mac over replicated weights); "
     "cubic and tf_crop_and_resize are float32 only (the host plan refuses them on int8); lower-resize-layout: not "
     "one NHWC image; lower-resize-per-axis; lower-resize-budget",
     "emit_resize/resize.cpp"},
    {"BatchNormalization", Support::host, "", "",
     "host: the quantized kernel is sat(rshift(rq(sign (x - off_c), M_c) + bias_c, 8)): a full int32 rq result, a "
     "per-channel bias, then a second rounding; vec.rq (the one per-channel multiplier) writes saturated int8 and the "
     "ACC operations are uniform across lanes, so the int32 intermediate cannot be formed (one vec.rq instead fails "
     "197 of 200 measured channels). The graph pass batch-norm-to-conv (graph/passes.hpp) rewrites an image "
     "BatchNorm as a depthwise 1x1 Conv, which lowers, when every code is within 1 LSB of this kernel's",
     ""},
    {"InstanceNormalization", Support::host, "", "", support_detail::row_stats, ""},
    {"LayerNormalization", Support::host, "", "", support_detail::row_stats, ""},
    {"Softmax", Support::host, "", "", support_detail::row_stats, ""},
    {"Reshape", Support::partial, "lower_reshape (no code for a view of the same bytes; else DMA repacking rows)",
     "int8 DramArray, any shape the op infers; rows kept, merged or split at multiples of 16; a different output "
     "quantization via lut.apply",
     "lower-reshape-inner: a row that would start at an offset that is not a multiple of 16, or a move of the "
     "innermost axis (the DMA, VEC and LUT address 16-B aligned granules; an exact mac.mm selection-matrix path is not "
     "lowered yet); lower-reshape-per-axis: a per-axis requantization (one LUT table maps the tensor); "
     "lower-reshape-layout: malformed or overlapping descriptors; lower-reshape-budget: no LMEM for the staging buffer",
     support_detail::move_test_a},
    {"Flatten", Support::partial, "lower_flatten (as Reshape)", "as Reshape",
     "lower-flatten-inner: a row that would start at an offset that is not a multiple of 16, or a move of the "
     "innermost axis (the DMA, VEC and LUT address 16-B aligned granules; an exact mac.mm selection-matrix path is not "
     "lowered yet); lower-flatten-per-axis: a per-axis requantization (one LUT table maps the tensor); "
     "lower-flatten-layout: malformed or overlapping descriptors; lower-flatten-budget: no LMEM for the staging buffer",
     support_detail::move_test_a},
    {"Squeeze", Support::partial, "lower_squeeze (as Reshape)", "as Reshape",
     "lower-squeeze-inner: a row that would start at an offset that is not a multiple of 16, or a move of the "
     "innermost axis (the DMA, VEC and LUT address 16-B aligned granules; an exact mac.mm selection-matrix path is not "
     "lowered yet); lower-squeeze-per-axis: a per-axis requantization (one LUT table maps the tensor); "
     "lower-squeeze-layout: malformed or overlapping descriptors; lower-squeeze-budget: no LMEM for the staging buffer",
     support_detail::move_test_a},
    {"Unsqueeze", Support::partial, "lower_unsqueeze (as Reshape)", "as Reshape",
     "lower-unsqueeze-inner: a row that would start at an offset that is not a multiple of 16, or a move of the "
     "innermost axis (the DMA, VEC and LUT address 16-B aligned granules; an exact mac.mm selection-matrix path is not "
     "lowered yet); lower-unsqueeze-per-axis: a per-axis requantization (one LUT table maps the tensor); "
     "lower-unsqueeze-layout: malformed or overlapping descriptors; lower-unsqueeze-budget: no LMEM for the staging "
     "buffer",
     support_detail::move_test_a},
    {"Transpose", Support::partial, "lower_transpose (multi-row DMA with strides)", "any permutation of the outer axes",
     "lower-transpose-inner: a row that would start at an offset that is not a multiple of 16, or a move of the "
     "innermost axis (the DMA, VEC and LUT address 16-B aligned granules; an exact mac.mm selection-matrix path is not "
     "lowered yet); lower-transpose-per-axis: a per-axis requantization (one LUT table maps the tensor); "
     "lower-transpose-layout: malformed or overlapping descriptors; lower-transpose-budget: no LMEM for the staging "
     "buffer",
     support_detail::move_test_a},
    {"Expand", Support::partial, "lower_expand (stride-0 source rows; no constant is materialized, seed A7)",
     "broadcast of outer axes",
     "lower-expand-inner: a row that would start at an offset that is not a multiple of 16, or a move of the innermost "
     "axis (the DMA, VEC and LUT address 16-B aligned granules; an exact mac.mm selection-matrix path is not lowered "
     "yet); lower-expand-per-axis: a per-axis requantization (one LUT table maps the tensor); lower-expand-layout: "
     "malformed or overlapping descriptors; lower-expand-budget: no LMEM for the staging buffer",
     support_detail::move_test_a},
    {"Slice", Support::partial, "lower_slice (multi-row DMA)",
     "outer axes with any steps, negative axes, ONNX clamping; the innermost axis with step 1 from a multiple of 16",
     "lower-slice-inner: a row that would start at an offset that is not a multiple of 16, or a move of the innermost "
     "axis (the DMA, VEC and LUT address 16-B aligned granules; an exact mac.mm selection-matrix path is not lowered "
     "yet); lower-slice-per-axis: a per-axis requantization (one LUT table maps the tensor); lower-slice-layout: "
     "malformed or overlapping descriptors; lower-slice-budget: no LMEM for the staging buffer",
     support_detail::move_test_b},
    {"Concat", Support::partial, "lower_concat (DMA rows; a lut.apply per input whose quantization differs)",
     "outer axes; the innermost axis at offsets that are multiples of 16",
     "lower-concat-inner: a row that would start at an offset that is not a multiple of 16, or a move of the innermost "
     "axis (the DMA, VEC and LUT address 16-B aligned granules; an exact mac.mm selection-matrix path is not lowered "
     "yet); lower-concat-per-axis: a per-axis requantization (one LUT table maps the tensor); lower-concat-layout: "
     "malformed or overlapping descriptors; lower-concat-budget: no LMEM for the staging buffer",
     support_detail::move_test_b},
    {"Pad", Support::partial, "lower_pad (DMA rows; constant fill from Pad::fill_values; edge and reflect copy rows)",
     "constant mode on any axis at multiples of 16 on the innermost; edge and reflect on outer axes",
     "lower-pad-inner: a row that would start at an offset that is not a multiple of 16, or a move of the innermost "
     "axis (the DMA, VEC and LUT address 16-B aligned granules; an exact mac.mm selection-matrix path is not lowered "
     "yet); lower-pad-per-axis: a per-axis requantization (one LUT table maps the tensor); lower-pad-layout: malformed "
     "or overlapping descriptors; lower-pad-budget: no LMEM for the staging buffer",
     support_detail::move_test_a},
    {"MaxPoolIndices", Support::host, "", "",
     "host: the output is int64 indices, which the vnpu cannot store (as ArgMax)", ""},
    {"QuantizeLinear", Support::host, "", "", "host: its input is float32 (the vnpu has no floating-point unit)", ""},
    {"DequantizeLinear", Support::host, "", "", "host: its output is float32 (the vnpu has no floating-point unit)",
     ""},
    {"Requantize", Support::partial, "lower_requantize (lut.apply with a table from the host's own ops::materialize)",
     "int8 -> int8 per-tensor, any shape and pitch; equal parameters are a bit copy",
     "lower-requantize-per-axis: per-axis parameters (one 256-entry table covers a 16-B aligned range, a channel is "
     "not one); lower-requantize-type: a uint8 output; lower-requantize-layout: malformed descriptors",
     support_detail::move_test_b},
}};

namespace support_detail {
constexpr bool covers_registry() {
    if (op_support.size() != ops::op_names.size()) return false;
    for (const auto name : ops::op_names) {
        int n = 0;
        for (const auto& s : op_support) n += s.op == name;
        if (n != 1) return false;
    }
    return true;
}
constexpr bool consistent() {
    for (const auto& s : op_support)
        if ((s.level == Support::host || s.level == Support::not_yet) != s.lowering.empty() ||
            s.lowering.empty() != s.test.empty())
            return false;
    return true;
}
static_assert(covers_registry(), "emit::op_support must have exactly one entry per op of ops::all_ops");
static_assert(consistent(), "host and not-yet entries name no lowering and no test; every other entry names both");
}  // namespace support_detail

/// The entry of op `name`, or nullptr.
constexpr const OpSupport* find_support(std::string_view name) {
    for (const auto& s : op_support)
        if (s.op == name) return &s;
    return nullptr;
}

/// docs/emit_support.md: a Markdown table of op_support, in registry order, with a count per level.
inline std::string support_markdown() {
    std::string s =
        "# NPU emission support (generated)\n\n"
        "Generated from `include/janus/emit/support.hpp` (`emit::support_markdown`); do not edit by hand.\n"
        "`tests/emit_support` fails when this file is stale: regenerate it with\n"
        "`JANUS_UPDATE_GOLDEN=1 ctest --test-dir build/<preset> -R '^emit_support$'`.\n\n"
        "Levels: **lowered**, every int8 case lowers within the memory budgets; **partial**, some int8 cases lower,\n"
        "the others are refused with the rule given or are not lowered yet; **not lowered yet**, no case lowers yet\n"
        "(this is a gap, not a reason: the entry says how it would lower); **host**, the op runs on the host\n"
        "reference, for the reason given. The float32 form of every op runs on the host: the vnpu has int8 storage,\n"
        "int32 accumulators and no floating-point unit. Each lowered case is verified bit for bit against the host\n"
        "reference on the simulator (no fault, no race) by the test named.\n\n";
    std::array<int, 4> count{};
    for (const auto& e : op_support) ++count[static_cast<std::size_t>(e.level)];
    s += "| level | ops |\n|---|---:|\n";
    for (const Support l : {Support::lowered, Support::partial, Support::not_yet, Support::host})
        s += "| " + std::string(support_name(l)) + " | " + std::to_string(count[static_cast<std::size_t>(l)]) + " |\n";
    s += "\n| op | level | lowering | lowered cases | refused or not lowered | verified by |\n";
    s += "|---|---|---|---|---|---|\n";
    const auto cell = [](std::string_view v) { return v.empty() ? std::string("-") : std::string(v); };
    for (const auto name : ops::op_names) {
        const OpSupport& e = *find_support(name);
        std::string refused = cell(e.refused);
        for (std::size_t at = refused.find("; "); at != std::string::npos; at = refused.find("; ", at))
            refused.replace(at, 2, "<br>"), at += 4;
        s += "| " + std::string(e.op) + " | " + std::string(support_name(e.level)) + " | " + cell(e.lowering) + " | " +
             cell(e.cases) + " | " + refused + " | " + (e.test.empty() ? "-" : "`tests/" + std::string(e.test) + "`") +
             " |\n";
    }
    return s;
}

}  // namespace janus::emit
