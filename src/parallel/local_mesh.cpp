#include "parallel/local_mesh.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace dgrte::parallel {

LocalMesh build_local_mesh(const mesh::TetMesh& g, const Partition& p, int rank) {
  const std::size_t K = g.num_elements();
  if (p.owner.size() != K) throw SolverError("build_local_mesh: the partition does not match the mesh");
  LocalMesh out;
  out.rank = rank, out.ranks = p.parts, out.global_elements = K;
  // Each element's index among its owner's elements (owners number their elements in global order).
  std::vector<long> owner_index(K);
  std::vector<long> counter(static_cast<std::size_t>(p.parts), 0);
  for (std::size_t e = 0; e < K; ++e) owner_index[e] = counter[static_cast<std::size_t>(p.owner[e])]++;
  std::vector<long> local(K, -1);
  for (std::size_t e = 0; e < K; ++e)
    if (p.owner[e] == rank) local[e] = static_cast<long>(out.global_element.size()), out.global_element.push_back(static_cast<long>(e));
  out.num_owned = out.global_element.size();
  std::vector<long> ghosts;
  for (std::size_t i = 0; i < out.num_owned; ++i)
    for (const int n : g.neighbour[static_cast<std::size_t>(out.global_element[i])])
      if (n >= 0 && p.owner[static_cast<std::size_t>(n)] != rank) ghosts.push_back(n);
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  for (const long e : ghosts) {
    local[static_cast<std::size_t>(e)] = static_cast<long>(out.global_element.size());
    out.global_element.push_back(e);
    out.ghost_owner.push_back(p.owner[static_cast<std::size_t>(e)]);
    out.ghost_owner_index.push_back(owner_index[static_cast<std::size_t>(e)]);
  }

  auto& m = out.mesh;
  m.source = g.source;
  m.volume_groups = g.volume_groups, m.surface_groups = g.surface_groups;
  m.interior_tagged_faces = g.interior_tagged_faces, m.first_interior_tagged = g.first_interior_tagged;
  std::vector<int> vertex(g.vertices.size(), -1);
  for (const long ge : out.global_element) {
    const auto e = static_cast<std::size_t>(ge);
    std::array<int, 4> tet{};
    for (std::size_t k = 0; k < 4; ++k) {
      int& v = vertex[static_cast<std::size_t>(g.tets[e][k])];
      if (v < 0) v = static_cast<int>(m.vertices.size()), m.vertices.push_back(g.vertices[static_cast<std::size_t>(g.tets[e][k])]);
      tet[k] = v;
    }
    m.tets.push_back(tet);
    m.tet_tags.push_back(g.tet_tags[e]);
    m.tet_group.push_back(g.tet_group[e]);
    std::array<int, 4> nb{}, nf{}, bg{};
    for (std::size_t f = 0; f < 4; ++f) {
      const int n = g.neighbour[e][f];
      if (n < 0) {  // a boundary face of the global mesh: a wall
        nb[f] = -1, nf[f] = -1, bg[f] = g.boundary_group[e][f];
      } else if (local[static_cast<std::size_t>(n)] >= 0) {
        nb[f] = static_cast<int>(local[static_cast<std::size_t>(n)]), nf[f] = g.neighbour_face[e][f], bg[f] = -1;
      } else {  // a ghost's face toward an element of another rank: not a wall
        nb[f] = -1, nf[f] = -1, bg[f] = kPartitionFace;
      }
    }
    m.neighbour.push_back(nb), m.neighbour_face.push_back(nf), m.boundary_group.push_back(bg);
  }
  return out;
}

mesh::TetMesh without_ghost_walls(const LocalMesh& local) {
  mesh::TetMesh m = local.mesh;
  for (std::size_t e = local.num_owned; e < m.tets.size(); ++e)
    for (std::size_t f = 0; f < 4; ++f)
      if (m.neighbour[e][f] < 0) m.boundary_group[e][f] = kPartitionFace;
  return m;
}

