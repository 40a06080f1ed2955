// Fuzz target for layout/view.hpp, permutation.hpp and broadcast.hpp.
//
// Decodes a small base Layout (rank <= 4, extents <= 4, element size 1/2/4/8, contiguous or padded, some offset)
// and a sequence of view ops with random, often invalid, parameters. Every op must either return a well-formed
// Error (non-empty input, rule and detail) or a Layout that agrees with an independent reference: the reference
// tracks, for each element of the current view in row-major order, the BASE logical index it stands for, and
// transforms that list with plain loops written from the ONNX/numpy definitions (not from view.hpp's formulas).
// For every element the view's address must equal base.address(reference index) and lie inside the base's
// byte_extent. Validity is also decided independently: an error where the reference finds the parameters valid,
// or a value where they are invalid, is a failure. Reshape refusals are checked against a brute-force oracle (an
// affine address function over the new shape exists iff a no-copy reshape exists).
// Also checked: the A2 identity (index-select before a transpose with the renumbered permutation == after it with
// the original one; the rebuilt inverse undoes it), plan_broadcast against a reference broadcast shape, coalesce
// keeps every input address, for_each_row covers the output once in order, advance_rule says "stays" on stride-0
// axes. A violation prints the failed condition and its line, then calls __builtin_trap(). Build with
// -DJANUS_FUZZ_TRACE (e.g. with fuzz/replay_main.cpp) to print the decoded base layout and every op's result.
//
// Input format (bytes past the end read as 0):
//   byte 0 rank % 5 | rank bytes: extent % 5 | elem size {1,2,4,8}[b % 4] | kind: even = contiguous,
//   odd = padded to 1 + b/2 % 32 bytes | offset: (b % 4) * elem size | then up to 16 ops, each an opcode byte % 8
//   (transpose, slice, broadcast, squeeze, unsqueeze, reshape, a2, plan) followed by its parameter bytes, decoded
//   in op_<name>() below. Integer parameters (Reader::param) are b % 17 - 8, or INT64_MIN/MAX-style extremes for
//   b >= 0xF8. fuzz/make_seeds.py (seeds_layout_views) writes each seed as the ops it performs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

#include <janus/layout/broadcast.hpp>
#include <janus/layout/iterate.hpp>
#include <janus/layout/permutation.hpp>
#include <janus/layout/view.hpp>

using namespace janus;

namespace {

constexpr std::int64_t max_view_elements = 4096;

// A violated property names itself (condition and line) on stderr, then traps. Rebuild with -DJANUS_FUZZ_TRACE and
// replay the crashing input to see the decoded base layout and every op's result.
#define FUZZ_CHECK(cond)                                                                             \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            std::fprintf(stderr, "layout_views: violated `%s` at fuzz/layout_views.cpp:%d\n", #cond, \
                         __LINE__);                                                                  \
            __builtin_trap();                                                                        \
        }                                                                                            \
    } while (false)

struct Reader {
    const std::uint8_t* p;
    std::size_t n;
    std::size_t i = 0;
    std::uint8_t byte() { return i < n ? p[i++] : 0; }
    bool done() const { return i >= n; }
    /// Mostly small values in [-8, 8]; bytes >= 0xF8 give the extremes a slice must clamp without overflow.
    std::int64_t param() {
        static constexpr std::int64_t extremes[8] = {
            std::numeric_limits<std::int64_t>::min(),     std::numeric_limits<std::int64_t>::max(),
            std::numeric_limits<std::int64_t>::min() + 1, std::numeric_limits<std::int64_t>::max() - 1,
            std::int64_t{1} << 40,                        -(std::int64_t{1} << 40),
            std::int64_t{1} << 62,                        -(std::int64_t{1} << 62)};
        const std::uint8_t b = byte();
        if (b >= 0xF8) return extremes[b - 0xF8];
        return static_cast<std::int64_t>(b % 17) - 8;
    }
};

void check_error(const Error& e) { FUZZ_CHECK(!e.input.empty() && !e.rule.empty() && !e.detail.empty()); }

/// What an op did, for the JANUS_FUZZ_TRACE build: nullopt on success, else the (checked) error.
using Outcome = std::optional<Error>;
Outcome refused(const Error& e) {
    check_error(e);
    return e;
}

