#include "reports/trace.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace parasim::reports {
namespace {

using nlohmann::json;

/// A JSON string literal, quotes included; invalid UTF-8 becomes U+FFFD instead of an exception.
std::string json_string(const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

/// Picoseconds as microseconds, exactly: 1234567 ps → "1.234567", 5000000 ps → "5".
void append_us(std::string& out, std::int64_t ps) {
  append_int(out, ps / 1'000'000);
  std::int64_t frac = ps % 1'000'000;
  if (frac == 0) return;
  char digits[6];
  for (int i = 5; i >= 0; --i, frac /= 10) digits[i] = static_cast<char>('0' + frac % 10);
  int len = 6;
  while (digits[len - 1] == '0') --len;
  out += '.';
  out.append(digits, static_cast<std::size_t>(len));
}

std::int64_t stage_of(const sim::Result& r, std::int64_t device) {
  const auto d = static_cast<std::size_t>(device);
  return d < r.per_device.size() && r.per_device[d].device == device ? r.per_device[d].stage : -1;
}

}  // namespace

namespace {

/// The devices a trace of `options` holds: the given ones (checked), else the first max_devices.
std::vector<std::int64_t> traced_devices(const sim::TaskGraph& g, const TraceOptions& options) {
  PARASIM_CHECK(options.max_devices >= 1, "a trace needs max_devices >= 1");
  std::vector<std::int64_t> devices = options.devices;
  if (devices.empty()) {
    for (std::int64_t d = 0; d < std::min(g.devices, options.max_devices); ++d) devices.push_back(d);
  } else {
    for (std::size_t i = 0; i < devices.size(); ++i)
      PARASIM_CHECK(devices[i] >= 0 && devices[i] < g.devices && (i == 0 || devices[i] > devices[i - 1]),
                    "trace devices must be ascending, distinct and in range");
  }
  return devices;
}

}  // namespace

std::int64_t trace_events(const sim::Simulation& simulation, const TraceOptions& options) {
  const sim::TaskGraph& g = simulation.step.tasks;
  const std::size_t streams = g.stream_count();
  std::int64_t events = 0;
  for (const std::int64_t d : traced_devices(g, options))
    for (std::size_t s = 0; s < streams; ++s) events += static_cast<std::int64_t>(g.queue_of(static_cast<std::size_t>(d) * streams + s).size());
  return events;
}

TraceSummary write_trace(std::ostream& out, const sim::Simulation& simulation, const TraceOptions& options) {
  const sim::TaskGraph& g = simulation.step.tasks;
  const sim::Timeline& tl = simulation.timeline;
  const sim::Result& result = simulation.result;
  PARASIM_CHECK(tl.start_ps.size() == g.task_count(), "the timeline belongs to the task graph");
  PARASIM_CHECK(simulation.collectives.size() == g.collectives.size(), "the collective estimates belong to the task graph");

  TraceSummary summary;
  summary.devices_total = g.devices;
  const std::vector<std::int64_t> devices = traced_devices(g, options);
  summary.devices_written = static_cast<std::int64_t>(devices.size());
  summary.truncated = summary.devices_written < summary.devices_total;
  if (summary.truncated) {
    summary.note = options.devices.empty()
                       ? "trace truncated: devices 0 to " + std::to_string(summary.devices_written - 1) + " of " +
                             std::to_string(summary.devices_total) + " (the first " + std::to_string(summary.devices_written) +
                             " in device order); the step time and figures cover every device"
                       : "trace truncated: " + std::to_string(summary.devices_written) + " of " + std::to_string(summary.devices_total) +
                             " devices (" + (options.selection.empty() ? std::string("chosen by the caller") : options.selection) +
                             "); the step time and figures cover every device";
  }

  std::vector<Picoseconds> coll_ps;
  coll_ps.reserve(simulation.collectives.size());
  for (const auto& c : simulation.collectives) coll_ps.push_back(c.time);
  // Escaped once: a label is shared by many tasks.
  std::vector<std::string> labels;
  labels.reserve(g.labels.size());
  for (const auto& l : g.labels) labels.push_back(json_string(l));
  std::vector<std::string> categories;
  for (int c = 0; c < sim::kCategoryCount; ++c) categories.push_back(json_string(std::string(sim::to_string(static_cast<sim::Category>(c)))));
  std::vector<std::string> collective_args;
  for (std::size_t i = 0; i < g.collectives.size(); ++i) {
    const auto& spec = g.collectives[i];
    const std::size_t members = spec.kind == sim::CollectiveKind::SendRecv ? 2 : g.group(spec.group).size();
    std::string a = ",\"collective\":" + json_string(std::string(sim::to_string(spec.kind))) +
                    ",\"algorithm\":" + json_string(std::string(sim::to_string(simulation.collectives[i].algorithm))) +
                    ",\"bytes\":" + json(spec.bytes).dump() + ",\"group_size\":";
    append_int(a, static_cast<std::int64_t>(members));
    collective_args.push_back(std::move(a));
  }

  json other = json::object();
  other["scenario"] = result.scenario;
  other["variant"] = result.variant;
  other["model"] = result.model;
  other["plan"] = result.plan;
  other["backend"] = result.backend;
  other["profile"] = result.profile;
  other["profile_origin"] = result.profile_origin;
  other["step_time_ps"] = tl.makespan.count;
  other["devices_total"] = summary.devices_total;
  other["devices_in_trace"] = summary.devices_written;
  other["truncated"] = summary.truncated;
  if (summary.truncated) other["note"] = summary.note;

  std::string buf;
  buf.reserve(1 << 20);
  const auto flush_if_full = [&] {
    if (buf.size() >= (1u << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  };
  buf += "{\"displayTimeUnit\":\"ns\",\n\"otherData\":" + other.dump(-1, ' ', false, json::error_handler_t::replace) +
         ",\n\"traceEvents\":[\n";
  bool first = true;
  const auto begin_event = [&] {
    if (!first) buf += ",\n";
    first = false;
  };
  const auto metadata = [&](const char* name, std::int64_t pid, std::int64_t tid, const std::string& args) {
    begin_event();
    buf += "{\"ph\":\"M\",\"name\":\"";
    buf += name;
    buf += "\",\"pid\":";
    append_int(buf, pid);
    if (tid >= 0) {
      buf += ",\"tid\":";
      append_int(buf, tid);
    }
    buf += ",\"args\":" + args + "}";
  };

  const std::size_t streams = g.stream_count();
  for (const std::int64_t d : devices) {
    const std::int64_t stage = stage_of(result, d);
    std::string process = "device " + std::to_string(d);
    if (stage >= 0) process += " (stage " + std::to_string(stage) + ")";
    metadata("process_name", d, -1, "{\"name\":" + json_string(process) + "}");
    metadata("process_sort_index", d, -1, "{\"sort_index\":" + std::to_string(d) + "}");
    if (d == devices.front() && summary.truncated) metadata("process_labels", d, -1, "{\"labels\":" + json_string(summary.note) + "}");
    for (std::size_t s = 0; s < streams; ++s) {
      metadata("thread_name", d, static_cast<std::int64_t>(s), "{\"name\":" + json_string(std::string(g.stream_name(static_cast<std::uint8_t>(s)))) + "}");
      metadata("thread_sort_index", d, static_cast<std::int64_t>(s), "{\"sort_index\":" + std::to_string(s) + "}");
    }
    for (std::size_t s = 0; s < streams; ++s) {
      for (const sim::TaskId t : g.queue_of(static_cast<std::size_t>(d) * streams + s)) {
        const std::int64_t start = tl.start_ps[t];
        const std::int64_t duration = sim::task_finish_ps(simulation, coll_ps, t) - start;
        PARASIM_CHECK(start >= 0 && duration >= 0, "task " + std::to_string(t) + " has a negative start or duration");
        const auto category = static_cast<std::size_t>(g.category[t]);
        begin_event();
        buf += "{\"ph\":\"X\",\"name\":";
        buf += labels[g.label[t]];
        buf += ",\"cat\":";
        buf += categories[category];
        buf += ",\"pid\":";
        append_int(buf, d);
        buf += ",\"tid\":";
        append_int(buf, static_cast<std::int64_t>(s));
        buf += ",\"ts\":";
        append_us(buf, start);
        buf += ",\"dur\":";
        append_us(buf, duration);
        // args: the micro-batch (when the task has one) and the collective's description.
        std::string_view args = g.kind[t] == sim::TaskKind::Collective ? std::string_view(collective_args[g.owner[t]]) : "";
        if (g.micro_batch[t] >= 0) {
          buf += ",\"args\":{\"micro_batch\":";
          append_int(buf, g.micro_batch[t]);
          buf += args;
          buf += '}';
        } else if (!args.empty()) {
          buf += ",\"args\":{";
          buf += args.substr(1);  // without its leading comma
          buf += '}';
        }
        buf += '}';
        ++summary.events;
        flush_if_full();
      }
    }
  }
  // The busiest links, one track each, in a process after the devices: when a collective whose
  // flows cross the link was in flight (sim/links.hpp).
  const auto& tracks = simulation.links.tracks;
  if (!tracks.empty()) {
    const std::int64_t pid = g.devices;
    metadata("process_name", pid, -1, "{\"name\":" + json_string("links (the " + std::to_string(tracks.size()) + " most loaded)") + "}");
    metadata("process_sort_index", pid, -1, "{\"sort_index\":" + std::to_string(pid) + "}");
    for (std::size_t i = 0; i < tracks.size(); ++i) {
      const auto tid = static_cast<std::int64_t>(i);
      const std::string name = json_string(tracks[i].name);
      metadata("thread_name", pid, tid, "{\"name\":" + name + "}");
      metadata("thread_sort_index", pid, tid, "{\"sort_index\":" + std::to_string(i) + "}");
      for (const auto& [from, to] : tracks[i].busy) {
        begin_event();
        buf += "{\"ph\":\"X\",\"name\":\"busy\",\"cat\":\"link\",\"pid\":";
        append_int(buf, pid);
        buf += ",\"tid\":";
        append_int(buf, tid);
        buf += ",\"ts\":";
        append_us(buf, from);
        buf += ",\"dur\":";
        append_us(buf, to - from);
        buf += ",\"args\":{\"link\":" + name + "}}";
        ++summary.link_events;
        flush_if_full();
      }
    }
  }
  buf += "\n]}\n";
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  return summary;
}

}  // namespace parasim::reports
