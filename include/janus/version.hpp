#pragma once
// Janus version. The toolchain identity (seed D3) of every artefact Janus writes starts with this string.
#include <string_view>

namespace janus {

inline constexpr int version_major = 0;
inline constexpr int version_minor = 1;
inline constexpr int version_patch = 0;

/// "MAJOR.MINOR.PATCH"; kept in step with `project(janus VERSION ...)` in CMakeLists.txt (checked by a test).
constexpr std::string_view version_string() noexcept { return "0.1.0"; }

}  // namespace janus
