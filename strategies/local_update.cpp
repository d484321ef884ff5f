#include "strategies/local_update.hpp"

#include "strategies/name_table.hpp"

namespace parasim::strategies {
namespace {

constexpr std::pair<LocalUpdateAlgorithm, const char*> kAlgorithms[] = {{LocalUpdateAlgorithm::DiLoCo, "diloco"},
                                                                       {LocalUpdateAlgorithm::StreamingDiLoCo, "streaming-diloco"},
                                                                       {LocalUpdateAlgorithm::PAPA, "papa"},
                                                                       {LocalUpdateAlgorithm::BranchTrainMerge, "branch-train-merge"}};
constexpr std::pair<OuterOptimizer, const char*> kOuterOptimizers[] = {{OuterOptimizer::Nesterov, "nesterov"}, {OuterOptimizer::SGD, "sgd"}};
constexpr std::pair<Compression, const char*> kCompressions[] = {
    {Compression::None, "none"}, {Compression::FP16, "fp16"}, {Compression::Int8, "int8"}, {Compression::FP4, "fp4"}, {Compression::TopK, "top-k"}};

}  // namespace

std::string_view to_string(LocalUpdateAlgorithm a) { return name_table::name_of(a, kAlgorithms); }
std::string_view to_string(OuterOptimizer o) { return name_table::name_of(o, kOuterOptimizers); }
std::string_view to_string(Compression c) { return name_table::name_of(c, kCompressions); }
const std::vector<std::string>& local_update_algorithm_names() {
  static const auto v = name_table::names(kAlgorithms);
  return v;
}
const std::vector<std::string>& outer_optimizer_names() {
  static const auto v = name_table::names(kOuterOptimizers);
  return v;
}
const std::vector<std::string>& compression_names() {
  static const auto v = name_table::names(kCompressions);
  return v;
}
std::optional<LocalUpdateAlgorithm> local_update_algorithm_from_string(std::string_view s) { return name_table::lookup(s, kAlgorithms); }
std::optional<OuterOptimizer> outer_optimizer_from_string(std::string_view s) { return name_table::lookup(s, kOuterOptimizers); }
std::optional<Compression> compression_from_string(std::string_view s) { return name_table::lookup(s, kCompressions); }

double wire_bytes_per_element(const LocalUpdateSpec& spec, double reduce_bytes) {
  switch (spec.compression) {
    case Compression::None: return reduce_bytes;
    case Compression::FP16: return 2;
    case Compression::Int8: return 1;
    case Compression::FP4: return 0.5;
    case Compression::TopK: return spec.topk_fraction * (4 + 4);
  }
  return reduce_bytes;
}

bool gathered(const LocalUpdateSpec& spec) { return spec.compression == Compression::TopK; }

OuterStepBytes outer_step_bytes_per_parameter(const LocalUpdateSpec& spec, double reduce_bytes) {
  OuterStepBytes b;
  if (spec.averages_weights()) {
    b.before = 0;
    b.after = 3 * 4;
  } else {
    b.before = 3 * 4;
    b.after = spec.outer_optimizer == OuterOptimizer::Nesterov ? 6 * 4 : 4 * 4;
  }
  if (spec.compression != Compression::None) {
    const double wire = wire_bytes_per_element(spec, reduce_bytes);
    b.before += 4 + wire + (spec.compression == Compression::TopK ? 2 * 4 : 0);
    b.after += wire + 4;
  }
  return b;
}

double outer_state_bytes_per_parameter(const LocalUpdateSpec& spec) {
  if (spec.averages_weights()) return 0;
  return spec.outer_optimizer == OuterOptimizer::Nesterov ? 8 : 4;
}

}  // namespace parasim::strategies
