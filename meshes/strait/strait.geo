// An idealized strait between two basins (an Atlantic-Mediterranean-like exchange), for
// meshes/scenarios/strait_exchange.json. Lengths in metres. Make the mesh with
//   gmsh strait.geo -2 -format msh41 -o strait.msh
// (Gmsh 4.15 wrote the shipped strait.msh; `pip install gmsh`, 4.15.2, remakes it byte for
// byte, and with `-clscale 0.5` or `0.25` the finer meshes of `REFINE=1 tools/validate.sh`).
// Boundary tags are the physical curves "atlantic" (the western open end), "mediterranean"
// (the eastern open end) and "coast"; the scenario gives each its condition.

basin = 3000;   // element size in the basins (m)
strait = 1000;  // element size in the strait (m)

// West basin [0, 60 km] x [-30, 30 km], strait from x = 60 to 110 km, narrowing from
// 20 km at its ends to 12 km at x = 85 km, east basin [110, 170 km] x [-30, 30 km].
Point(1) = {0, -30000, 0, basin};
Point(2) = {60000, -30000, 0, basin};
Point(3) = {60000, -10000, 0, strait};
Point(4) = {85000, -6000, 0, strait};
Point(5) = {110000, -10000, 0, strait};
Point(6) = {110000, -30000, 0, basin};
Point(7) = {170000, -30000, 0, basin};
Point(8) = {170000, 30000, 0, basin};
Point(9) = {110000, 30000, 0, basin};
Point(10) = {110000, 10000, 0, strait};
Point(11) = {85000, 6000, 0, strait};
Point(12) = {60000, 10000, 0, strait};
Point(13) = {60000, 30000, 0, basin};
Point(14) = {0, 30000, 0, basin};

Line(1) = {1, 2};
Line(2) = {2, 3};
Spline(3) = {3, 4, 5};
Line(4) = {5, 6};
Line(5) = {6, 7};
Line(6) = {7, 8};   // the Mediterranean end
Line(7) = {8, 9};
Line(8) = {9, 10};
Spline(9) = {10, 11, 12};
Line(10) = {12, 13};
Line(11) = {13, 14};
Line(12) = {14, 1}; // the Atlantic end

Curve Loop(1) = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
Plane Surface(1) = {1};

Physical Curve("atlantic") = {12};
Physical Curve("mediterranean") = {6};
Physical Curve("coast") = {1, 2, 3, 4, 5, 7, 8, 9, 10, 11};
Physical Surface("sea") = {1};
