// io/npy.hpp on malformed files: every file in tests/io/bad_npy (made by make_golden_npy.py) must be refused with
// exactly the message listed in tests/io/bad_npy/expected.txt, and every file there must be listed (a new bad file
// without its expected message fails this test, as does a listed file that is missing).
//
// expected.txt: one message per line, exactly Error::message() of read_npy(bytes, "<file name>"), so each line
// starts with the file name it belongs to ("<file>:byte N: error: ... [rule]"). Empty lines and lines starting with
// '#' are ignored.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <janus/io/npy.hpp>
#include "../support/text_file.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path bad_dir = fs::path(JANUS_SOURCE_DIR) / "tests/io/bad_npy";

/// file name -> expected message, from expected.txt.
std::map<std::string, std::string> expected_messages() {
    std::ifstream in(bad_dir / "expected.txt");
    REQUIRE_MESSAGE(in.good(), "cannot open tests/io/bad_npy/expected.txt");
    std::map<std::string, std::string> out;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.empty() || line[0] == '#') continue;
        const auto colon = line.find(':');
        REQUIRE_MESSAGE(colon != std::string::npos, "expected.txt line " << number << " has no file name: " << line);
        const std::string file = line.substr(0, colon);
        CHECK_MESSAGE(out.count(file) == 0, "expected.txt lists " << file << " twice");
        out[file] = line;
    }
    return out;
}

}  // namespace

TEST_CASE("npy: every malformed file in tests/io/bad_npy is refused with its exact expected message") {
    const auto expected = expected_messages();
    std::set<std::string> on_disk;
    for (const auto& e : fs::directory_iterator(bad_dir)) {
        const std::string name = e.path().filename().string();
        if (name != "expected.txt") on_disk.insert(name);
    }
    for (const auto& entry : expected) {
        const std::string& listed = entry.first;
        CHECK_MESSAGE(on_disk.count(listed) == 1,
                      "expected.txt lists " << listed << ", which is not in tests/io/bad_npy");
    }
    CHECK(on_disk.size() >= 40);
    for (const std::string& file : on_disk) {
        CAPTURE(file);
        const auto it = expected.find(file);
        CHECK_MESSAGE(it != expected.end(), file << " has no expected message in tests/io/bad_npy/expected.txt");
        const auto r = janus::io::read_npy(janus_test::read_bytes(bad_dir / file), file);
        REQUIRE_FALSE(r.ok());
        // The error contract: a file offset as position, an npy- rule, a sentence.
        CHECK(r.error().position.rfind("byte ", 0) == 0);
        CHECK(r.error().rule.rfind("npy-", 0) == 0);
        CHECK_FALSE(r.error().detail.empty());
        if (it != expected.end()) CHECK(r.error().message() == it->second);
    }
}
