#pragma once
// Data-movement operators (ONNX opsets 13-17; constant inputs are attributes). None of them computes on values:
// each is an INDEX MAPPING (layout/view.hpp or an index-map table, ops/index_map.hpp) plus the quantization rule of
// data movement (seeds A10, B12, D13):
//   - the input's quantization moves with its axis (a per-axis axis is renumbered by Transpose, Squeeze, Unsqueeze,
//     Expand, Reshape; its channels are selected by Slice and concatenated by Concat);
//   - infer PROPOSES the moved quantization (data movement preserves real values exactly); a caller-requested
//     output quantization that differs from it means REQUANTIZE (copy.hpp materialize / copy_into, one definition);
//   - a quantized input never loses its quantization (output-quantization-required) and an unquantized one never
//     gains one (input-not-quantized).
//
// | op        | index mapping (output index i -> input index)        | output        | per-axis quantization axis    |
// |-----------|------------------------------------------------------|---------------|-------------------------------|
// | Reshape   | same row-major element order (infer_reshape_shape)   | view if the   | kept iff some output axis has |
// | Flatten   | Reshape to [prod(s[:axis]), prod(s[axis:])]          | layout proves | its extent and the same inner |
// |           |                                                      | it, else copy | element count; else error     |
// | Squeeze   | drops extent-1 axes                                  | view          | renumbered; removed -> tensor |
// | Unsqueeze | inserts extent-1 axes at output positions            | view          | renumbered                    |
// | Transpose | in[perm[j]] = i[j]                                   | copy          | j with perm[j] == axis        |
// | Slice     | in[a] = start_a + i[a] * step_a (ONNX clamping)      | copy          | its channels are selected     |
// | Expand    | numpy two-way broadcast; stride 0 on repeated axes   | copy          | shifted right; 1 -> N: tensor |
// | Concat    | input k fills out[off_k : off_k + n_k] along `axis`  | copy          | concatenated when on `axis`   |
// | Pad       | per-axis table: crop, then constant / reflect / edge | copy          | must not be padded            |
//
// View or copy (seed B3). An op whose element order is the input's row-major order (Reshape, Flatten, Squeeze,
// Unsqueeze) returns a VIEW sharing the input's storage when strides can express it and the quantization is
// unchanged: layout/view.hpp reshape() proves the linear mapping or refuses ("reshape-needs-data-movement", e.g. a
// transposed or padded input, seed B6); on refusal the input is materialized contiguously (requantized at the same
// time if asked) and the contiguous copy is reshaped, which always succeeds. Ops that reorder, select or repeat
// elements return a new contiguous tensor: the view (transposed, sliced, broadcast with stride 0, seed B5) is
// materialized, so no output aliases its input through a stride-0 or reversed layout.
//
// A per-axis quantization with ONE channel is a per-tensor quantization; it becomes per-tensor where its axis
// disappears or is repeated (Squeeze of that axis, Expand 1 -> N, Reshape merging it, Pad along it, an empty Slice).
//
// Dtypes: float32, int8, uint8, int32 (and int64, which is only moved), quantized or not. Errors name the op, the
// attribute or input, the position and the rule (layout/view.hpp rules plus the ones listed at each op).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/layout/broadcast.hpp>
#include <janus/layout/permutation.hpp>
#include <janus/layout/view.hpp>
#include <janus/ops/copy.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/index_map.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>