// --- plain helpers, independent of iterate.hpp ------------------------------------------------------------------
std::int64_t count(const Shape& s) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}
std::vector<Dims> indices(const Shape& s) {
    std::vector<Dims> r;
    if (count(s) == 0) return r;
    Dims idx = Dims::filled(s.size(), 0);
    for (;;) {
        r.push_back(idx);
        int k = s.size() - 1;
        for (; k >= 0; --k) {
            if (++idx[k] < s[k]) break;
            idx[k] = 0;
        }
        if (k < 0) return r;
    }
}
std::int64_t flat(const Dims& idx, const Shape& s) {
    std::int64_t f = 0;
    for (int k = 0; k < s.size(); ++k) f = f * s[k] + idx[k];
    return f;
}
std::int64_t norm_axis(std::int64_t a, int rank) { return a < 0 ? a + rank : a; }
bool axis_ok(std::int64_t a, int rank) { return a >= -rank && a < rank; }

// --- the reference: base index of every element of the current view, row-major --------------------------------
struct Ref {
    Shape shape;
    std::vector<Dims> src;

    template <class Map>  // map(new index) -> index into the current view
    Ref remap(const Shape& new_shape, Map map) const {
        Ref r{new_shape, {}};
        for (const auto& i : indices(new_shape)) r.src.push_back(src[static_cast<std::size_t>(flat(map(i), shape))]);
        return r;
    }
};

void verify(const Layout& base, const Layout& v, const Ref& ref) {
    FUZZ_CHECK(v.shape == ref.shape);
    FUZZ_CHECK(v.rank() == v.strides.size());
    FUZZ_CHECK(v.elem_size == base.elem_size);
    const auto [lo, hi] = base.byte_extent();
    const auto all = indices(v.shape);
    FUZZ_CHECK(all.size() == ref.src.size());
    for (std::size_t f = 0; f < all.size(); ++f) {
        const std::int64_t a = v.address(all[f]);
        FUZZ_CHECK(a == base.address(ref.src[f]));
        FUZZ_CHECK(a >= lo && a + v.elem_size <= hi);
    }
    if (!all.empty()) {
        const auto [vlo, vhi] = v.byte_extent();
        FUZZ_CHECK(vlo >= lo && vhi <= hi);
    }
}

// Brute-force: a no-copy reshape of `v` to `t` exists iff addresses in row-major order are affine in the new index.
bool affine_reshape_exists(const Layout& v, const Shape& t) {
    std::vector<std::int64_t> a;
    for (const auto& i : indices(v.shape)) a.push_back(v.address(i));
    if (a.empty()) return true;
    Dims st = Dims::filled(t.size(), 0);
    for (int k = 0; k < t.size(); ++k)
        if (t[k] > 1) {
            Dims e = Dims::filled(t.size(), 0);
            e[k] = 1;
            st[k] = a[static_cast<std::size_t>(flat(e, t))] - a[0];
        }
    const auto ti = indices(t);
    for (std::size_t f = 0; f < ti.size(); ++f) {
        std::int64_t x = a[0];
        for (int k = 0; k < t.size(); ++k) x += ti[f][k] * st[k];
        if (x != a[f]) return false;
    }
    return true;
}

// Per-axis slice selection by membership (ONNX: adjust negatives once, clamp by step sign, then step from start).
std::vector<std::int64_t> slice_axis(std::int64_t start, std::int64_t end, std::int64_t step, std::int64_t dim) {
    std::vector<std::int64_t> r;
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
        start = std::clamp<std::int64_t>(start, 0, dim);
        end = std::clamp<std::int64_t>(end, 0, dim);
        for (std::int64_t x = 0; x < dim; ++x)
            if (x >= start && x < end && (x - start) % step == 0) r.push_back(x);
    } else {
        if (dim == 0) return r;
        start = std::clamp<std::int64_t>(start, 0, dim - 1);
        end = std::clamp<std::int64_t>(end, -1, dim - 1);
        for (std::int64_t x = dim - 1; x >= 0; --x)
            if (x <= start && x > end && (start - x) % step == 0) r.push_back(x);
    }
    return r;
}

