//! Gauges: the state at fixed points over time, in one CSV file (`gauges.csv`) that rank 0
//! writes however many ranks run. Each gauge reads the cell that contains its point.
//!
//! ```text
//! # pycno gauges: ...
//! # gauge east at (2.5, 0): cell 1234 (centroid 2.49, 0.013)
//! time,step,east_h1,east_h2,east_u1,east_v1,east_u2,east_v2,east_interface,east_surface
//! 0.0,0,4,1,0,0,0,0,-4,0
//! ```
//!
//! With an `interval`, rows are at exactly the times `k * interval` asked for: each value is
//! interpolated linearly in time between the states of the two steps around that time (the
//! steps are not shortened to land on them, so the run is the same with or without gauges).
//! Without one, a row follows every step. Output times get a row at the exact time too (the
//! steps land on them). Values are printed with the run's precision: the shortest decimal
//! that reads back to the same float32 (at most 9 significant digits) in an f32 run, or
//! float64 (17) in an f64 run; an interpolated value is rounded to the run's float type.
//! The `step` column is the step after which the row was recorded.
//!
//! Rows are appended one whole line per write and flushed, so a killed run keeps every row
//! it recorded, and a write that fails part-way (a full disk) is cut back off, so the file
//! always ends on a whole row. A restart keeps the rows up to its checkpoint's time and goes
//! on from there.

use crate::comm::{agree, Comm};
use crate::mesh::Mesh;
use crate::physics::CellState;
use crate::scenario::Gauges;
use crate::util::atomic::write_bytes_atomic;
use anyhow::{anyhow, Context, Result};
use rayon::prelude::*;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const FILE: &str = "gauges.csv";
const QUANTITIES: [&str; 8] = ["h1", "h2", "u1", "v1", "u2", "v2", "interface", "surface"];

/// What the gauges read of the run after a step: the state of some of this rank's owned
/// cells, and the mass through each boundary table entry so far (`(in, out)` per layer,
/// m³). The solver's backend gives both; the run driver hands it over.
pub trait GaugeSource {
    fn read_cells(&mut self, cells: &[usize]) -> Result<Vec<CellState>>;
    fn boundary_budget(&mut self) -> Result<Vec<[f64; 4]>>;
}

/// The column line of `g`'s file: the points' quantities, then the boundary tags' columns
/// (see [`GaugeRecorder::with_boundaries`]).
fn header(g: &Gauges) -> String {
    let mut h = "time,step".to_string();
    for p in &g.points {
        for q in QUANTITIES {
            h.push_str(&format!(",{}_{q}", p.name));
        }
    }
    for name in &g.boundaries {
        h.push_str(&format!(",{name}_Q1,{name}_Q2,{name}_V1,{name}_V2"));
    }
    h
}

/// What a restart keeps of the earlier file `old`: its comments, its column line (which
/// must be `header`, this run's) and its rows up to time `t`. A file that is not this run's
/// gauges (another run's columns, garbage, a row of the wrong width) is refused, so the
/// continued file never lacks its columns or mixes two layouts.
fn rows_up_to(old: &str, t: f64, header: &str) -> Result<String> {
    let width = header.split(',').count();
    let mut text = String::new();
    let mut seen_header = false;
    for (i, line) in old.lines().enumerate() {
        let n = i + 1;
        if line.starts_with('#') {
            text.push_str(line);
            text.push('\n');
            continue;
        }
        if line.starts_with("time,") {
            if seen_header || line != header {
                anyhow::bail!(
                    "line {n}: expected this run's column line {header:?} once, found {:?}",
                    crate::util::files::excerpt(line)
                );
            }
            seen_header = true;
            text.push_str(line);
            text.push('\n');
            continue;
        }
        let time = line.split(',').next().and_then(|x| x.parse::<f64>().ok());
        let (Some(time), true) = (time, seen_header && line.split(',').count() == width) else {
            anyhow::bail!(
                "line {n}: expected a row of {width} comma-separated values after the column line, found {:?}",
                crate::util::files::excerpt(line)
            );
        };
        if time <= t {
            text.push_str(line);
            text.push('\n');
        }
    }
    if !seen_header {
        anyhow::bail!("no column line (expected {header:?}): not the gauges of this run");
    }
    Ok(text)
}

