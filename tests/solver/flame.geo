// Cube [-1,1]^3 with a hot inner box (the "flame") as its own volume group, so that the
// temperature jump lies on element faces while oblique characteristics carry it through elements.
SetFactory("OpenCASCADE");
Box(1) = {-1, -1, -1, 2, 2, 2};
Box(2) = {-0.4, -0.4, -0.4, 0.8, 0.8, 0.8};
BooleanFragments{ Volume{1}; Delete; }{ Volume{2}; Delete; }
Physical Volume("flame") = {2};
Physical Volume("gas") = {3};
Physical Surface("walls") = Boundary{ Volume{3}; } ;
