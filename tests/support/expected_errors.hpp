#pragma once
// Bad-input directories: every file of `dir` must fail with exactly the message listed for it in `dir`/expected.txt
// ("<file>\t<Error::message()>" per line), and every file must be listed. JANUS_UPDATE_GOLDEN=1 rewrites the list
// from what the code reports (review the diff before committing it).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include <janus/core/error.hpp>

namespace janus_test {

/// `decode(path)` returns the error of reading the file, or nullopt when it is (wrongly) accepted.
inline void check_expected_errors(const std::string& dir,
                                  const std::function<std::optional<janus::Error>(const std::string&)>& decode) {
    namespace fs = std::filesystem;
    std::map<std::string, std::string> expected, got;
    {
        std::ifstream f(dir + "/expected.txt", std::ios::binary);
        std::string line;
        while (std::getline(f, line)) {
            const auto tab = line.find('\t');
            REQUIRE(tab != std::string::npos);
            expected[line.substr(0, tab)] = line.substr(tab + 1);
        }
    }
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name == "expected.txt") continue;
        const std::string path = dir + "/" + name;
        CAPTURE(path);
        const auto err = decode(path);
        REQUIRE_MESSAGE(err.has_value(), "the bad input was accepted");
        CHECK_FALSE(err->rule.empty());
        CHECK_FALSE(err->detail.empty());
        got[name] = err->message();
    }
    if (std::getenv("JANUS_UPDATE_GOLDEN") != nullptr) {
        std::ofstream out(dir + "/expected.txt", std::ios::binary);
        for (const auto& [file, message] : got) out << file << '\t' << message << '\n';
        return;
    }
    CHECK(got.size() == expected.size());
    for (const auto& entry : got) {
        const std::string& file = entry.first;
        CAPTURE(file);
        REQUIRE_MESSAGE(expected.count(file) == 1, (dir + "/expected.txt does not list " + file).c_str());
        CHECK(entry.second == expected[file]);
    }
}

}  // namespace janus_test
