// The scenario loader: every example loads and validates; bad input fails with an exact, located
// message (file:line:column: at POINTER: what was found, what was expected).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json_document.hpp"
#include "models/dtype.hpp"
#include "scenarios/loader.hpp"
#include "tests/scenarios/scenario_error.hpp"
#include "scenarios/schema.hpp"
#include "scenarios/schema_check.hpp"
#include "sim/collectives/names.hpp"
#include "strategies/plan.hpp"
#include "strategies/plan_spec.hpp"

using parasim::InputError;
using parasim::scenarios::load_scenario;
using parasim::scenarios::parse_scenario;
using parasim::scenarios::Scenario;

namespace {

const std::string kData = std::string(PARASIM_TEST_DATA_DIR) + "/scenarios";

/// A small valid scenario, one field group per line, so a test swaps one line and knows where every
/// value sits: line 3 model, 4 training, 5 cluster, 6 plan, then `tail` (what-ifs).
/// 8 A100 = tp 2 × pp 2 × dp 2; 16 samples = 4 micro-batches of 2 per replica; GPT-3 125M has 12
/// layers and 12 heads.
struct Text {
  std::string model = R"("model": { "preset": "gpt3-125m", "seq_len": 512 },)";
  std::string training = R"("training": { "global_batch": 16, "micro_batch": 2 },)";
  std::string cluster = R"("cluster": { "device": "a100-80gb", "nodes": 1 },)";
  std::string plan = R"("plan": { "tp": 2, "pp": 2, "schedule": "1f1b" })";
  std::string tail;
  [[nodiscard]] std::string str() const {
    return "{\n  \"name\": \"t\",\n  " + model + "\n  " + training + "\n  " + cluster + "\n  " + plan + tail + "\n}\n";
  }
};

std::string error_of(const std::string& text) { return parasim::testing::scenario_error(text); }


}  // namespace

TEST_CASE("scenario loader: the test scenario is valid, so each error below comes from its one change", "[scenarios]") {
  const Scenario s = parse_scenario(Text{}.str(), "s.json");
  CHECK(s.name == "t");
  CHECK(s.plan.tp == 2);
  CHECK(s.plan.pp == 2);
  CHECK(s.plan.dp == 0);  // derived: 8 devices / (tp 2 × pp 2) = 2
  CHECK(s.cluster.device_count() == 8);
  CHECK(s.output_dir == "parasim-out/t");
  CHECK(s.backend == parasim::scenarios::Backend::Analytical);
  CHECK_FALSE(s.profile.has_value());
}

TEST_CASE("scenario errors: structure, with file, line, column, pointer and what was expected", "[scenarios]") {
  Text t;
  SECTION("malformed JSON") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, })";
    CHECK(error_of(t.str()) ==
          "s.json:6:31: malformed JSON: syntax error while parsing object key - unexpected '}'; expected string literal");
  }
  SECTION("duplicate key") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, "tp": 4 })";
    CHECK(error_of(t.str()) ==
          "s.json:6:31: at /plan/tp: duplicate key \"tp\" in the object that starts at line 6; each key may appear once");
  }
  SECTION("unknown key, with did you mean") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, "schedul": "1f1b" })";
    CHECK(error_of(t.str()) ==
          "s.json:6:31: at /plan/schedul: unknown key \"schedul\" (did you mean \"schedule\"?)");
  }
  SECTION("unknown key, nothing close") {
    t.training = R"("training": { "global_batch": 16, "micro_batch": 2, "epochs": 3 },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:55: at /training/epochs: unknown key \"epochs\"; expected one of \"attention_kernel\", \"global_batch\", \"grad_precision\", \"micro_batch\", \"optimizer\" or \"precision\"");
  }
  SECTION("unknown enum value, with did you mean") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, "schedule": "1fb1" })";
    CHECK(error_of(t.str()) ==
          "s.json:6:43: at /plan/schedule: found \"1fb1\", expected one of \"gpipe\", \"1f1b\" or \"interleaved-1f1b\" (did you mean \"1f1b\"?)");
  }
  SECTION("wrong type") {
    t.plan = R"("plan": { "tp": "8", "pp": 2 })";
    CHECK(error_of(t.str()) ==
          "s.json:6:19: at /plan/tp: found string \"8\", expected an integer >= 1");
  }
  SECTION("a fraction where an integer belongs") {
    t.training = R"("training": { "global_batch": 16.5, "micro_batch": 2 },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:33: at /training/global_batch: found number 16.5, expected an integer >= 1");
  }
  SECTION("zero size") {
    t.training = R"("training": { "global_batch": 0, "micro_batch": 2 },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:33: at /training/global_batch: found integer 0, expected an integer >= 1");
  }
  SECTION("negative size") {
    t.cluster = R"("cluster": { "device": "a100-80gb", "nodes": -4 },)";
    CHECK(error_of(t.str()) ==
          "s.json:5:48: at /cluster/nodes: found integer -4, expected an integer >= 1");
  }
  SECTION("zero bandwidth") {
    t.cluster = R"("cluster": { "device": "a100-80gb", "inter_node": { "bandwidth_gbps": 0 } },)";
    CHECK(error_of(t.str()) ==
          "s.json:5:73: at /cluster/inter_node/bandwidth_gbps: found integer 0, expected a number >= 0.001");
  }
  // Link figures stay where a step's simulated time fits the picosecond clock (9.2e6 s): at most a
  // second of latency, at least 1 Mbit/s (an exabyte over 1 Mbit/s would take 8e12 s).
  SECTION("a latency of 1e11 microseconds") {
    t.cluster = R"("cluster": { "device": "a100-80gb", "intra_node": { "latency_us": 1e11 } },)";
    CHECK(error_of(t.str()) == "s.json:5:69: at /cluster/intra_node/latency_us: found number 100000000000.0, expected a number <= 1000000");
  }
  SECTION("a bandwidth of 1e-9 Gbit/s") {
    t.cluster = R"("cluster": { "device": "a100-80gb", "inter_node": { "bandwidth_gbps": 1e-9 } },)";
    CHECK(error_of(t.str()) == "s.json:5:73: at /cluster/inter_node/bandwidth_gbps: found number 1e-09, expected a number >= 0.001");
  }
  SECTION("a small range is named whole") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, "zero": 4 })";
    CHECK(error_of(t.str()) ==
          "s.json:6:39: at /plan/zero: found integer 4, expected an integer between 0 and 3");
  }
  SECTION("missing required key") {
    t.training = R"("training": { "micro_batch": 2 },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:15: at /training: missing required key \"global_batch\"");
  }
  SECTION("two model sources") {
    t.model = R"("model": { "preset": "gpt3-125m", "hf_config": "config.json" },)";
    CHECK(error_of(t.str()) ==
          "s.json:3:37: at /model/hf_config: found both \"preset\" and \"hf_config\", expected exactly one of \"preset\", \"transformer\", \"hf_config\" or \"graph\"");
  }
  SECTION("no model source") {
    t.model = R"("model": { "seq_len": 512 },)";
    CHECK(error_of(t.str()) ==
          "s.json:3:12: at /model: missing required key: expected exactly one of \"preset\", \"transformer\", \"hf_config\" or \"graph\"");
  }
  SECTION("neither cluster preset nor device") {
    t.cluster = R"("cluster": { "nodes": 2 },)";
    CHECK(error_of(t.str()) ==
          "s.json:5:14: at /cluster: missing required key: expected \"preset\" or \"device\"");
  }
  SECTION("a mesh axis twice") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, "mesh_order": ["pp", "tp", "dp", "tp"] })";
    CHECK(error_of(t.str()) ==
          "s.json:6:64: at /plan/mesh_order/3: found string \"tp\" again (it is also item 1), expected each item once");
  }
  SECTION("nesting far deeper than any scenario") {
    // The root object and 511 arrays make 512 levels; the next bracket, at column 513, is refused
    // (common/json_document's limit for every parasim input).
    const std::string deep = "{" + std::string(600, '[') + std::string(600, ']') + "}";
    CHECK(error_of(deep) == "s.json:1:513: JSON nested deeper than 512 levels; parasim inputs are at most a few levels deep");
  }
  SECTION("a number too large for a double") {
    t.training = R"("training": { "global_batch": 1e400 },)";
    CHECK(error_of(t.str()) == "s.json:4:33: malformed JSON: a number too large for a double-precision value");
  }
  SECTION("the root is not an object") {
    CHECK(error_of("[1, 2]") ==
          "s.json:1:1: at /: found an array, expected an object");
  }
  SECTION("a bad name") {
    CHECK(error_of("{ \"name\": \"my run\" }") ==
          "s.json:1:11: at /name: found string \"my run\", expected a name of letters, digits, '.', '_' and '-' that starts with a letter or digit");
  }
}

