#pragma once
// The one face table of the code (mesh, dg, transport, output): local face f of a tet with
// vertices (v0, v1, v2, v3) has vertices kFaceVertices[f]. Matches dg::ReferenceTet:
// face 0 = (v0,v1,v2) [t=-1], face 1 = (v0,v1,v3) [s=-1], face 2 = (v1,v2,v3), face 3 = (v0,v2,v3) [r=-1].
#include <array>
#include <cstddef>

namespace dgrte {
inline constexpr std::array<std::array<int, 3>, 4> kFaceVertices{{{0, 1, 2}, {0, 1, 3}, {1, 2, 3}, {0, 2, 3}}};

// A face of the mesh: element `element`'s local face `face`. Where one index is kept (the walls'
// faces, face lists of the VTK writers) it is packed as element * 4 + face.
struct ElementFace {
  std::size_t element = 0;
  int face = 0;
  constexpr std::size_t packed() const { return element * 4 + static_cast<std::size_t>(face); }
  static constexpr ElementFace unpack(std::size_t packed) { return {packed / 4, static_cast<int>(packed % 4)}; }
};
}  // namespace dgrte
