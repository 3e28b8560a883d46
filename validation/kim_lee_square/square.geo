// Kim & Lee (1988) 2-D square enclosure, 1 m x 1 m in x-y, as a thin 3-D box [0,1] x [0,1] x [0,H]
// (built-in kernel). The two faces z = 0 and z = H are mirrors (`type: symmetry` in the case
// file), which makes the box an infinitely long square duct: the solution does not depend on z.
// dgrte sets the element size (mesh.size in the case file, Mesh.MeshSizeMax) and ignores the point
// sizes lc, which only serve `gmsh -3 square.geo`. Tetrahedra per size: see README.md.
DefineConstant[ L = {1.0, Name "Parameters/L"}, H = {0.2, Name "Parameters/H"}, lc = {0.1, Name "Parameters/lc"} ];

Point(1) = {0, 0, 0, lc};  Point(2) = {L, 0, 0, lc};  Point(3) = {L, L, 0, lc};  Point(4) = {0, L, 0, lc};
Point(5) = {0, 0, H, lc};  Point(6) = {L, 0, H, lc};  Point(7) = {L, L, H, lc};  Point(8) = {0, L, H, lc};

Line(1) = {1, 2};  Line(2) = {2, 3};  Line(3) = {3, 4};  Line(4) = {4, 1};
Line(5) = {5, 6};  Line(6) = {6, 7};  Line(7) = {7, 8};  Line(8) = {8, 5};
Line(9) = {1, 5};  Line(10) = {2, 6}; Line(11) = {3, 7}; Line(12) = {4, 8};

// Loops oriented with outward normals.
Curve Loop(1) = {9, -8, -12, 4};    Plane Surface(1) = {1};  // x = 0
Curve Loop(2) = {2, 11, -6, -10};   Plane Surface(2) = {2};  // x = L
Curve Loop(3) = {1, 10, -5, -9};    Plane Surface(3) = {3};  // y = 0 (hot wall)
Curve Loop(4) = {12, -7, -11, 3};   Plane Surface(4) = {4};  // y = L
Curve Loop(5) = {-4, -3, -2, -1};   Plane Surface(5) = {5};  // z = 0
Curve Loop(6) = {5, 6, 7, 8};       Plane Surface(6) = {6};  // z = H

Surface Loop(1) = {1, 2, 3, 4, 5, 6};
Volume(1) = {1};

Physical Volume("medium", 1) = {1};
Physical Surface("left", 11) = {1};
Physical Surface("right", 12) = {2};
Physical Surface("bottom", 13) = {3};
Physical Surface("top", 14) = {4};
Physical Surface("zwalls", 15) = {5, 6};