TEST_CASE("scenario errors: meaning, located at the field at fault", "[scenarios]") {
  Text t;
  SECTION("tp does not divide the attention heads") {
    t.plan = R"("plan": { "tp": 8, "pp": 1 })";
    CHECK(error_of(t.str()) ==
          "s.json:6:19: at /plan/tp: tp (8) does not divide the 12 attention heads of the model");
  }
  SECTION("pp larger than the layer count") {
    t.cluster = R"("cluster": { "device": "a100-80gb", "nodes": 2 },)";
    t.plan = R"("plan": { "tp": 1, "pp": 16 })";
    CHECK(error_of(t.str()) ==
          "s.json:6:28: at /plan/pp: pp (16) exceeds the 12 layers of the model");
  }
  SECTION("a routing imbalance below 1 (the schema)") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, "expert_imbalance": 0.8 })";
    CHECK(error_of(t.str()) == "s.json:6:51: at /plan/expert_imbalance: found number 0.8, expected a number >= 1");
  }
  SECTION("a routing imbalance on a dense model") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, "expert_imbalance": 1.5 })";
    CHECK(error_of(t.str()) == "s.json:6:51: at /plan/expert_imbalance: expert_imbalance applies to mixture-of-experts models only");
  }
  SECTION("a routing imbalance no expert-parallel rank can receive") {
    // Mixtral-8x7B (8 experts, top-2) on 8 A100 with ep 8: at most min(8, 8/2) = 4.
    t.model = R"("model": { "preset": "mixtral-8x7b", "seq_len": 512 },)";
    t.training = R"("training": { "global_batch": 8, "micro_batch": 1 },)";
    t.plan = R"("plan": { "ep": 8, "expert_imbalance": 5 })";
    CHECK(error_of(t.str()) == "s.json:6:42: at /plan/expert_imbalance: expert_imbalance 5 exceeds min(ep, experts / experts_per_token) = 4, "
                               "the most one expert-parallel rank can receive");
  }
  SECTION("tp × pp × dp is not the device count") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, "dp": 4 })";
    CHECK(error_of(t.str()) ==
          "s.json:6:37: at /plan/dp: the mesh tp × pp × dp = 2 × 2 × 4 = 16 devices does not match the cluster's 8 devices");
  }
  SECTION("the global batch does not split into micro-batches") {
    t.training = R"("training": { "global_batch": 18, "micro_batch": 2 },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:33: at /training/global_batch: global_batch (18) is not a multiple of micro_batch × dp = 2 × 2 = 4");
  }
  SECTION("unknown model preset") {
    t.model = R"("model": { "preset": "gpt3-175", "seq_len": 512 },)";
    CHECK(error_of(t.str()) ==
          "s.json:3:24: at /model/preset: unknown model \"gpt3-175\" (did you mean \"gpt3-175b\"?); run `parasim model --list` for the list");
  }
  SECTION("sequence longer than the preset's positions") {
    t.model = R"("model": { "preset": "gpt2", "seq_len": 4096 },)";
    CHECK(error_of(t.str()) ==
          "s.json:3:43: at /model/seq_len: model \"gpt2\": seq_len (4096) exceeds max_positions (1024)");
  }
  SECTION("inline transformer whose heads do not divide hidden") {
    t.model = R"("model": { "transformer": { "layers": 4, "hidden": 1000, "heads": 12, "vocab": 1000 } },)";
    CHECK(error_of(t.str()) ==
          "s.json:3:69: at /model/transformer/heads: model \"transformer\": heads (12) must divide hidden (1000) unless head_dim is given");
  }
  SECTION("inline latent attention whose rotary part is the whole head") {
    t.model = R"("model": { "transformer": { "layers": 4, "hidden": 768, "heads": 12, "head_dim": 64, "vocab": 1000, "kv_lora_rank": 32, "rope_head_dim": 64 } },)";
    CHECK(error_of(t.str()) ==
          "s.json:3:140: at /model/transformer/rope_head_dim: model \"transformer\": rope_head_dim (64) must be below head_dim (64)");
  }
  SECTION("a CNN option on an inline transformer") {
    t.model = R"("model": { "transformer": { "layers": 4, "hidden": 768, "heads": 12, "vocab": 1000 }, "image_size": 32 },)";
    CHECK(error_of(t.str()) ==
          "s.json:3:103: at /model/image_size: image_size applies to CNN and MLP presets, not to an inline transformer");
  }
  SECTION("attention on a model without attention") {
    t.model = R"("model": { "preset": "resnet50", "attention": "fused" },)";
    CHECK(error_of(t.str()) ==
          "s.json:3:49: at /model/attention: model \"resnet50\": option attention does not apply to a CNN, which has no attention (it "
          "applies to transformer presets)");
  }
  SECTION("fp8 on a device without fp8") {
    t.training = R"("training": { "global_batch": 16, "micro_batch": 2, "precision": "fp8" },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:68: at /training/precision: found \"fp8\", but the a100-80gb profile gives no peak FLOP/s in it; expected a "
          "precision the device computes in");
  }
  SECTION("an attention kernel the device has no curves for") {
    t.training = R"("training": { "global_batch": 16, "micro_batch": 2, "attention_kernel": "flash-attention-3" },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:75: at /training/attention_kernel: found \"flash-attention-3\", but the a100-80gb profile gives no attention "
          "curves for it; expected one of \"flash-attention-2\"");
  }
  SECTION("16-bit gradients under fp32 training") {
    t.training = R"("training": { "global_batch": 16, "micro_batch": 2, "precision": "fp32", "grad_precision": "bf16" },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:94: at /training/grad_precision: found \"bf16\", but training runs in fp32; expected \"fp32\" (gradients are kept at "
          "least as wide as the weights)");
  }
  SECTION("16-bit gradients under tf32 training (fp32 weights)") {
    t.training = R"("training": { "global_batch": 16, "micro_batch": 2, "precision": "tf32", "grad_precision": "fp16" },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:94: at /training/grad_precision: found \"fp16\", but training runs in tf32; expected \"fp32\" (gradients are kept at "
          "least as wide as the weights)");
  }
  SECTION("an attention kernel for a model without fused attention") {
    t.model = R"("model": { "preset": "resnet50" },)";
    t.training = R"("training": { "global_batch": 16, "micro_batch": 2, "attention_kernel": "flash-attention-2" },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:75: at /training/attention_kernel: found \"flash-attention-2\", but the model resnet50 has no fused attention; "
          "expected no attention_kernel");
  }
  SECTION("tp comm overlap without sequence parallelism") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, "tp_comm_overlap": true })";
    CHECK(error_of(t.str()) ==
          "s.json:6:50: at /plan/tp_comm_overlap: tensor-parallel communication overlap splits the sequence-parallel all-gathers and "
          "reduce-scatters; it needs sequence_parallel true");
  }
  SECTION("a model file that does not exist") {
    t.model = R"("model": { "hf_config": "no-such/config.json" },)";
    CHECK(error_of(t.str()) ==
          "s.json:3:27: at /model/hf_config: cannot find the file \"no-such/config.json\" (paths are relative to the scenario file's folder)");
  }
}

