// The binary transport dump: round trip, and the errors a wrong file gets.
#include "backend/device_data.hpp"
#include "device/opencl_runtime.hpp"
#include "device/transport_data.hpp"
#include "transport/discretization.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace dgrte {
namespace {

std::string temp_file(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + std::to_string(::getpid()))).string();
}

TEST(TransportData, WriteReadRoundTrip) {
  const auto m = mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", 0.9);
  const auto disc = transport::make_discretization(m, 2);
  // sigma_t = 0.7 + 0.2 x varies on every element: the dump carries its blocks.
  std::vector<double> nodal(disc.num_dofs()), points;
  for (std::size_t i = 0; i < nodal.size(); ++i) nodal[i] = 0.7 + 0.2 * disc.node_position[i][0];
  for (std::size_t e = 0; e < disc.num_elements(); ++e)
    for (const auto& x : disc.property_points(e)) points.push_back(0.7 + 0.2 * x[0]);
  const auto sigma = transport::ReactionTerm::from_points(disc, points, nodal);
  ASSERT_EQ(sigma.num_blocks(), disc.num_elements());
  auto data = backend::device_data(disc, sigma);
  std::vector<transport::Vec3> dirs{{0.6, 0.0, 0.8}, {0, -1, 0}};
  std::vector<transport::SweepPlan> plans{transport::plan_sweep(disc, dirs[0]), transport::plan_sweep(disc, dirs[1])};
  std::vector<std::vector<double>> rhs(2, std::vector<double>(disc.num_dofs(), 2.5));
  backend::add_directions(data, dirs, rhs, plans);
  data.description = "cube P2";
  const auto path = temp_file("dgrte-dump-");
  device::write_transport_data(path, data);
  const auto back = device::read_transport_data(path);
  EXPECT_EQ(back.order, 2);
  EXPECT_EQ(back.K, data.K);
  EXPECT_EQ(back.d_ref, data.d_ref);
  EXPECT_EQ(back.geometry, data.geometry);
  EXPECT_EQ(back.neighbour_node, data.neighbour_node);
  EXPECT_EQ(back.rhs, data.rhs);
  EXPECT_EQ(back.sigma_t, data.sigma_t);
  EXPECT_EQ(back.sigma_block_of, data.sigma_block_of);
  EXPECT_EQ(back.sigma_blocks, data.sigma_blocks);
  EXPECT_EQ(back.plan_order, data.plan_order);
  EXPECT_EQ(back.plan_level_begin, data.plan_level_begin);
  EXPECT_EQ(back.level_stride, data.level_stride);
  EXPECT_EQ(back.description, "cube P2");
  std::filesystem::remove(path);
}

TEST(TransportData, WrongFilesGetClearErrors) {
  const auto path = temp_file("dgrte-notadump-");
  {
    std::ofstream(path) << "mesh: cube.msh\n";
  }
  try {
    device::read_transport_data(path);
    FAIL();
  } catch (const device::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("not a dgrte transport dump"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  // A truncated dump names where it stops.
  const auto m = mesh::mesh_geo(DGRTE_SOURCE_DIR "/validation/mms/cube.geo", 0.9);
  const auto disc = transport::make_discretization(m, 1);
  device::write_transport_data(path, backend::device_data(disc, transport::ReactionTerm(std::vector<double>(disc.num_dofs(), 1.0), disc.num_nodes())));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  try {
    device::read_transport_data(path);
    FAIL();
  } catch (const device::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  EXPECT_THROW(device::read_transport_data(path), device::DeviceError);
}

}  // namespace
}  // namespace dgrte