// A valid random permutation of 0..n-1 (Fisher-Yates driven by input bytes).
Dims random_perm(Reader& in, int n) {
    Dims p = identity_permutation(n);
    for (int i = n - 1; i > 0; --i) std::swap(p[i], p[static_cast<int>(in.byte() % (i + 1))]);
    return p;
}

// --- ops ---------------------------------------------------------------------------------------------------------
Outcome op_transpose(Reader& in, Layout& v, Ref& ref) {
    const int r = v.rank();
    Dims perm;
    std::vector<std::int64_t> raw;
    if (in.byte() % 4 != 0) {
        perm = random_perm(in, r);
        raw.assign(perm.begin(), perm.end());
    } else {
        const int n = in.byte() % 8;
        for (int i = 0; i < n; ++i) raw.push_back(static_cast<std::int64_t>(in.byte() % 9) - 1);
    }
    bool valid = static_cast<int>(raw.size()) == r;
    for (std::size_t i = 0; valid && i < raw.size(); ++i) {
        valid = raw[i] >= 0 && raw[i] < r;
        for (std::size_t k = 0; valid && k < i; ++k) valid = raw[k] != raw[i];
    }
    const auto res = transpose(v, raw);
    FUZZ_CHECK(res.ok() == valid);
    if (!res.ok()) return refused(res.error());
    Shape ns;
    for (auto p : raw) ns.push_back(ref.shape[static_cast<int>(p)]);
    ref = ref.remap(ns, [&](const Dims& o) {
        Dims i = Dims::filled(r, 0);
        for (int j = 0; j < r; ++j) i[static_cast<int>(raw[static_cast<std::size_t>(j)])] = o[j];
        return i;
    });
    v = res.value();
    return std::nullopt;
}

Outcome op_slice(Reader& in, Layout& v, Ref& ref) {
    const int r = v.rank();
    const std::uint8_t mode = in.byte();
    const std::size_t n = in.byte() % (r + 2);
    std::vector<std::int64_t> axes, starts, ends, steps;
    const std::size_t ends_n = (mode & 0x30) == 0x30 ? n + 1 : n;  // sometimes mismatched
    for (std::size_t i = 0; i < n; ++i) starts.push_back(in.param());
    for (std::size_t i = 0; i < ends_n; ++i) ends.push_back(in.param());
    if (mode & 1)
        for (std::size_t i = 0; i < n; ++i) axes.push_back(static_cast<std::int64_t>(in.byte() % (2 * r + 3)) - r - 1);
    if (mode & 2)
        for (std::size_t i = 0; i < n; ++i) steps.push_back(in.param());

    // Independent validity.
    bool valid = ends.size() == n && (axes.empty() || axes.size() == n) && (steps.empty() || steps.size() == n);
    if (valid && axes.empty()) valid = n <= static_cast<std::size_t>(r);
    std::vector<std::int64_t> ax;
    for (std::size_t i = 0; valid && i < n; ++i) {
        const std::int64_t a = axes.empty() ? static_cast<std::int64_t>(i) : axes[i];
        valid = axis_ok(a, r);
        if (valid) ax.push_back(norm_axis(a, r));
        for (std::size_t k = 0; valid && k < i; ++k) valid = ax[k] != ax[i];
        if (valid && !steps.empty()) valid = steps[i] != 0;
    }
    const auto res = slice(v, axes, starts, ends, steps);
    FUZZ_CHECK(res.ok() == valid);
    if (!res.ok()) return refused(res.error());

    std::vector<std::vector<std::int64_t>> pick(static_cast<std::size_t>(r));
    for (int k = 0; k < r; ++k)
        for (std::int64_t x = 0; x < ref.shape[k]; ++x) pick[static_cast<std::size_t>(k)].push_back(x);
    for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(ax[i]);
        pick[k] = slice_axis(starts[i], ends[i], steps.empty() ? 1 : steps[i], ref.shape[static_cast<int>(k)]);
    }
    Shape ns;
    for (const auto& p : pick) ns.push_back(static_cast<std::int64_t>(p.size()));
    ref = ref.remap(ns, [&](const Dims& o) {
        Dims i;
        for (int k = 0; k < r; ++k) i.push_back(pick[static_cast<std::size_t>(k)][static_cast<std::size_t>(o[k])]);
        return i;
    });
    v = res.value();
    return std::nullopt;
}