TEST_CASE("scenario errors: what-ifs, located at the value in the what-if and naming it", "[scenarios]") {
  Text t;
  SECTION("wrong type in a set value") {
    t.tail = R"(,
  "what_if": [ { "name": "A", "set": { "plan.pp": 4 } },
               { "name": "B", "set": { "plan.tp": "8" } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:8:51: at /what_if/1/set/plan.tp: what-if \"B\": found string \"8\", expected an integer >= 1");
  }
  SECTION("a set value the plan check rejects") {
    t.tail = R"(,
  "what_if": [ { "name": "tp 8", "set": { "plan.tp": 8, "plan.pp": 1 } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:7:54: at /what_if/0/set/plan.tp: what-if \"tp 8\": tp (8) does not divide the 12 attention heads of the model");
  }
  SECTION("a fault the set causes elsewhere") {
    t.plan = R"("plan": { "tp": 2, "pp": 2, "dp": 2 })";
    t.tail = R"(,
  "what_if": [ { "name": "2 nodes", "set": { "cluster.nodes": 2 } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:7:44: at /what_if/0/set: what-if \"2 nodes\": in the variant, /plan/dp: the mesh tp × pp × dp = 2 × 2 × 2 = 8 devices does not match the cluster's 16 devices");
  }
  SECTION("an unknown field path") {
    t.tail = R"(,
  "what_if": [ { "name": "A", "set": { "plan.tpp": 4 } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:7:40: at /what_if/0/set/plan.tpp: what-if \"A\": unknown field \"plan.tpp\" (did you mean \"plan.pp\"?); a what-if sets dotted paths such as \"plan.tp\" or \"cluster.inter_node.bandwidth_gbps\"");
  }
  SECTION("a path into a plain value") {
    t.tail = R"(,
  "what_if": [ { "name": "A", "set": { "plan.mesh_order.0": "tp" } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:7:40: at /what_if/0/set/plan.mesh_order.0: what-if \"A\": unknown field \"plan.mesh_order.0\": \"plan.mesh_order\" has no fields; a what-if sets the whole of \"plan.mesh_order\"");
  }
  SECTION("the name cannot be set") {
    t.tail = R"(,
  "what_if": [ { "name": "A", "set": { "name": "b" } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:7:40: at /what_if/0/set/name: what-if \"A\": \"name\" cannot be set by a what-if; a variant's name and description are the what-if's own");
  }
  SECTION("unknown key inside an object value") {
    t.tail = R"(,
  "what_if": [ { "name": "A", "set": { "cluster.inter_node": { "bandwith_gbps": 400 } } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:7:64: at /what_if/0/set/cluster.inter_node/bandwith_gbps: what-if \"A\": unknown key \"bandwith_gbps\" (did you mean \"bandwidth_gbps\"?)");
  }
  SECTION("null removes a required field") {
    t.tail = R"(,
  "what_if": [ { "name": "A", "set": { "training.global_batch": null } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:7:65: at /what_if/0/set/training.global_batch: what-if \"A\": in the variant, /training: missing required key \"global_batch\"");
  }
  SECTION("duplicate names") {
    t.tail = R"(,
  "what_if": [ { "name": "A", "set": { "plan.pp": 4 } },
               { "name": "A", "set": { "plan.pp": 1 } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:8:26: at /what_if/1/name: what-if name \"A\" is already used by /what_if/0; each what-if needs its own name");
  }
  SECTION("names that differ only in case or punctuation") {
    t.tail = R"(,
  "what_if": [ { "name": "IB 400G", "set": { "plan.pp": 4 } },
               { "name": "ib-400g", "set": { "plan.pp": 1 } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:8:26: at /what_if/1/name: what-if name \"ib-400g\" and \"IB 400G\" (/what_if/0) differ only in case or punctuation (both "
          "\"ib-400g\"), so a reader of the reports cannot tell them apart; rename one");
  }
  SECTION("a what-if named base, which every table already shows (two columns named base)") {
    t.tail = R"(,
  "what_if": [ { "name": "Base", "set": { "plan.pp": 4 } } ])";
    CHECK(error_of(t.str()) == "s.json:7:26: at /what_if/0/name: what-if name \"Base\" is the base's, which every table and report already shows; "
                               "name the what-if after what it changes");
  }
  SECTION("empty set") {
    t.tail = R"(,
  "what_if": [ { "name": "A", "set": {} } ])";
    CHECK(error_of(t.str()) ==
          "s.json:7:38: at /what_if/0/set: found an empty object, expected at least 1 member");
  }
}

TEST_CASE("scenario schema: its enums are the names the C++ types accept", "[scenarios]") {
  using parasim::scenarios::scenario_schema;
  const auto& defs = scenario_schema().at("definitions");
  const auto strings = [](const nlohmann::json& e) { return e.get<std::vector<std::string>>(); };
  CHECK(strings(defs.at("plan").at("properties").at("schedule").at("enum")) == parasim::strategies::schedule_names());
  CHECK(strings(defs.at("plan").at("properties").at("recompute").at("enum")) == parasim::strategies::recompute_names());
  CHECK(strings(defs.at("plan").at("properties").at("grad_accumulation").at("enum")) == parasim::strategies::grad_accumulation_names());
  CHECK(strings(defs.at("plan").at("properties").at("cp_comm").at("enum")) == parasim::strategies::cp_comm_names());
  CHECK(strings(defs.at("training").at("properties").at("optimizer").at("enum")) == parasim::strategies::optimizer_names());
  CHECK(strings(scenario_schema().at("properties").at("backend").at("enum")) == parasim::scenarios::backend_names());
  // One limit on a model's depth: the schema's, the inline transformer's and a Hugging Face config's.
  CHECK(defs.at("transformer").at("properties").at("layers").at("maximum") == parasim::models::kMaxLayers);
  {
    // At the limit a model loads; one more block is refused at the field, as a config of one more is.
    Text t;
    t.model = R"("model": { "transformer": { "layers": 4097, "hidden": 64, "heads": 2, "vocab": 256 }, "seq_len": 32 },)";
    CHECK(error_of(t.str()) == "s.json:3:41: at /model/transformer/layers: found integer 4097, expected an integer <= 4096");
  }
  CHECK(strings(defs.at("local_update").at("properties").at("algorithm").at("enum")) == parasim::strategies::local_update_algorithm_names());
  CHECK(strings(defs.at("local_update").at("properties").at("compression").at("enum")) == parasim::strategies::compression_names());
  CHECK(strings(defs.at("local_update").at("properties").at("outer_optimizer").at("properties").at("kind").at("enum")) ==
        parasim::strategies::outer_optimizer_names());
  CHECK(strings(defs.at("federated").at("properties").at("algorithm").at("enum")) == parasim::strategies::federated_algorithm_names());
  CHECK(strings(defs.at("federated").at("properties").at("server_optimizer").at("enum")) == parasim::strategies::server_optimizer_names());
  CHECK(strings(defs.at("distribution").at("properties").at("kind").at("enum")) == parasim::strategies::distribution_names());
  for (const auto& dtype : strings(defs.at("training").at("properties").at("precision").at("enum")))
    CHECK(parasim::models::dtype_from_string(dtype).has_value());
  // Each kind allows some of the algorithms (sim::check_cluster_spec says which fit the network).
  for (const auto& kind : defs.at("cluster").at("properties").at("algorithms").at("properties"))
    for (const auto& algorithm : strings(kind.at("enum"))) CHECK(parasim::sim::collective_algorithm_from_string(algorithm).has_value());
}

namespace {

/// Every (pointer, default) the schema states under `schema`, reached through "properties".
void collect_defaults(const nlohmann::json& schema, const std::string& pointer,
                      std::vector<std::pair<std::string, nlohmann::json>>& out) {
  const auto& s = parasim::scenarios::resolve_ref(schema);
  if (s.contains("default") && !pointer.empty()) out.emplace_back(pointer, s.at("default"));
  if (!s.contains("properties")) return;
  for (const auto& [key, child] : s.at("properties").items())
    if (key != "what_if") collect_defaults(child, pointer + "/" + key, out);
}

}  // namespace

TEST_CASE("scenario schema: every default it states is the loader's", "[scenarios]") {
  std::vector<std::pair<std::string, nlohmann::json>> defaults;
  collect_defaults(parasim::scenarios::scenario_schema(), "", defaults);
  REQUIRE(defaults.size() > 30);
  // Leaving a field out and writing its default must load the same. Without tp (pp) the base still
  // runs: 8 = 1 × 2 × 4 (2 × 1 × 4) and 16 samples = 2 micro-batches of 2 over dp 4; without
  // micro_batch: 16 = 8 micro-batches of 1 over dp 2. The transformer's fields need a base with an
  // inline transformer (4 layers ≥ pp 2; 12 heads and 4·768 MLP columns divide by tp 2).
  Text preset_base;
  Text transformer_base;
  transformer_base.model = R"("model": { "transformer": { "layers": 4, "hidden": 768, "heads": 12, "vocab": 1000 } },)";
  for (const auto& [pointer, value] : defaults) {
    const bool in_transformer = pointer.rfind("/model/transformer/", 0) == 0;
    const nlohmann::json base = nlohmann::json::parse((in_transformer ? transformer_base : preset_base).str());
    const nlohmann::json::json_pointer where(pointer);
    nlohmann::json absent = base;
    if (absent.contains(where)) absent[where.parent_pointer()].erase(where.back());
    nlohmann::json written = base;
    written[where] = value;
    INFO(pointer << " = " << value.dump());
    CHECK(parse_scenario(written.dump(), "s.json") == parse_scenario(absent.dump(), "s.json"));
  }
}

TEST_CASE("scenario what-ifs: each variant is the base with its fields replaced", "[scenarios]") {
  Text t;
  SECTION("a field the base left to its default") {
    t.tail = R"(,
  "what_if": [ { "name": "ZeRO-1", "description": "shard optimizer states", "set": { "plan.zero": 1 } } ])";
    const Scenario s = parse_scenario(t.str(), "s.json");
    REQUIRE(s.what_ifs.size() == 1);
    const Scenario& v = s.what_ifs[0];
    CHECK(s.plan.zero == 0);
    CHECK(v.plan.zero == 1);
    CHECK(v.name == "ZeRO-1");
    CHECK(v.description == "shard optimizer states");
    CHECK(v.pointer == "/what_if/0");
    CHECK(v.changes == std::vector<std::pair<std::string, std::string>>{{"plan.zero", "1"}});
    CHECK(v.output_dir == "parasim-out/t/zero-1");
    // Everything else is the base's.
    Scenario same = v;
    same.plan.zero = 0;
    same.name = s.name;
    same.description = s.description;
    same.pointer = s.pointer;
    same.output_dir = s.output_dir;
    same.what_ifs = s.what_ifs;
    same.changes.clear();
    CHECK(same == s);
  }
  SECTION("null returns a field to its default") {
    // tp 1 × pp 1 on 8 devices: dp 8; 16 samples = 1 micro-batch of 2 per replica.
    t.tail = R"(,
  "what_if": [ { "name": "pure DP", "set": { "plan.tp": null, "plan.pp": null } } ])";
    const Scenario v = parse_scenario(t.str(), "s.json").what_ifs.at(0);
    CHECK(v.plan.tp == 1);
    CHECK(v.plan.pp == 1);
    CHECK(v.plan.dp == 0);
  }
  SECTION("setting another model source replaces the model") {
    t.tail = R"(,
  "what_if": [ { "name": "own", "set": { "model.transformer": { "layers": 4, "hidden": 256, "heads": 4, "vocab": 1000 } } } ])";
    const Scenario v = parse_scenario(t.str(), "s.json").what_ifs.at(0);
    CHECK(v.model.source == parasim::scenarios::ModelSource::Transformer);
    CHECK(v.model.transformer.layers == 4);
    CHECK(v.model.transformer.seq_len == 512);  // the base's model.seq_len still applies
  }
  SECTION("entries apply in file order, so a later field refines an earlier object") {
    t.tail = R"(,
  "what_if": [ { "name": "IB", "set": { "cluster.inter_node": { "link": "ib-ndr" }, "cluster.inter_node.bandwidth_gbps": 400 } } ])";
    const Scenario v = parse_scenario(t.str(), "s.json").what_ifs.at(0);
    CHECK(v.cluster.inter_node.link == "ib-ndr");
    CHECK(v.cluster.inter_node.bandwidth_gbps == 400);
  }
  SECTION("a variant's output folder") {
    t.tail = R"(,
  "what_if": [ { "name": "IB 400G", "set": { "cluster.inter_node.bandwidth_gbps": 400 } },
               { "name": "elsewhere", "set": { "output.dir": "out/x" } } ])";
    const Scenario s = parse_scenario(t.str(), "s.json");
    CHECK(s.what_ifs.at(0).output_dir == "parasim-out/t/ib-400g");
    CHECK(s.what_ifs.at(1).output_dir == "out/x");
  }
}

TEST_CASE("scenario files: paths are relative to the scenario's folder, and faults in other files are theirs", "[scenarios]") {
  SECTION("a file that does not exist") {
    CHECK_THROWS_WITH(load_scenario(kData + "/no-such.json"), kData + "/no-such.json: cannot open the file for reading");
  }
  SECTION("malformed JSON names the file") {
    CHECK_THROWS_WITH(load_scenario(kData + "/malformed.json"),
                      kData + "/malformed.json:4:12: malformed JSON: syntax error while parsing object - unexpected string literal; expected '}'");
  }
  SECTION("a Hugging Face config, relative to the scenario's folder") {
    const Scenario s = load_scenario(kData + "/hf-config.json");
    CHECK(s.model.source == parasim::scenarios::ModelSource::HfConfig);
    CHECK(s.model.path == kData + "/models/gpt2-config.json");
    // GPT-2 small: 12 layers of hidden 768.
    const parasim::models::Graph g = parasim::scenarios::build_model(s);
    REQUIRE(g.transformer().has_value());
    CHECK(g.transformer()->layers == 12);
    CHECK(g.transformer()->seq_len == 512);
    // One micro-batch of 2 on each of dp = 8 / (tp 2 × pp 2) = 2 replicas.
    CHECK(g.batch() == 4);
  }
  SECTION("a graph JSON, whose batch the plan must run") {
    const Scenario s = load_scenario(kData + "/graph.json");
    CHECK(s.model.source == parasim::scenarios::ModelSource::Graph);
    CHECK(parasim::scenarios::build_model(s).batch() == 8);
    CHECK(parasim::scenarios::scenario_profile(s).name == parasim::sim::datasheet_profile().name);
    // With one GPU, a round is micro_batch 4 × dp 1 = 4 samples, not the graph's 8.
    const std::string text = R"({ "name": "g", "model": { "graph": "models/tiny-mlp.json" },
  "training": { "global_batch": 16, "micro_batch": 4 }, "cluster": { "device": "a100-80gb", "devices_per_node": 1 } })";
    CHECK_THROWS_WITH(parse_scenario(text, kData + "/inline.json"),
                      kData + "/inline.json:2:52: at /training/micro_batch: the graph in \"" + kData +
                          "/models/tiny-mlp.json\" is built for a batch of 8 samples, so micro_batch × dp must be 8; "
                          "found 4 × 1 = 4");
  }
  SECTION("a fault inside a model file is that file's") {
    CHECK_THROWS_WITH(load_scenario(kData + "/bad-hf-config.json"),
                      kData + "/models/llama-missing-hidden-size.json:1:1: at /hidden_size: missing required field "
                              "\"hidden_size\" (LlamaForCausalLM configs must give it)");
  }
  SECTION("a fault inside a profile file is that file's") {
    CHECK_THROWS_WITH(load_scenario(kData + "/bad-profile.json"),
                      kData + "/profiles/typo.json:3:3: at /devicez: unknown key \"devicez\" (did you mean \"devices\"?); "
                              "expected one of \"devices\", \"links\", \"loaders\", \"name\" or \"origin\"");
  }
  SECTION("a calibrated profile, whose devices the cluster is checked against") {
    const Scenario s = load_scenario(kData + "/calibrated.json");
    CHECK(s.profile == kData + "/profiles/lab.json");
    CHECK(parasim::scenarios::scenario_profile(s).devices.count("lab-gpu") == 1);
    // The what-if returns to the datasheet profile, where lab-gpu does not exist.
    CHECK_FALSE(s.what_ifs.at(0).profile.has_value());
    CHECK(s.what_ifs.at(0).cluster.device == "a100-80gb");
  }
  SECTION("a profile path is resolved against the scenario's folder") {
    CHECK_THROWS_WITH(load_scenario(kData + "/missing-profile.json"),
                      kData + "/missing-profile.json:6:14: at /profile: cannot find the profile file \"" + kData +
                          "/profiles/calibrated.json\" (paths are relative to the scenario file's folder)");
  }
}

TEST_CASE("scenario errors: the cluster, checked against the profile", "[scenarios]") {
  Text t;
  SECTION("unknown cluster preset") {
    t.cluster = R"("cluster": { "preset": "dgx-a10", "nodes": 1 },)";
    CHECK(error_of(t.str()) ==
          "s.json:5:26: at /cluster/preset: unknown cluster preset \"dgx-a10\" (did you mean \"dgx-a100\"?); expected one of \"dgx-a100\", \"dgx-a100-40gb\", \"dgx-a100-superpod\", \"dgx-b200\", \"dgx-h100\", \"dgx-h100-superpod\", \"dgx-h200\", \"dgx-v100\", \"gb200-nvl72\", \"pcie-v100\", \"tpu-v4-pod\", \"tpu-v5e-pod\" or \"tpu-v5p-pod\"");
  }
  SECTION("unknown device") {
    t.cluster = R"("cluster": { "device": "a100-80g", "nodes": 1 },)";
    CHECK(error_of(t.str()) ==
          "s.json:5:26: at /cluster/device: unknown device \"a100-80g\" (did you mean \"a100-80gb\"?); expected one of \"a100-40gb\", \"a100-80gb\", \"b200\", \"gb200\", \"h100-sxm\", \"h200\", \"host-cpu\", \"tpu-v4\", \"tpu-v5e\", \"tpu-v5p\" or \"v100\"");
  }
  SECTION("an NVLS algorithm on a node whose switch does not reduce") {
    // dgx-a100: NVLink 3 through a 2nd-generation NVSwitch, which has no NVLink SHARP.
    t.cluster = R"("cluster": { "preset": "dgx-a100", "nodes": 1, "algorithms": { "all_reduce": "nvls" } },)";
    CHECK(error_of(t.str()) ==
          "s.json:5:80: at /cluster/algorithms/all_reduce: nvls needs NVSwitch nodes with NVLink SHARP: name their intra_node.nvls_link");
  }
  SECTION("an unknown NVLS link") {
    t.cluster = R"("cluster": { "preset": "dgx-h100", "nodes": 1, "intra_node": { "nvls_link": "nvlink4-sharpp" } },)";
    CHECK(error_of(t.str()).rfind("s.json:5:79: at /cluster/intra_node/nvls_link: unknown link \"nvlink4-sharpp\" (did you mean \"nvlink4-sharp\"?)", 0) == 0);
  }
  SECTION("collnet on a fat-tree without SHARP") {
    t.cluster = R"("cluster": { "preset": "dgx-h100", "nodes": 2, "algorithms": { "all_reduce": "collnet" } },)";
    CHECK(error_of(t.str()) == "s.json:5:80: at /cluster/algorithms/all_reduce: collnet needs a fat-tree with InfiniBand SHARP: set inter_node.sharp");
  }
  SECTION("torus dims that do not hold the devices") {
    t.cluster = R"("cluster": { "preset": "tpu-v4-pod", "nodes": 2, "inter_node": { "torus_dims": [2, 2, 4] } },)";
    CHECK(error_of(t.str()) ==
          "s.json:5:82: at /cluster/inter_node/torus_dims: a 2x2x4 torus does not hold the cluster's 8 devices (2 nodes x 4)");
  }
  SECTION("a field the file does not write is located at the nearest one it does") {
    // A torus needs its shape; dgx-a100 gives none, so the fault is at /cluster/inter_node/torus_dims,
    // which the file does not have: it is located at /cluster/inter_node.
    t.cluster = R"("cluster": { "preset": "dgx-a100", "inter_node": { "kind": "torus" } },)";
    CHECK(error_of(t.str()) ==
          "s.json:5:52: at /cluster/inter_node/torus_dims: a torus needs torus_dims (chips per dimension) or torus_ndims (1 to 6 dimensions)");
  }
  SECTION("a what-if that breaks a field the base wrote") {
    t.cluster = R"("cluster": { "preset": "dgx-a100", "nodes": 1, "inter_node": { "kind": "none" } },)";
    t.plan = R"("plan": { "tp": 2, "pp": 2, "dp": 2 })";
    t.tail = R"(,
  "what_if": [ { "name": "8 nodes", "set": { "cluster.nodes": 8, "plan.dp": 16 } } ])";
    CHECK(error_of(t.str()) ==
          "s.json:7:44: at /what_if/0/set: what-if \"8 nodes\": in the variant, /cluster/inter_node/kind: a cluster of 8 nodes needs an inter-node network; without one it may have 1 node only");
  }
}

