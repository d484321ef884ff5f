// Outputs are whole or absent (cli/output_files): a temporary file is registered for the interrupt
// handlers while it exists and gone once committed or abandoned; a writer that throws leaves nothing;
// what the handlers run removes every temporary output and the folders it created.
#include <catch2/catch.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "cli/output_files.hpp"
#include "common/error.hpp"
#include "tests/cli/run_parasim.hpp"

using parasim::cli::PendingFile;
using parasim::testing::slurp;

TEST_CASE("reliability: a pending output is registered until committed, then in place", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("pending");
  const std::filesystem::path& dir = dir_temp.path;
  const int before = parasim::cli::pending_output_count();
  {
    PendingFile f(dir / "a.txt", [](std::ostream& o) { o << "new"; });
    CHECK(parasim::cli::pending_output_count() == before + 1);
    CHECK(std::filesystem::exists(f.temporary_path()));
    CHECK_FALSE(std::filesystem::exists(dir / "a.txt"));
    f.commit();
    CHECK(parasim::cli::pending_output_count() == before);
    CHECK_FALSE(std::filesystem::exists(f.temporary_path()));
  }
  CHECK(slurp(dir / "a.txt") == "new");
}

TEST_CASE("reliability: an abandoned output leaves the previous file and no temporary", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("abandon");
  const std::filesystem::path& dir = dir_temp.path;
  parasim::cli::write_atomically(dir / "a.txt", std::string("old"));
  std::filesystem::path temp;
  {
    PendingFile f(dir / "a.txt", [](std::ostream& o) { o << "new"; });
    temp = f.temporary_path();
  }
  CHECK_FALSE(std::filesystem::exists(temp));
  CHECK(slurp(dir / "a.txt") == "old");
  // Only a.txt is left in the folder.
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
}

TEST_CASE("reliability: a writer that throws leaves neither the file nor the folder it created", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("throwing");
  const std::filesystem::path& dir = dir_temp.path;
  const int before = parasim::cli::pending_output_count();
  const auto target = dir / "new" / "deeper" / "out.json";
  CHECK_THROWS_AS(parasim::cli::write_atomically(target, [](std::ostream& o) {
                    o << "half";
                    throw std::runtime_error("the writer failed");
                  }),
                  std::runtime_error);
  CHECK_FALSE(std::filesystem::exists(dir / "new"));
  CHECK(parasim::cli::pending_output_count() == before);
}

TEST_CASE("reliability: what the interrupt handlers run removes every temporary output and the folders created", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("handler");
  const std::filesystem::path& dir = dir_temp.path;
  parasim::cli::write_atomically(dir / "kept" / "result.json", std::string("previous"));
  PendingFile over_previous(dir / "kept" / "result.json", [](std::ostream& o) { o << "next"; });
  PendingFile in_new_folder(dir / "made" / "sub" / "trace.json", [](std::ostream& o) { o << "{}"; });
  PendingFile beside(dir / "made" / "sub" / "report.md", [](std::ostream& o) { o << "#"; });
  CHECK(parasim::cli::remove_pending_outputs() == 3);
  // The previous result stays; the folders the new outputs created are gone with them.
  CHECK(slurp(dir / "kept" / "result.json") == "previous");
  CHECK(std::distance(std::filesystem::directory_iterator(dir / "kept"), std::filesystem::directory_iterator()) == 1);
  CHECK_FALSE(std::filesystem::exists(dir / "made"));
}

TEST_CASE("reliability: outputs committed together are all in place", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("together");
  const std::filesystem::path& dir = dir_temp.path;
  PendingFile a(dir / "a", [](std::ostream& o) { o << "1"; });
  PendingFile b(dir / "b", [](std::ostream& o) { o << "2"; });
  parasim::cli::commit_together({&a, &b});
  CHECK(slurp(dir / "a") == "1");
  CHECK(slurp(dir / "b") == "2");
}

TEST_CASE("reliability: a timeout that is not a number of seconds is refused", "[cli][reliability]") {
  CHECK_THROWS_AS(parasim::cli::arm_timeout(1e12), parasim::InputError);
  CHECK_NOTHROW(parasim::cli::arm_timeout(0));
}

TEST_CASE("reliability: an output that cannot be written exits 4 with the system's reason, leaving nothing", "[cli][reliability]") {
  using parasim::testing::q;
  using parasim::testing::run_parasim;
  const parasim::testing::TempDir dir_temp("output-faults");
  const std::filesystem::path& dir = dir_temp.path;
  const std::string scenario = "'" PARASIM_SOURCE_DIR "/scenarios/examples/resnet50-dp-32-a100.json'";
  // An output folder below a file: the folder cannot be created, and the system says why.
  std::ofstream(dir / "file") << "x";
  const auto under_file = run_parasim(scenario + " --out " + q(dir / "file" / "out"));
  CHECK(under_file.exit_code == 4);
  CHECK(under_file.err == "parasim: cannot write the outputs: " + (dir / "file" / "out").string() + ": cannot create the output folder: Not a directory\n");
  // A file-size limit of 1 KiB (as a full disk would): the first output overflows it, the write
  // fails with the system's reason, and no output, temporary or half-written, is left.
  const std::string command = "cd " + q(dir) + " && bash -c \"trap '' XFSZ; ulimit -f 1; exec '" + std::string(PARASIM_BINARY) + "' " + scenario +
                              " --out out --quiet\" > stdout 2> stderr";
  const int status = std::system(command.c_str());
  CHECK((WIFEXITED(status) ? WEXITSTATUS(status) : -1) == 4);
  CHECK_THAT(slurp(dir / "stderr"), Catch::Matchers::StartsWith("parasim: cannot write the outputs: ") &&
                                        Catch::Matchers::Contains(": cannot write the output file: File too large"));
  CHECK((!std::filesystem::exists(dir / "out") || std::filesystem::is_empty(dir / "out")));
  // calibrate checks its output before it measures: a folder is bad input, a path below a file an
  // output fault, both at once.
  const auto folder = run_parasim("calibrate --backend cpu --out " + q(dir));
  CHECK(folder.exit_code == 2);
  CHECK(folder.err == "parasim: error: " + dir.string() + ": is a folder; expected the path of the file to write\n");
  const auto below = run_parasim("calibrate --backend cpu --out " + q(dir / "file" / "p.json"));
  CHECK(below.exit_code == 4);
  CHECK_THAT(below.err, Catch::Matchers::Contains("is a file, not a folder"));
}