namespace {

// A flat byte buffer for sending a LocalMesh (trivially copyable arrays and strings).
struct Writer {
  std::vector<char> bytes;
  template <typename T>
  void put(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::uint64_t n = v.size();
    append(&n, sizeof n);
    append(v.data(), n * sizeof(T));
  }
  void put(const std::string& s) {
    const std::uint64_t n = s.size();
    append(&n, sizeof n);
    append(s.data(), n);
  }
  template <typename T>
  void value(const T& x) {
    append(&x, sizeof x);
  }
  void append(const void* p, std::size_t n) {
    const auto* c = static_cast<const char*>(p);
    bytes.insert(bytes.end(), c, c + n);
  }
};

struct Reader {
  const std::vector<char>& bytes;
  std::size_t at = 0;
  void take(void* p, std::size_t n) {
    if (at + n > bytes.size()) throw SolverError("distribute_mesh: a truncated mesh message");
    std::memcpy(p, bytes.data() + at, n);
    at += n;
  }
  template <typename T>
  void get(std::vector<T>& v) {
    std::uint64_t n = 0;
    take(&n, sizeof n);
    v.resize(n);
    take(v.data(), n * sizeof(T));
  }
  void get(std::string& s) {
    std::uint64_t n = 0;
    take(&n, sizeof n);
    s.resize(n);
    take(s.data(), n);
  }
  template <typename T>
  void value(T& x) {
    take(&x, sizeof x);
  }
};

void put_groups(Writer& w, const std::vector<mesh::PhysicalGroup>& groups) {
  w.value(static_cast<std::uint64_t>(groups.size()));
  for (const auto& gr : groups) w.value(gr.tag), w.value(gr.dim), w.put(gr.name);
}
void get_groups(Reader& r, std::vector<mesh::PhysicalGroup>& groups) {
  std::uint64_t n = 0;
  r.value(n);
  groups.resize(n);
  for (auto& gr : groups) r.value(gr.tag), r.value(gr.dim), r.get(gr.name);
}

std::vector<char> pack(const LocalMesh& l) {
  Writer w;
  const auto& m = l.mesh;
  w.put(m.source);
  w.put(m.vertices), w.put(m.tets), w.put(m.tet_tags), w.put(m.tet_group);
  put_groups(w, m.volume_groups), put_groups(w, m.surface_groups);
  w.put(m.neighbour), w.put(m.neighbour_face), w.put(m.boundary_group);
  w.put(m.interior_tagged_faces), w.put(m.first_interior_tagged);
  w.value(static_cast<std::uint64_t>(l.num_owned));
  w.put(l.global_element), w.put(l.ghost_owner), w.put(l.ghost_owner_index);
  w.value(l.rank), w.value(l.ranks), w.value(static_cast<std::uint64_t>(l.global_elements));
  return std::move(w.bytes);
}

LocalMesh unpack(const std::vector<char>& bytes) {
  Reader r{bytes};
  LocalMesh l;
  auto& m = l.mesh;
  r.get(m.source);
  r.get(m.vertices), r.get(m.tets), r.get(m.tet_tags), r.get(m.tet_group);
  get_groups(r, m.volume_groups), get_groups(r, m.surface_groups);
  r.get(m.neighbour), r.get(m.neighbour_face), r.get(m.boundary_group);
  r.get(m.interior_tagged_faces), r.get(m.first_interior_tagged);
  std::uint64_t owned = 0, global = 0;
  r.value(owned);
  l.num_owned = owned;
  r.get(l.global_element), r.get(l.ghost_owner), r.get(l.ghost_owner_index);
  r.value(l.rank), r.value(l.ranks), r.value(global);
  l.global_elements = global;
  return l;
}

void mpi_check(int code, const char* call) {
  if (code != MPI_SUCCESS) throw SolverError(std::string("MPI error in ") + call + " (distributing the mesh)");
}

}  // namespace

LocalMesh distribute_mesh(MPI_Comm comm, const mesh::TetMesh* global, const std::string& partitioner, std::string* used) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  // Rank 0 partitions; a failure there is broadcast so that every rank throws the same message
  // instead of waiting for a mesh that never comes.
  Partition partition;
  std::string error;
  if (rank == 0) {
    try {
      if (!global) throw SolverError("distribute_mesh: rank 0 has no mesh");
      partition = partition_elements(*global, ranks, partitioner);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  std::uint64_t length = error.size();
  mpi_check(MPI_Bcast(&length, 1, MPI_UINT64_T, 0, comm), "MPI_Bcast");
  if (length > 0) {
    error.resize(length);
    mpi_check(MPI_Bcast(error.data(), static_cast<int>(length), MPI_CHAR, 0, comm), "MPI_Bcast");
    throw SolverError("distributing the mesh over " + std::to_string(ranks) + " ranks: " + error);
  }
  std::string name = partition.partitioner;
  std::uint64_t name_length = name.size();
  mpi_check(MPI_Bcast(&name_length, 1, MPI_UINT64_T, 0, comm), "MPI_Bcast");
  name.resize(name_length);
  mpi_check(MPI_Bcast(name.data(), static_cast<int>(name_length), MPI_CHAR, 0, comm), "MPI_Bcast");
  if (used) *used = name;
  if (rank == 0) {
    for (int r = 1; r < ranks; ++r) {
      const auto bytes = pack(build_local_mesh(*global, partition, r));
      const std::uint64_t n = bytes.size();
      mpi_check(MPI_Send(&n, 1, MPI_UINT64_T, r, 0, comm), "MPI_Send");
      mpi_check(MPI_Send(bytes.data(), static_cast<int>(n), MPI_CHAR, r, 1, comm), "MPI_Send");
    }
    return build_local_mesh(*global, partition, 0);
  }
  std::uint64_t n = 0;
  mpi_check(MPI_Recv(&n, 1, MPI_UINT64_T, 0, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  std::vector<char> bytes(n);
  mpi_check(MPI_Recv(bytes.data(), static_cast<int>(n), MPI_CHAR, 0, 1, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  return unpack(bytes);
}

}  // namespace dgrte::parallel
