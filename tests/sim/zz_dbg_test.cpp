#include <catch2/catch.hpp>
#include <map>
#include "models/zoo.hpp"
#include "sim/cost_model.hpp"
#include "sim/work/op_work.hpp"
#include "sim/profile.hpp"
#include "strategies/plan.hpp"
using namespace parasim;
TEST_CASE("DBG resnet costs", "[dbg]") {
  for (auto prec : {models::DType::F16, models::DType::TF32}) {
  for (std::string dev : {"a100-80gb", "v100"}) {
    if (dev == "v100" && prec == models::DType::TF32) continue;
    models::ModelOptions o; o.batch = 256;
    const models::Graph g = models::build_named_model("resnet50", o);
    strategies::TrainingSpec tr; tr.global_batch = 256; tr.micro_batch = 256; tr.precision = prec; tr.optimizer = strategies::Optimizer::SGDMomentum;
    strategies::PlanSpec spec;
    const auto plan = strategies::make_plan(g, tr, spec, 1);
    const auto& d = sim::datasheet_profile().device(dev);
    std::map<std::string, std::pair<double,double>> by;
    double flops = 0;
    for (models::OpId op = 0; op < g.op_count(); ++op) {
      const auto w = sim::op_work(g.op(op), plan.mesh, plan.sharding[op], plan.precision, 1, 1.0);
      const auto c = sim::op_cost(d, w);
      auto& e = by[std::string(models::to_string(g.op(op).kind))];
      e.first += c.fwd_s; e.second += c.bwd_s;
      if (g.op(op).kind == models::OpKind::Conv2d) flops += w.fwd_flops + w.bwd_flops;
    }
    double tot = 0;
    for (auto& [k, v] : by) { WARN(dev << " " << models::to_string(prec) << " " << k << " fwd " << v.first*1e3 << " ms bwd " << v.second*1e3 << " ms"); tot += v.first + v.second; }
    WARN(dev << " total " << tot * 1e3 << " ms; conv TFLOP " << flops/1e12);
  }}
  CHECK(true);
}