TEST_CASE("scenario topology fields: every one reaches the cluster spec", "[scenarios][topology]") {
  Text t;
  t.cluster = R"("cluster": { "preset": "dgx-a100", "nodes": 4,
    "inter_node": { "oversubscription": 2, "nodes_per_leaf": 2, "rail_optimized": false },
    "node_groups": [ { "nodes": 2, "device": "a100-80gb" }, { "nodes": 2, "device": "h100-sxm", "speed_factor": 0.9 } ],
    "stragglers": [ { "device": 3, "speed_factor": 0.5 } ],
    "wan": { "sites": 2, "bandwidth_gbps": 400, "latency_us": 2000 },
    "algorithms": { "all_reduce": "ring", "all_gather": "hierarchical" } },)";
  t.plan = R"("plan": { "tp": 2, "pp": 2 })";
  const Scenario s = parse_scenario(t.str(), "s.json");
  const parasim::sim::ClusterSpec& c = s.cluster;
  CHECK(c.inter_node.oversubscription == 2);
  CHECK(c.inter_node.nodes_per_leaf == 2);
  CHECK_FALSE(c.inter_node.rail_optimized);
  REQUIRE(c.node_groups.size() == 2);
  CHECK(c.node_groups[1] == parasim::sim::NodeGroupSpec{2, "h100-sxm", 0.9});
  CHECK(c.stragglers == std::vector<parasim::sim::StragglerSpec>{{3, 0.5}});
  REQUIRE(c.wan.has_value());
  CHECK(*c.wan == parasim::sim::WanSpec{2, 400, 2000});
  CHECK(c.algorithms.all_reduce == parasim::sim::CollectiveAlgorithm::Ring);
  CHECK(c.algorithms.all_gather == parasim::sim::CollectiveAlgorithm::Hierarchical);
  CHECK(c.algorithms.reduce_scatter == parasim::sim::CollectiveAlgorithm::Auto);

  t.cluster = R"("cluster": { "preset": "pcie-v100", "intra_node": { "pcie_switches": 2, "host_bridge_gbps": 128 } },)";
  const Scenario p = parse_scenario(t.str(), "s.json");
  CHECK(p.cluster.intra_node.pcie_switches == 2);
  CHECK(p.cluster.intra_node.host_bridge_gbps == 128.0);
}