Outcome op_broadcast(Reader& in, Layout& v, Ref& ref) {
    const int r = v.rank();
    const int grow = in.byte() % 3;
    const int shrink = in.byte() % 8 == 0 ? 1 : 0;  // sometimes a target rank below the input's
    const int R = std::min(max_rank, r + grow) - shrink;
    if (R < 0) return std::nullopt;
    Shape target;
    for (int j = 0; j < R; ++j) {
        const int k = j - (R - r);
        const std::uint8_t b = in.byte();
        target.push_back(k >= 0 && b % 4 != 0 ? v.shape[k] : static_cast<std::int64_t>(b % 5));
    }
    if (count(target) > max_view_elements) return std::nullopt;
    bool valid = R >= r;
    for (int j = 0; valid && j < R; ++j) {
        const int k = j - (R - r);
        if (k >= 0) valid = v.shape[k] == target[j] || v.shape[k] == 1;
    }
    const auto res = broadcast_to(v, target);
    FUZZ_CHECK(res.ok() == valid);
    if (!res.ok()) return refused(res.error());
    ref = ref.remap(target, [&](const Dims& o) {
        Dims i;
        for (int k = 0; k < r; ++k) i.push_back(ref.shape[k] == 1 ? 0 : o[k + (R - r)]);
        return i;
    });
    // Seed B5: the advance rule read off the layout says "stays" on every axis the input did not supply.
    const Dims adv = advance_rule(res.value());
    for (int j = 0; j < R; ++j) {
        const int k = j - (R - r);
        if (k < 0 || (v.shape[k] == 1 && target[j] != 1)) FUZZ_CHECK(adv[j] == 0);
    }
    v = res.value();
    return std::nullopt;
}

Outcome op_squeeze(Reader& in, Layout& v, Ref& ref) {
    const int r = v.rank();
    const int n = in.byte() % 3;
    Dims axes;
    for (int i = 0; i < n; ++i) axes.push_back(static_cast<std::int64_t>(in.byte() % (2 * r + 3)) - r - 1);
    bool valid = true;
    std::vector<std::int64_t> rm;
    if (axes.empty()) {
        for (int k = 0; k < r; ++k)
            if (v.shape[k] == 1) rm.push_back(k);
    } else {
        for (int i = 0; valid && i < n; ++i) {
            valid = axis_ok(axes[i], r);
            if (!valid) break;
            const std::int64_t a = norm_axis(axes[i], r);
            valid = std::find(rm.begin(), rm.end(), a) == rm.end() && v.shape[static_cast<int>(a)] == 1;
            rm.push_back(a);
        }
    }
    const auto res = squeeze(v, axes);
    FUZZ_CHECK(res.ok() == valid);
    if (!res.ok()) return refused(res.error());
    Shape ns;
    for (int k = 0; k < r; ++k)
        if (std::find(rm.begin(), rm.end(), k) == rm.end()) ns.push_back(v.shape[k]);
    ref = ref.remap(ns, [&](const Dims& o) {
        Dims i;
        int j = 0;
        for (int k = 0; k < r; ++k) i.push_back(std::find(rm.begin(), rm.end(), k) != rm.end() ? 0 : o[j++]);
        return i;
    });
    v = res.value();
    return std::nullopt;
}

Outcome op_unsqueeze(Reader& in, Layout& v, Ref& ref) {
    const int r = v.rank();
    const int n = in.byte() % 4;
    const int R = r + n;
    Dims axes;
    for (int i = 0; i < n; ++i) axes.push_back(static_cast<std::int64_t>(in.byte() % (2 * R + 3)) - R - 1);
    bool valid = R <= max_rank;
    std::vector<std::int64_t> ins;
    for (int i = 0; valid && i < n; ++i) {
        valid = axis_ok(axes[i], R);
        if (!valid) break;
        const std::int64_t a = norm_axis(axes[i], R);
        valid = std::find(ins.begin(), ins.end(), a) == ins.end();
        ins.push_back(a);
    }
    const auto res = unsqueeze(v, axes);
    FUZZ_CHECK(res.ok() == valid);
    if (!res.ok()) return refused(res.error());
    Shape ns;
    int k = 0;
    for (int j = 0; j < R; ++j) ns.push_back(std::find(ins.begin(), ins.end(), j) != ins.end() ? 1 : v.shape[k++]);
    ref = ref.remap(ns, [&](const Dims& o) {
        Dims i;
        for (int j = 0; j < R; ++j)
            if (std::find(ins.begin(), ins.end(), j) == ins.end()) i.push_back(o[j]);
        return i;
    });
    // A contiguous source stays contiguous (inserted axes get natural strides).
    if (v.is_contiguous()) FUZZ_CHECK(res.value().is_contiguous());
    v = res.value();
    return std::nullopt;
}