/// The cell of `mesh` that contains `p` (on an edge: the lowest id).
pub fn locate(mesh: &Mesh, p: [f64; 2]) -> Option<usize> {
    (0..mesh.triangles.len()).into_par_iter().position_first(|t| contains(mesh, t, p))
}

/// Whether triangle `t` of `mesh` contains `p` (its edges included, with a tolerance).
fn contains(mesh: &Mesh, t: usize, p: [f64; 2]) -> bool {
    let [a, b, c] = mesh.triangles[t].map(|v| mesh.vertices[v as usize]);
    let cross = |o: [f64; 2], u: [f64; 2], w: [f64; 2]| (u[0] - o[0]) * (w[1] - o[1]) - (u[1] - o[1]) * (w[0] - o[0]);
    let area = cross(a, b, c).abs();
    let tol = -1e-12 * area;
    let (d1, d2, d3) = (cross(a, b, p), cross(b, c, p), cross(c, a, p));
    // Counter-clockwise triangles (checked meshes are): inside when all three are >= 0.
    d1 >= tol && d2 >= tol && d3 >= tol
}

fn outside(g: &Gauges, k: usize) -> anyhow::Error {
    let p = &g.points[k];
    anyhow!("gauges.points[{k}] ({:?}) at ({}, {}) is outside the domain", p.name, p.at[0], p.at[1])
}

pub struct GaugeRecorder {
    path: PathBuf,
    names: Vec<String>,
    /// Per gauge: the local index of its cell on this rank, when this rank owns it.
    local: Vec<Option<usize>>,
    interval: Option<f64>,
    next: f64,
    /// Rank 0's open file.
    file: Option<File>,
    /// Print values as float32 (an f32 run).
    f32: bool,
    /// The gauges' values after the last step seen, and its time: one end of the
    /// interpolation to the next requested time.
    prev: Option<(f64, Vec<f64>)>,
    /// Time of the last row written.
    last_row: Option<f64>,
    /// Boundary gauges: each tag's name and entry in the boundary table.
    tags: Vec<(String, usize)>,
    /// The budget per table entry before this run's backend started counting (a restart's
    /// checkpoint), added to what the backends report.
    budget_before: Vec<[f64; 4]>,
    /// Each boundary gauge's discharge per layer over the last step (m³/s; NaN before the
    /// first step).
    rate: Vec<f64>,
}

