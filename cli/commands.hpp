#pragma once
/// The parasim command line: one function registers each sub-command on the CLI11 app. Commands throw
/// parasim errors; main() alone turns them into exit codes (0 ok, 2 bad input, 3 plan cannot run,
/// 1 internal error).
#include <functional>
#include <ostream>

#include <CLI/CLI.hpp>

namespace parasim::cli {

/// What a sub-command does once its options are parsed; returns the exit code.
using Action = std::function<int()>;

/// Registers the top-level `parasim SCENARIO.json [--out DIR] [--backend B] [--profile P] [--json]
/// [--allow-oom] [--trace-devices N]`.
void add_run_command(CLI::App& app, Action& action, std::ostream& out);

/// Registers `parasim model NAME|config.json|graph.json [--json] [--layers]`.
void add_model_command(CLI::App& app, Action& action, std::ostream& out);

/// Registers `parasim report RESULT.json… [--out DIR]`: saved results side by side.
void add_report_command(CLI::App& app, Action& action, std::ostream& out);

/// Registers `parasim search SCENARIO.json [--out DIR] [--top K] [--objective time|throughput|cost|memory]`.
void add_search_command(CLI::App& app, Action& action, std::ostream& out);

/// Registers `parasim calibrate --backend cpu|cuda|nccl|mpi --out P.json` and
/// `parasim calibrate --from-nccl-tests LOG --link NAME --out P.json`: a calibrated profile. Where a
/// measurement cannot run (no GPU, a build without CUDA) it says why on `err` and exits 3.
void add_calibrate_command(CLI::App& app, Action& action, std::ostream& out, std::ostream& err);

/// Registers `parasim execute SCENARIO.json [--plan NAME] [--steps N] [--warmup N] [--threads N] [--out DIR]
/// [--profile P.json]`: the plan's task graph run for real, predicted against measured.
void add_execute_command(CLI::App& app, Action& action, std::ostream& out);

/// Registers `parasim data synth --format cifar-bin|jpeg-tar --samples N --image-size S --out DIR`: a
/// synthetic dataset for the real loader.
void add_data_command(CLI::App& app, Action& action, std::ostream& out);

/// Parses argv and runs the chosen command. Throws parasim errors.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace parasim::cli
