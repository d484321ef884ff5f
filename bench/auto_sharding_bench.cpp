// The automatic sharding's integer program (sim/auto_sharding.hpp) at the size the issue names: one
// GPT-3 175B layer (hidden 12288, 96 heads, sequence 2048, bf16, a micro-batch of 1024 sequences for
// the whole mesh) on 1024 A100 (128 DGX A100) as a mesh of 128 × 8, and as 1024 × 1; then the whole
// 96-layer model on the 128 × 8 mesh, in micro-batches of 128 sequences (its alike layers share one choice, so the program stays one
// layer's size). Per case: the wall time to build the graph and plan, to build and solve the program
// (CBC on one thread, 10 s limit), its status and gap, its size, and what it estimates a step at.
// Last, Alpa's inter-operator pass (sim/auto_pipeline.hpp) on the 96-layer model in 8 stages of a
// 16 × 8 mesh, 64 micro-batches of 16 sequences: the layers' programs, the cut, the stages' programs
// (each program its own 10 s limit), and each stage's outcome.
// Target: the one-layer programs solve within 10 s on 2 cores.
#include <chrono>
#include <cstdio>
#include <string>

#include "models/zoo.hpp"
#include "sim/auto_pipeline.hpp"
#include "sim/auto_sharding.hpp"
#include "sim/cluster.hpp"
#include "sim/profile.hpp"
#include "strategies/plan.hpp"

using namespace parasim;

namespace {

double since(std::chrono::steady_clock::time_point t) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count(); }

void run(const char* label, std::int64_t layers, std::int64_t batch, std::int64_t outer, std::int64_t inner, std::int64_t pp = 1,
         double limit_s = 10) {
  const auto& profile = sim::datasheet_profile();
  sim::ClusterSpec cs = *sim::cluster_preset("dgx-a100");
  cs.nodes = 128;
  const sim::Cluster cluster = sim::build_cluster(cs, profile);
  auto t = std::chrono::steady_clock::now();
  models::TransformerConfig c = *models::transformer_preset("gpt3-175b");
  c.layers = layers;
  c.seq_len = 2048;
  c.batch = batch;
  c.dtype = models::DType::BF16;
  const models::Graph g = models::build_transformer(c);
  strategies::TrainingSpec training;
  training.global_batch = 1024;
  training.micro_batch = batch;
  training.precision = models::DType::BF16;
  strategies::PlanSpec spec;
  spec.pp = pp;
  spec.mesh = {{"x", outer, false}};
  if (inner > 1) spec.mesh.push_back({"y", inner, false});
  const strategies::Plan plan = strategies::make_plan(g, training, spec, cluster.device_count());
  const double build_s = since(t);
  t = std::chrono::steady_clock::now();
  sim::AutoShardingOptions options;
  options.time_limit_s = limit_s;
  if (pp > 1) {
    const sim::AutoPipeline p = sim::auto_pipeline(g, plan, cluster, profile.device(cluster.devices.front().kind), options);
    const double total_s = since(t);
    std::string cut;
    for (auto n : p.cut.stage_layers) cut += (cut.empty() ? "" : "+") + std::to_string(n);
    std::printf("%-34s graph+plan %6.3f s  layers+cut+stages %7.3f s  %zu layer programs, cut %s, %s  T %.4f s\n", label, build_s, total_s,
                p.layer_programs, cut.c_str(), p.outcome().c_str(), p.cut.latency_s);
    for (std::size_t st = 0; st < p.stages.size(); ++st)
      std::printf("  stage %zu: %s, solve %.3f s, estimate %.4f s\n", st, p.stages[st].outcome().c_str(), p.stages[st].solve_seconds,
                  p.stages[st].objective_s);
    return;
  }
  const sim::AutoSharding a = sim::auto_shard(g, plan, cluster, profile.device(cluster.devices.front().kind), options);
  const double total_s = since(t);
  std::printf("%-34s graph+plan %6.3f s  program+solve %7.3f s (solve %7.3f s)  %s  estimate %.4f s\n", label, build_s, total_s,
              a.solve_seconds, a.outcome().c_str(), a.objective_s);
}

}  // namespace

int main() {
  run("GPT-3 175B, 1 layer, 128 x 8", 1, 1024, 128, 8);
  run("GPT-3 175B, 1 layer, 1024", 1, 1024, 1024, 1);
  // The whole model without pipelining: its activations for 1024 sequences at once do not fit 1024
  // A100 without recomputation (which the program does not weigh), so 8 micro-batches of 128; even so
  // its weights fit only split over both axes, which leaves the batch unsplit. The program is hard
  // under that memory bound: the run shows the time limit's path (the best found, with its gap).
  run("GPT-3 175B, 96 layers, 128 x 8", 96, 128, 128, 8);
  run("GPT-3 175B, 96 layers, pp 8 x 16 x 8", 96, 16, 16, 8, 8);
  return 0;
}