impl GaugeRecorder {
    /// Locate the gauges (every rank, on the global mesh) and, on rank 0, start the file:
    /// a new one, or (restart, `resume = Some((t, earlier))`) the rows up to time `t` of the
    /// earlier run's file `earlier` (the same file, or one in the output directory of the run
    /// that wrote the checkpoint).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        comm: &dyn Comm,
        dir: &Path,
        g: &Gauges,
        mesh: &Mesh,
        centroid: &[[f64; 2]],
        owned_global: &[u32],
        resume: Option<(f64, &Path)>,
    ) -> Result<GaugeRecorder> {
        let mut cells = Vec::new();
        for (k, p) in g.points.iter().enumerate() {
            let c = locate(mesh, p.at).ok_or_else(|| outside(g, k))?;
            cells.push((c, centroid[c]));
        }
        Self::at_cells(comm, dir, g, &cells, owned_global, resume)
    }

    /// As [`GaugeRecorder::new`] on a rank that holds only its owned cells (`piece`, with
    /// their `centroid` and `owned_global` ids): each rank finds the lowest global id among
    /// its cells that contain the point, and the lowest over the ranks is the gauge's cell,
    /// the same one [`locate`] finds in the global mesh. Collective.
    pub fn new_on_piece(
        comm: &dyn Comm,
        dir: &Path,
        g: &Gauges,
        piece: &Mesh,
        centroid: &[[f64; 2]],
        owned_global: &[u32],
        resume: Option<(f64, &Path)>,
    ) -> Result<GaugeRecorder> {
        let mut cells = Vec::new();
        for (k, p) in g.points.iter().enumerate() {
            let mine = (0..piece.triangles.len())
                .filter(|&l| contains(piece, l, p.at))
                .min_by_key(|&l| owned_global[l])
                .map_or([-1.0, 0.0, 0.0], |l| [f64::from(owned_global[l]), centroid[l][0], centroid[l][1]]);
            let all = comm.all_gather_f64(&mine);
            let best = all.chunks(3).filter(|c| c[0] >= 0.0).min_by(|a, b| a[0].total_cmp(&b[0]));
            let c = best.ok_or_else(|| outside(g, k))?;
            cells.push((c[0] as usize, [c[1], c[2]]));
        }
        Self::at_cells(comm, dir, g, &cells, owned_global, resume)
    }

    /// The recorder of gauges in the global `cells` (with their centroids).
    fn at_cells(
        comm: &dyn Comm,
        dir: &Path,
        g: &Gauges,
        cells: &[(usize, [f64; 2])],
        owned_global: &[u32],
        resume: Option<(f64, &Path)>,
    ) -> Result<GaugeRecorder> {
        let resume_at = resume.map(|(t, _)| t);
        let local = cells.iter().map(|&(c, _)| owned_global.iter().position(|&g| g as usize == c)).collect();
        let path = dir.join(FILE);
        let file = if comm.is_root() {
            let result = (|| -> Result<File> {
                let mut text = String::new();
                match resume_at {
                    Some(t) => {
                        let earlier = resume.map_or(path.as_path(), |(_, p)| p);
                        let old = crate::util::files::read_regular_to_string(earlier)
                            .with_context(|| format!("cannot read {} to continue it", earlier.display()))?;
                        text = rows_up_to(&old, t, &header(g))
                            .with_context(|| format!("cannot continue {}", earlier.display()))?;
                    }
                    None => {
                        text.push_str("# pycno gauges: the state of the cell containing each point; u, v velocities (m/s), elevations (m) upwards from the reference level\n");
                        for (p, &(c, m)) in g.points.iter().zip(cells) {
                            text.push_str(&format!(
                                "# gauge {} at ({}, {}): cell {c} (centroid {}, {})\n",
                                p.name, p.at[0], p.at[1], m[0], m[1]
                            ));
                        }
                        text.push_str("time,step");
                        for p in &g.points {
                            for q in QUANTITIES {
                                text.push_str(&format!(",{}_{q}", p.name));
                            }
                        }
                        text.push('\n');
                    }
                }
                write_bytes_atomic(&path, text.as_bytes())?;
                OpenOptions::new().append(true).open(&path).with_context(|| format!("cannot open {}", path.display()))
            })();
            Some(result)
        } else {
            None
        };
        let file = agree(comm, file.transpose())?;
        // On a restart, the next record time is where the uninterrupted run would have it:
        // the first point of the same grid after the checkpoint (see `next_record_time`).
        let next = match (resume_at, g.interval) {
            (Some(t), Some(dt)) => next_record_time(t, dt),
            _ => 0.0,
        };
        Ok(GaugeRecorder {
            path,
            names: g.points.iter().map(|p| p.name.clone()).collect(),
            local,
            interval: g.interval,
            next,
            file,
            f32: false,
            prev: None,
            last_row: resume_at,
            tags: Vec::new(),
            budget_before: Vec::new(),
            rate: Vec::new(),
        })
    }

    /// Record the discharge through the boundary tags `g.boundaries` too (`table`: the
    /// run's boundary table; `before`: the budget a restart's checkpoint carries). Their
    /// columns follow the points' in the header, which `new` wrote without them: this is
    /// called before any row, and rewrites the header line (a restart keeps the file's).
    pub fn with_boundaries(
        mut self,
        comm: &dyn Comm,
        g: &Gauges,
        table: &crate::physics::Boundaries,
        before: &[[f64; 4]],
    ) -> Result<Self> {
        for name in &g.boundaries {
            let entry = table.names.iter().position(|n| n == name).ok_or_else(|| {
                anyhow!(
                    "gauges.boundaries: {name:?} has no entry in the boundary table (no edge of the mesh has this tag)"
                )
            })?;
            self.tags.push((name.clone(), entry));
        }
        self.budget_before = before.to_vec();
        self.rate = vec![f64::NAN; 2 * self.tags.len()];
        if self.tags.is_empty() || self.last_row.is_some() {
            return Ok(self);
        }
        let r = match &self.file {
            Some(_) => (|| -> Result<File> {
                let text = crate::util::files::read_regular_to_string(&self.path)?;
                let mut out = String::new();
                for line in text.lines() {
                    if line.starts_with("time,") {
                        for (name, _) in &self.tags {
                            out.push_str(&format!("# boundary {name}: {name}_Q1, {name}_Q2 the net discharge into the domain per layer over the step ending at or after the row's time (m³/s; NaN before the first step), {name}_V1, {name}_V2 the net volume in since the start (m³)\n"));
                        }
                    }
                    out.push_str(line);
                    if line.starts_with("time,") {
                        for (name, _) in &self.tags {
                            out.push_str(&format!(",{name}_Q1,{name}_Q2,{name}_V1,{name}_V2"));
                        }
                    }
                    out.push('\n');
                }
                write_bytes_atomic(&self.path, out.as_bytes())?;
                OpenOptions::new().append(true).open(&self.path).with_context(|| format!("cannot open {}", self.path.display()))
            })()
            .map(Some),
            None => Ok(None),
        };
        self.file = agree(comm, r)?;
        Ok(self)
    }

    /// Print the values as float32 (the run's precision).
    pub fn in_f32(mut self, f32: bool) -> Self {
        self.f32 = f32;
        self
    }

    /// After a step that reached `time` (collective): the rows of the requested times up to
    /// `time`, interpolated from the states around them, and with `at_time` (an output time,
    /// the start) or no interval a row at `time` itself. A second call at the same time only
    /// adds the row at `time` if it is asked for and missing.
    pub fn advance(
        &mut self,
        comm: &dyn Comm,
        b: &mut dyn GaugeSource,
        step: u64,
        time: f64,
        at_time: bool,
        depth_of: &dyn Fn(usize) -> f64,
    ) -> Result<()> {
        let now = match &self.prev {
            Some((t, v)) if *t == time => v.clone(),
            _ => {
                let now = self.values(comm, b, depth_of)?;
                if let Some((t0, v0)) = &self.prev {
                    // The net volume in is linear in time over a step: its slope is the
                    // step's discharge, the same for every row inside the step.
                    let points = now.len() - self.rate.len();
                    for (k, r) in self.rate.iter_mut().enumerate() {
                        *r = (now[points + k] - v0[points + k]) / (time - t0);
                    }
                }
                if let (Some(dt), Some((t0, v0))) = (self.interval, &self.prev) {
                    let (t0, v0) = (*t0, v0.clone());
                    while self.next <= time {
                        let t = self.next;
                        let v: Vec<f64> = if t == time {
                            now.clone()
                        } else {
                            let w = (t - t0) / (time - t0);
                            v0.iter().zip(&now).map(|(a, b)| a + w * (b - a)).collect()
                        };
                        self.row(comm, t, step, &v)?;
                        self.next = next_record_time(t, dt);
                    }
                }
                self.prev = Some((time, now.clone()));
                now
            }
        };
        if (at_time || self.interval.is_none()) && self.last_row != Some(time) {
            self.row(comm, time, step, &now)?;
            if let Some(dt) = self.interval {
                self.next = self.next.max(next_record_time(time, dt));
            }
        }
        Ok(())
    }

    /// A restart from time `time`: its state is the start of the next interpolation; no row
    /// (the file has the rows up to the checkpoint already).
    pub fn prime(
        &mut self,
        comm: &dyn Comm,
        b: &mut dyn GaugeSource,
        _step: u64,
        time: f64,
        depth_of: &dyn Fn(usize) -> f64,
    ) -> Result<()> {
        let now = self.values(comm, b, depth_of)?;
        self.prev = Some((time, now));
        Ok(())
    }

    /// The gauges' values now, on every rank (collective).
    fn values(
        &mut self,
        comm: &dyn Comm,
        b: &mut dyn GaugeSource,
        depth_of: &dyn Fn(usize) -> f64,
    ) -> Result<Vec<f64>> {
        let mine: Vec<usize> = self.local.iter().flatten().copied().collect();
        let states = b.read_cells(&mine)?;
        let mut values = vec![f64::NAN; self.names.len() * QUANTITIES.len()];
        let mut it = states.iter();
        for (k, l) in self.local.iter().enumerate() {
            if let Some(l) = l {
                let s: &CellState = it.next().expect("one state per owned gauge");
                let d = depth_of(*l);
                let (u1, u2) = s.velocities();
                let row = [s.h1, s.h2, u1[0], u1[1], u2[0], u2[1], s.interface_elevation(d), s.surface_elevation(d)];
                values[k * QUANTITIES.len()..(k + 1) * QUANTITIES.len()].copy_from_slice(&row);
            }
        }
        // Each gauge has one owner: its values are the only non-NaN ones (a cell's values
        // are never NaN in a healthy run; a blow-up stops the run before this).
        let all = comm.all_gather_f64(&values);
        let n = values.len();
        let mut v: Vec<f64> = (0..n)
            .map(|k| (0..comm.size()).map(|r| all[r * n + k]).find(|x| !x.is_nan()).unwrap_or(f64::NAN))
            .collect();
        if !self.tags.is_empty() {
            v.extend(self.volumes_in(comm, b)?);
        }
        Ok(v)
    }

    /// Each boundary gauge's net volume in per layer since the start (m³): the backends'
    /// budgets summed over the ranks in rank order, plus what a restart's checkpoint carries.
    fn volumes_in(&self, comm: &dyn Comm, b: &mut dyn GaugeSource) -> Result<Vec<f64>> {
        let mine: Vec<f64> = agree(comm, b.boundary_budget())?.into_iter().flatten().collect();
        let all = comm.all_gather_f64(&mine);
        let n = mine.len();
        let word = |entry: usize, k: usize| {
            let ranks: f64 = if n == 0 { 0.0 } else { (0..comm.size()).map(|r| all[r * n + 4 * entry + k]).sum() };
            ranks + self.budget_before.get(entry).map_or(0.0, |b| b[k])
        };
        Ok(self.tags.iter().flat_map(|&(_, e)| [word(e, 0) - word(e, 1), word(e, 2) - word(e, 3)]).collect())
    }

    /// One row (rank 0 writes it; collective).
    fn row(&mut self, comm: &dyn Comm, time: f64, step: u64, values: &[f64]) -> Result<()> {
        self.last_row = Some(time);
        // The points' values, then per boundary gauge Q1, Q2 (the step's discharge), V1, V2.
        let (points, volumes) = values.split_at(values.len() - self.rate.len());
        let mut values = points.to_vec();
        for k in 0..self.tags.len() {
            values.extend([self.rate[2 * k], self.rate[2 * k + 1], volumes[2 * k], volumes[2 * k + 1]]);
        }
        if let Some(f) = &mut self.file {
            let mut line = format!("{time:?},{step}");
            for &v in &values {
                if self.f32 {
                    line.push_str(&format!(",{:?}", v as f32));
                } else {
                    line.push_str(&format!(",{v:?}"));
                }
            }
            line.push('\n');
            let r = append_row(f, line.as_bytes()).with_context(|| format!("cannot append to {}", self.path.display()));
            agree(comm, r)
        } else {
            agree(comm, Ok(()))
        }
    }
}

