// A user's clone holds the project alone: no file of it may send the reader to a folder beside the
// project or to a design note that is not in it (issue 19, fault 9: the datasheet profiles cited a
// validation folder beside the project, CMakeLists.txt and calibrate/README.md the design notes).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

TEST_CASE("no file of the project points outside it", "[cli][self-contained]") {
  const fs::path root = PARASIM_SOURCE_DIR;
  // What a reference outside the project looks like: the folder beside it, and the notes in it. The
  // names are put together here so that this file, read like every other, holds none of them.
  const std::string beside = std::string("sha") + "red";
  const std::vector<std::string> outside{"../" + beside, beside + "/validation", beside + "/seeds", beside + "/notes",
                                         std::string("DESIGN") + ".md", std::string("STYLE") + ".md"};
  std::size_t files = 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    // Build folders, the npm packages and hidden folders (git's own files) are not the project's sources.
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name == "node_modules" || name.rfind('.', 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    ++files;
    for (const std::string& s : outside) {
      INFO(fs::relative(it->path(), root).string() + " names " + s);
      CHECK(text.str().find(s) == std::string::npos);
    }
  }
  CHECK(files > 1000);  // the whole tree was read: sources, docs, scenarios, profiles, fuzz inputs
}
