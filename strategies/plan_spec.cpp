#include "strategies/plan_spec.hpp"

#include "strategies/name_table.hpp"

namespace parasim::strategies {
namespace {
using name_table::lookup;
using name_table::name_of;
using name_table::names;

constexpr std::pair<Optimizer, const char*> kOptimizers[] = {{Optimizer::Adam, "adam"},
                                                            {Optimizer::AdamW, "adamw"},
                                                            {Optimizer::SGD, "sgd"},
                                                            {Optimizer::SGDMomentum, "sgd-momentum"},
                                                            {Optimizer::Adafactor, "adafactor"}};
constexpr std::pair<Schedule, const char*> kSchedules[] = {
    {Schedule::GPipe, "gpipe"}, {Schedule::OneFOneB, "1f1b"}, {Schedule::Interleaved1F1B, "interleaved-1f1b"}};
constexpr std::pair<Recompute, const char*> kRecompute[] = {
    {Recompute::None, "none"}, {Recompute::Selective, "selective"}, {Recompute::Full, "full"}};
constexpr std::pair<GradAccumulation, const char*> kGradAccumulation[] = {
    {GradAccumulation::Fused, "fused"}, {GradAccumulation::Autograd, "autograd"}, {GradAccumulation::Fp32Buffer, "fp32-buffer"}};
constexpr std::pair<CpComm, const char*> kCpComm[] = {{CpComm::P2P, "p2p"}, {CpComm::AllGather, "all_gather"}, {CpComm::AllToAll, "a2a"}};
}  // namespace

std::string_view to_string(CpComm c) { return name_of(c, kCpComm); }
const std::vector<std::string>& cp_comm_names() {
  static const auto v = names(kCpComm);
  return v;
}
std::optional<CpComm> cp_comm_from_string(std::string_view s) { return lookup(s, kCpComm); }

std::string_view to_string(GradAccumulation g) { return name_of(g, kGradAccumulation); }
const std::vector<std::string>& grad_accumulation_names() {
  static const auto v = names(kGradAccumulation);
  return v;
}
std::optional<GradAccumulation> grad_accumulation_from_string(std::string_view s) { return lookup(s, kGradAccumulation); }

std::string_view to_string(Optimizer o) { return name_of(o, kOptimizers); }
std::string_view to_string(Schedule s) { return name_of(s, kSchedules); }
std::string_view to_string(Recompute r) { return name_of(r, kRecompute); }
const std::vector<std::string>& optimizer_names() {
  static const auto v = names(kOptimizers);
  return v;
}
const std::vector<std::string>& schedule_names() {
  static const auto v = names(kSchedules);
  return v;
}
const std::vector<std::string>& recompute_names() {
  static const auto v = names(kRecompute);
  return v;
}
std::optional<Optimizer> optimizer_from_string(std::string_view s) { return lookup(s, kOptimizers); }
std::optional<Schedule> schedule_from_string(std::string_view s) { return lookup(s, kSchedules); }
std::optional<Recompute> recompute_from_string(std::string_view s) { return lookup(s, kRecompute); }

}  // namespace parasim::strategies
