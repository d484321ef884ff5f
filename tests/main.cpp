// The Catch2 v2 entry point shared by every test file.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