Outcome op_reshape(Reader& in, Layout& v, Ref& ref) {
    const std::uint8_t mode = in.byte();
    const int n = in.byte() % 6;
    std::vector<std::int64_t> req;
    for (int i = 0; i < n; ++i) {
        const std::uint8_t b = in.byte();
        req.push_back(b % 8 == 0 ? 0 : b % 8 == 1 ? -1 : b % 8 == 2 ? -2 : static_cast<std::int64_t>(b % 7));
    }
    const bool allowzero = mode & 1;
    const auto shp = infer_reshape_shape(v.shape, req, allowzero);
    if (!shp.ok()) {
        check_error(shp.error());
        // Must succeed when every entry is a literal positive extent with the right product.
        bool plain = true;
        std::int64_t prod = 1;
        for (auto x : req) {
            plain = plain && x > 0;
            prod *= x;
        }
        FUZZ_CHECK(!(plain && prod == v.elements()));
        return shp.error();
    }
    const Shape t = shp.value();
    FUZZ_CHECK(t.size() == n && count(t) == v.elements());
    for (int i = 0; i < n; ++i) {
        const std::int64_t x = req[static_cast<std::size_t>(i)];
        if (x > 0) FUZZ_CHECK(t[i] == x);
        if (x == 0) FUZZ_CHECK(t[i] == (allowzero ? 0 : v.shape[i]));
    }
    const auto res = reshape(v, t);
    const bool possible = affine_reshape_exists(v, t);
    FUZZ_CHECK(res.ok() == possible);
    if (v.is_contiguous()) FUZZ_CHECK(res.ok());
    if (!res.ok()) {
        check_error(res.error());
        FUZZ_CHECK(res.error().rule == "reshape-needs-data-movement");
        return res.error();
    }
    ref.shape = t;  // same row-major element order: the list is unchanged
    v = res.value();
    return std::nullopt;
}

// Seed A2: removing axes before or after a transpose gives the same view when the permutation is renumbered.
Outcome op_a2(Reader& in, const Layout& v) {
    const int r = v.rank();
    if (r == 0 || count(v.shape) == 0) return std::nullopt;
    const Dims perm = random_perm(in, r);
    const std::uint8_t mask = in.byte();
    Dims removed;
    for (int k = 0; k < r; ++k)
        if (mask & (1 << k)) removed.push_back(k);
    auto pick0 = [](const Layout& l, const Dims& axes) {  // index 0 of each axis, then drop it
        std::vector<std::int64_t> ax(axes.begin(), axes.end()), st(ax.size(), 0), en(ax.size(), 1);
        const auto s = slice(l, ax, st, en, {});
        FUZZ_CHECK(s.ok());
        if (axes.empty()) return s.value();
        const auto q = squeeze(s.value(), axes);
        FUZZ_CHECK(q.ok());
        return q.value();
    };
    const auto t = transpose(v, perm);
    FUZZ_CHECK(t.ok());
    const Layout after = pick0(t.value(), removed_output_axes(perm, removed));
    const Dims p2 = permutation_after_removing(perm, removed);
    const auto before = transpose(pick0(v, removed), p2);
    FUZZ_CHECK(before.ok());
    FUZZ_CHECK(before.value().shape == after.shape);
    for (const auto& i : indices(after.shape)) FUZZ_CHECK(before.value().address(i) == after.address(i));
    FUZZ_CHECK(compose(p2, inverse_after_removing(perm, removed)) == identity_permutation(p2.size()));
    FUZZ_CHECK(inverse(p2) == inverse_after_removing(perm, removed));
    return std::nullopt;
}

