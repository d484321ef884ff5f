// reports/trace: the Chrome trace-event form of a simulated step.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "reports/trace.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "tiny_simulation.hpp"

using namespace parasim;
using nlohmann::json;

namespace {

std::string trace_text(const sim::Simulation& s, reports::TraceOptions options = {}, reports::TraceSummary* summary = nullptr) {
  std::ostringstream out;
  const auto sum = reports::write_trace(out, s, options);
  if (summary) *summary = sum;
  return out.str();
}

/// Two devices with streams {compute, comm}: A (1.5 µs) on device 0's compute stream, then an
/// all-reduce over both devices (2.25 µs by the estimate given) on their comm streams.
sim::Simulation two_device_simulation() {
  sim::TaskGraphBuilder b(2, {sim::Stream::Compute, sim::Stream::TensorComm});
  const sim::TaskId a = b.add(sim::TaskKind::Compute, 0, 0, Picoseconds(1'500'000), sim::Category::Forward, 0, b.label("layer \"0\""), {});
  b.enqueue(a);
  const std::vector<std::int64_t> both{0, 1};
  const auto cid = b.collective(sim::CollectiveSpec{sim::CollectiveKind::AllReduce, sim::CollectiveAlgorithm::Auto, b.group(both), 1024, -1});
  const std::vector<sim::TaskId> deps{a};
  b.enqueue(b.add_collective(cid, 1, sim::Category::GradientComm, -1, b.label("grad all-reduce"), deps));
  sim::Simulation s;
  s.step.tasks = std::move(b).finish();
  s.collectives = {sim::CollectiveEstimate{Picoseconds(2'250'000), sim::CollectiveAlgorithm::Ring, 1024, 0}};
  const std::vector<Picoseconds> coll_ps{s.collectives[0].time};
  s.timeline = sim::simulate_fifo(s.step.tasks, coll_ps);
  s.result.scenario = "two";
  s.result.variant = "base";
  s.result.backend = "analytical";
  s.result.per_device = {sim::DeviceTimes{0, 0, {}, 0}, sim::DeviceTimes{1, 1, {}, 0}};
  return s;
}

}  // namespace

TEST_CASE("trace: a hand-built step, event by event", "[reports][trace]") {
  const sim::Simulation s = two_device_simulation();
  reports::TraceSummary summary;
  const std::string text = trace_text(s, {}, &summary);
  CHECK(summary.devices_total == 2);
  CHECK(summary.devices_written == 2);
  // A on device 0, the all-reduce on each of the two members' comm streams: 3 events.
  CHECK(summary.events == 3);
  CHECK_FALSE(summary.truncated);
  // A runs [0, 1.5 µs); the all-reduce waits for A and runs [1.5, 3.75) µs on both devices.
  const std::string expected =
      R"TRACE({"displayTimeUnit":"ns",
"otherData":{"backend":"analytical","devices_in_trace":2,"devices_total":2,"model":"","plan":"","profile":"","profile_origin":"","scenario":"two","step_time_ps":3750000,"truncated":false,"variant":"base"},
"traceEvents":[
{"ph":"M","name":"process_name","pid":0,"args":{"name":"device 0 (stage 0)"}},
{"ph":"M","name":"process_sort_index","pid":0,"args":{"sort_index":0}},
{"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"compute"}},
{"ph":"M","name":"thread_sort_index","pid":0,"tid":0,"args":{"sort_index":0}},
{"ph":"M","name":"thread_name","pid":0,"tid":1,"args":{"name":"comm.tp"}},
{"ph":"M","name":"thread_sort_index","pid":0,"tid":1,"args":{"sort_index":1}},
{"ph":"X","name":"layer \"0\"","cat":"forward","pid":0,"tid":0,"ts":0,"dur":1.5,"args":{"micro_batch":0}},
{"ph":"X","name":"grad all-reduce","cat":"gradient comm","pid":0,"tid":1,"ts":1.5,"dur":2.25,"args":{"collective":"all-reduce","algorithm":"ring","bytes":1024.0,"group_size":2}},
{"ph":"M","name":"process_name","pid":1,"args":{"name":"device 1 (stage 1)"}},
{"ph":"M","name":"process_sort_index","pid":1,"args":{"sort_index":1}},
{"ph":"M","name":"thread_name","pid":1,"tid":0,"args":{"name":"compute"}},
{"ph":"M","name":"thread_sort_index","pid":1,"tid":0,"args":{"sort_index":0}},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"comm.tp"}},
{"ph":"M","name":"thread_sort_index","pid":1,"tid":1,"args":{"sort_index":1}},
{"ph":"X","name":"grad all-reduce","cat":"gradient comm","pid":1,"tid":1,"ts":1.5,"dur":2.25,"args":{"collective":"all-reduce","algorithm":"ring","bytes":1024.0,"group_size":2}}
]}
)TRACE";
  CHECK(text == expected);
  CHECK_NOTHROW(json::parse(text));
}

