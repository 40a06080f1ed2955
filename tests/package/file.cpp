// Package files (janus/package/file.hpp): the atomic writer (seed D7) and the file reader. A failed write leaves no
// temporary file and leaves an existing package exactly as it was; a successful one replaces it whole.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <janus/package/file.hpp>

#include "../support/check_rule.hpp"
#include "sample.hpp"
#include "../support/text_file.hpp"

using namespace janus;
using namespace janus::package;
using Bytes = std::vector<std::uint8_t>;
namespace fs = std::filesystem;

namespace {

/// A fresh, empty directory for one test case, removed afterwards.
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& name)
        : path(fs::temp_directory_path() / ("janus_package_" + name + "_" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
    std::set<std::string> entries() const {
        std::set<std::string> s;
        for (const auto& e : fs::directory_iterator(path)) s.insert(e.path().filename().string());
        return s;
    }
};

void put(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

Package invalid() {
    Package p = testing::sample();
    p.inputs[0].shape[1] = -1;
    return p;
}

}  // namespace

TEST_CASE("a successful write creates the package, or replaces an existing one whole") {
    TempDir d("write_ok");
    const fs::path target = d.path / "model.jpk";
    REQUIRE(write_package_file(target.string(), testing::minimal()).ok());
    CHECK(janus_test::read_bytes(target) == write_package(testing::minimal()).value());
    CHECK(d.entries() == std::set<std::string>{"model.jpk"});
    REQUIRE(write_package_file(target.string(), testing::sample()).ok());
    CHECK(janus_test::read_bytes(target) == write_package(testing::sample()).value());
    CHECK(d.entries() == std::set<std::string>{"model.jpk"});
    const auto r = read_package_file(target.string());
    REQUIRE(r.ok());
    CHECK(*r == testing::sample());
    // the mode follows the umask like any new file (not mkstemp's 0600)
    const auto perms = fs::status(target).permissions();
    CHECK((perms & fs::perms::owner_read) != fs::perms::none);
    CHECK((perms & fs::perms::owner_write) != fs::perms::none);
}

TEST_CASE("an invalid package is refused before anything touches the disk") {
    TempDir d("write_invalid");
    const fs::path target = d.path / "model.jpk";
    auto r = write_package_file(target.string(), invalid());
    CHECK_RULE(r, "io-dim");
    CHECK(r.error().input == target.string());
    CHECK(d.entries().empty());
    put(target, "previous package");
    r = write_package_file(target.string(), invalid());
    CHECK_RULE(r, "io-dim");
    CHECK(d.entries() == std::set<std::string>{"model.jpk"});
    const Bytes old = janus_test::read_bytes(target);
    CHECK(std::string(old.begin(), old.end()) == "previous package");
}

TEST_CASE("a directory that does not exist: an error, and nothing is created") {
    TempDir d("write_nodir");
    const fs::path target = d.path / "missing" / "model.jpk";
    const auto r = write_package_file(target.string(), testing::sample());
    CHECK_RULE(r, "package-write");
    CHECK(r.error().detail.find("temporary") != std::string::npos);
    CHECK(d.entries().empty());
    CHECK_FALSE(fs::exists(d.path / "missing"));
}

TEST_CASE("a target that is a directory is refused and leaves no temporary file") {
    TempDir d("write_rename");
    fs::create_directories(d.path / "model.jpk" / "inside");
    const auto r = write_package_file((d.path / "model.jpk").string(), testing::sample());
    CHECK_RULE(r, "package-write");
    CHECK(r.error().detail == "this is a directory, not a file");
    CHECK(d.entries() == std::set<std::string>{"model.jpk"});
    CHECK(fs::is_directory(d.path / "model.jpk" / "inside"));
}

TEST_CASE("a write that fails midway (file size limit) leaves the existing package untouched and no temporary") {
    TempDir d("write_efbig");
    const fs::path target = d.path / "model.jpk";
    REQUIRE(write_package_file(target.string(), testing::minimal()).ok());
    const Bytes before = janus_test::read_bytes(target);
    REQUIRE(write_package(testing::sample()).value().size() > 1024);
    // RLIMIT_FSIZE makes write() fail with EFBIG past 1 KiB (SIGXFSZ ignored), the way a full disk would
    rlimit old{};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    const auto handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 1024;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
    const auto r = write_package_file(target.string(), testing::sample());
    REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
    std::signal(SIGXFSZ, handler);
    CHECK_RULE(r, "package-write");
    CHECK(r.error().detail.find("cannot write") != std::string::npos);
    CHECK(janus_test::read_bytes(target) == before);
    CHECK(d.entries() == std::set<std::string>{"model.jpk"});
    CHECK(read_package_file(target.string()).value() == testing::minimal());
}

TEST_CASE("a relative path writes into the current directory") {
    TempDir d("write_relative");
    const fs::path cwd = fs::current_path();
    fs::current_path(d.path);
    const auto r = write_package_file("model.jpk", testing::minimal());
    fs::current_path(cwd);
    REQUIRE(r.ok());
    CHECK(d.entries() == std::set<std::string>{"model.jpk"});
    CHECK_RULE(write_package_file((d.path / "").string(), testing::minimal()), "package-write");
}

TEST_CASE("reading: a missing file, a directory and a corrupted file are errors naming the path") {
    TempDir d("read");
    auto r = read_package_file((d.path / "none.jpk").string());
    CHECK_RULE(r, "package-read");
    CHECK(r.error().input == (d.path / "none.jpk").string());
    CHECK_RULE(read_package_file(d.path.string()), "package-read");
    put(d.path / "text.jpk", std::string("JANUSPKG\x01\0\0\0\x60\0\0\0 header cut", 27));
    r = read_package_file((d.path / "text.jpk").string());
    CHECK_RULE(r, "header-truncated");
    CHECK(r.error().message().rfind((d.path / "text.jpk").string() + ":byte ", 0) == 0);
}
