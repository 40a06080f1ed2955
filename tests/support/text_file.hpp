#pragma once
// A test's whole text file, as bytes in a string (empty when the file is missing: the comparison then fails).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace janus_test {

inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace janus_test