TEST_CASE("trace: a simulated step parses, with one process per device and a thread per stream", "[reports][trace]") {
  const sim::Simulation s = testing::tiny_simulation();
  const sim::TaskGraph& g = s.step.tasks;
  const std::string text = trace_text(s);
  CHECK(text == trace_text(testing::tiny_simulation()));
  const json trace = json::parse(text);
  REQUIRE(trace["traceEvents"].is_array());

  std::map<std::int64_t, std::string> processes;
  std::set<std::pair<std::int64_t, std::int64_t>> threads;
  std::int64_t complete = 0;
  bool durations_non_negative = true, known_resources = true;
  for (const auto& e : trace["traceEvents"]) {
    const std::int64_t pid = e["pid"];
    if (e["ph"] == "M" && e["name"] == "process_name") processes[pid] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert({pid, e["tid"].get<std::int64_t>()});
    if (e["ph"] == "X") {
      ++complete;
      durations_non_negative = durations_non_negative && e["dur"].get<double>() >= 0 && e["ts"].get<double>() >= 0;
      known_resources = known_resources && processes.count(pid) && threads.count({pid, e["tid"].get<std::int64_t>()});
    }
  }
  // 8 devices, 5 streams each (compute, comm.tp, comm.dp, comm.ep, p2p), then the process of the
  // link tracks (pid 8, one thread per link of Simulation::links.tracks).
  CHECK(processes.size() == 9);
  CHECK(processes[5] == "device 5 (stage 1)");
  CHECK(processes[8] == "links (the " + std::to_string(s.links.tracks.size()) + " most loaded)");
  REQUIRE(!s.links.tracks.empty());
  std::int64_t device_threads = 0, link_busy = 0;
  for (const auto& [pid, tid] : threads) device_threads += pid < 8 ? 1 : 0;
  for (const auto& track : s.links.tracks) link_busy += static_cast<std::int64_t>(track.busy.size());
  CHECK(device_threads == 8 * static_cast<std::int64_t>(g.stream_count()));
  CHECK(threads.size() == 8 * g.stream_count() + s.links.tracks.size());
  CHECK(durations_non_negative);
  CHECK(known_resources);
  // One event per task per resource it occupies (the total length of the per-resource queues), and
  // one per busy interval of each link track.
  CHECK(complete == static_cast<std::int64_t>(g.queue.size()) + link_busy);
  CHECK(trace["otherData"]["truncated"] == false);
  CHECK(trace["otherData"]["backend"] == "analytical");

  // A collective over several devices is an event on the stream of each member, at the same time.
  for (sim::TaskId t = 0; t < g.task_count(); ++t) {
    if (g.kind[t] != sim::TaskKind::Collective || g.collectives[g.owner[t]].kind == sim::CollectiveKind::SendRecv) continue;
    std::set<std::int64_t> members;
    for (std::int64_t d : g.group(g.collectives[g.owner[t]].group)) members.insert(d);
    REQUIRE(members.size() >= 2);
    const double ts = static_cast<double>(s.timeline.start_ps[t]) / 1e6;
    std::set<std::int64_t> seen;
    for (const auto& e : trace["traceEvents"])
      if (e["ph"] == "X" && e["name"] == g.labels[g.label[t]] && e["tid"] == g.stream[t] && e["ts"].get<double>() == ts)
        seen.insert(e["pid"].get<std::int64_t>());
    INFO("collective task " << t);
    CHECK(std::includes(seen.begin(), seen.end(), members.begin(), members.end()));
    break;
  }
}

TEST_CASE("trace: a cluster larger than max_devices keeps the first devices and says so", "[reports][trace]") {
  const sim::Simulation s = testing::tiny_simulation();
  reports::TraceSummary summary;
  reports::TraceOptions first_three;
  first_three.max_devices = 3;
  const json trace = json::parse(trace_text(s, first_three, &summary));
  CHECK(summary.truncated);
  CHECK(summary.devices_written == 3);
  CHECK(summary.note == "trace truncated: devices 0 to 2 of 8 (the first 3 in device order); the step time and figures cover every device");
  CHECK(trace["otherData"]["truncated"] == true);
  CHECK(trace["otherData"]["note"] == summary.note);
  std::set<std::int64_t> pids;
  bool labelled = false;
  for (const auto& e : trace["traceEvents"]) {
    pids.insert(e["pid"].get<std::int64_t>());
    labelled = labelled || (e["name"] == "process_labels" && e["args"]["labels"] == summary.note);
  }
  // Devices 0 to 2, then the links process, whose pid follows every device's (8).
  CHECK(pids == std::set<std::int64_t>{0, 1, 2, 8});
  CHECK(labelled);
}