namespace janus::ops {

namespace movement {

using OptQuant = std::optional<numeric::QuantParams>;

/// The input after the op's index mapping, before any copy: a layout over the input's bytes and the input's
/// quantization in OUTPUT coordinates.
struct Moved {
    Layout layout;
    OptQuant quant;
};

/// A stand-in layout for shape inference: the same view functions run on it, so infer and run agree on every rule.
inline Layout type_layout(const TensorType& t) {
    return Layout::contiguous(t.shape, static_cast<std::int64_t>(dtype_size(t.dtype)));
}

/// An input's quantization must describe it: same dtype, finite positive scales, axis and channel count fitting its
/// shape (a tensor built in C++ may carry anything; make_quant's rules are re-checked, not assumed).
inline Status check_input(const TensorType& t, const std::string& what) {
    if (!t.quant) return ok_status();
    if (t.quant->dtype != t.dtype)
        return make_error(what, "", "quant-dtype-matches",
                          "quantization dtype " + std::string(dtype_name(t.quant->dtype)) + " differs from storage " +
                              std::string(dtype_name(t.dtype)));
    JANUS_CHECK(numeric::check_quant_fits(*t.quant, t.shape, what + ".quant"));
    for (std::size_t c = 0; c < t.quant->channels(); ++c)
        if (!(std::isfinite(t.quant->scales[c]) && t.quant->scales[c] > 0.0f))
            return make_error(what + ".quant", "channel " + std::to_string(c), "scale-positive-finite",
                              "scale must be finite and > 0, got " + numeric::detail::format_scale(t.quant->scales[c]));
    return ok_status();
}

/// The requested output agrees with the moved input: same dtype and shape; quantized iff the input is.
inline Status check_output(const TensorType& moved, const TensorType& out, const std::string& what) {
    if (out.dtype != moved.dtype || !(out.shape == moved.shape))
        return make_error(what, "output", "output-type-matches-inference",
                          "requested output " + out.str() + " but the op produces " + moved.str());
    if (moved.quant && !out.quant)
        return make_error(what, "output", "output-quantization-required",
                          "the input is quantized; the output needs quantization parameters (infer proposes the "
                          "input's, moved with its axes)");
    if (!moved.quant && out.quant)
        return make_error(what, "output", "input-not-quantized",
                          "data movement cannot give unquantized values a quantization: " + moved.str() + " -> " +
                              out.str());
    if (out.quant) {
        if (out.quant->dtype != out.dtype)
            return make_error(what, "output", "quant-dtype-matches", "quantization dtype differs from storage dtype");
        JANUS_CHECK(numeric::check_quant_fits(*out.quant, out.shape, what + ".output.quant"));
    }
    return ok_status();
}

/// Untrusted list -> Dims (at most 6 entries).
inline Result<Dims> to_dims(const std::vector<std::int64_t>& v, const std::string& what) {
    if (v.size() > static_cast<std::size_t>(max_rank))
        return make_error(what, "", "rank-at-most-6", std::to_string(v.size()) + " entries; at most 6 axes exist");
    Dims d;
    for (auto x : v) d.push_back(x);
    return d;
}

/// Channel 0's parameters as per-tensor (exact for a one-channel per-axis quantization).
inline numeric::QuantParams per_tensor_of(const numeric::QuantParams& q) {
    return numeric::QuantParams{q.dtype, {q.scale(0)}, {q.zero_point(0)}, std::nullopt};
}

/// Reshape `from` -> `to` (same element count): the quantization axis k survives as output axis j when to[j] ==
/// from[k] and the elements after it number the same (then every element's channel is its coordinate j: the
/// row-major position decomposes identically). Otherwise: one channel -> per-tensor; no element -> per-tensor;
/// else the error "reshape-keeps-quantization-axis" (the channels would be scattered over several output axes).
inline Result<OptQuant> reshaped_quant(const OptQuant& q, const Shape& from, const Shape& to, const std::string& what) {
    if (!q || q->per_tensor()) return q;
    const int k = *q->axis;
    std::int64_t after_in = 1;
    for (int i = k + 1; i < from.size(); ++i) after_in *= from[i];
    for (int j = 0; j < to.size(); ++j) {
        std::int64_t after_out = 1;
        for (int i = j + 1; i < to.size(); ++i) after_out *= to[i];
        if (to[j] == from[k] && after_out == after_in) {
            numeric::QuantParams r = *q;
            r.axis = j;
            return OptQuant{r};
        }
    }
    if (q->channels() == 1 || element_count(from) == 0) return OptQuant{per_tensor_of(*q)};
    return make_error(what, "axis " + std::to_string(k), "reshape-keeps-quantization-axis",
                      "the per-axis quantization axis " + std::to_string(k) + " (extent " + std::to_string(from[k]) +
                          ") of " + from.str() + " does not survive the reshape to " + to.str() +
                          "; requantize to per-tensor first");
}

/// Slice: channels start, start + step, ... of the quantization axis `axis` (an empty selection -> per-tensor).
inline numeric::QuantParams sliced_quant(const numeric::QuantParams& q, int axis, const SliceRange& s) {
    if (q.per_tensor() || *q.axis != axis) return q;
    if (s.count == 0) return per_tensor_of(q);
    numeric::QuantParams r = q;
    r.scales.clear();
    r.zero_points.clear();
    for (std::int64_t i = 0; i < s.count; ++i) {
        const auto c = static_cast<std::size_t>(s.start + i * s.step);
        r.scales.push_back(q.scales[c]);
        r.zero_points.push_back(q.zero_points[c]);
    }
    return r;
}

/// Squeeze: the axis is renumbered past the removed (sorted) axes; removing it (extent 1: one channel) -> per-tensor.
inline OptQuant squeezed_quant(const OptQuant& q, const Dims& removed) {
    if (!q || q->per_tensor()) return q;
    if (janus::detail::contains(removed, *q->axis)) return per_tensor_of(*q);
    return numeric::squeezed(*q, removed).value();  // cannot fail: the axis is not removed
}

/// Expand: the axis shifts by the rank growth; an axis broadcast 1 -> N (one channel) -> per-tensor.
inline OptQuant expanded_quant(const OptQuant& q, const Shape& in, const Shape& out) {
    if (!q || q->per_tensor()) return q;
    const int j = *q->axis + (out.size() - in.size());
    if (out[j] != in[*q->axis]) return per_tensor_of(*q);
    numeric::QuantParams r = *q;
    r.axis = j;
    return r;
}

}  // namespace movement

// ---------------------------------------------------------------------------------------------------------------
// Ops with one input whose result is a view of it (before a possible copy). Derived provides
//   static Result<movement::Moved> move(const Layout&, const OptQuant&, const Attrs&)
//   static constexpr bool keep_view   (true: return the view when the quantization is unchanged; false: copy)

template <class Derived>
struct single_input_movement {
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;

