// Corpus replay driver for builds without libFuzzer (any compiler).
//
//   fuzz_<name>_replay <dir-or-file>...
//
// Every regular file named on the command line, or found (recursively) under a
// directory named on it, is fed once to LLVMFuzzerTestOneInput, in order of
// path name. Prints how many inputs ran; exits 0. With no arguments prints
// usage and exits 2; a path that does not exist or cannot be read exits 1.
// A crash/assert/sanitizer report inside the target fails the run as usual.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Optional, as in libFuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

bool collect(const fs::path& root, std::vector<fs::path>& out) {
    std::error_code ec;
    const auto status = fs::status(root, ec);
    if (ec || !fs::exists(status)) {
        std::fprintf(stderr, "replay: no such file or directory: %s\n", root.string().c_str());
        return false;
    }
    if (fs::is_regular_file(status)) {
        out.push_back(root);
        return true;
    }
    if (!fs::is_directory(status)) {
        std::fprintf(stderr, "replay: not a regular file or directory: %s\n", root.string().c_str());
        return false;
    }
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (it->is_regular_file(ec)) {
            found.push_back(it->path());
        }
    }
    if (ec) {
        std::fprintf(stderr, "replay: cannot walk %s: %s\n", root.string().c_str(), ec.message().c_str());
        return false;
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
    return true;
}

bool read_file(const fs::path& path, std::vector<std::uint8_t>& bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return false;
    }
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <corpus-dir-or-file>...\n", argc > 0 ? argv[0] : "replay");
        return 2;
    }
    if (LLVMFuzzerInitialize != nullptr) {
        LLVMFuzzerInitialize(&argc, &argv);
    }

    std::vector<fs::path> inputs;
    for (int i = 1; i < argc; ++i) {
        if (!collect(fs::path(argv[i]), inputs)) {
            return 1;
        }
    }

    std::vector<std::uint8_t> bytes;
    std::size_t count = 0;
    for (const auto& path : inputs) {
        if (!read_file(path, bytes)) {
            std::fprintf(stderr, "replay: cannot read %s\n", path.string().c_str());
            return 1;
        }
        std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.string().c_str(), bytes.size());
        // Never hand out a null pointer, even for an empty input (libFuzzer doesn't).
        static const std::uint8_t empty_input = 0;
        const std::uint8_t* data = bytes.empty() ? &empty_input : bytes.data();
        LLVMFuzzerTestOneInput(data, bytes.size());
        ++count;
    }
    std::printf("replay: ran %zu input(s)\n", count);
    return 0;
}
