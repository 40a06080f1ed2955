#pragma once
// Lowering of Resize in nearest mode (ops/resize.hpp) to DMA pixel copies, from the op's own plan and index tables:
// output pixel (oy, ox) is input pixel (h[oy], w[ox]) with h, w = resize::nearest_table (every coordinate rule and
// nearest mode of the host, computed once, by the host's code). A different output quantization is applied by
// lut.apply with the host's own requantization table (emit/movement.hpp).
//
// Layout: NHWC images as emit::DramArray {1, H, W, C} (pixels `pitch` bytes apart, a multiple of 16 >= C).
// Strategy: the output columns are split once into P residue classes (ox = r, r + P, r + 2P, ...), P the smallest
// period (up to 8) for which every class reads input columns in an arithmetic progression (an integer upscale by s
// gives P = s; a downscale P = 1); otherwise into runs of constant step. Each class of each output row is one
// multi-row DMA copy (rows = pixels, source stride = the progression's step x pitch, destination stride = P x
// pitch), through emit/movement.hpp's staging buffer; the in-order DMA queue orders them, no event is needed.
// Refused with a rule: lower-resize-mode (linear: its per-pixel Q.11 weights are not lowered yet), the host plan's
// own refusals (cubic and tf_crop_and_resize are float32 only: cubic-quantized-unsupported,
// tf-crop-and-resize-quantized-unsupported; an output descriptor of another shape: output-type-matches-inference),
// emit/movement.hpp's lower-resize-layout / -per-axis / -budget, and program-size (an output extent or a count of
// row copies above emit::max_program_instructions, checked before the tables are made).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <janus/emit/movement.hpp>
#include <janus/ops/resize.hpp>

namespace janus::emit {

namespace resize_detail {

/// One class of output columns: `count` pixels from output column `first`, every `out_step`, reading input columns
/// from `in_first`, every `in_step` (>= 0).
struct Columns {
    std::int64_t first = 0, count = 0, out_step = 1, in_first = 0, in_step = 0;
};

/// Split the column table `w` into residue classes of the smallest period P <= 8 that makes every class an
/// arithmetic progression; otherwise into maximal runs of constant step.
inline std::vector<Columns> split_columns(const std::vector<std::int64_t>& w) {
    const auto n = static_cast<std::int64_t>(w.size());
    for (std::int64_t P = 1; P <= std::min<std::int64_t>(8, n); ++P) {
        std::vector<Columns> cls;
        bool ok = true;
        for (std::int64_t r = 0; r < P && ok; ++r) {
            Columns c{r, (n - r + P - 1) / P, P, w[static_cast<std::size_t>(r)], 0};
            if (c.count > 1) c.in_step = w[static_cast<std::size_t>(r + P)] - w[static_cast<std::size_t>(r)];
            for (std::int64_t k = 1; k < c.count && ok; ++k)
                ok = w[static_cast<std::size_t>(r + k * P)] == c.in_first + k * c.in_step;
            ok = ok && c.in_step >= 0;
            cls.push_back(c);
        }
        if (ok) return cls;
    }
    std::vector<Columns> runs;
    for (std::int64_t i = 0; i < n;) {
        Columns c{i, 1, 1, w[static_cast<std::size_t>(i)], 0};
        if (i + 1 < n && w[static_cast<std::size_t>(i + 1)] >= w[static_cast<std::size_t>(i)]) {
            c.in_step = w[static_cast<std::size_t>(i + 1)] - w[static_cast<std::size_t>(i)];
            while (i + c.count < n && w[static_cast<std::size_t>(i + c.count)] == c.in_first + c.count * c.in_step)
                ++c.count;
        }
        runs.push_back(c);
        i += c.count;
    }
    return runs;
}

}  // namespace resize_detail

/// x: {1, H, W, C} NHWC with its quantization; y: {1, Ho, Wo, C}. `a` is the ONNX Resize's attributes (NCHW axes).
inline Status lower_resize(Builder& b, const ops::Resize::Attrs& a, const DramArray& x, const DramArray& y,
                           numeric::Rounding rounding) {
    using namespace move_detail;
    const std::string what = b.name() + ": resize", op = "resize";
    JANUS_CHECK(check_array(x, what, op, "input"));
    JANUS_CHECK(check_array(y, what, op, "output", true));
    JANUS_CHECK(check_disjoint(x, y, what, op));
    if (x.rank() != 4 || y.rank() != 4 || x.shape[0] != 1)
        return make_error(what, "", "lower-resize-layout",
                          "one NHWC image {1, H, W, C} is lowered, got " + describe(x) + " -> " + describe(y));
    const std::int64_t H = x.shape[1], W = x.shape[2], C = x.shape[3];
    // the plan is the host's, on the NCHW types of the two NHWC images; it checks y's extents and quantization
    const ops::TensorType nchw{DType::i8, Shape{1, C, H, W}, x.quant};
    const ops::TensorType nchw_out{DType::i8, Shape{1, y.shape[3], y.shape[1], y.shape[2]}, y.quant};
    JANUS_TRY(const ops::resize::Plan p,
              ops::Resize::plan(std::span<const ops::TensorType>(&nchw, 1), a, nchw_out, rounding));
    if (p.mode == ops::resize::Mode::linear)
        return make_error(what, "mode", "lower-resize-mode",
                          "linear resize is not lowered yet (its per-pixel Q.11 weights would be vec.mac over "
                          "replicated weights); the host runs it");
    const std::int64_t Ho = p.out[2], Wo = p.out[3];
    // the index tables hold one entry per output row and column, and every copy is an instruction: bounded before
    // any is made (program-size; a 300-byte model asked for 2^22 rows of copies, 4 GB)
    if (std::max(Ho, Wo) > max_program_instructions)
        return make_error(what, "output", "program-size",
                          "an output of " + std::to_string(Ho) + " x " + std::to_string(Wo) +
                              " pixels: the copies' index tables would pass " +
                              std::to_string(max_program_instructions) + " entries");
    JANUS_TRY(const std::optional<Lut> table, decide_table(x.quant, y.quant, rounding, what, op));
    const auto h = ops::resize::nearest_table(p, 2, H);
    const auto w = ops::resize::nearest_table(p, 3, W);
    const auto cols = resize_detail::split_columns(w);
    if (Ho * static_cast<std::int64_t>(cols.size()) > max_program_instructions)
        return make_error(what, "output", "program-size",
                          std::to_string(Ho) + " rows x " + std::to_string(cols.size()) +
                              " column class(es) of pixel copies: the program would pass " +
                              std::to_string(max_program_instructions) + " instructions");
    std::vector<RowCopy> copies;
    for (std::int64_t oy = 0; oy < Ho; ++oy)
        for (const auto& c : cols) {
            RowCopy r;
            r.n = {c.count};
            r.src = {c.in_step * x.pitch};
            r.dst = {c.out_step * y.pitch};
            r.src_region = x.region;
            r.src_base = x.offset + (h[static_cast<std::size_t>(oy)] * W + c.in_first) * x.pitch;
            r.dst_region = y.region;
            r.dst_base = y.offset + (oy * Wo + c.first) * y.pitch;
            r.bytes = round16(C);
            r.table = table ? &*table : nullptr;
            copies.push_back(r);
        }
    return emit_copies(b, what, op, copies,
                       std::to_string(H) + "x" + std::to_string(W) + " -> " + std::to_string(Ho) + "x" +
                           std::to_string(Wo) + " nearest, output columns in " + std::to_string(cols.size()) +
                           " class(es) of pixel copies per row");
}

}  // namespace janus::emit
