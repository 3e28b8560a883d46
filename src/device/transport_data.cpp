#include "device/transport_data.hpp"

#include "device/binary_io.hpp"
#include "device/opencl_runtime.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>

namespace dgrte::device {
namespace {

constexpr char kMagic[8] = {'D', 'G', 'R', 'T', 'E', 'D', 'E', 'V'};
constexpr std::uint32_t kFormatVersion = 2;  // 2: the extinction blocks (sigma_block_of, sigma_blocks)

using binary::put;
using binary::put_array;
using binary::Reader;

void expect(bool ok, const std::string& what) {
  if (!ok) throw DeviceError("transport data: " + what);
}

}  // namespace

void TransportData::validate() const {
  expect(order >= 1 && order <= 8, "order " + std::to_string(order) + " outside 1..8");
  expect(np == (order + 1) * (order + 2) * (order + 3) / 6, "np does not match the order");
  expect(nfp == (order + 1) * (order + 2) / 2, "nfp does not match the order");
  expect(K > 0, "no elements");
  const auto snp = static_cast<std::size_t>(np), snfp = static_cast<std::size_t>(nfp), sK = static_cast<std::size_t>(K);
  expect(d_ref.size() == 3 * snp * snp, "d_ref has " + std::to_string(d_ref.size()) + " values, expected 3 np^2");
  expect(lift.size() == snp * 4 * snfp, "lift has the wrong size");
  expect(face_nodes.size() == 4 * snfp, "face_nodes has the wrong size");
  for (int v : face_nodes) expect(v >= 0 && v < np, "face_nodes entry outside 0..np-1");
  expect(geometry.size() == sK * kGeometryStride, "geometry has the wrong size");
  expect(neighbour_node.size() == sK * 4 * snfp, "neighbour_node has the wrong size");
  for (int v : neighbour_node) expect(v >= -1 && v < K * np, "neighbour_node entry outside the field");
  expect(sigma_t.size() == sK * snp, "sigma_t has the wrong size");
  expect(sigma_block_of.empty() || sigma_block_of.size() == sK, "sigma_block_of is neither empty nor one entry per element");
  {
    const auto blocks = static_cast<long>(sigma_blocks.size() / (snp * snp));
    expect(sigma_blocks.size() % (snp * snp) == 0, "sigma_blocks is not a list of np x np blocks");
    for (int v : sigma_block_of) expect(v >= -1 && v < blocks, "sigma_block_of entry outside the blocks");
  }
  expect(directions.size() % 3 == 0, "directions is not a list of 3-vectors");
  const std::size_t M = num_directions();
  expect(rhs.empty() || rhs.size() == M * sK * snp, "rhs is neither empty nor one field per direction");
  if (has_plans()) {
    expect(level_stride >= 2, "level_stride < 2 with sweep plans");
    expect(plan_order.size() == M * sK, "plan_order is not one order per direction");
    expect(plan_level_begin.size() == M * static_cast<std::size_t>(level_stride), "plan_level_begin has the wrong size");
    expect(plan_lagged.size() == M * sK, "plan_lagged has the wrong size");
    for (int v : plan_order) expect(v >= 0 && v < K, "plan_order entry outside the elements");
  }
}

void write_transport_data(const std::string& path, const TransportData& d) {
  d.validate();
  binary::write_atomically(path, [&](std::ofstream& out) {
    out.write(kMagic, sizeof kMagic);
    put(out, kFormatVersion);
    put<std::int32_t>(out, d.order);
    put<std::int32_t>(out, d.np);
    put<std::int32_t>(out, d.nfp);
    put<std::int64_t>(out, d.K);
    put<std::int32_t>(out, d.level_stride);
    put_array(out, d.d_ref);
    put_array(out, d.lift);
    put_array(out, d.face_nodes);
    put_array(out, d.geometry);
    put_array(out, d.neighbour_node);
    put_array(out, d.sigma_t);
    put_array(out, d.sigma_block_of);
    put_array(out, d.sigma_blocks);
    put_array(out, d.directions);
    put_array(out, d.rhs);
    put_array(out, d.plan_order);
    put_array(out, d.plan_level_begin);
    put_array(out, d.plan_lagged);
    put_array(out, std::vector<char>(d.description.begin(), d.description.end()));
  });
}

TransportData read_transport_data(const std::string& path) {
  Reader r(path);
  if (!r.in) throw DeviceError(path + ": cannot open (write one with: dgrte export case.yaml -o " + path + ")");
  char magic[8];
  if (!r.in.read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof magic) != 0)
    throw DeviceError(path + ": not a dgrte transport dump (written by dgrte export)");
  const auto version = r.get<std::uint32_t>("version");
  if (version != kFormatVersion)
    throw DeviceError(path + ": dump format version " + std::to_string(version) + ", this program reads version " +
                      std::to_string(kFormatVersion) + "; export it again with this dgrte");
  TransportData d;
  d.order = r.get<std::int32_t>("order");
  d.np = r.get<std::int32_t>("np");
  d.nfp = r.get<std::int32_t>("nfp");
  d.K = r.get<std::int64_t>("K");
  d.level_stride = r.get<std::int32_t>("level_stride");
  d.d_ref = r.get_array<double>("d_ref");
  d.lift = r.get_array<double>("lift");
  d.face_nodes = r.get_array<int>("face_nodes");
  d.geometry = r.get_array<double>("geometry");
  d.neighbour_node = r.get_array<int>("neighbour_node");
  d.sigma_t = r.get_array<double>("sigma_t");
  d.sigma_block_of = r.get_array<int>("sigma_block_of");
  d.sigma_blocks = r.get_array<double>("sigma_blocks");
  d.directions = r.get_array<double>("directions");
  d.rhs = r.get_array<double>("rhs");
  d.plan_order = r.get_array<int>("plan_order");
  d.plan_level_begin = r.get_array<int>("plan_level_begin");
  d.plan_lagged = r.get_array<std::uint8_t>("plan_lagged");
  const auto text = r.get_array<char>("description");
  d.description.assign(text.begin(), text.end());
  try {
    d.validate();
  } catch (const DeviceError& e) {
    throw DeviceError(path + ": " + e.what());
  }
  return d;
}

}  // namespace dgrte::device
