#pragma once
/// The figures every report compares, computed once so the stdout table and report.md show the same
/// numbers formatted the same way: one row per figure with one cell per Result (the first is the
/// base, the others its what-ifs) and, for each what-if, its change against the base in percent.
/// Cells are plain text (user strings unescaped); each renderer escapes for its medium.
#include <span>
#include <string>
#include <vector>

#include "sim/result.hpp"

namespace parasim::reports {

struct ComparisonRow {
  std::string figure;                ///< "step time", "MFU", ...
  std::string unit;                  ///< "s", "%", "GiB", "" for text
  std::vector<std::string> values;   ///< one per result
  std::vector<std::string> changes;  ///< one per result: "" for the base and for text rows, else change_percent
};

/// Whether the results compare against the first: more than one, all of one scenario (its base and
/// what-ifs, or runs of it). Results of different scenarios (a ResNet beside a BERT) are shown side by
/// side with no change against the first: a percentage across models says nothing.
[[nodiscard]] bool compares_against_base(std::span<const sim::Result> results);

/// The comparison rows, in display order: provenance (backend, profile, its origin, devices), step
/// time, samples/s, tokens/s, model TFLOP/s per device, MFU, HFU, bubble, exposed communication,
/// peak memory per device, usable capacity, and FITS / DOES NOT FIT. Precondition: at least one result.
[[nodiscard]] std::vector<ComparisonRow> comparison_rows(std::span<const sim::Result> results);

/// One part of a step's time breakdown (mean over devices).
struct BreakdownRow {
  std::string part;           ///< the category's name, "idle (bubble and waiting)", or "total (step time)"
  std::string seconds;        ///< significant(…, 4)
  std::string share_percent;  ///< of the step time, one decimal
};

/// The breakdown of `result`: every category with time, then idle, then the total (the step time).
[[nodiscard]] std::vector<BreakdownRow> breakdown_rows(const sim::Result& result);

/// Which engine and which profile produced the figures: "the analytical backend with profile
/// \"datasheet\" (built-in datasheet figures)". Unescaped.
[[nodiscard]] std::string provenance(const sim::Result& result);

/// The peak memory of one device: the largest stage total, in bytes (0 without memory figures).
[[nodiscard]] double peak_memory_bytes(const sim::Result& result);

}  // namespace parasim::reports
