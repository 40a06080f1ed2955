// core/file.hpp's writers (issue 26, output safety): a symbolic link is written through, an existing file keeps its
// mode and its hard links, a device or FIFO is refused, several files are written all or none, one file given
// twice is refused, and same_file compares by device and inode.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <janus/core/file.hpp>

namespace file_write_test {

namespace fs = std::filesystem;

std::string text_of(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

std::span<const std::uint8_t> bytes(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

struct Dir {
    fs::path path;
    Dir() {
        static std::atomic<int> n{0};
        path = fs::temp_directory_path() /
               ("janus_file_write_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
        fs::create_directories(path);
    }
    ~Dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::vector<std::string> entries() const {
        std::vector<std::string> r;
        for (const auto& e : fs::directory_iterator(path)) r.push_back(e.path().filename().string());
        std::sort(r.begin(), r.end());
        return r;
    }
    std::string operator/(const std::string& name) const { return (path / name).string(); }
};

void put(const std::string& path, const std::string& text) {
    REQUIRE(janus::write_file_atomic(path, bytes(text), "t"));
}

TEST_CASE("write_file_atomic writes through a symbolic link: the link stays, its target gets the bytes") {
    Dir d;
    put(d / "real", "old");
    fs::create_symlink("real", d / "link");
    REQUIRE(janus::write_file_atomic(d / "link", bytes("new"), "t"));
    CHECK(fs::is_symlink(d / "link"));
    CHECK(text_of(d / "real") == "new");
    // a dangling link creates its target; a loop is refused (output-symlink)
    fs::create_symlink("missing", d / "dangling");
    REQUIRE(janus::write_file_atomic(d / "dangling", bytes("x"), "t"));
    CHECK(fs::is_symlink(d / "dangling"));
    CHECK(text_of(d / "missing") == "x");
    fs::create_symlink("loop2", d / "loop1");
    fs::create_symlink("loop1", d / "loop2");
    const auto r = janus::write_file_atomic(d / "loop1", bytes("x"), "t");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().rule == "output-symlink");
    CHECK(d.entries() == std::vector<std::string>{"dangling", "link", "loop1", "loop2", "missing", "real"});
}

TEST_CASE("write_file_atomic keeps an existing file's mode and its hard links") {
    Dir d;
    put(d / "f", "old");
    REQUIRE(::chmod((d / "f").c_str(), 0640) == 0);
    REQUIRE(janus::write_file_atomic(d / "f", bytes("new bytes"), "t"));
    struct ::stat st {};
    REQUIRE(::stat((d / "f").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(text_of(d / "f") == "new bytes");

    fs::create_hard_link(d / "f", d / "g");
    REQUIRE(::stat((d / "f").c_str(), &st) == 0);
    const ino_t ino = st.st_ino;
    REQUIRE(janus::write_file_atomic(d / "f", bytes("x"), "t"));  // shorter: the file is truncated too
    CHECK(text_of(d / "g") == "x");
    REQUIRE(::stat((d / "f").c_str(), &st) == 0);
    CHECK(st.st_ino == ino);
    CHECK(st.st_nlink == 2);
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(d.entries() == std::vector<std::string>{"f", "g"});
}

TEST_CASE("write_file_atomic refuses a device or a FIFO and never replaces it") {
    Dir d;
    // a copy of the null device in the test's directory (as root), so a writer that replaced its target would never
    // replace the system's /dev/null; without root, /dev/null itself (the directory /dev is not writable then)
    const std::string dev =
        ::mknod((d / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0 ? d / "null" : "/dev/null";
    const auto r = janus::write_file_atomic(dev, bytes("x"), "t");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() ==
          dev + ": error: this is a character device, not a regular file; Janus writes its outputs to regular files "
                "only [output-special]");
    CHECK(fs::is_character_file(dev));
    if (dev != "/dev/null") fs::remove(dev);
    REQUIRE(::mkfifo((d / "fifo").c_str(), 0600) == 0);
    const auto f = janus::write_file_atomic(d / "fifo", bytes("x"), "t");
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().rule == "output-special");
    CHECK(fs::is_fifo(d / "fifo"));
    CHECK(d.entries() == std::vector<std::string>{"fifo"});
}

TEST_CASE("write_files_atomic writes all files or none") {
    Dir d;
    put(d / "a", "old a");
    fs::create_directory(d / "b");  // the second target cannot be a file
    const std::string a = "new a", b = "new b";
    const std::vector<janus::FileWrite> files{{d / "a", bytes(a), "t"}, {d / "b", bytes(b), "t"}};
    const auto r = janus::write_files_atomic(files);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() == d / "b" + ": error: this is a directory, not a file [t]");
    CHECK(text_of(d / "a") == "old a");  // the first file is untouched, and no temporary is left
    CHECK(d.entries() == std::vector<std::string>{"a", "b"});

    const std::vector<janus::FileWrite> ok{{d / "a", bytes(a), "t"}, {d / "c", bytes(b), "t"}};
    REQUIRE(janus::write_files_atomic(ok));
    CHECK(text_of(d / "a") == "new a");
    CHECK(text_of(d / "c") == "new b");

    // one file named twice (here through a link) is refused before anything is written
    fs::create_symlink("a", d / "alias");
    const std::vector<janus::FileWrite> twice{{d / "a", bytes(b), "t"}, {d / "alias", bytes(b), "t"}};
    const auto t = janus::write_files_atomic(twice);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().rule == "output-twice");
    CHECK(text_of(d / "a") == "new a");
    // a file that does not exist yet, named twice in two spellings
    const std::vector<janus::FileWrite> twice_new{{d / "n", bytes(a), "t"},
                                                  {(d.path / "." / "n").string(), bytes(b), "t"}};
    const auto tn = janus::write_files_atomic(twice_new);
    REQUIRE_FALSE(tn.ok());
    CHECK(tn.error().rule == "output-twice");
    CHECK(d.entries() == std::vector<std::string>{"a", "alias", "b", "c"});
}

TEST_CASE("same_file compares device and inode: another spelling and a symbolic link are the same file") {
    Dir d;
    put(d / "m", "model");
    fs::create_directory(d.path / "sub");
    fs::create_symlink("m", d / "link");
    CHECK(janus::same_file(d / "m", d / "m"));
    CHECK(janus::same_file(d / "m", (d.path / "sub" / ".." / "m").string()));
    CHECK(janus::same_file(d / "m", d / "link"));
    CHECK_FALSE(janus::same_file(d / "m", d / "missing"));
    put(d / "other", "model");
    CHECK_FALSE(janus::same_file(d / "m", d / "other"));
}

}  // namespace file_write_test
