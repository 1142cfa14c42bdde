//! Everything a run writes: VTK files for ParaView, run statistics, all written atomically.

pub mod budget;
pub mod checkpoint;
pub mod extremes;
pub mod gauges;
pub mod manifest;
pub mod netcdf;
pub mod pvd;
pub mod series;
pub mod side_file;
pub mod vtk;
