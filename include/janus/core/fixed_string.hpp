#pragma once
// A string usable as a C++20 class-type template parameter: `op<"Add">`, `attr<"alpha", float>`.
// (g++ 12 rejects BOOST_HANA_STRING inside class bodies; this works with g++ 12 and clang 14.)
#include <algorithm>
#include <cstddef>
#include <string_view>

namespace janus {

template <std::size_t N>
struct fixed_string {
    char chars[N]{};
    constexpr fixed_string(const char (&s)[N]) noexcept { std::copy_n(s, N, chars); }  // NOLINT: implicit by design
    constexpr std::string_view view() const noexcept { return {chars, N - 1}; }
    constexpr operator std::string_view() const noexcept { return view(); }
    static constexpr std::size_t size() noexcept { return N - 1; }
    template <std::size_t M>
    constexpr bool operator==(const fixed_string<M>& o) const noexcept { return view() == o.view(); }
};

}  // namespace janus