    template <class Attrs>
    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<Derived>(in));
        JANUS_CHECK(movement::check_input(in[0], op_what<Derived>(0)));
        JANUS_TRY(movement::Moved m, Derived::move(movement::type_layout(in[0]), in[0].quant, a));
        return TensorType{in[0].dtype, m.layout.shape, m.quant};
    }

    template <class Attrs>
    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<Derived>(in));
        JANUS_CHECK(movement::check_input(type_of(in[0]), op_what<Derived>(0)));
        JANUS_TRY(movement::Moved m, Derived::move(in[0].layout, in[0].quant, a));
        Tensor v = in[0].view(m.layout);
        v.quant = m.quant;
        JANUS_CHECK(movement::check_output(type_of(v), out, op_what<Derived>()));
        if (Derived::keep_view && v.quant == out.quant) return v;
        return materialize(v, out, ctx, op_what<Derived>());
    }
};

/// Reshape-like ops: Derived provides `static Result<Shape> target(const Shape& in, const Attrs&)`.
template <class Derived>
struct reshape_movement {
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;

    template <class Attrs>
    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<Derived>(in));
        JANUS_CHECK(movement::check_input(in[0], op_what<Derived>(0)));
        JANUS_TRY(Shape s, Derived::target(in[0].shape, a));
        JANUS_TRY(movement::OptQuant q, movement::reshaped_quant(in[0].quant, in[0].shape, s, op_what<Derived>()));
        return TensorType{in[0].dtype, s, q};
    }

    /// Seed B3: a view when layout reshape() proves the linear mapping and the quantization is unchanged; otherwise
    /// materialize the input contiguously (with the requested quantization, in input coordinates), then reshape.
    template <class Attrs>
    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<Derived>(in));
        const std::string what = op_what<Derived>();
        const TensorType t0 = type_of(in[0]);
        JANUS_TRY(TensorType moved, infer(std::span<const TensorType>(&t0, 1), a));
        JANUS_CHECK(movement::check_output(moved, out, what));
        movement::OptQuant q_in = in[0].quant;  // the output's quantization in input coordinates
        if (moved.quant == out.quant) {
            auto l = reshape(in[0].layout, out.shape, what);
            if (l.ok()) {
                Tensor v = in[0].view(*l);
                v.quant = out.quant;
                return v;
            }
            // reshape-needs-data-movement: the strides cannot express it; copy below (never wrong addresses).
        } else {
            JANUS_TRY(q_in, movement::reshaped_quant(out.quant, out.shape, in[0].shape(), what + ".output"));
        }
        JANUS_TRY(Tensor c, materialize(in[0], TensorType{out.dtype, in[0].shape(), q_in}, ctx, what));
        JANUS_TRY(Layout l, reshape(c.layout, out.shape, what));  // contiguous: always expressible
        Tensor v = c.view(l);
        v.quant = out.quant;
        return v;
    }
};

// ---------------------------------------------------------------------------------------------------------------
// The operators.

/// Reshape (opset 14): `shape` with 0 = copy the input extent (unless allowzero = 1: a literal 0) and at most one -1.
/// Rules: layout/view.hpp infer_reshape_shape's, reshape-keeps-quantization-axis.
struct Reshape : reshape_movement<Reshape> {
    static constexpr fixed_string name = "Reshape";
    struct Attrs {
        std::vector<std::int64_t> shape;
        std::int64_t allowzero = 0;
    };
    static constexpr auto schema = attr_schema(attr<"shape">(&Attrs::shape, ints_range{-1, max_elements, 0, 6}),
                                               attr<"allowzero">(&Attrs::allowzero, int_range{0, 1}));
    static Result<Shape> target(const Shape& in, const Attrs& a) {
        return infer_reshape_shape(in, a.shape, a.allowzero != 0, "Reshape.shape");
    }
};

/// Flatten (opset 13): axis in [-r, r] -> [prod(s[0:axis]), prod(s[axis:r])] (rank 0 gives [1, 1]).
/// Rules: axis-in-range, reshape-keeps-quantization-axis.
struct Flatten : reshape_movement<Flatten> {
    static constexpr fixed_string name = "Flatten";
    struct Attrs {
        std::int64_t axis = 1;
    };
    static constexpr auto schema = attr_schema(attr<"axis">(&Attrs::axis, int_range{-max_rank, max_rank}));
    static Result<Shape> target(const Shape& in, const Attrs& a) {
        const int r = in.size();
        if (a.axis < -r || a.axis > r)
            return make_error("Flatten.axis", "", "axis-in-range",
                              "axis " + std::to_string(a.axis) + " is outside [" + std::to_string(-r) + ", " +
                                  std::to_string(r) + "] for rank " + std::to_string(r));
        const int axis = static_cast<int>(a.axis < 0 ? a.axis + r : a.axis);
        std::int64_t outer = 1, inner = 1;
        for (int k = 0; k < r; ++k) (k < axis ? outer : inner) *= in[k];
        return Shape{outer, inner};
    }
};

