// A small cylindrical-flame furnace for the quick start: box 1 x 1 x 2 m, a flame cylinder of
// radius 0.2 m and height 1 m on the burner wall (z = 0), its own volume group.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 2};
Cylinder(2) = {0.5, 0.5, 0, 0, 0, 1.0, 0.2};
BooleanFragments{ Volume{1}; Delete; }{ Volume{2}; Delete; }
// After the fragment: volume 2 is the flame, volume 3 the surrounding gas.
Physical Volume("flame") = {2};
Physical Volume("gas") = {3};
eps = 1e-6;
Physical Surface("burner") = Surface In BoundingBox{-eps, -eps, -eps, 1 + eps, 1 + eps, eps};
Physical Surface("exit") = Surface In BoundingBox{-eps, -eps, 2 - eps, 1 + eps, 1 + eps, 2 + eps};
Physical Surface("side_walls") = {Surface In BoundingBox{-eps, -eps, -eps, eps, 1 + eps, 2 + eps},
                                  Surface In BoundingBox{1 - eps, -eps, -eps, 1 + eps, 1 + eps, 2 + eps},
                                  Surface In BoundingBox{-eps, -eps, -eps, 1 + eps, eps, 2 + eps},
                                  Surface In BoundingBox{-eps, 1 - eps, -eps, 1 + eps, 1 + eps, 2 + eps}};