TEST_CASE("scenario errors: topologies that do not fit the devices, zero bandwidths, wrong algorithms", "[scenarios][topology]") {
  Text t;
  SECTION("node groups that do not cover the nodes") {
    t.cluster = R"("cluster": { "preset": "dgx-a100", "nodes": 2, "node_groups": [ { "nodes": 1 } ] },)";
    CHECK(error_of(t.str()) ==
          "s.json:5:65: at /cluster/node_groups: the node groups hold 1 nodes, but the cluster has 2 (nodes); the groups must cover every node once");
  }
  SECTION("a straggler that is not a device") {
    t.cluster = R"("cluster": { "preset": "dgx-a100", "stragglers": [ { "device": 8 } ] },)";
    CHECK(error_of(t.str()) == "s.json:5:66: at /cluster/stragglers/0/device: found device 8, but the cluster's devices are 0 to 7");
  }
  SECTION("sites that do not split the nodes") {
    t.cluster = R"("cluster": { "preset": "dgx-a100", "nodes": 3, "wan": { "sites": 2 } },)";
    CHECK(error_of(t.str()) == "s.json:5:68: at /cluster/wan/sites: found 2 sites, expected a count that splits the cluster's 3 nodes evenly");
  }
  SECTION("a WAN link of zero bandwidth") {
    t.cluster = R"("cluster": { "preset": "dgx-a100", "nodes": 2, "wan": { "bandwidth_gbps": 0 } },)";
    CHECK(error_of(t.str()) == "s.json:5:77: at /cluster/wan/bandwidth_gbps: found integer 0, expected a number >= 0.001");
  }
  SECTION("an intra-node link of zero bandwidth") {
    t.cluster = R"("cluster": { "preset": "dgx-a100", "intra_node": { "bandwidth_gbps": 0 } },)";
    CHECK_THAT(error_of(t.str()), Catch::Matchers::StartsWith("s.json:5:72: at /cluster/intra_node/bandwidth_gbps: "));
  }
  SECTION("torus dims whose product is not the device count") {
    t.cluster = R"("cluster": { "preset": "tpu-v4-pod", "nodes": 16, "inter_node": { "torus_dims": [4, 4, 3] } },)";
    CHECK(error_of(t.str()) ==
          "s.json:5:83: at /cluster/inter_node/torus_dims: a 4x4x3 torus does not hold the cluster's 64 devices (16 nodes x 4)");
  }
  SECTION("an algorithm that needs another network") {
    t.cluster = R"("cluster": { "preset": "dgx-a100", "algorithms": { "all_reduce": "torus-rings" } },)";
    CHECK(error_of(t.str()) == "s.json:5:68: at /cluster/algorithms/all_reduce: torus-rings applies only to a torus inter-node network");
  }
  SECTION("an unknown topology key") {
    t.cluster = R"("cluster": { "preset": "dgx-a100", "wan": { "site": 2 } },)";
    CHECK_THAT(error_of(t.str()), Catch::Matchers::Contains("at /cluster/wan/site: unknown key \"site\""));
  }
}

