#include "reports/markdown.hpp"

#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "reports/comparison.hpp"
#include "reports/format.hpp"
#include "sim/result_json.hpp"

namespace parasim::reports {
namespace {

constexpr std::string_view kEscaped = "\\`*_[]<>#!|~&$";

std::string row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const auto& c : cells) s += " " + c + " |";
  return s + "\n";
}

/// The header row and its alignment rule: the first `left` columns left-aligned, the rest right.
std::string header(const std::vector<std::string>& cells, std::size_t left) {
  std::string rule = "|";
  for (std::size_t i = 0; i < cells.size(); ++i) rule += i < left ? ":---|" : "---:|";
  return row(cells) + rule + "\n";
}

std::string variant_name(const sim::Result& r, std::size_t index) {
  if (!r.variant.empty()) return escape_markdown(r.variant);
  return index == 0 ? "base" : "what-if " + std::to_string(index);
}

std::string spread(const sim::TimeSpread& s) {
  return significant(s.min_s, 4) + " / " + significant(s.mean_s, 4) + " / " + significant(s.max_s, 4);
}

std::string result_section(const sim::Result& r, std::size_t index) {
  std::string out = "## " + variant_name(r, index) + "\n\n";
  out += "- plan: " + escape_markdown(r.plan) + "\n";
  out += "- model: " + escape_markdown(r.model) + "\n";
  out += "- devices: " + std::to_string(r.devices) + " × " + escape_markdown(r.device_kind) + "; tasks simulated: " +
         std::to_string(r.tasks) + "\n";
  out += "- figures from " + escape_markdown(provenance(r)) + "\n\n";

  out += "### Where the time goes (mean over " + std::to_string(r.devices) + " devices)\n\n";
  out += header({"part", "s", "% of step"}, 1);
  for (const auto& b : breakdown_rows(r)) out += row({escape_markdown(b.part), b.seconds, b.share_percent});
  out += "\n";

  out += "### Time per pipeline stage (s, min / mean / max over the stage's devices)\n\n";
  if (static_cast<std::int64_t>(r.per_device.size()) < r.devices)
    out += "Per-device times were kept for " + std::to_string(r.per_device.size()) + " of " + std::to_string(r.devices) +
           " devices; the figures below cover those.\n\n";
  out += header({"stage", "devices", "compute", "exposed communication", "idle", "communication busy"}, 0);
  for (const auto& s : sim::stage_times(r))
    out += row({std::to_string(s.stage), std::to_string(s.devices), spread(s.compute), spread(s.exposed_comm), spread(s.idle),
                spread(s.comm_busy)});
  out += "\n";

  out += "### Memory per device, by pipeline stage (GiB)\n\n";
  out += header({"stage", "in-flight forward passes", "parameters (millions)", "weights", "gradients", "optimizer", "activations",
                 "buffers", "total"},
                0);
  for (const auto& s : r.memory) {
    const auto& m = s.memory;
    out += row({std::to_string(s.stage), std::to_string(s.in_flight), significant(s.parameters / 1e6, 4), gib(m.weights_bytes),
                gib(m.gradients_bytes), gib(m.optimizer_bytes), gib(m.activations_bytes), gib(m.buffers_bytes),
                gib(m.total_bytes())});
  }
  out += "\nPeak: stage " + std::to_string(r.peak_memory_stage) + ", " + gib(peak_memory_bytes(r)) + " GiB of " +
         gib(r.memory_capacity_bytes) + " GiB usable per device: **" + (r.fits ? "FITS" : "DOES NOT FIT") + "**.\n\n";

  out += "### Communication volume per step (summed over devices)\n\n";
  out += header({"link class", "GiB"}, 1);
  out += row({"intra-node", gib(r.intra_node_bytes)});
  out += row({"inter-node", gib(r.inter_node_bytes)});
  out += "\n";
  return out;
}

}  // namespace

std::string escape_markdown(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) out += ' ';
    else if (kEscaped.find(ch) != std::string_view::npos) (out += '\\') += ch;
    else out += ch;
  }
  return out;
}

std::string render_markdown(std::span<const sim::Result> results) {
  PARASIM_CHECK(!results.empty(), "a report needs at least one result");
  const sim::Result& base = results.front();
  std::string out = "# parasim report: " + escape_markdown(base.scenario) + "\n\n";
  out += "Model " + escape_markdown(base.model) + ". ";
  bool same_provenance = true;
  for (const auto& r : results) same_provenance = same_provenance && provenance(r) == provenance(base);
  if (same_provenance) {
    out += "Every figure comes from " + escape_markdown(provenance(base)) + ".\n\n";
  } else {
    out += "The figures come from:\n\n";
    for (std::size_t i = 0; i < results.size(); ++i)
      out += "- " + variant_name(results[i], i) + ": " + escape_markdown(provenance(results[i])) + "\n";
    out += "\n";
  }

  out += "## Comparison\n\n";
  const bool against_base = compares_against_base(results);
  if (results.size() > 1 && !against_base) out += "Results of different scenarios, side by side: no change against the first is computed, since their models differ.\n\n";
  std::vector<std::string> head{"figure", "unit"};
  for (std::size_t i = 0; i < results.size(); ++i) {
    head.push_back(variant_name(results[i], i));
    if (i > 0 && against_base) head.push_back("vs base");
  }
  out += header(head, 2);
  for (const auto& r : comparison_rows(results)) {
    std::vector<std::string> cells{escape_markdown(r.figure), escape_markdown(r.unit)};
    for (std::size_t i = 0; i < results.size(); ++i) {
      cells.push_back(escape_markdown(r.values[i]));
      if (i > 0 && against_base) cells.push_back(escape_markdown(r.changes[i]));
    }
    out += row(cells);
  }
  if (against_base) out += "\n\"vs base\": each what-if's change against the base, in percent of the base's value.\n";
  out += "\n";
  for (std::size_t i = 0; i < results.size(); ++i) out += result_section(results[i], i);
  return out;
}

}  // namespace parasim::reports
