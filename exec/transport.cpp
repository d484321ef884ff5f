#include "exec/transport.hpp"

#include <cstdlib>

#include "common/error.hpp"

namespace parasim::exec {

void LocalTransport::prepare(const sim::TaskGraph& graph) {
  PARASIM_CHECK(graph.devices == 1, "a local transport runs a graph of one device");
}

void LocalTransport::send(int, std::uint8_t, const float*, std::size_t) { PARASIM_CHECK(false, "a single rank sends nothing"); }

void LocalTransport::receive(int, std::uint8_t, float*, std::size_t) { PARASIM_CHECK(false, "a single rank receives nothing"); }

void LocalTransport::abort_all(int code) { std::_Exit(code); }

}  // namespace parasim::exec
