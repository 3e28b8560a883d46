// Cube [-1,1]^3 for the manufactured-solution study (He et al. 2013, sec. 5).
// The element size is set by dgrte (mesh.size in the case file, Mesh.MeshSizeMax).
SetFactory("OpenCASCADE");
Box(1) = {-1, -1, -1, 2, 2, 2};
Physical Volume("medium") = {1};
// OpenCASCADE numbers the box faces xmin, xmax, ymin, ymax, zmin, zmax.
Physical Surface("xmin") = {1};
Physical Surface("xmax") = {2};
Physical Surface("ymin") = {3};
Physical Surface("ymax") = {4};
Physical Surface("zmin") = {5};
Physical Surface("zmax") = {6};
