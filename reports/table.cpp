#include "reports/table.hpp"

#include <algorithm>
#include <vector>

#include "common/error.hpp"
#include "reports/comparison.hpp"
#include "reports/format.hpp"

namespace parasim::reports {
namespace {

enum class Align { Left, Right };

/// Lays out rows of cells in columns two spaces apart, a dashed rule under the first row, no
/// trailing spaces.
std::string layout(const std::vector<std::vector<std::string>>& rows, const std::vector<Align>& align) {
  std::vector<std::size_t> width(align.size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
  std::string out;
  const auto line = [&](const std::vector<std::string>& row) {
    std::string s;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - display_width(row[c]), ' ');
      if (c > 0) s += "  ";
      s += align[c] == Align::Left ? row[c] + pad : pad + row[c];
    }
    s.erase(s.find_last_not_of(' ') + 1);
    out += s + "\n";
  };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    line(rows[r]);
    if (r == 0) {
      std::vector<std::string> rule;
      for (const std::size_t w : width) rule.emplace_back(w, '-');
      line(rule);
    }
  }
  return out;
}

std::string column_name(const sim::Result& r, std::size_t index) {
  if (!r.variant.empty()) return terminal_safe(r.variant);
  return index == 0 ? "base" : "what-if " + std::to_string(index);
}

}  // namespace

std::string render_table(std::span<const sim::Result> results) {
  PARASIM_CHECK(!results.empty(), "a table needs at least one result");
  const sim::Result& base = results.front();
  const bool against_base = compares_against_base(results);
  std::string out = "parasim: scenario \"" + terminal_safe(base.scenario) + "\", model " + terminal_safe(base.model) + "\n";
  if (results.size() > 1 && !against_base) {
    out = "parasim: " + std::to_string(results.size()) + " results of different scenarios, side by side (no change against the first: their models differ):\n";
    for (std::size_t i = 0; i < results.size(); ++i)
      out += "  " + column_name(results[i], i) + ": scenario \"" + terminal_safe(results[i].scenario) + "\", model " + terminal_safe(results[i].model) + "\n";
  }
  out += "plan (" + column_name(base, 0) + "): " + terminal_safe(base.plan) + "\n";

  bool same_provenance = true;
  for (const auto& r : results) same_provenance = same_provenance && provenance(r) == provenance(base);
  if (same_provenance) {
    out += "Figures from " + terminal_safe(provenance(base)) + ".\n";
  } else {
    out += "Figures from:\n";
    for (std::size_t i = 0; i < results.size(); ++i)
      out += "  " + column_name(results[i], i) + ": " + terminal_safe(provenance(results[i])) + "\n";
  }
  out += "\n";

  std::vector<std::vector<std::string>> grid;
  std::vector<Align> align{Align::Left, Align::Left};
  std::vector<std::string> header{"figure", "unit"};
  for (std::size_t i = 0; i < results.size(); ++i) {
    header.push_back(column_name(results[i], i));
    align.push_back(Align::Right);
    if (i > 0 && against_base) {
      header.push_back("vs base");
      align.push_back(Align::Right);
    }
  }
  grid.push_back(std::move(header));
  for (const auto& row : comparison_rows(results)) {
    std::vector<std::string> cells{row.figure, row.unit};
    for (std::size_t i = 0; i < results.size(); ++i) {
      cells.push_back(terminal_safe(row.values[i]));
      if (i > 0 && against_base) cells.push_back(row.changes[i]);
    }
    grid.push_back(std::move(cells));
  }
  out += layout(grid, align);
  if (against_base) out += "\"vs base\": each what-if's change against the base, in percent of the base's value.\n";

  out += "\nWhere the time goes in " + column_name(base, 0) + " (mean over " + std::to_string(base.devices) + " devices):\n";
  std::vector<std::vector<std::string>> parts{{"part", "s", "% of step"}};
  for (const auto& row : breakdown_rows(base)) parts.push_back({row.part, row.seconds, row.share_percent});
  out += layout(parts, {Align::Left, Align::Right, Align::Right});

  // Link-level figures of the base (sim/links.hpp): traffic per link class and the busiest links.
  if (!base.link_classes.empty()) {
    out += "\nLinks in " + column_name(base, 0) + " (each direction of a link counted apart; load = time at full rate for the bytes " +
           "that crossed, busy = time a collective crossing it was in flight):\n";
    std::vector<std::vector<std::string>> classes{{"link class", "links used", "GiB", "max load s", "max busy s", "mean busy s", "sets pace"}};
    for (const auto& c : base.link_classes)
      classes.push_back({terminal_safe(c.link_class), std::to_string(c.links_used) + " of " + std::to_string(c.links), gib(c.bytes),
                         significant(c.max_load_s), significant(c.max_busy_s), significant(c.mean_busy_s),
                         std::to_string(c.bottleneck_phases) + " phases"});
    out += layout(classes, {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right});
  }
  if (!base.busiest_links.empty()) {
    out += "\nMost loaded links in " + column_name(base, 0) + ":\n";
    std::vector<std::vector<std::string>> links{{"link", "class", "GB/s", "GiB", "load s", "busy s", "load % of step"}};
    for (const auto& l : base.busiest_links)
      links.push_back({terminal_safe(l.name), terminal_safe(l.link_class), significant(l.bandwidth_bytes_per_s / 1e9), gib(l.bytes),
                       significant(l.load_s), significant(l.busy_s), percent(l.load_s / base.step_time_s)});
    out += layout(links, {Align::Left, Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right});
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].notes.empty()) continue;
    out += "\nNotes on " + column_name(results[i], i) + ":\n";
    for (const auto& note : results[i].notes) out += "  - " + terminal_safe(note) + "\n";
  }
  return out;
}

}  // namespace parasim::reports
