// The doctest entry point for build/tests/unit_tests (every tests/*/test_*.cpp links into it).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
