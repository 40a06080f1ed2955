#pragma once
// A test's whole file, as text or bytes (empty when the file is missing: the comparison then fails), and the
// golden-update switch. Shared so that no test file keeps its own copy (test executables build as unity TUs).
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace janus_test {

inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// JANUS_UPDATE_GOLDEN=1: the test rewrites its golden files instead of comparing with them.
inline bool update_golden_requested() {
    const char* e = std::getenv("JANUS_UPDATE_GOLDEN");
    return e != nullptr && std::string_view(e) == "1";
}

}  // namespace janus_test
