#include "sim/lower/unit_order.hpp"

#include <algorithm>
#include <array>

#include "common/error.hpp"

namespace parasim::sim {

std::vector<strategies::PipelineStep> unit_order(const std::vector<ChunkWork>& chunks, strategies::Schedule schedule, std::int64_t pp,
                                                 std::int64_t v, std::int64_t m) {
  const auto C = static_cast<std::int64_t>(chunks.size());
  // senders[direction][c]: the chunks whose forward (0) or backward (1) program sends to chunk c.
  std::array<std::vector<std::vector<std::int64_t>>, 2> senders;
  for (std::size_t dir = 0; dir < 2; ++dir) {
    senders[dir].resize(static_cast<std::size_t>(C));
    for (std::int64_t c = 0; c < C; ++c) {
      for (const WorkItem& it : chunks[static_cast<std::size_t>(c)].pass(dir == 0).items) {
        if (it.kind != ItemKind::Send) continue;
        auto& to = senders[dir][static_cast<std::size_t>(it.peer_chunk)];
        if (std::find(to.begin(), to.end(), c) == to.end()) to.push_back(c);
      }
    }
  }
  std::vector<std::vector<strategies::PipelineStep>> orders;
  for (std::int64_t stage = 0; stage < pp; ++stage) orders.push_back(strategies::pipeline_order(schedule, pp, v, m, stage));
  auto key = [&](bool forward, std::int64_t j, std::int64_t c) { return unit_index(forward, j, c, m, C); };
  const auto units = static_cast<std::size_t>(2 * m * C);
  std::vector<char> made(units, 0);
  std::vector<std::size_t> next(static_cast<std::size_t>(pp), 0);
  std::vector<strategies::PipelineStep> out;
  out.reserve(units);
  while (out.size() < units) {
    bool progressed = false;
    for (std::size_t stage = 0; stage < orders.size(); ++stage) {
      for (; next[stage] < orders[stage].size(); ++next[stage]) {
        const strategies::PipelineStep& u = orders[stage][next[stage]];
        const auto& from = senders[u.forward ? 0 : 1][static_cast<std::size_t>(u.chunk)];
        if (!std::all_of(from.begin(), from.end(), [&](std::int64_t c) { return made[key(u.forward, u.micro_batch, c)] != 0; })) break;
        made[key(u.forward, u.micro_batch, u.chunk)] = 1;
        out.push_back(u);
        progressed = true;
      }
    }
    PARASIM_CHECK(progressed, "the pipeline schedule deadlocks: no stage can make its next pass");
  }
  return out;
}

}  // namespace parasim::sim
