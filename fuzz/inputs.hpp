#pragma once
/// What each fuzz target does with one input, shared by the libFuzzer targets (fuzz/*_fuzzer.cpp) and
/// by the regression test (tests/fuzz/regressions_test.cpp), which replays every committed input in
/// an ordinary build. One function per input format parasim reads: a scenario, a graph JSON, a
/// Hugging Face config.json, a profile JSON, a result.json, a search.json and an nccl-tests log;
/// and one for the files themselves (input_file): what kind of file, how large, read by which reader.
///
/// The contract each function checks is the project's: any bytes either load or fail with an
/// InputError (a scenario whose plan cannot run may fail with a PlanError once simulated); anything
/// else — another exception, a crash, a sanitizer report, a hang — is a bug. What loads must also
/// hold together: a loaded graph passes Graph::check, a graph or profile survives to_json →
/// from_json unchanged, and a scenario small enough simulates to a result that serialises.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/kernel_csv.hpp"
#include "calibrate/nccl_tests.hpp"
#include "common/error.hpp"
#include "common/input_file.hpp"
#include "common/json_document.hpp"
#include "models/graph.hpp"
#include "models/graph_json.hpp"
#include "models/hf_config.hpp"
#include "models/zoo.hpp"
#include "scenarios/data.hpp"
#include "scenarios/federated.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/local_update.hpp"
#include "sim/cluster.hpp"
#include "sim/profile_json.hpp"
#include "sim/result_json.hpp"
#include "sim/simulate.hpp"
#include "sim/task_estimate.hpp"
#include "strategies/plan.hpp"
#include "strategies/search/search_json.hpp"

namespace parasim::fuzz {

/// The name inputs are parsed under. Its folder does not exist, so a relative path in a scenario
/// (a profile, a graph, an HF config) fails to open instead of reading the fuzzer's working folder.
inline constexpr const char* kInputName = "/nonexistent-parasim-fuzz/input.json";

/// Scenarios whose task graph is at most this big are simulated too (bigger ones only estimated),
/// so one input takes milliseconds and the fuzzer explores inputs, not long simulations.
inline constexpr std::uint64_t kMaxSimulatedTasks = 20'000;

/// A scenario text: load it; for the base and every what-if build the model and the plan, estimate
/// the task graph, and when it is small simulate it and serialise the result.
inline void scenario(std::string_view text) {
  scenarios::Scenario base;
  try {
    base = scenarios::parse_scenario(text, kInputName);
  } catch (const InputError&) {
    return;
  }
  std::vector<const scenarios::Scenario*> variants{&base};
  for (const auto& w : base.what_ifs) variants.push_back(&w);
  for (const scenarios::Scenario* v : variants) {
    try {
      // A local update simulates a replica's step and the synchronous one on every device: both
      // must be small. A federated scenario's rounds cost about clients_per_round² × rounds steps.
      std::vector<scenarios::Scenario> steps;
      if (v->local_update) {
        steps.push_back(scenarios::replica_scenario(*v, 0));
        steps.push_back(scenarios::synchronous_scenario(*v));
      } else {
        steps.push_back(*v);
      }
      bool small = true;
      for (const auto& s : steps) {
        const models::Graph graph = scenarios::build_model(s);
        const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, s.cluster.device_count());
        small = small && sim::estimate_task_graph(graph, plan).tasks <= kMaxSimulatedTasks;
      }
      if (v->federated) {
        const auto& f = *v->federated;
        small = small && static_cast<double>(f.per_round) * static_cast<double>(f.per_round) * static_cast<double>(f.rounds) <= 1e6;
      }
      if (!small) continue;
      const sim::Profile profile = scenarios::scenario_profile(*v);
      sim::Simulation simulation;
      if (v->local_update) {
        simulation = scenarios::simulate_local_update(*v, profile, sim::Backend::Analytical);
      } else if (v->federated) {
        simulation = scenarios::simulate_federated_scenario(*v, profile, sim::Backend::Analytical);
      } else {
        const models::Graph graph = scenarios::build_model(*v);
        const strategies::Plan plan = strategies::make_plan(graph, v->training, v->plan, v->cluster.device_count());
        const sim::Cluster cluster = sim::build_cluster(v->cluster, profile);
        // As `parasim SCENARIO` runs it: with an input pipeline, its tasks and its verdict (the step
        // simulated again, at most a dozen times more).
        simulation = scenarios::simulate_step(*v, graph, plan, cluster, profile, sim::Backend::Analytical);
      }
      (void)sim::json_text(sim::to_json(simulation.result));
    } catch (const PlanError&) {
    }
  }
}

