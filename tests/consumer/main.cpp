// Consumer smoke test: uses janus as an installed package.
#include <janus/janus.hpp>

#include <cstdio>
#include <string>

int main() {
    const std::string version{janus::version_string()};
    if (version != "0.1.0") {
        std::fprintf(stderr, "janus consumer: expected version 0.1.0, got '%s'\n", version.c_str());
        return 1;
    }
    std::printf("janus consumer: OK (janus %s)\n", version.c_str());
    return 0;
}
