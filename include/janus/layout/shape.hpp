#pragma once
// Logical shapes: rank <= 6, every extent >= 0. A Shape says nothing about memory; see layout.hpp.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include <janus/core/error.hpp>
#include <janus/core/size.hpp>

namespace janus {

/// A fixed-capacity list of up to max_rank int64 values (extents, strides, axes, permutations).
class Dims {
public:
    constexpr Dims() = default;
    constexpr Dims(std::initializer_list<std::int64_t> v) {
        JANUS_ASSERT(v.size() <= max_rank);
        for (auto x : v) d_[static_cast<std::size_t>(n_++)] = x;
    }
    static constexpr Dims filled(int n, std::int64_t v) {
        Dims r;
        JANUS_ASSERT(n >= 0 && n <= max_rank);
        for (int i = 0; i < n; ++i) r.d_[static_cast<std::size_t>(i)] = v;
        r.n_ = n;
        return r;
    }
    constexpr int size() const noexcept { return n_; }
    constexpr bool empty() const noexcept { return n_ == 0; }
    constexpr std::int64_t& operator[](int i) noexcept { JANUS_ASSERT(i >= 0 && i < n_); return d_[static_cast<std::size_t>(i)]; }
    constexpr std::int64_t operator[](int i) const noexcept { JANUS_ASSERT(i >= 0 && i < n_); return d_[static_cast<std::size_t>(i)]; }
    constexpr void push_back(std::int64_t v) { JANUS_ASSERT(n_ < max_rank); d_[static_cast<std::size_t>(n_++)] = v; }
    constexpr void insert(int at, std::int64_t v) {
        JANUS_ASSERT(n_ < max_rank && at >= 0 && at <= n_);
        for (int i = n_; i > at; --i) d_[static_cast<std::size_t>(i)] = d_[static_cast<std::size_t>(i - 1)];
        d_[static_cast<std::size_t>(at)] = v;
        ++n_;
    }
    constexpr void erase(int at) {
        JANUS_ASSERT(at >= 0 && at < n_);
        for (int i = at; i + 1 < n_; ++i) d_[static_cast<std::size_t>(i)] = d_[static_cast<std::size_t>(i + 1)];
        --n_;
    }
    constexpr const std::int64_t* begin() const noexcept { return d_.data(); }
    constexpr const std::int64_t* end() const noexcept { return d_.data() + n_; }
    constexpr std::int64_t* begin() noexcept { return d_.data(); }
    constexpr std::int64_t* end() noexcept { return d_.data() + n_; }
    constexpr std::span<const std::int64_t> span() const noexcept { return {d_.data(), static_cast<std::size_t>(n_)}; }
    constexpr bool operator==(const Dims& o) const noexcept {
        if (n_ != o.n_) return false;
        for (int i = 0; i < n_; ++i)
            if (d_[static_cast<std::size_t>(i)] != o.d_[static_cast<std::size_t>(i)]) return false;
        return true;
    }
    /// "[2,3,4]"
    std::string str() const {
        std::string s = "[";
        for (int i = 0; i < n_; ++i) s += (i ? "," : "") + std::to_string(d_[static_cast<std::size_t>(i)]);
        return s + "]";
    }

private:
    std::array<std::int64_t, max_rank> d_{};
    int n_ = 0;
};

/// Logical extents. Construct untrusted shapes with make_shape, which applies the size policy below.
using Shape = Dims;

/// The element count of a shape that passed the policy (unchecked: use checked_size for anything untrusted).
inline std::int64_t element_count(const Shape& s) noexcept {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

/// Validate an untrusted shape against the policy (checked_size) and return it.
inline Result<Shape> make_shape(std::span<const std::int64_t> extents, const std::string& what = "shape") {
    JANUS_CHECK(checked_size(extents, 1, what));
    Shape s;
    for (const std::int64_t d : extents) s.push_back(d);
    return s;
}

/// Normalize a possibly negative axis (ONNX style, -rank <= axis < rank) to [0, rank).
inline Result<int> normalize_axis(std::int64_t axis, int rank, const std::string& what = "axis") {
    if (axis < -rank || axis >= rank)
        return make_error(what, "", "axis-in-range",
                          "axis " + std::to_string(axis) + " is outside [" + std::to_string(-rank) + ", " +
                              std::to_string(rank) + ") for rank " + std::to_string(rank));
    return static_cast<int>(axis < 0 ? axis + rank : axis);
}

/// Validate an untrusted list of axes (ONNX style, each in [-rank, rank), none twice) and return them normalized to
/// [0, rank) and sorted ascending. Errors name `what` and the list position ("index 1").
inline Result<Dims> normalize_axes(std::span<const std::int64_t> axes, int rank, const std::string& what = "axes") {
    Dims out;
    for (std::size_t i = 0; i < axes.size(); ++i) {
        auto a = normalize_axis(axes[i], rank, what);
        if (!a.ok()) {
            Error e = a.error();
            e.position = "index " + std::to_string(i);
            return e;
        }
        for (auto b : out)
            if (b == *a)
                return make_error(what, "index " + std::to_string(i), "axes-unique",
                                  "axis " + std::to_string(axes[i]) + " names axis " + std::to_string(*a) +
                                      ", which an earlier entry already names");
        // At most `rank` <= max_rank distinct valid axes exist, so a 7th entry fails one of the checks above.
        int at = out.size();
        while (at > 0 && out[at - 1] > *a) --at;
        out.insert(at, *a);
    }
    return out;
}

}  // namespace janus
