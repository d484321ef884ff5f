#pragma once
/// The case both GPT-3 benchmarks simulate (issues 3 and 4): GPT-3 175B on 1024 A100 in 128 DGX A100
/// nodes, tensor 8 × pipeline 16 × data 8, 1F1B, global batch 1536, micro-batch 1, full recompute,
/// sequence 2048, datasheet profile.
#include "models/zoo.hpp"
#include "sim/cluster.hpp"
#include "sim/profile.hpp"
#include "strategies/plan.hpp"

namespace parasim::bench {

struct Gpt3Case {
  sim::Cluster cluster;
  strategies::TrainingSpec training;
  strategies::PlanSpec spec;
  models::ModelOptions options;
};

inline Gpt3Case gpt3_175b_1024_a100(const sim::Profile& profile) {
  Gpt3Case c;
  sim::ClusterSpec cs = *sim::cluster_preset("dgx-a100");
  cs.nodes = 128;
  c.cluster = sim::build_cluster(cs, profile);
  c.training.global_batch = 1536;
  c.training.micro_batch = 1;
  c.spec.tp = 8;
  c.spec.pp = 16;
  c.spec.dp = 8;
  c.spec.schedule = strategies::Schedule::OneFOneB;
  c.spec.recompute = strategies::Recompute::Full;
  c.options.batch = c.training.micro_batch * c.spec.dp;
  c.options.seq_len = 2048;
  return c;
}

}  // namespace parasim::bench
