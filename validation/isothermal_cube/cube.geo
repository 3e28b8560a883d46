// Unit cube [0,1]^3 (built-in kernel) for the isothermal-cube validation: one volume group
// ("medium") and one surface group per face (xmin, xmax, ymin, ymax, zmin, zmax).
// dgrte sets the element size (mesh.size in the case file, Mesh.MeshSizeMax) and ignores the
// point sizes lc, which only serve `gmsh -3 cube.geo`. Tetrahedra: see README.md.
DefineConstant[ lc = {0.25, Name "Parameters/lc"} ];

Point(1) = {0, 0, 0, lc};  Point(2) = {1, 0, 0, lc};  Point(3) = {1, 1, 0, lc};  Point(4) = {0, 1, 0, lc};
Point(5) = {0, 0, 1, lc};  Point(6) = {1, 0, 1, lc};  Point(7) = {1, 1, 1, lc};  Point(8) = {0, 1, 1, lc};

Line(1) = {1, 2};  Line(2) = {2, 3};  Line(3) = {3, 4};  Line(4) = {4, 1};
Line(5) = {5, 6};  Line(6) = {6, 7};  Line(7) = {7, 8};  Line(8) = {8, 5};
Line(9) = {1, 5};  Line(10) = {2, 6}; Line(11) = {3, 7}; Line(12) = {4, 8};

// Loops oriented with outward normals.
Curve Loop(1) = {9, -8, -12, 4};    Plane Surface(1) = {1};  // x = 0
Curve Loop(2) = {2, 11, -6, -10};   Plane Surface(2) = {2};  // x = 1
Curve Loop(3) = {1, 10, -5, -9};    Plane Surface(3) = {3};  // y = 0
Curve Loop(4) = {12, -7, -11, 3};   Plane Surface(4) = {4};  // y = 1
Curve Loop(5) = {-4, -3, -2, -1};   Plane Surface(5) = {5};  // z = 0
Curve Loop(6) = {5, 6, 7, 8};       Plane Surface(6) = {6};  // z = 1

Surface Loop(1) = {1, 2, 3, 4, 5, 6};
Volume(1) = {1};

Physical Volume("medium", 1) = {1};
Physical Surface("xmin", 11) = {1};
Physical Surface("xmax", 12) = {2};
Physical Surface("ymin", 13) = {3};
Physical Surface("ymax", 14) = {4};
Physical Surface("zmin", 15) = {5};
Physical Surface("zmax", 16) = {6};
