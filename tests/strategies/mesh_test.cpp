// The logical device mesh (strategies/mesh) and the pipeline cut (strategies/stage_partition).
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "strategies/mesh.hpp"
#include "strategies/stage_partition.hpp"

using namespace parasim::strategies;

TEST_CASE("mesh: the innermost axis varies fastest over device ids", "[strategies][mesh]") {
  const DeviceMesh mesh{{{"pp", 2}, {"dp", 3}, {"tp", 2}}};
  CHECK(mesh.device_count() == 12);
  CHECK(mesh.axis_index("dp") == 1);
  CHECK(mesh.axis_index("ep") == -1);
  CHECK(mesh.axis_size("ep") == 1);
  // Device 9 = pp 1 · 6 + dp 1 · 2 + tp 1.
  CHECK(mesh.coords_of(9) == std::vector<std::int64_t>{1, 1, 1});
  const std::vector<std::int64_t> c{1, 2, 0};
  CHECK(mesh.device_at(c) == 10);  // 6 + 4 + 0
  for (std::int64_t d = 0; d < 12; ++d) CHECK(mesh.device_at(mesh.coords_of(d)) == d);
  // Groups along dp: devices sharing pp and tp, 2 apart.
  const std::vector<int> dp{1}, dp_tp{1, 2};
  CHECK(mesh.group_of(9, dp) == std::vector<std::int64_t>{7, 9, 11});
  CHECK(mesh.groups(dp) == std::vector<std::vector<std::int64_t>>{{0, 2, 4}, {1, 3, 5}, {6, 8, 10}, {7, 9, 11}});
  // Along dp and tp together: a whole pipeline stage.
  CHECK(mesh.groups(dp_tp) == std::vector<std::vector<std::int64_t>>{{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}});
}

TEST_CASE("mesh: another axis order moves the consecutive ids", "[strategies][mesh]") {
  // mesh_order {tp, dp, pp}: pp innermost, so pipeline peers are neighbours and tp groups stride 4.
  const DeviceMesh mesh{{{"tp", 2}, {"dp", 2}, {"pp", 2}}};
  const std::vector<int> tp{0}, pp{2};
  CHECK(mesh.groups(pp) == std::vector<std::vector<std::int64_t>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(mesh.groups(tp) == std::vector<std::vector<std::int64_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
}

TEST_CASE("stage partition: contiguous chunks minimising the largest", "[strategies][pipeline]") {
  // Uniform costs split evenly.
  CHECK(balanced_partition({1, 1, 1, 1, 1, 1}, 3) == std::vector<std::int32_t>{0, 0, 1, 1, 2, 2});
  // One heavy layer alone: [4 | 1 1 1 1], largest 4.
  CHECK(balanced_partition({4, 1, 1, 1, 1}, 2) == std::vector<std::int32_t>{0, 1, 1, 1, 1});
  // 1 2 3 4 5 in 3: [1 2 3 | 4 | 5] has largest 6; every other cut has a group ≥ 7 ([4 5] = 9,
  // [3 4] = 7, [1 2 | 3 4 | 5] → 7).
  CHECK(balanced_partition({1, 2, 3, 4, 5}, 3) == std::vector<std::int32_t>{0, 0, 0, 1, 2});
  // A tie ([1 | 1 1] or [1 1 | 1], largest 2 both) goes to the earliest cut.
  CHECK(balanced_partition({1, 1, 1}, 2) == std::vector<std::int32_t>{0, 1, 1});
  // As many parts as layers: one each.
  CHECK(balanced_partition({3, 1, 2}, 3) == std::vector<std::int32_t>{0, 1, 2});
}