/// Squeeze (opset 13): remove the named extent-1 axes (negative allowed, distinct); no axes: every extent-1 axis.
/// Rules: squeeze-extent-one, axis-in-range, axes-unique, rank-at-most-6.
struct Squeeze : single_input_movement<Squeeze> {
    static constexpr fixed_string name = "Squeeze";
    static constexpr bool keep_view = true;
    struct Attrs {
        std::vector<std::int64_t> axes;
    };
    static constexpr auto schema = attr_schema(attr<"axes">(&Attrs::axes, ints_range{-max_rank, max_rank - 1, 0, 6}));
    static Result<movement::Moved> move(const Layout& l, const movement::OptQuant& q, const Attrs& a) {
        JANUS_TRY(Dims axes, movement::to_dims(a.axes, "Squeeze.axes"));
        JANUS_TRY(Layout v, squeeze(l, axes, "Squeeze"));
        Dims removed;
        if (axes.empty()) {
            for (int k = 0; k < l.rank(); ++k)
                if (l.shape[k] == 1) removed.push_back(k);
        } else {
            JANUS_TRY(removed, normalize_axes(axes.span(), l.rank(), "Squeeze.axes"));
        }
        return movement::Moved{v, movement::squeezed_quant(q, removed)};
    }
};

/// Unsqueeze (opset 13): insert extent-1 axes at the given OUTPUT positions (required; negative allowed, distinct).
/// Rules: rank-at-most-6, axis-in-range, axes-unique (and the schema's: at least one axis).
struct Unsqueeze : single_input_movement<Unsqueeze> {
    static constexpr fixed_string name = "Unsqueeze";
    static constexpr bool keep_view = true;
    struct Attrs {
        std::vector<std::int64_t> axes;
    };
    static constexpr auto schema =
        attr_schema(attr<"axes">(&Attrs::axes, ints_range{-max_rank, max_rank - 1, 1, 6}));
    static Result<movement::Moved> move(const Layout& l, const movement::OptQuant& q, const Attrs& a) {
        JANUS_TRY(Dims axes, movement::to_dims(a.axes, "Unsqueeze.axes"));
        JANUS_TRY(Layout v, unsqueeze(l, axes, "Unsqueeze"));
        JANUS_TRY(Dims inserted, normalize_axes(axes.span(), v.rank(), "Unsqueeze.axes"));
        movement::OptQuant r = q;
        if (q) r = numeric::unsqueezed(*q, inserted);
        return movement::Moved{v, r};
    }
};

/// Transpose: output axis j is input axis perm[j]; empty perm = reversed axes. The quantization axis moves to the j
/// with perm[j] == axis (seed B12). Rules: perm-entry-in-range, perm-entry-unique, perm-length-matches-rank.
struct Transpose : single_input_movement<Transpose> {
    static constexpr fixed_string name = "Transpose";
    static constexpr bool keep_view = false;
    struct Attrs {
        std::vector<std::int64_t> perm;
    };
    static constexpr auto schema = attr_schema(attr<"perm">(&Attrs::perm, ints_range{0, max_rank - 1, 0, 6}));
    static Result<movement::Moved> move(const Layout& l, const movement::OptQuant& q, const Attrs& a) {
        std::vector<std::int64_t> perm = a.perm;
        if (perm.empty())
            for (int k = l.rank() - 1; k >= 0; --k) perm.push_back(k);
        JANUS_TRY(Layout v, transpose(l, std::span<const std::int64_t>(perm), "Transpose"));
        movement::OptQuant r = q;
        if (q) r = numeric::transposed(*q, make_permutation(std::span<const std::int64_t>(perm)).value());
        return movement::Moved{v, r};
    }
};

/// Slice (opset 13): starts, ends, optional axes (default 0..n-1) and steps (default 1), ONNX clamping (negative
/// indices count from the end, INT64_MAX / INT64_MIN mean "to the end"), negative steps read backwards.
/// Rules: slice-lengths-match, slice-step-nonzero, axis-in-range, axes-unique, byte-offset-overflow.
struct Slice : single_input_movement<Slice> {
    static constexpr fixed_string name = "Slice";
    static constexpr bool keep_view = false;
    struct Attrs {
        std::vector<std::int64_t> starts, ends, axes, steps;
    };
    static constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
    static constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();
    static constexpr auto schema = attr_schema(attr<"starts">(&Attrs::starts, ints_range{i64_min, i64_max, 0, 6}),
                                               attr<"ends">(&Attrs::ends, ints_range{i64_min, i64_max, 0, 6}),
                                               attr<"axes">(&Attrs::axes, ints_range{-max_rank, max_rank - 1, 0, 6}),
                                               attr<"steps">(&Attrs::steps, ints_range{i64_min, i64_max, 0, 6}));
    static Result<movement::Moved> move(const Layout& l, const movement::OptQuant& q, const Attrs& a) {
        JANUS_TRY(Layout v, slice(l, a.axes, a.starts, a.ends, a.steps, "Slice"));
        movement::OptQuant r = q;
        if (q && q->axis)
            for (std::size_t i = 0; i < a.starts.size(); ++i) {
                JANUS_TRY(int ax, a.axes.empty() ? Result<int>(static_cast<int>(i))
                                                 : normalize_axis(a.axes[i], l.rank(), "Slice.axes"));
                if (ax != *q->axis) continue;
                JANUS_TRY(SliceRange s, normalize_slice(a.starts[i], a.ends[i], a.steps.empty() ? 1 : a.steps[i],
                                                        l.shape[ax], "Slice.steps"));
                r = movement::sliced_quant(*q, ax, s);
            }
        return movement::Moved{v, r};
    }
};

