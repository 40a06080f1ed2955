// Shared doctest main: compiled once and linked into every tests/<dir>/ executable.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