/// The first point `k * dt` (k = 1, 2, ...) of the record grid strictly after `t`, computed
/// directly, never by stepping through the grid (an interval of 1e-12 s made that loop run
/// for hours, and one below the spacing of the floats near `t` never ended). A restarted run
/// and an uninterrupted one get the same grid: both take the smallest such point after the
/// time of their last record, and no grid point lies between that record and a checkpoint.
pub fn next_record_time(t: f64, dt: f64) -> f64 {
    let grid = |k: f64| k * dt;
    let mut k = (t / dt).floor().max(0.0) + 1.0;
    if !grid(k).is_finite() {
        return f64::INFINITY;
    }
    // `t / dt` is rounded: step k at most a few times to the smallest k with k dt > t.
    for _ in 0..4 {
        if k > 1.0 && grid(k - 1.0) > t {
            k -= 1.0;
        } else {
            break;
        }
    }
    for _ in 0..4 {
        if grid(k) <= t {
            k += 1.0;
        } else {
            break;
        }
    }
    // Past 2^53 steps of dt the grid points are no longer distinct floats: go on from t.
    grid(k).max(t.next_up())
}

/// A file that whole rows are appended to: its length, and cutting it back to a length.
pub trait RowFile: Write {
    fn length(&self) -> std::io::Result<u64>;
    fn cut_to(&self, len: u64) -> std::io::Result<()>;
}

