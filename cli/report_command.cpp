// `parasim report RESULT.json… [--out DIR]`: saved results side by side — the comparison table on
// stdout, report.md and report.html in the output folder. Each file is what `parasim SCENARIO` wrote
// as result.json (one result or a list of them); the results are compared in the order given. One
// file may instead be a search.json (`parasim search`, schema parasim.search/1): report.html then
// draws its ranked plans, their step-time breakdown and memory, and its Pareto front.
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "cli/commands.hpp"
#include "cli/output_files.hpp"
#include "common/error.hpp"
#include "common/json_document.hpp"
#include "reports/html.hpp"
#include "reports/markdown.hpp"
#include "reports/table.hpp"
#include "sim/result_json.hpp"
#include "strategies/search/search_json.hpp"

namespace parasim::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> files;
  std::string out = "parasim-out/report";
};

namespace search = strategies::search;

int compare_results(const ReportArgs& args, std::ostream& out) {
  std::vector<sim::Result> results;
  std::optional<search::SavedSearch> saved_search;
  for (const auto& file : args.files) {
    const JsonDocument doc = JsonDocument::read_file(file);
    if (search::is_search_json(doc)) {
      if (saved_search) throw doc.error_at("", "found a second search.json, expected one search per report (compare results side by side instead)");
      saved_search = search::search_from_json(doc);
      continue;
    }
    for (auto& r : sim::results_from_json(doc)) results.push_back(std::move(r));
  }

  // Every report names a result by its variant; results from several files ("base" of each run)
  // get names that tell them apart, the same in the table, report.md and report.html.
  const std::vector<std::string> labels = reports::result_labels(results);
  for (std::size_t i = 0; i < results.size(); ++i) results[i].variant = labels[i];

  const std::filesystem::path out_dir(args.out);
  reports::HtmlReport html;
  std::set<std::string> scenarios;
  for (const auto& r : results) scenarios.insert(r.scenario);
  if (scenarios.size() > 1)
    html.title = "parasim report: " + std::to_string(results.size()) + " results of " + std::to_string(scenarios.size()) + " scenarios";
  html.results = results;
  html.labels = labels;
  if (saved_search) html.search = reports::HtmlSearch{&saved_search->outcome, saved_search->scenario, saved_search->model};
  if (results.empty()) {
    // A search alone: report.html only (report.md and the table compare results).
    PendingFile page(out_dir / "report.html", [&](std::ostream& o) { o << reports::render_html(html); });
    page.commit();
    out << "wrote " << (out_dir / "report.html").string() << "\n";
    return 0;
  }
  PendingFile markdown(out_dir / "report.md", [&](std::ostream& o) { o << reports::render_markdown(results); });
  PendingFile page(out_dir / "report.html", [&](std::ostream& o) { o << reports::render_html(html); });
  markdown.commit();
  page.commit();

  out << reports::render_table(results);
  out << "\nwrote " << (out_dir / "report.md").string() << ", " << (out_dir / "report.html").string() << "\n";
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, Action& action, std::ostream& out) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand("report", "Compare saved results side by side: a table, report.md and report.html");
  cmd->add_option("results", args->files,
                  "result.json files written by parasim (each one result or a list of them), and at most one search.json of parasim search")
      ->required();
  cmd->add_option("--out", args->out, "output folder for report.md and report.html (default parasim-out/report)");
  cmd->callback([&action, &out, args] { action = [&out, args] { return compare_results(*args, out); }; });
}

}  // namespace parasim::cli
