#pragma once
/// trace.json: a simulated step in the Chrome trace-event format, for Perfetto (ui.perfetto.dev) or
/// chrome://tracing. One process per device ("device N (stage S)"), one thread per stream of the
/// TaskGraph (compute, tensor, data, ...), and one complete event ("ph": "X") per task on every
/// stream it occupies — a collective on the stream of each member — named by its label, with its
/// category as "cat" and in "args" its micro-batch (when it has one) and, for a collective, its
/// kind, algorithm, bytes and group size. Times are microseconds, exact to the picosecond.
///
/// A step of a large cluster holds millions of tasks, so the trace keeps the first `max_devices`
/// devices in device order; when it does, "otherData" (the trace's metadata) and a "process_labels"
/// metadata event on the first device say so, and the summary tells the caller.
///
/// After the devices, a process "links" holds one track per link among the step's most loaded
/// (Simulation::links): "busy" events while a collective whose flows cross the link was in flight. The events are
/// streamed to the output, never built as one JSON value in memory. Deterministic: the same
/// Simulation gives the same bytes.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sim/simulate.hpp"

namespace parasim::reports {

struct TraceOptions {
  std::int64_t max_devices = 64;  ///< devices written, the first in device order; ≥ 1
  /// When not empty: exactly these devices (ascending, distinct, in range), instead of the first
  /// max_devices — e.g. one device per pipeline stage, so the trace shows the whole pipeline.
  std::vector<std::int64_t> devices;
  std::string selection;  ///< how `devices` was chosen, for the truncation note ("one device per stage")
};

/// What write_trace wrote.
struct TraceSummary {
  std::int64_t devices_total = 0;
  std::int64_t devices_written = 0;
  std::int64_t events = 0;  ///< complete ("X") events of tasks
  std::int64_t link_events = 0;  ///< complete events of the per-link tracks
  bool truncated = false;   ///< devices_written < devices_total
  std::string note;         ///< when truncated, the sentence the trace carries; else empty
};

/// The task events write_trace would write for `options` (a task once per selected device and stream
/// it occupies), counted from the queues without writing: what `parasim` checks against its trace
/// size limit before writing.
[[nodiscard]] std::int64_t trace_events(const sim::Simulation& simulation, const TraceOptions& options = {});

/// About how many bytes an event of trace.json takes: 160 measured over small steps' traces (a
/// compute event with its label, category, times and micro-batch), rounded up for collectives'
/// longer arguments.
inline constexpr double kTraceBytesPerEvent = 200;

/// Writes the trace of `simulation` to `out`. Preconditions (checked, InternalError): the
/// simulation's timeline and collective estimates belong to its task graph; max_devices ≥ 1.
TraceSummary write_trace(std::ostream& out, const sim::Simulation& simulation, const TraceOptions& options = {});

}  // namespace parasim::reports
