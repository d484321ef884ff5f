#pragma once
/// The scenario loader: the one place that turns a scenario file into validated values, and the one
/// place that reports bad input with file, line, column and JSON pointer. In order:
///   1. JSON syntax and duplicate keys (common/json_document);
///   2. structure against the embedded JSON Schema (scenarios/scenario.schema.json, via valijson);
///   3. meaning: the cluster preset and cluster spec against the profile (sim::check_cluster_spec), the
///      model (it must build), and the plan against the model and the device count
///      (strategies::check_plan);
///   4. each what-if variant, built from the base and its "set" entries and checked the same way; its
///      faults are reported at the offending value in its "set", naming the variant.
/// Every failure is an InputError; nothing in a file can crash the loader.
#include <string>
#include <string_view>

#include "models/graph.hpp"
#include "scenarios/scenario.hpp"
#include "sim/cluster.hpp"
#include "sim/profile.hpp"

namespace parasim::scenarios {

/// Reads and checks the scenario file at `path`. Relative paths in it are resolved against its folder.
[[nodiscard]] Scenario load_scenario(const std::string& path);

/// Checks scenario text. `file` names it in errors, and its folder anchors relative paths (for "" or a
/// bare name: the current directory).
[[nodiscard]] Scenario parse_scenario(std::string_view text, const std::string& file);

/// The first reason `profile` cannot describe scenario `s`, as a pointer into the scenario and a
/// message, or nothing: a cluster spec it cannot build (sim::check_cluster_spec; pointers under
/// "/cluster"), a device kind without a peak in the training precision, a named attention
/// implementation a device kind has no curves for. The loader checks the scenario's own profile with
/// it, and the commands a --profile file.
[[nodiscard]] std::optional<sim::ClusterProblem> profile_problem(const Scenario& s, const sim::Profile& profile);

/// The profile a loaded scenario uses: its calibrated profile file, or the built-in datasheet profile
/// (whose `origin` says which, for reports). Throws InputError if the file changed since loading.
[[nodiscard]] sim::Profile scenario_profile(const Scenario& s);

/// The model graph of a loaded scenario for micro_batch × dp samples (one micro-batch of every
/// data-parallel replica), as strategies::check_plan and make_plan expect it. Precondition: `s` came
/// from the loader, which has built it once already.
[[nodiscard]] models::Graph build_model(const Scenario& s);

/// Solves the sharding of `s`'s plan (plan.auto_sharding on a mesh; sim/auto_sharding.hpp) on its
/// cluster with `profile`, and writes the solution into the plan as annotations, with its outcome and
/// report. The loader calls it for a scenario that asks; the search, for the plans it adds. Throws
/// PlanError when no sharding fits.
void solve_auto_sharding(Scenario& s, const sim::Profile& profile);

}  // namespace parasim::scenarios
