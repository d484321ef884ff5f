#pragma once
// Loads a report.html in headless Chromium (Debian's `chromium`) through tests/reports/html_render.mjs
// and returns what the page showed: charts drawn, SVG elements and marks per chart, console errors,
// whether an injected script ran; it also saves a full-page screenshot. Tests skip, with a message,
// where chromium or node is missing (scripts/bootstrap.sh installs both for the test suite).
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.hpp"

namespace parasim::testing {

/// Where the browser tests leave their pages and screenshots, to look at after a run:
/// <build folder>/test-artefacts/report-html/.
inline std::filesystem::path html_artefact_dir() {
  const auto dir = std::filesystem::path(PARASIM_BINARY).parent_path() / "test-artefacts" / "report-html";
  std::filesystem::create_directories(dir);
  return dir;
}

/// Whether `name` is a command on PATH.
inline bool have_command(const std::string& name) { return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0; }

/// Why the browser tests cannot run here, or "" when they can.
inline std::string browser_missing() {
  if (!have_command("chromium")) return "chromium is not installed (apt-get install chromium): report.html not rendered";
  if (!have_command("node")) return "node is not installed (apt-get install nodejs): report.html not rendered";
  return "";
}

struct BrowserView {
  int exit_code = -1;
  nlohmann::json seen;  ///< html_render.mjs's report (see there), null when it failed
  std::string err;      ///< its stderr
};

/// Renders `page` and writes `screenshot` (PNG). Precondition: browser_missing() is empty.
inline BrowserView render_in_chromium(const std::filesystem::path& page, const std::filesystem::path& screenshot) {
  const parasim::testing::TempDir dir_temp("chromium");
  const std::filesystem::path& dir = dir_temp.path;
  const std::string command = "node '" PARASIM_SOURCE_DIR "/tests/reports/html_render.mjs' '" + page.string() + "' '" +
                              screenshot.string() + "' > '" + (dir / "out").string() + "' 2> '" + (dir / "err").string() + "'";
  const int status = std::system(command.c_str());
  BrowserView view;
  view.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  view.err = slurp(dir / "err");
  const std::string out = slurp(dir / "out");
  view.seen = nlohmann::json::parse(out, nullptr, false);
  if (view.seen.is_discarded()) view.seen = nullptr;
  return view;
}

/// Renders `page` in headless Chromium as NAME.html in the artefact folder (copied there unless it
/// is that file), with the screenshot NAME.png, and checks what every report page must show in a
/// browser: it loads, no console or page error, no injected script ran, and `charts` charts, all
/// drawn. Returns what the page reported, for the caller's own checks; null, with a warning, when no
/// browser is here.
inline nlohmann::json check_in_chromium(const std::filesystem::path& page, const std::string& name, int charts) {
  const std::string missing = browser_missing();
  if (!missing.empty()) {
    WARN("browser part skipped: " << missing);
    return nullptr;
  }
  const auto dir = html_artefact_dir();
  const auto copy = dir / (name + ".html");
  if (page != copy) std::filesystem::copy_file(page, copy, std::filesystem::copy_options::overwrite_existing);
  const auto screenshot = dir / (name + ".png");
  std::filesystem::remove(screenshot);
  const BrowserView view = render_in_chromium(copy, screenshot);
  INFO(view.err);
  REQUIRE(view.exit_code == 0);
  REQUIRE(view.seen.is_object());
  INFO(view.seen.dump(2));
  CHECK(view.seen.at("errors").empty());
  CHECK(view.seen.at("page_errors").empty());
  CHECK(view.seen.at("injected") == false);
  CHECK(view.seen.at("total") == charts);
  CHECK(view.seen.at("drawn") == charts);
  return view.seen;
}

}  // namespace parasim::testing