TEST_CASE("scenario loader: an inline transformer states fine-grained and shared experts and latent attention", "[scenarios][moe]") {
  Text t;
  t.model = R"("model": { "transformer": { "layers": 4, "hidden": 768, "heads": 12, "head_dim": 96, "vocab": 1000, "norm": "rmsnorm", "mlp": "swiglu", "experts": 16, "experts_per_token": 4, "moe_ffn_hidden": 256, "shared_ffn_hidden": 512, "first_dense_layers": 1, "kv_lora_rank": 128, "q_lora_rank": 192, "rope_head_dim": 32, "v_head_dim": 64 } },)";
  t.training = R"("training": { "global_batch": 16, "micro_batch": 2 },)";
  t.plan = R"("plan": { "tp": 2, "pp": 2, "ep": 2, "expert_imbalance": 1.25 })";
  const Scenario s = parse_scenario(t.str(), "s.json");
  const auto& c = s.model.transformer;
  CHECK(c.moe_ffn_hidden == 256);
  CHECK(c.shared_ffn_hidden == 512);
  CHECK(c.first_dense_layers == 1);
  CHECK(c.mla());
  CHECK(c.q_lora_rank == 192);
  CHECK(c.effective_v_head_dim() == 64);
  CHECK(s.plan.expert_imbalance == 1.25);
}