// Broadcast the view against a second contiguous layout, coalesce, and check addresses are unchanged.
Outcome op_plan(Reader& in, const Layout& v) {
    const int r = std::min<int>(in.byte() % 5, max_rank);
    Shape s;
    for (int j = 0; j < r; ++j) {
        const int k = j - (r - v.rank());
        const std::uint8_t b = in.byte();
        s.push_back(k >= 0 && b % 3 != 0 ? (b % 3 == 1 ? v.shape[k] : 1) : static_cast<std::int64_t>(b % 4));
    }
    const Layout other = Layout::contiguous(s, 1 + in.byte() % 4);
    const int R = std::max(r, v.rank());
    bool valid = true;
    Shape out;
    for (int j = 0; j < R; ++j) {
        const int a = j - (R - v.rank()), b = j - (R - r);
        const std::int64_t ea = a >= 0 ? v.shape[a] : 1, eb = b >= 0 ? s[b] : 1;
        valid = valid && (ea == eb || ea == 1 || eb == 1);
        out.push_back(ea == 1 ? eb : ea);
    }
    const Layout both[2] = {v, other};
    const auto plan = plan_broadcast(both);
    FUZZ_CHECK(plan.ok() == valid);
    if (!plan.ok()) return refused(plan.error());
    FUZZ_CHECK(plan.value().out == out);
    if (count(out) > max_view_elements) return std::nullopt;
    BroadcastPlan c = plan.value();
    coalesce(c);
    FUZZ_CHECK(c.out.size() <= out.size() && count(c.out) == count(out));
    const auto before = indices(out), after = indices(c.out);
    FUZZ_CHECK(before.size() == after.size());
    for (std::size_t i = 0; i < 2; ++i) {
        FUZZ_CHECK(c.inputs[i].shape == c.out);
        for (std::size_t f = 0; f < before.size(); ++f)
            FUZZ_CHECK(c.inputs[i].address(after[f]) == plan.value().inputs[i].address(before[f]));
    }
    // for_each_row visits the rows of the coalesced output in order, covering every element once.
    std::int64_t seen = 0;
    for_each_row(c.out, [&](const Dims& idx, std::int64_t len) {
        FUZZ_CHECK(idx.size() == c.out.size());
        if (!idx.empty()) FUZZ_CHECK(idx[idx.size() - 1] == 0);
        FUZZ_CHECK(flat(idx, c.out) == seen);
        seen += len;
    });
    FUZZ_CHECK(seen == count(c.out));
    return std::nullopt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Reader in{data, size};
    const int rank = in.byte() % 5;
    Shape shape;
    for (int k = 0; k < rank; ++k) shape.push_back(in.byte() % 5);
    static constexpr std::int64_t elem_sizes[4] = {1, 2, 4, 8};
    const std::int64_t elem = elem_sizes[in.byte() % 4];
    const std::uint8_t kind = in.byte();
    const std::int64_t offset = in.byte() % 4 * elem;
    const Layout base = (kind % 2 == 0 ? Layout::contiguous(shape, elem)
                                       : Layout::padded(shape, elem, 1 + kind / 2 % 32))
                            .with_offset(offset);
    Ref ref{shape, indices(shape)};
    Layout v = base;
    verify(base, v, ref);
#ifdef JANUS_FUZZ_TRACE
    std::fprintf(stderr, "  base      -> %s\n", base.str().c_str());
#endif
    for (int step = 0; step < 16 && !in.done(); ++step) {
        const int op = in.byte() % 8;
        Outcome out;
        switch (op) {
            case 0: out = op_transpose(in, v, ref); break;
            case 1: out = op_slice(in, v, ref); break;
            case 2: out = op_broadcast(in, v, ref); break;
            case 3: out = op_squeeze(in, v, ref); break;
            case 4: out = op_unsqueeze(in, v, ref); break;
            case 5: out = op_reshape(in, v, ref); break;
            case 6: out = op_a2(in, v); break;
            default: out = op_plan(in, v); break;
        }
        verify(base, v, ref);
#ifdef JANUS_FUZZ_TRACE
        static const char* const names[8] = {"transpose", "slice", "broadcast", "squeeze",
                                              "unsqueeze", "reshape", "a2",        "plan"};
        std::fprintf(stderr, "  %-9s -> %s\n", names[op], out ? out->message().c_str() : v.str().c_str());
#else
        (void)out;
#endif
    }
    return 0;
}
