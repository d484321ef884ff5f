#pragma once
// The error a scenario text is refused with, for the loader tests: the located message of its
// InputError ("s.json:LINE:COLUMN: at POINTER: ..."), or "(no error)" when it loads.
#include <string>

#include "common/error.hpp"
#include "scenarios/loader.hpp"

namespace parasim::testing {

inline std::string scenario_error(const std::string& text) {
  try {
    (void)scenarios::parse_scenario(text, "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace parasim::testing
