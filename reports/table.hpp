#pragma once
/// The table `parasim SCENARIO` prints on stdout: for the base and each what-if, one column with
/// step time, throughput, model TFLOP/s per device, MFU, HFU, bubble, exposed communication, peak
/// memory against capacity and FITS / DOES NOT FIT, with each what-if's change against the base in
/// percent; which backend and which profile (and where that profile came from) produced the figures;
/// then the base's time breakdown. Every figure names its unit. Plain text in fixed columns, the
/// same characters for the same Results; names from the scenario are made terminal-safe.
#include <span>
#include <string>

#include "sim/result.hpp"

namespace parasim::reports {

/// The table for `results`: the base first, then its what-ifs. Ends with a newline.
/// Precondition: at least one result.
[[nodiscard]] std::string render_table(std::span<const sim::Result> results);

}  // namespace parasim::reports