/// A graph JSON text: read it; a graph that loads is valid and survives a round trip through JSON.
inline void graph_json(std::string_view text) {
  models::Graph graph;
  try {
    graph = models::graph_from_json(JsonDocument::parse(text, kInputName));
  } catch (const InputError&) {
    return;
  }
  if (const auto problem = graph.check()) PARASIM_CHECK(false, "graph_from_json returned an invalid graph: " + problem->message);
  const models::Graph again = models::graph_from_json(JsonDocument::parse(models::to_json_text(graph), kInputName));
  PARASIM_CHECK(again == graph, "a graph read from JSON differs after to_json → graph_from_json");
}

/// A Hugging Face config.json text: when it reads as one, build its model; the graph is valid.
inline void hf_config(std::string_view text) {
  try {
    const JsonDocument doc = JsonDocument::parse(text, kInputName);
    if (!models::is_hf_config(doc.root())) return;
    const models::Graph graph = models::build_hf_model(doc, models::ModelOptions{});
    if (const auto problem = graph.check()) PARASIM_CHECK(false, "build_hf_model returned an invalid graph: " + problem->message);
  } catch (const InputError&) {
  }
}

/// A profile JSON text: read it; a profile that loads survives a round trip through JSON.
inline void profile(std::string_view text) {
  sim::Profile p;
  try {
    p = sim::profile_from_json(JsonDocument::parse(text, kInputName));
  } catch (const InputError&) {
    return;
  }
  const sim::Profile again = sim::profile_from_json(JsonDocument::parse(sim::to_json(p).dump(), kInputName));
  PARASIM_CHECK(again == p, "a profile read from JSON differs after to_json → profile_from_json");
}

/// A result.json text (one result or an array of them, as `parasim report` reads): read it.
inline void result_json(std::string_view text) {
  try {
    (void)sim::results_from_json(JsonDocument::parse(text, kInputName));
  } catch (const InputError&) {
  }
}

/// A search.json text (`parasim report` reads one beside results): read it as a saved search. Read
/// whatever its "schema" says, so that every input reaches the reader.
inline void search_json(std::string_view text) {
  try {
    const JsonDocument doc = JsonDocument::parse(text, kInputName);
    (void)strategies::search::is_search_json(doc);
    (void)strategies::search::search_from_json(doc);
  } catch (const InputError&) {
  }
}

/// An nccl-tests log (`parasim calibrate --from-nccl-tests`): parse it; what parses has two ranks or
/// more and rows, and calibrating nvlink3 from it either fails with an InputError or gives a profile
/// that survives to_json → from_json unchanged.
inline void nccl_tests(std::string_view text) {
  try {
    const calibrate::NcclTestsLog log = calibrate::parse_nccl_tests(text, kInputName);
    if (log.ranks < 2 || log.rows.empty()) std::abort();
    sim::Profile p = sim::datasheet_profile();
    p.links["nvlink3"] = calibrate::calibrated_link(p.link("nvlink3"), log, kInputName);
    if (sim::profile_from_json(JsonDocument::parse(sim::to_json(p).dump(), kInputName)) != p) std::abort();
  } catch (const InputError&) {
  }
}

