// Coelho et al. (1998) 3-D combustor with baffles: an ASSUMED utility-boiler geometry (README.md).
// Only the height (z = 0..30 m), the width in x (0..10 m), the outlet (x = 10 m, 22 <= z <= 30 m),
// the property zones in z (5, 10, 20 m), five thin baffles at a corner and inclined walls forming a
// concave area are given in the text of the seed paper; every other dimension below is assumed.
//
// Cross-section in the x-z plane, extruded over the depth W in y:
//   hopper   inclined walls (0,5)-(XH1,0) and (XH2,0)-(10,5), throat (floor) z = 0, XH1 <= x <= XH2
//   back     x = 10, 5 <= z <= ZN1 (rear wall below the nose)
//   nose     inclined walls (10,ZN1)-(XT,ZT) and (XT,ZT)-(10,22): the nose (arch) under the outlet
//   outlet   x = 10, 22 <= z <= 30 (black, 1200 K)
//   roof z = 30, front x = 0 (5 <= z <= 30), side1 y = 0, side2 y = W
//   baffles  five platens hanging from the roof in the corner above the nose, near the outlet:
//            plates of thickness TB in y centred at y = W/6, 2W/6, ..., 5W/6, XB1 <= x <= XB2,
//            ZB <= z <= 30, cut out of the volume (their faces are walls)
// Volume groups: the property zones z0_5, z5_10, z10_20, z20_30 (interfaces on element faces).
// dgrte sets the element size (mesh.size in the case file, Mesh.MeshSizeMax); lc only serves
// `gmsh -3 combustor.geo`.
SetFactory("OpenCASCADE");
DefineConstant[ W = {12.0, Name "Parameters/W depth in y"},
                XH1 = {3.5, Name "Parameters/XH1"}, XH2 = {6.5, Name "Parameters/XH2"},
                ZN1 = {15.0, Name "Parameters/ZN1 nose bottom on the back wall"},
                XT = {7.5, Name "Parameters/XT nose tip x"}, ZT = {19.0, Name "Parameters/ZT nose tip z"},
                XB1 = {6.0, Name "Parameters/XB1"}, XB2 = {9.5, Name "Parameters/XB2"},
                ZB = {23.0, Name "Parameters/ZB baffle bottom"}, TB = {0.2, Name "Parameters/TB baffle thickness"},
                lc = {2.0, Name "Parameters/lc"} ];
e = 1e-3;

// Cross-section (y = 0), counter-clockwise seen from -y; split at z = 5, 10, 20 into the zones.
Point(1) = {XH1, 0, 0, lc};   Point(2) = {XH2, 0, 0, lc};   Point(3) = {10, 0, 5, lc};
Point(4) = {10, 0, ZN1, lc};  Point(5) = {XT, 0, ZT, lc};   Point(6) = {10, 0, 22, lc};
Point(7) = {10, 0, 30, lc};   Point(8) = {0, 0, 30, lc};    Point(9) = {0, 0, 5, lc};
For i In {1:8}
  Line(i) = {i, i + 1};
EndFor
Line(9) = {9, 1};
Curve Loop(1) = {1:9};
Plane Surface(1) = {1};
// cutting lines at the zone interfaces (longer than the section; fragments keep the inside parts)
Point(25) = {-1, 0, 5, lc}; Point(26) = {11, 0, 5, lc}; Line(23) = {25, 26};
Point(21) = {-1, 0, 10, lc}; Point(22) = {11, 0, 10, lc}; Line(21) = {21, 22};
Point(23) = {-1, 0, 20, lc}; Point(24) = {11, 0, 20, lc}; Line(22) = {23, 24};
s() = BooleanFragments{ Surface{1}; Delete; }{ Curve{21, 22, 23}; Delete; };
// remove the free pieces of the cutting lines outside the section (curves bounding a surface stay)
Recursive Delete { Curve{ Curve In BoundingBox{-1-e, -e, -e, 11+e, e, 31} }; }
ex() = Extrude{0, W, 0}{ Surface{ Surface In BoundingBox{-e, -e, -e, 10+e, e, 30+e} }; };
// baffles: cut out of the top zone
For k In {1:5}
  Box(100 + k) = {XB1, k*W/6 - TB/2, ZB, XB2 - XB1, TB, 30 - ZB};
EndFor
top() = Volume In BoundingBox{-e, -e, 20-e, 10+e, W+e, 30+e};
BooleanDifference{ Volume{top()}; Delete; }{ Volume{101:105}; Delete; }
Coherence;

// Volume groups (property zones). Zone z0_5 (the hopper) is the part below z = 5.
Physical Volume("z0_5", 1) = Volume In BoundingBox{-e, -e, -e, 10+e, W+e, 5+e};
Physical Volume("z5_10", 2) = Volume In BoundingBox{-e, -e, 5-e, 10+e, W+e, 10+e};
Physical Volume("z10_20", 3) = Volume In BoundingBox{-e, -e, 10-e, 10+e, W+e, 20+e};
Physical Volume("z20_30", 4) = Volume In BoundingBox{-e, -e, 20-e, 10+e, W+e, 30+e};

// Wall groups (every boundary face is in one).
Physical Surface("front", 11) = Surface In BoundingBox{-e, -e, 5-e, e, W+e, 30+e};
Physical Surface("back", 12) = Surface In BoundingBox{10-e, -e, 5-e, 10+e, W+e, ZN1+e};
Physical Surface("nose", 13) = Surface In BoundingBox{XT-e, -e, ZN1-e, 10+e, W+e, 22+e};
Physical Surface("outlet", 14) = Surface In BoundingBox{10-e, -e, 22-e, 10+e, W+e, 30+e};
Physical Surface("roof", 15) = Surface In BoundingBox{-e, -e, 30-e, 10+e, W+e, 30+e};
Physical Surface("side1", 16) = Surface In BoundingBox{-e, -e, -e, 10+e, e, 30+e};
Physical Surface("side2", 17) = Surface In BoundingBox{-e, W-e, -e, 10+e, W+e, 30+e};
Physical Surface("floor", 18) = Surface In BoundingBox{XH1-e, -e, -e, XH2+e, W+e, e};
hop() = Surface In BoundingBox{-e, -e, -e, XH1+e, W+e, 5+e};
hop() += Surface In BoundingBox{XH2-e, -e, -e, 10+e, W+e, 5+e};
Physical Surface("hopper", 19) = hop();
Physical Surface("baffles", 20) = Surface In BoundingBox{XB1-e, W/6-TB, ZB-e, XB2+e, 5*W/6+TB, 30+e};