/// Expand (opset 13): output shape = numpy broadcast(input shape, `shape`) (two-way: a 1 in `shape` keeps the
/// input's extent); repeated axes read with stride 0 (seed B5). Rules: broadcast-compatible, extent-nonnegative,
/// elements-at-most-2^40, rank-at-most-6.
struct Expand : single_input_movement<Expand> {
    static constexpr fixed_string name = "Expand";
    static constexpr bool keep_view = false;
    struct Attrs {
        std::vector<std::int64_t> shape;
    };
    static constexpr auto schema = attr_schema(attr<"shape">(&Attrs::shape, ints_range{0, max_elements, 0, 6}));
    static Result<movement::Moved> move(const Layout& l, const movement::OptQuant& q, const Attrs& a) {
        JANUS_TRY(Shape target, make_shape(a.shape, "Expand.shape"));
        JANUS_TRY(Shape s, broadcast_shapes(l.shape, target, "Expand"));
        JANUS_TRY(Layout v, broadcast_to(l, s, "Expand"));
        return movement::Moved{v, movement::expanded_quant(q, l.shape, s)};
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Concat

/// Concat (opset 13): 1 to 64 inputs of one dtype and rank, equal extents except on `axis` (required, negative
/// allowed). Quantization: if every input has the same parameters, infer proposes them; if every input is per-axis
/// along `axis`, infer proposes their concatenation; otherwise the caller must give the output's, and each input is
/// requantized to it while it is copied into its slice of the output (copy_into). Rules: input-count, same-dtype,
/// same-rank, same-quantization-presence, axis-in-range, concat-extents-match, elements-at-most-2^40,
/// output-quantization-required.
struct Concat {
    static constexpr fixed_string name = "Concat";
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 64;
    static constexpr std::int64_t unset = std::numeric_limits<std::int64_t>::min();
    struct Attrs {
        std::int64_t axis = unset;
    };
    struct axis_rule {
        std::string check(std::int64_t v) const {
            if (v == unset) return "is required (ONNX Concat has no default axis)";
            return int_range{-max_rank, max_rank - 1}.check(v);
        }
    };
    static constexpr auto schema = attr_schema(attr<"axis">(&Attrs::axis, axis_rule{}));

    /// What infer knows: the axis and the output type it proposes (quant may be empty for quantized inputs whose
    /// parameters differ: then the caller must give the output's).
    struct Geometry {
        int axis = 0;
        TensorType out;
    };

    /// The plan: where each input lands in the output and with which quantization. Input k is copied into the
    /// output's slice [offsets[k], offsets[k] + n_k) along `axis`, requantized from its own parameters to into[k]
    /// (the output's parameters on that slice) where they differ. The host's copies and the NPU's DMA copies
    /// (emit/movement.hpp lower_concat) both read it.
    struct Plan {
        int axis = 0;
        TensorType out;  ///< the output type (the caller's, checked against the inputs)
        std::vector<std::int64_t> offsets;
        std::vector<movement::OptQuant> into;
    };

    static Result<Plan> plan(std::span<const TensorType> in, const Attrs& a, const TensorType& out,
                             numeric::Rounding) {
        JANUS_TRY(const Geometry g, geometry(in, a));
        if (in[0].quant && !g.out.quant && !out.quant)
            return make_error(op_what<Concat>(), "output", "output-quantization-required",
                              "the inputs have different quantization parameters; give the output's (each input is "
                              "requantized to it)");
        TensorType moved = g.out;
        if (in[0].quant && !moved.quant) moved.quant = out.quant;  // any parameters: every input is requantized
        JANUS_CHECK(movement::check_output(moved, out, op_what<Concat>()));
        Plan p{g.axis, out, {}, {}};
        std::int64_t off = 0;
        for (const TensorType& t : in) {
            const std::int64_t n = t.shape[g.axis];
            p.offsets.push_back(off);
            p.into.push_back(out.quant ? movement::OptQuant(movement::sliced_quant(*out.quant, g.axis,
                                                                                   SliceRange{off, n, 1}))
                                       : std::nullopt);
            off += n;
        }
        return p;
    }

    static Result<Geometry> geometry(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<Concat>(in));
        const TensorType& first = in[0];
        for (std::size_t i = 0; i < in.size(); ++i) {
            const std::string w = op_what<Concat>(static_cast<int>(i));
            JANUS_CHECK(movement::check_input(in[i], w));
            if (in[i].dtype != first.dtype)
                return make_error(w, "", "same-dtype", "input 0 is " + std::string(dtype_name(first.dtype)) +
                                                           ", this one " + std::string(dtype_name(in[i].dtype)));
            if (in[i].shape.size() != first.shape.size())
                return make_error(w, "", "same-rank", "input 0 has rank " + std::to_string(first.shape.size()) +
                                                          ", this one " + std::to_string(in[i].shape.size()));
            if (in[i].quantized() != first.quantized())
                return make_error(w, "", "same-quantization-presence",
                                  "inputs must be all quantized or all unquantized");
        }
        JANUS_TRY(int axis, normalize_axis(a.axis, first.shape.size(), "Concat.axis"));
        std::int64_t total = 0;
        for (std::size_t i = 0; i < in.size(); ++i) {
            for (int k = 0; k < first.shape.size(); ++k)
                if (k != axis && in[i].shape[k] != first.shape[k])
                    return make_error(op_what<Concat>(static_cast<int>(i)), "axis " + std::to_string(k),
                                      "concat-extents-match",
                                      "extent " + std::to_string(in[i].shape[k]) + " differs from input 0's " +
                                          std::to_string(first.shape[k]) + "; only axis " + std::to_string(axis) +
                                          " may differ");
            total += in[i].shape[axis];  // each <= 2^40, at most 64 of them: no overflow
        }
        Shape s = first.shape;
        s[axis] = total;
        JANUS_CHECK(make_shape(s.span(), "Concat.output"));
        Geometry p{axis, TensorType{first.dtype, s, std::nullopt}};
        if (!first.quant) return p;
        bool same = true, along = true;
        for (const auto& t : in) {
            same = same && *t.quant == *first.quant;
            along = along && t.quant->axis == axis && t.quant->dtype == first.quant->dtype;
        }
        if (same && !(first.quant->axis == axis && in.size() > 1)) {
            p.out.quant = first.quant;
        } else if (along) {
            numeric::QuantParams q = *first.quant;
            q.scales.clear();
            q.zero_points.clear();
            for (const auto& t : in) {
                q.scales.insert(q.scales.end(), t.quant->scales.begin(), t.quant->scales.end());
                q.zero_points.insert(q.zero_points.end(), t.quant->zero_points.begin(), t.quant->zero_points.end());
            }
            if (q.scales.empty()) q = movement::per_tensor_of(*first.quant);  // every input empty on `axis`
            p.out.quant = q;
        }
        return p;
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_TRY(Geometry g, geometry(in, a));
        return g.out;
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        std::vector<TensorType> types;
        for (const auto& t : in) types.push_back(type_of(t));
        JANUS_TRY(const Plan p, plan(types, a, out, ctx.rounding));
        Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
        for (std::size_t i = 0; i < in.size(); ++i) {
            const std::int64_t off = p.offsets[i], n = in[i].shape()[p.axis];
            const std::int64_t ax[1] = {p.axis}, st[1] = {off}, en[1] = {off + n};
            JANUS_TRY(Layout l, slice(y.layout, ax, st, en, {}, "Concat"));
            Tensor dst = y.view(l);
            dst.quant = p.into[i];
            JANUS_CHECK(copy_into(in[i], dst, ctx, op_what<Concat>(static_cast<int>(i))));
        }
        return y;
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Pad

/// Pad (opset 13): `pads` = [x1_begin, x2_begin, ..., x1_end, x2_end, ...] (2 * rank entries). A negative pad
/// crops: negative pads are applied FIRST (as ONNX Runtime does), then positive pads extend the cropped axis:
///   constant  the fill `value` (float32: as is; int8/uint8/int32 quantized: quantized with the OUTPUT parameters,
///             round(value / scale) + zp with round half to even and saturation, per channel for per-axis outputs
///             (QuantizeLinear, ops/quant_expr.hpp); unquantized integers: `value` must be an exact integer in range);
///   reflect   mirror without repeating the edge element: pad < cropped extent on both sides (ONNX);
///   edge      repeat the edge element, any pad size (the cropped extent must be >= 1).
/// Built as one index-map table per axis (ops/index_map.hpp). A per-axis quantized input may not be padded along
/// its quantization axis (the new channels would have no parameters), unless it has one channel (-> per-tensor).
/// Rules: pads-length, pad-in-range, pad-crop-within-extent, pad-reflect-less-than-extent, pad-edge-nonempty,
/// pad-value-representable, pad-keeps-quantization-axis, elements-at-most-2^40.
struct Pad {
    static constexpr fixed_string name = "Pad";
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;
    struct Attrs {
        std::vector<std::int64_t> pads;
        std::string mode = "constant";
        float value = 0.0f;
    };
    static constexpr auto schema =
        attr_schema(attr<"pads">(&Attrs::pads, ints_range{-max_elements, max_elements, 0, 2 * max_rank}),
                    attr<"mode">(&Attrs::mode, one_of<3>{{"constant", "reflect", "edge"}}),
                    attr<"value">(&Attrs::value, any_value{}));

    /// Per axis: crop (cb, ce >= 0), then extend (pb, pe >= 0).
    struct AxisPad {
        std::int64_t crop_begin = 0, crop_end = 0, pad_begin = 0, pad_end = 0;
        bool changes() const noexcept { return crop_begin || crop_end || pad_begin || pad_end; }
    };
    /// What infer knows: the per-axis crops and pads and the output type it proposes.
    struct Geometry {
        std::vector<AxisPad> axes;
        TensorType out;
    };

    /// The plan, read by the host's kernel and the NPU's copies (emit/movement.hpp lower_pad): the per-axis crops
    /// and pads, the quantization of the padded values before any requantization (`moved`: the input's, per-tensor
    /// when its one-channel quantization axis is padded) and the output type (the caller's, checked).
    struct Plan {
        std::vector<AxisPad> axes;
        movement::OptQuant moved;
        TensorType out;
    };

    static Result<Plan> plan(std::span<const TensorType> in, const Attrs& a, const TensorType& out,
                             numeric::Rounding) {
        JANUS_CHECK(check_arity<Pad>(in));
        JANUS_TRY(Geometry g, geometry(in[0], a));
        JANUS_CHECK(movement::check_output(g.out, out, op_what<Pad>()));
        // Requantization comes first (Pad keeps axis numbers; the requested axis, if any, must not be padded).
        if (out.quant && out.quant->axis && g.axes[static_cast<std::size_t>(*out.quant->axis)].changes())
            return make_error(op_what<Pad>(), "output", "pad-keeps-quantization-axis",
                              "the requested output is quantized along padded axis " +
                                  std::to_string(*out.quant->axis));
        return Plan{std::move(g.axes), std::move(g.out.quant), out};
    }

    static Result<Geometry> geometry(const TensorType& in, const Attrs& a) {
        JANUS_CHECK(movement::check_input(in, op_what<Pad>(0)));
        const int r = in.shape.size();
        if (a.pads.size() != static_cast<std::size_t>(2 * r))
            return make_error("Pad.pads", "", "pads-length",
                              std::to_string(a.pads.size()) + " pads for a rank-" + std::to_string(r) +
                                  " input; give 2 * rank: all begins, then all ends");
        Geometry p;
        Shape s;
        for (int k = 0; k < r; ++k) {
            const std::int64_t b = a.pads[static_cast<std::size_t>(k)], e = a.pads[static_cast<std::size_t>(k + r)];
            for (auto v : {b, e})
                if (v < -max_elements || v > max_elements)
                    return make_error("Pad.pads", "axis " + std::to_string(k), "pad-in-range",
                                      "pad " + std::to_string(v) + " is outside [-2^40, 2^40]");
            AxisPad ap{std::max<std::int64_t>(-b, 0), std::max<std::int64_t>(-e, 0), std::max<std::int64_t>(b, 0),
                       std::max<std::int64_t>(e, 0)};
            const std::int64_t n = in.shape[k];
            const std::int64_t m = n - ap.crop_begin - ap.crop_end;
            const std::string pos = "axis " + std::to_string(k);
            if (m < 0)
                return make_error("Pad.pads", pos, "pad-crop-within-extent",
                                  "negative pads remove " + std::to_string(ap.crop_begin + ap.crop_end) +
                                      " elements from an axis of extent " + std::to_string(n));
            const bool extends = ap.pad_begin > 0 || ap.pad_end > 0;
            if (a.mode == "reflect" && extends && (ap.pad_begin >= m || ap.pad_end >= m))
                return make_error("Pad.pads", pos, "pad-reflect-less-than-extent",
                                  "reflect pads (" + std::to_string(ap.pad_begin) + ", " + std::to_string(ap.pad_end) +
                                      ") must be smaller than the (cropped) extent " + std::to_string(m));
            if (a.mode == "edge" && extends && m == 0)
                return make_error("Pad.pads", pos, "pad-edge-nonempty", "edge padding of an empty axis has no edge");
            s.push_back(m + ap.pad_begin + ap.pad_end);
            p.axes.push_back(ap);
        }
        JANUS_TRY(Shape out_shape, make_shape(s.span(), "Pad.output"));
        movement::OptQuant q = in.quant;
        if (q && q->axis && p.axes[static_cast<std::size_t>(*q->axis)].changes()) {
            if (q->channels() != 1)
                return make_error("Pad.pads", "axis " + std::to_string(*q->axis), "pad-keeps-quantization-axis",
                                  "cannot pad or crop the per-axis quantization axis " + std::to_string(*q->axis) +
                                      ": the new channels would have no parameters");
            q = movement::per_tensor_of(*q);
        }
        p.out = TensorType{in.dtype, out_shape, q};
        return p;
    }

    /// The coordinate table of one axis of extent n (ONNX Pad, negative pads cropping first).
    static std::vector<std::int64_t> table(const AxisPad& ap, std::int64_t n, const std::string& mode) {
        const std::int64_t m = n - ap.crop_begin - ap.crop_end;
        std::vector<std::int64_t> t(static_cast<std::size_t>(m + ap.pad_begin + ap.pad_end));
        for (std::size_t j = 0; j < t.size(); ++j) {
            std::int64_t x = static_cast<std::int64_t>(j) - ap.pad_begin;  // coordinate in the cropped axis
            if (x < 0 || x >= m) {
                if (mode == "constant") {
                    t[j] = IndexMap::outside;
                    continue;
                }
                if (mode == "edge") x = std::clamp<std::int64_t>(x, 0, m - 1);
                else x = x < 0 ? -x : 2 * (m - 1) - x;  // reflect: one mirror suffices as pad < m
            }
            t[j] = ap.crop_begin + x;
        }
        return t;
    }

    /// The constant as stored in the output (see the struct comment); one value per channel for per-axis outputs.
    static Result<std::vector<double>> fill_values(const TensorType& out, float value) {
        std::vector<double> v;
        return visit_dtype(out.dtype, [&](auto tag) -> Result<std::vector<double>> {
            using T = typename decltype(tag)::type;
            if constexpr (expr::is_float_v<T>) {
                v.push_back(static_cast<double>(value));
            } else {
                if (std::isnan(value))
                    return make_error("Pad.value", "", "pad-value-representable",
                                      "NaN cannot be stored in " + std::string(dtype_name(out.dtype)));
                if (out.quant) {
                    if constexpr (expr::Element<T>) {
                        using namespace expr;
                        for (std::size_t c = 0; c < out.quant->channels(); ++c) {
                            const auto e = quantize_expr<T>(cstf(value), cst(out.quant->zero_point(c)),
                                                            cstf(out.quant->scale(c)));
                            v.push_back(static_cast<double>(e.eval(ScalarArgs{})));
                        }
                    }
                } else {
                    const double d = static_cast<double>(value);
                    // [lowest, max] of T; 2^63 is exact in double, max of int64 is not.
                    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
                    const double hi_excl = std::is_same_v<T, std::int64_t>
                                               ? 9223372036854775808.0
                                               : static_cast<double>(std::numeric_limits<T>::max()) + 1;
                    if (std::trunc(d) != d || d < lo || d >= hi_excl)
                        return make_error("Pad.value", "", "pad-value-representable",
                                          "value " + std::to_string(d) + " is not an integer in the range of " +
                                              std::string(dtype_name(out.dtype)));
                    v.push_back(d);
                }
            }
            return v;
        });
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<Pad>(in));
        JANUS_TRY(Geometry g, geometry(in[0], a));
        return g.out;
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<Pad>(in));
        const std::string what = op_what<Pad>();
        const TensorType t0 = type_of(in[0]);
        JANUS_TRY(const Plan p, plan(std::span<const TensorType>(&t0, 1), a, out, ctx.rounding));
        Tensor src = in[0];
        if (!(out.quant == p.moved)) {
            JANUS_TRY(src, materialize(in[0], TensorType{out.dtype, in[0].shape(), out.quant}, ctx, what));
        }
        Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
        if (y.elements() == 0) return y;
        IndexMap map;
        for (int k = 0; k < in[0].rank(); ++k)
            map.axes.push_back(table(p.axes[static_cast<std::size_t>(k)], in[0].shape()[k], a.mode));
        std::optional<Tensor> fill;
        if (map.has_outside()) {
            JANUS_TRY(std::vector<double> v, fill_values(out, a.value));
            const int ch = out.quant && out.quant->axis ? *out.quant->axis : -1;
            Shape fs = Dims::filled(out.shape.size(), 1);
            if (ch >= 0) fs[ch] = static_cast<std::int64_t>(v.size());
            Tensor f = Tensor::zeros(out.dtype, fs);
            visit_dtype(out.dtype, [&](auto tag) {
                using T = typename decltype(tag)::type;
                for (std::size_t c = 0; c < v.size(); ++c) {
                    Dims idx = Dims::filled(fs.size(), 0);
                    if (ch >= 0) idx[ch] = static_cast<std::int64_t>(c);
                    f.set<T>(idx, static_cast<T>(v[c]));
                }
            });
            JANUS_TRY(Layout fl, broadcast_to(f.layout, out.shape, what + ".value"));
            fill = f.view(fl);
        }
        JANUS_CHECK(run_index_map(src, map, fill, y, what));
        return y;
    }
};

JANUS_OP_INSTANCES(Reshape)
JANUS_OP_INSTANCES(Flatten)
JANUS_OP_INSTANCES(Squeeze)
JANUS_OP_INSTANCES(Unsqueeze)
JANUS_OP_INSTANCES(Transpose)
JANUS_OP_INSTANCES(Expand)
JANUS_OP_INSTANCES(Slice)
JANUS_OP_INSTANCES(Concat)
JANUS_OP_INSTANCES(Pad)

}  // namespace janus::ops