TEST_CASE("scenario: grad_precision and attention_kernel reach the plan", "[scenarios]") {
  // GPT-3 125M on 8 A100 (tp 2 × pp 2 × dp 2, as Text above) with fp32 gradients in bf16 training and
  // the A100's FlashAttention-2 curves named.
  Text t;
  t.training = R"("training": { "global_batch": 16, "micro_batch": 2, "precision": "bf16", "grad_precision": "fp32", "attention_kernel": "flash-attention-2" },)";
  const Scenario s = parse_scenario(t.str(), "s.json");
  REQUIRE(s.training.grad_precision == parasim::models::DType::F32);
  const parasim::models::Graph g = parasim::scenarios::build_model(s);
  const parasim::strategies::Plan plan = parasim::strategies::make_plan(g, s.training, s.plan, s.cluster.device_count());
  CHECK(plan.grad_dtype == parasim::models::DType::F32);
  CHECK(plan.attention_kernel == "flash-attention-2");
  CHECK(plan.description == "tp 2 × pp 2 × dp 2, 1f1b, micro-batch 2 × 4, fp32 gradients");
  // Absent: bf16 training keeps bf16 gradients.
  t.training = R"("training": { "global_batch": 16, "micro_batch": 2, "precision": "bf16" },)";
  const Scenario d = parse_scenario(t.str(), "s.json");
  CHECK(parasim::strategies::make_plan(parasim::scenarios::build_model(d), d.training, d.plan, d.cluster.device_count()).grad_dtype ==
        parasim::models::DType::BF16);
  // tf32 training keeps fp32 weights, so fp32 gradients (and no "fp32 gradients" note: nothing is widened).
  t.training = R"("training": { "global_batch": 16, "micro_batch": 2, "precision": "tf32" },)";
  const Scenario f = parse_scenario(t.str(), "s.json");
  const parasim::strategies::Plan tf32 = parasim::strategies::make_plan(parasim::scenarios::build_model(f), f.training, f.plan, f.cluster.device_count());
  CHECK(tf32.grad_dtype == parasim::models::DType::F32);
  CHECK(tf32.description == "tp 2 × pp 2 × dp 2, 1f1b, micro-batch 2 × 4");
}

