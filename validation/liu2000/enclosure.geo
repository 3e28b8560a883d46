// Enclosure of Liu, Smallwood & Guelder (IJHMT 43, 2000) as restated in seed 004 section 4.1:
// [-1, 1] x [-1, 1] x [0, 4] m, the square z = 0 extruded in two layers so that element faces lie
// on z = 0.375, where the centre-line temperature has its kink (Eq. 26). Groups: volumes "inlet"
// and "gas", surfaces xmin, xmax, ymin, ymax, zmin, zmax. dgrte sets the element size (mesh.size
// in the case file); lc only serves `gmsh -3 enclosure.geo`.
SetFactory("Built-in");
DefineConstant[ lc = {0.2, Name "Parameters/lc"} ];
Point(1) = {-1, -1, 0, lc}; Point(2) = {1, -1, 0, lc}; Point(3) = {1, 1, 0, lc}; Point(4) = {-1, 1, 0, lc};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4}; Plane Surface(1) = {1};
// Extrude returns [top, volume, sides along lines 1-4: y = -1, x = 1, y = 1, x = -1].
a[] = Extrude {0, 0, 0.375} { Surface{1}; };
b[] = Extrude {0, 0, 3.625} { Surface{a[0]}; };
Physical Volume("inlet", 1) = {a[1]};
Physical Volume("gas", 2) = {b[1]};
Physical Surface("zmin", 15) = {1};
Physical Surface("zmax", 16) = {b[0]};
Physical Surface("ymin", 13) = {a[2], b[2]};
Physical Surface("xmax", 12) = {a[3], b[3]};
Physical Surface("ymax", 14) = {a[4], b[4]};
Physical Surface("xmin", 11) = {a[5], b[5]};
