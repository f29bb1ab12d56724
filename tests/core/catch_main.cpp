// Catch2's main, in its own translation unit (slow to compile, rarely changes).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