TEST_CASE("scenario errors: sharding annotations, at the field of the scenario", "[scenarios]") {
  // GPT-3 125M: 12 heads, MLP width 3072. A mesh of data 2 × model 4 on the 8 devices.
  Text t;
  const std::string mesh = R"("mesh": [ { "name": "data", "size": 2, "data": true }, { "name": "model", "size": 4 } ])";
  SECTION("the annotated plan loads") {
    t.plan = R"("plan": { )" + mesh + R"(, "shardings": [ { "weight": "layers.*.mlp.fc1.weight", "spec": [null, "model"] } ] })";
    CHECK(error_of(t.str()) == "(no error)");
  }
  SECTION("an unknown mesh axis") {
    t.plan = R"("plan": { )" + mesh + R"(, "shardings": [ { "weight": "layers.*.mlp.fc1.weight", "spec": [null, "mdl"] } ] })";
    CHECK(error_of(t.str()) ==
          "s.json:6:171: at /plan/shardings/0/spec/1: unknown mesh axis \"mdl\"; the mesh has \"data\" or \"model\" (did you mean \"model\"?)");
  }
  SECTION("an axis that does not divide the dim: 8 does not divide 12 heads") {
    t.plan = R"("plan": { "mesh": [ { "name": "model", "size": 8 } ], "shardings": [ { "weight": "layers.*.attn.q_proj.weight", "spec": [null, "model", null, null] } ] })";
    CHECK(error_of(t.str()) == "s.json:6:130: at /plan/shardings/0/spec/1: the split over 8 devices does not divide dim \"g\" of operator "
                               "\"layers.0.attn.q_proj\" (size 12)");
  }
  SECTION("two annotations that contradict each other") {
    t.plan = R"("plan": { )" + mesh + R"(, "shardings": [ { "weight": "layers.*.mlp.fc1.weight", "spec": [null, "model"] }, )" +
             R"({ "output": "layers.3.mlp.fc1", "spec": [null, null, null] } ] })";
    CHECK_THAT(error_of(t.str()), Catch::Matchers::StartsWith("s.json:6:") &&
                                      Catch::Matchers::Contains("at /plan/shardings/1/spec/2: contradicts /plan/shardings/0, which splits dim \"f\" "
                                                                "of operator \"layers.3.mlp.fc1\" over \"model\", not nothing (replicated)"));
  }
  SECTION("a knob beside the mesh") {
    t.plan = R"("plan": { "tp": 2, )" + mesh + R"( })";
    CHECK_THAT(error_of(t.str()), Catch::Matchers::Contains("at /plan/tp: tp cannot be set beside \"mesh\""));
  }
  SECTION("an annotation of two kinds") {
    t.plan = R"("plan": { )" + mesh + R"(, "shardings": [ { "weight": "x", "operator": "y", "spec": [] } ] })";
    CHECK_THAT(error_of(t.str()), Catch::Matchers::Contains("at /plan/shardings/0"));
  }
}

TEST_CASE("a graph file's sharding annotations apply under a plan's mesh, and their faults are the file's", "[scenarios]") {
  // The MNIST MLP (784 → 512 → 512 → 10, batch 8) whose file annotates fc.0's weight by columns and
  // fc.1's by rows over "model" (tests/data/scenarios/models/mlp-mnist-annotated.json).
  auto text = [](const std::string& graph, const std::string& plan) {
    return R"({ "name": "g", "model": { "graph": "models/)" + graph + R"(" },
  "training": { "global_batch": 8, "micro_batch": 8, "precision": "fp32" }, "cluster": { "device": "a100-80gb", "devices_per_node": 2 },
  "plan": )" + plan + " }";
  };
  const std::string mesh = R"({ "mesh": [ { "name": "model", "size": 2 } ] })";
  const Scenario s = parse_scenario(text("mlp-mnist-annotated.json", mesh), kData + "/inline.json");
  const parasim::models::Graph g = parasim::scenarios::build_model(s);
  REQUIRE(g.annotations().size() == 2);
  CHECK(g.annotations()[1].pointer == "/shardings/1");
  const parasim::strategies::Plan plan = parasim::strategies::make_plan(g, s.training, s.plan, 2);
  // Megatron's pair: fc.0 splits its output o (column), fc.1 its contraction i (row), the ReLU
  // between takes o forward; fc.2 is whole. Mesh axes: pp (0), model (1).
  auto axes_of = [&](const std::string& op, const std::string& dim) {
    for (parasim::models::OpId id = 0; id < g.op_count(); ++id)
      if (g.op(id).name == op) return plan.sharding[id].axes_of(dim);
    FAIL("no operator " << op);
    return std::vector<int>{};
  };
  CHECK(axes_of("fc.0", "o") == std::vector<int>{1});
  CHECK(axes_of("fc.0.relu", "o") == std::vector<int>{1});
  CHECK(axes_of("fc.1", "i") == std::vector<int>{1});
  CHECK(axes_of("fc.2", "i").empty());
  // The knobs' plans leave the file's annotations unused: data parallel 2, micro-batches of 4.
  std::string dp = text("mlp-mnist-annotated.json", R"({ "dp": 2 })");
  dp.replace(dp.find("\"micro_batch\": 8"), 16, "\"micro_batch\": 4");
  const Scenario knobs = parse_scenario(dp, kData + "/inline.json");
  const parasim::strategies::Plan knob_plan = parasim::strategies::make_plan(parasim::scenarios::build_model(knobs), knobs.training, knobs.plan, 2);
  CHECK(knob_plan.sharding[1].axes_of("o").empty());  // fc.0's width, whole
  CHECK_FALSE(knob_plan.sharding[1].axes_of("b").empty());
  // A fault in the file's annotation is located in the file.
  CHECK_THROWS_WITH(parse_scenario(text("mlp-mnist-bad-annotation.json", mesh), kData + "/inline.json"),
                    Catch::Matchers::StartsWith(kData + "/models/mlp-mnist-bad-annotation.json:") &&
                        Catch::Matchers::Contains("at /shardings/1/spec/0: unknown mesh axis \"modle\"; the mesh has \"model\""));
}
