// The Liu et al. (2000) enclosure of enclosure.geo in one piece: no element faces on the kink plane
// z = 0.375 of the centre-line temperature, so the kink lies inside elements (issue 33: the medium
// evaluated at quadrature points; liu2000.py runs ending in `:unaligned`). Same surface groups.
SetFactory("Built-in");
DefineConstant[ lc = {0.25, Name "Parameters/lc"} ];
Point(1) = {-1, -1, 0, lc}; Point(2) = {1, -1, 0, lc}; Point(3) = {1, 1, 0, lc}; Point(4) = {-1, 1, 0, lc};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4}; Plane Surface(1) = {1};
// Extrude returns [top, volume, sides along lines 1-4: y = -1, x = 1, y = 1, x = -1].
a[] = Extrude {0, 0, 4} { Surface{1}; };
Physical Volume("gas", 2) = {a[1]};
Physical Surface("zmin", 15) = {1};
Physical Surface("zmax", 16) = {a[0]};
Physical Surface("ymin", 13) = {a[2]};
Physical Surface("xmax", 12) = {a[3]};
Physical Surface("ymax", 14) = {a[4]};
Physical Surface("xmin", 11) = {a[5]};
