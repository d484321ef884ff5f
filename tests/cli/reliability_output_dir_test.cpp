// Safe output paths: a scenario's output.dir may not lead parasim outside the folder it runs in —
// not with "..", not with an absolute path, not through a symbolic link — unless the user names the
// folder on the command line with --out.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/run_parasim.hpp"

using parasim::testing::Run;
using parasim::testing::slurp;

namespace {

using parasim::testing::q;

/// Runs parasim with `cwd` as its working folder.
Run run_in(const std::filesystem::path& cwd, const std::string& args) {
  const parasim::testing::TempDir io_temp("io");
  const std::filesystem::path& io = io_temp.path;
  const std::string command = "cd " + q(cwd) + " && '" + PARASIM_BINARY + "' " + args + " > " + q(io / "out") + " 2> " + q(io / "err");
  const int status = std::system(command.c_str());
  Run r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io / "out"), slurp(io / "err")};
  return r;
}

/// A small scenario whose output.dir is `dir`, on line 7 of the file.
std::string scenario_text(const std::string& dir) {
  return "{\n"
         "  \"name\": \"small\",\n"
         "  \"model\": { \"preset\": \"gpt2\", \"seq_len\": 1024 },\n"
         "  \"training\": { \"global_batch\": 16, \"micro_batch\": 2, \"precision\": \"fp16\" },\n"
         "  \"cluster\": { \"preset\": \"dgx-a100\", \"nodes\": 1 },\n"
         "  \"plan\": { \"tp\": 2, \"pp\": 2, \"dp\": 2 },\n"
         "  \"output\": { \"dir\": \"" + dir + "\" }\n"
         "}\n";
}

/// The error parasim gives for output.dir `dir` (written on line 7, its value from column 22) that
/// resolves to `resolved`, run from `cwd`.
std::string refusal(const std::filesystem::path& file, const std::string& dir, const std::filesystem::path& resolved,
                    const std::filesystem::path& cwd) {
  // Line 7 is `  "output": { "dir": "…" }`; the value's opening quote is its 22nd character.
  return "parasim: error: " + file.string() + ":7:22: at /output/dir: found \"" + dir + "\" (" + resolved.string() +
         "), expected a folder inside the working folder " + cwd.string() + "; to write there, name it with --out on the command line\n";
}

}  // namespace

TEST_CASE("reliability: output.dir outside the working folder is refused unless --out names it", "[cli][reliability]") {
  const parasim::testing::TempDir root_temp("outdir");
  const auto root = std::filesystem::weakly_canonical(root_temp.path);
  const auto cwd = root / "a" / "b";
  std::filesystem::create_directories(cwd);
  const auto file = cwd / "s.json";

  SECTION("a relative path climbing out with ..") {
    std::ofstream(file) << scenario_text("../../etc");
    const Run r = run_in(cwd, "s.json");
    CHECK(r.exit_code == 2);
    CHECK(r.err == refusal("s.json", "../../etc", root / "etc", cwd));
    CHECK_FALSE(std::filesystem::exists(root / "etc"));
  }
  SECTION("an absolute path elsewhere") {
    const auto elsewhere = (root / "elsewhere").string();
    std::ofstream(file) << scenario_text(elsewhere);
    const Run r = run_in(cwd, "s.json");
    CHECK(r.exit_code == 2);
    CHECK(r.err == refusal("s.json", elsewhere, root / "elsewhere", cwd));
    CHECK_FALSE(std::filesystem::exists(root / "elsewhere"));
  }
  SECTION("a symbolic link out of the working folder") {
    std::filesystem::create_directories(root / "outside");
    std::filesystem::create_directory_symlink(root / "outside", cwd / "link");
    std::ofstream(file) << scenario_text("link/out");
    const Run r = run_in(cwd, "s.json");
    CHECK(r.exit_code == 2);
    CHECK(r.err == refusal("s.json", "link/out", root / "outside" / "out", cwd));
    CHECK(std::filesystem::is_empty(root / "outside"));
  }
  SECTION("the same folder named with --out is written") {
    std::ofstream(file) << scenario_text("../../etc");
    const Run r = run_in(cwd, "s.json --out " + q(root / "etc"));
    CHECK(r.exit_code == 0);
    CHECK(std::filesystem::exists(root / "etc" / "result.json"));
  }
  SECTION("a folder inside, even by way of ..") {
    std::ofstream(file) << scenario_text("results/../kept");
    const Run r = run_in(cwd, "s.json");
    CHECK(r.exit_code == 0);
    CHECK(std::filesystem::exists(cwd / "kept" / "result.json"));
  }
}
