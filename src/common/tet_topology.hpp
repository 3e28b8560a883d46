#pragma once
// The one face table of the code (mesh, dg, transport, output): local face f of a tet with
// vertices (v0, v1, v2, v3) has vertices kFaceVertices[f]. Matches dg::ReferenceTet:
// face 0 = (v0,v1,v2) [t=-1], face 1 = (v0,v1,v3) [s=-1], face 2 = (v1,v2,v3), face 3 = (v0,v2,v3) [r=-1].
#include <array>

namespace dgrte {
inline constexpr std::array<std::array<int, 3>, 4> kFaceVertices{{{0, 1, 2}, {0, 1, 3}, {1, 2, 3}, {0, 2, 3}}};
}  // namespace dgrte
