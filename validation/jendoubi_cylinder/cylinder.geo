// Cylinder of radius R and height H for the Jendoubi, Lee & Kim (1993) validation: axis z, bottom
// wall z = 0, top wall z = H (the collimated beam enters there, travelling in -z), side wall.
//
// Built by extruding the meshed disk z = 0 along z in layers (tetrahedra: each prism is split in
// three), so that every triangle of the side wall has an edge along a vertical generator and is
// exactly vertical. A free tetrahedral mesh of a curved wall (e.g. OpenCASCADE Cylinder) has side
// triangles tilted by a few degrees; a beam parallel to the wall then strikes the faces that lean
// towards it (flux F |n_z|) and leaves the others in shadow, which puts spikes of several per cent
// into the side-wall flux (README.md). The disk boundary has points at azimuths 0, phi2 and phi3, so
// that vertical mesh edges run along those azimuths (wall probes must lie on mesh faces); the three
// arcs differ in length, so the mesh has no symmetry about the axis.
//
// The number of layers follows lc, which must equal mesh.size of the case: jendoubi_cylinder.py
// writes a copy of this file with lc replaced for each mesh size (dgrte sets Mesh.MeshSizeMax only
// after reading the file, too late for the layer count).
DefineConstant[ R = {1.0, Name "Parameters/R"}, H = {1.0, Name "Parameters/H"},
                lc = {0.2, Name "Parameters/lc"},
                phi2 = {2 * Pi / 3, Name "Parameters/phi2"}, phi3 = {4.2, Name "Parameters/phi3"} ];

Point(1) = {0, 0, 0, lc};
Point(2) = {R, 0, 0, lc};
Point(3) = {R * Cos(phi2), R * Sin(phi2), 0, lc};
Point(4) = {R * Cos(phi3), R * Sin(phi3), 0, lc};
Circle(1) = {2, 1, 3};
Circle(2) = {3, 1, 4};
Circle(3) = {4, 1, 2};
Curve Loop(1) = {1, 2, 3};
Plane Surface(1) = {1};

nz = Ceil(H / lc - 1e-9);
out[] = Extrude {0, 0, H} { Surface{1}; Layers{nz}; };
// out[0]: the top surface, out[1]: the volume, out[2], out[3], out[4]: the side surfaces of arcs 1, 2, 3.

Physical Volume("medium", 1) = {out[1]};
Physical Surface("bottom", 11) = {1};
Physical Surface("top", 12) = {out[0]};
Physical Surface("side", 13) = {out[2], out[3], out[4]};