impl RowFile for File {
    fn length(&self) -> std::io::Result<u64> {
        Ok(self.metadata()?.len())
    }
    fn cut_to(&self, len: u64) -> std::io::Result<()> {
        self.set_len(len)
    }
}

/// Append one whole row (already built in memory, ending in a newline) with one write. When
/// the write fails part-way (a full disk), the file is cut back to its length before the
/// row, so it always ends on a whole row.
pub fn append_row(f: &mut dyn RowFile, row: &[u8]) -> std::io::Result<()> {
    let before = f.length()?;
    let written = f.write_all(row).and_then(|_| f.flush());
    if let Err(e) = written {
        return match f.cut_to(before) {
            Ok(()) => Err(e),
            Err(cut) => Err(std::io::Error::new(e.kind(), format!("{e}; cutting the partial row off failed: {cut}"))),
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn tiny_intervals_give_the_next_grid_point_at_once() {
        assert_eq!(next_record_time(0.0, 0.1), 0.1);
        assert_eq!(next_record_time(0.1, 0.1), 0.2);
        assert_eq!(next_record_time(0.25, 0.1), 0.30000000000000004);
        // 1e11 grid points before t: the old catch-up loop took hours here.
        let n = next_record_time(0.1, 1e-12);
        assert!(n > 0.1 && n < 0.1 + 2e-12, "{n}");
        // Below the spacing of floats near t: the old loop never ended.
        let n = next_record_time(1e6, 1e-20);
        assert!(n > 1e6 && n <= 1e6f64.next_up().next_up(), "{n}");
        for (t, dt) in [(3.7, 0.01), (1e-9, 3e-10), (123.456, 0.017), (0.5, 0.5)] {
            let n = next_record_time(t, dt);
            let k = (n / dt).round();
            assert!(n > t && (k - 1.0) * dt <= t && n == k * dt, "t {t} dt {dt}: {n}");
        }
    }

    #[test]
    fn restart_grid_equals_the_uninterrupted_grid() {
        // Records as the run loop makes them: at every step time >= next. A restart at any
        // step time must continue with the same next point.
        let dt = 0.013;
        let steps: Vec<f64> = (1..2000).map(|k| k as f64 * 0.00377).collect();
        let mut next = 0.0;
        for &t in &steps {
            if t >= next {
                next = next_record_time(t, dt);
            }
            assert_eq!(next_record_time(t, dt), next, "restart at {t}");
        }
    }

    /// A file that accepts `room` more bytes and then fails, as a full disk does.
    struct FullDisk {
        data: RefCell<Vec<u8>>,
        room: usize,
    }

    impl Write for FullDisk {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.room);
            if n == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left on device"));
            }
            self.room -= n;
            self.data.borrow_mut().extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl RowFile for FullDisk {
        fn length(&self) -> std::io::Result<u64> {
            Ok(self.data.borrow().len() as u64)
        }
        fn cut_to(&self, len: u64) -> std::io::Result<()> {
            self.data.borrow_mut().truncate(len as usize);
            Ok(())
        }
    }

    #[test]
    fn a_full_disk_never_leaves_a_partial_row() {
        let mut f = FullDisk { data: RefCell::new(b"time,step,a_h1\n".to_vec()), room: 30 };
        append_row(&mut f, b"0.0,0,4.0\n").unwrap();
        let e = append_row(&mut f, b"0.1,1,4.000000000000001\n").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
        assert_eq!(f.data.borrow().as_slice(), b"time,step,a_h1\n0.0,0,4.0\n");
    }

    #[test]
    fn rows_append_to_a_real_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("g.csv");
        std::fs::write(&p, "h\n").unwrap();
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        append_row(&mut f, b"1\n").unwrap();
        f.cut_to(2).unwrap();
        append_row(&mut f, b"2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "h\n2\n");
    }
}
