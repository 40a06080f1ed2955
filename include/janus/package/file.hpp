#pragma once
// Package files (docs/package.md "Files"): an atomic writer and a reader. POSIX.
//
// Contract (seed D7: success must be decidable from the directory):
//   - write_package_file(path, p) first encodes `p` (write_package); an invalid package is an error before anything
//     touches the disk. It then writes the bytes to a new temporary file in the target's directory
//     (".<name>.tmp.<pid>.<n>", created with O_EXCL, mode 0666 & ~umask), flushes it (fsync), closes it and renames
//     it over `path` (atomic on POSIX), then syncs the directory. On any failure the temporary file is removed and
//     an existing file at `path` is left exactly as it was: after the call, `path` holds either the old file (or
//     nothing) or the complete new package, never a partial one. Errors: rule package-write, input = path,
//     a sentence naming the step and the system's reason.
//   - read_package_file(path) reads the whole file and validates it (read_package, input = path); a file that
//     cannot be opened or read is rule package-read.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/package/package.hpp>

namespace janus::package {

namespace detail {
inline std::string errno_text(int e) { return std::system_category().message(e); }
}  // namespace detail

/// Atomically replace (or create) `path` with the package `p`.
inline Status write_package_file(const std::string& path, const Package& p) {
    namespace fs = std::filesystem;
    JANUS_TRY(const std::vector<std::uint8_t> bytes, write_package(p, path));
    const fs::path target(path);
    const std::string base = target.filename().string();
    if (base.empty() || base == "." || base == "..")
        return make_error(path, "", "package-write", "the path names no file");
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");

    static std::atomic<unsigned> serial{0};
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 64 && fd < 0; ++attempt) {
        tmp = (dir / ("." + base + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++))).string();
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0)
        return make_error(path, "", "package-write",
                          "cannot create a temporary file in '" + dir.string() + "': " + detail::errno_text(errno));
    const auto fail = [&](const std::string& step, int e) -> Error {
        if (fd >= 0) ::close(fd);
        ::unlink(tmp.c_str());
        return make_error(path, "", "package-write", step + ": " + detail::errno_text(e));
    };
    for (std::size_t done = 0; done < bytes.size();) {
        const ::ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail("cannot write the temporary file '" + tmp + "'", n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) return fail("cannot flush the temporary file '" + tmp + "'", errno);
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0) return fail("cannot close the temporary file '" + tmp + "'", errno);
    if (::rename(tmp.c_str(), path.c_str()) != 0)
        return fail("cannot rename the temporary file '" + tmp + "' to '" + path + "'", errno);
    // Make the rename durable; the new package is in place whatever happens here.
    if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
    return ok_status();
}

/// Read and validate the package file at `path`.
inline Result<Package> read_package_file(const std::string& path, const ReadOptions& options = {}) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return make_error(path, "", "package-read", "cannot read the package: it is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path, "", "package-read", "cannot open the package file");
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return make_error(path, "", "package-read", "cannot read the package file");
    return read_package(bytes, path, options);
}

}  // namespace janus::package
