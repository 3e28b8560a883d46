// Plane-parallel slab as a 3-D box (built-in kernel), for the scattering-slab validation (the same
// box as validation/gray_slab/slab.geo): thickness L along x, cross-section W x W whose four sides
// are mirrors (`type: symmetry`), so the box acts as an infinite slab. dgrte sets the element size
// (mesh.size in the case file, Mesh.MeshSizeMax); the point sizes below are ignored then.
// Tetrahedra (dgrte mesh-info, Gmsh Delaunay): see README.md.
DefineConstant[ L = {1.0, Name "Parameters/L"}, W = {0.2, Name "Parameters/W"}, lc = {0.1, Name "Parameters/lc"} ];

Point(1) = {0, 0, 0, lc};  Point(2) = {L, 0, 0, lc};  Point(3) = {L, W, 0, lc};  Point(4) = {0, W, 0, lc};
Point(5) = {0, 0, W, lc};  Point(6) = {L, 0, W, lc};  Point(7) = {L, W, W, lc};  Point(8) = {0, W, W, lc};

Line(1) = {1, 2};  Line(2) = {2, 3};  Line(3) = {3, 4};  Line(4) = {4, 1};
Line(5) = {5, 6};  Line(6) = {6, 7};  Line(7) = {7, 8};  Line(8) = {8, 5};
Line(9) = {1, 5};  Line(10) = {2, 6}; Line(11) = {3, 7}; Line(12) = {4, 8};

// Loops oriented with outward normals.
Curve Loop(1) = {9, -8, -12, 4};    Plane Surface(1) = {1};  // x = 0
Curve Loop(2) = {2, 11, -6, -10};   Plane Surface(2) = {2};  // x = L
Curve Loop(3) = {1, 10, -5, -9};    Plane Surface(3) = {3};  // y = 0
Curve Loop(4) = {12, -7, -11, 3};   Plane Surface(4) = {4};  // y = W
Curve Loop(5) = {-4, -3, -2, -1};   Plane Surface(5) = {5};  // z = 0
Curve Loop(6) = {5, 6, 7, 8};       Plane Surface(6) = {6};  // z = W

Surface Loop(1) = {1, 2, 3, 4, 5, 6};
Volume(1) = {1};

Physical Volume("medium", 1) = {1};
Physical Surface("xmin", 11) = {1};
Physical Surface("xmax", 12) = {2};
Physical Surface("sides", 13) = {3, 4, 5, 6};