/// Kernel timings as `parasim calibrate --from-csv` reads them: parse them; what parses has rows,
/// and calibrating h100-sxm from them gives a profile that survives to_json → from_json unchanged.
inline void kernel_csv(std::string_view text) {
  try {
    const std::vector<calibrate::KernelTiming> rows = calibrate::parse_kernel_csv(text, kInputName);
    if (rows.empty()) std::abort();
    sim::Profile p = sim::datasheet_profile();
    p.devices["h100-sxm"] = calibrate::calibrated_from_csv(p.device("h100-sxm"), rows, kInputName);
    if (sim::profile_from_json(JsonDocument::parse(sim::to_json(p).dump(), kInputName)) != p) std::abort();
  } catch (const InputError&) {
  }
}

/// A file of some kind and size read by one of parasim's readers. The input's first byte picks the
/// kind: 0 a regular file holding the rest of the input; 1 a regular file of zeros one to 256 bytes
/// past its reader's limit (sparse: no disk is used); 2 a folder; 3 a named pipe (FIFO), which a
/// reader that opened it would wait on for ever; 4 a symbolic link to the regular file of kind 0;
/// 5 a symbolic link to /dev/zero, which never ends; 6 no file at all. The second byte picks the
/// reader: 0 the scenario loader, 1 a JSON document (every JSON input: a profile, a graph, a
/// result, a search), 2 a log or CSV of measurements. Each must read the file or throw an
/// InputError naming it (a PlanError for a scenario that cannot run), never block, grow without
/// bound or crash. The files live in one folder of the system's temporary folder per process.
inline void input_file(std::string_view bytes) {
  if (bytes.size() < 2) return;
  const int kind = static_cast<unsigned char>(bytes[0]) % 7, reader = static_cast<unsigned char>(bytes[1]) % 3;
  const std::string_view content = bytes.substr(2);
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "parasim-fuzz-XXXXXX").string();
    PARASIM_CHECK(::mkdtemp(tmpl.data()) != nullptr, "a temporary folder for the input-file target");
    return std::filesystem::path(tmpl);
  }();
  const std::filesystem::path regular = dir / "regular.json", path = dir / "input.json";
  std::filesystem::remove_all(path);
  std::filesystem::remove(regular);
  const std::uintmax_t limit = reader == 2 ? kMaxLogBytes : kMaxJsonBytes;
  auto write_regular = [&](const std::filesystem::path& where) {
    std::FILE* f = std::fopen(where.c_str(), "wb");
    PARASIM_CHECK(f != nullptr, "the input-file target writes its file");
    if (!content.empty()) std::fwrite(content.data(), 1, content.size(), f);
    std::fclose(f);
  };
  switch (kind) {
    case 0: write_regular(path); break;
    case 1: {
      const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      PARASIM_CHECK(fd >= 0, "the input-file target creates its file");
      const auto past = content.empty() ? 1 : 1 + static_cast<unsigned char>(content[0]);
      const int grown = ::ftruncate(fd, static_cast<off_t>(limit + past));
      ::close(fd);
      PARASIM_CHECK(grown == 0, "the input-file target sizes its sparse file");
      break;
    }
    case 2: std::filesystem::create_directory(path); break;
    case 3: PARASIM_CHECK(::mkfifo(path.c_str(), 0644) == 0, "the input-file target makes its pipe"); break;
    case 4:
      write_regular(regular);
      std::filesystem::create_symlink(regular, path);
      break;
    case 5: std::filesystem::create_symlink("/dev/zero", path); break;
    default: break;
  }
  try {
    switch (reader) {
      case 0: (void)scenarios::load_scenario(path.string()); break;
      case 1: (void)JsonDocument::read_file(path.string()); break;
      default: (void)read_input_file(path.string(), kMaxLogBytes, "a log of measurements"); break;
    }
  } catch (const InputError&) {
  } catch (const PlanError&) {
  }
}

/// libFuzzer's entry, for any of the functions above: an exception that escapes is a bug, reported
/// with its message before the abort libFuzzer catches.
inline int run_input(void (*target)(std::string_view), const std::uint8_t* data, std::size_t size) {
  try {
    target(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parasim fuzz: uncaught exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}

}  // namespace parasim::fuzz
