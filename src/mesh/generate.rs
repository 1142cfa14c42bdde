//! Triangulating a scenario's domain with spade: constrained Delaunay triangulation of the
//! outer polygon and its holes, then Delaunay refinement to the requested area and angle.

use super::domain::{signed_area, Domain};
use super::Mesh;
use crate::util::memory;
use serde::{Deserialize, Serialize};

/// How fine a generated mesh is (the scenario's `resolution` section).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resolution {
    /// Target number of triangles (met to within a few percent).
    #[serde(default)]
    pub cells: Option<u64>,
    /// Largest allowed triangle area (used when `cells` is not given).
    #[serde(default)]
    pub max_area: Option<f64>,
    /// Smallest angle the refinement aims for, in degrees.
    #[serde(default = "default_min_angle")]
    pub min_angle: f64,
}
fn default_min_angle() -> f64 {
    25.0
}
impl Default for Resolution {
    fn default() -> Self {
        Resolution { cells: None, max_area: None, min_angle: default_min_angle() }
    }
}
use anyhow::{bail, Context, Result};
use spade::{AngleLimit, ConstrainedDelaunayTriangulation, Point2, RefinementParameters, Triangulation};
use std::collections::HashSet;

/// Triangulate `domain` with no triangle larger than `max_area` and, as far as the
/// refinement can, no angle below `min_angle` degrees.
pub fn triangulate(domain: &Domain, max_area: f64, min_angle: f64) -> Result<Mesh> {
    let mut cdt = ConstrainedDelaunayTriangulation::<Point2<f64>>::new();
    for poly in std::iter::once(&domain.outer).chain(domain.holes.iter()) {
        let vs = poly
            .iter()
            .map(|p| cdt.insert(Point2::new(p[0], p[1])))
            .collect::<Result<Vec<_>, _>>()
            .context("the domain has a point spade cannot insert")?;
        for k in 0..vs.len() {
            let (a, b) = (vs[k], vs[(k + 1) % vs.len()]);
            if !cdt.can_add_constraint(a, b) {
                bail!("domain: boundary segment {k} crosses another boundary segment");
            }
            cdt.add_constraint(a, b);
        }
    }
    let area = domain_area(domain);
    let expected = check_area_bound(area, max_area)?;
    // In f64 and saturating: an area bound near zero must not wrap the budget round to a
    // small number (which once made max_area 1e-300 silently give a 1907-cell mesh).
    let budget = (4.0 * expected + 1000.0).min(usize::MAX as f64) as usize;
    let params = RefinementParameters::<f64>::new()
        .exclude_outer_faces(true)
        .with_max_allowed_area(max_area)
        .with_angle_limit(AngleLimit::from_deg(min_angle))
        .with_max_additional_vertices(budget);
    let result = cdt.refine(params);
    if !result.refinement_complete {
        log::warn!("mesh refinement stopped at its vertex budget; some triangles may be larger or thinner than asked");
    }
    let excluded: HashSet<_> = result.excluded_faces.into_iter().collect();

    let mut vmap = vec![u32::MAX; cdt.num_vertices()];
    let mut mesh = Mesh::default();
    mesh.triangles.reserve(cdt.num_inner_faces());
    for face in cdt.inner_faces() {
        if excluded.contains(&face.fix()) {
            continue;
        }
        let tri = face.vertices().map(|v| {
            let k = v.fix().index();
            if vmap[k] == u32::MAX {
                vmap[k] = mesh.vertices.len() as u32;
                let p = v.position();
                mesh.vertices.push([p.x, p.y]);
            }
            vmap[k]
        });
        mesh.triangles.push(tri);
    }
    if mesh.triangles.is_empty() {
        bail!("domain: the triangulation has no triangles inside the domain");
    }
    tag_boundary(&mut mesh, domain);
    Ok(mesh)
}

/// Boundary segments for the domain's tagged polygon segments. Refinement splits a
/// polygon's segments but keeps its vertices, so the mesh's boundary edges from polygon
/// vertex k along the boundary up to the next polygon vertex are exactly segment k (or
/// segment k - 1, walking the other way): a walk along the boundary finds every edge's
/// segment in linear time, with no geometric tolerance. Tag numbers are 1 + the index in
/// [`Domain::tag_names`].
pub fn tag_boundary(mesh: &mut Mesh, domain: &Domain) {
    let names = domain.tag_names();
    if names.is_empty() {
        return;
    }
    let key = |p: [f64; 2]| (p[0].to_bits(), p[1].to_bits());
    // Each boundary vertex's (up to two) boundary neighbours.
    let mut count: std::collections::HashMap<(u32, u32), u32> = std::collections::HashMap::new();
    for t in &mesh.triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *count.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    let mut next: std::collections::HashMap<u32, Vec<u32>> = std::collections::HashMap::new();
    for (&(a, b), &c) in &count {
        if c == 1 {
            next.entry(a).or_default().push(b);
            next.entry(b).or_default().push(a);
        }
    }
    let vertex_of: std::collections::HashMap<(u64, u64), u32> =
        next.keys().map(|&v| (key(mesh.vertices[v as usize]), v)).collect();
    for (poly, tags) in domain.tagged_polygons() {
        let n = poly.len();
        let ids: Vec<Option<u32>> = poly.iter().map(|p| vertex_of.get(&key(*p)).copied()).collect();
        let corner: std::collections::HashMap<u32, usize> =
            ids.iter().enumerate().filter_map(|(k, v)| v.map(|v| (v, k))).collect();
        for (k, tag) in tags.iter().enumerate() {
            let Some(number) = names.iter().position(|x| x == tag) else { continue };
            let Some(start) = ids[k] else { continue };
            for &first in next.get(&start).map_or(&[][..], |v| &v[..]) {
                let (mut prev, mut cur, mut path) = (start, first, vec![[start, first]]);
                while !corner.contains_key(&cur) && path.len() <= count.len() {
                    let Some(&step) = next.get(&cur).and_then(|v| v.iter().find(|&&w| w != prev)) else { break };
                    (prev, cur) = (cur, step);
                    path.push([prev, cur]);
                }
                if corner.get(&cur) == Some(&((k + 1) % n)) {
                    let tag = number as u32 + 1;
                    mesh.boundary.extend(path.into_iter().map(|v| super::BoundarySegment { v, tag }));
                }
            }
        }
    }
}

/// Refinement to `max_area` makes up to about this many triangles per (domain area / bound):
/// spade's triangles come out smaller than the bound (1.3 to 1.7 measured; 2 is the margin).
const TRIANGLES_PER_BOUND: f64 = 2.0;

/// The triangle count that an area bound implies, checked before spade allocates anything:
/// it must be numberable with 32-bit ids and the mesh must fit in this machine's memory.
fn check_area_bound(area: f64, max_area: f64) -> Result<f64> {
    if !(max_area.is_finite() && max_area > 0.0) {
        bail!("resolution.max_area: expected a positive area, found {max_area}");
    }
    let expected = (area / max_area).max(1.0);
    let cells = TRIANGLES_PER_BOUND * expected;
    if expected.is_nan() || expected > u32::MAX as f64 {
        bail!(
            "resolution.max_area: {max_area} in a domain of area {area} means at least {expected:.3e} triangles, \
             more than pycno can number (at most {}) or any machine can hold",
            u32::MAX
        );
    }
    check_cells_fit(cells).context("resolution.max_area")?;
    Ok(expected)
}

/// Refuse to mesh `cells` triangles when the machine does not have the memory for it.
pub fn check_cells_fit(cells: f64) -> Result<()> {
    memory::check_fits(&format!("meshing about {cells:.0} triangles"), memory::mesh_bytes(cells))
}

pub fn domain_area(d: &Domain) -> f64 {
    signed_area(&d.outer).abs() - d.holes.iter().map(|h| signed_area(h).abs()).sum::<f64>()
}

/// Triangulate to the scenario's resolution. A target cell count is met by measuring, on a
/// pilot mesh, how many triangles an area bound gives, and scaling the bound.
pub fn generate(domain: &Domain, res: &Resolution) -> Result<Mesh> {
    let area = domain_area(domain);
    match (res.cells, res.max_area) {
        (_, Some(a)) => triangulate(domain, a, res.min_angle),
        (Some(n), None) => {
            if n > u32::MAX as u64 {
                bail!("resolution.cells: {n} triangles are more than pycno can number (at most {})", u32::MAX);
            }
            let n = n as f64;
            check_cells_fit(n).context("resolution.cells (or --cells)")?;
            let pilot_n = n.min(20_000.0);
            let pilot_area = area / pilot_n;
            let pilot = triangulate(domain, pilot_area, res.min_angle)?;
            // Triangles per (domain area / area bound): nearly constant for a given domain.
            let k = pilot.triangles.len() as f64 * pilot_area / area;
            let mut max_area = k * area / n;
            let mut mesh = triangulate(domain, max_area, res.min_angle)?;
            for _ in 0..2 {
                let got = mesh.triangles.len() as f64;
                if (got - n).abs() <= 0.02 * n || n > 2e5 {
                    break;
                }
                max_area *= got / n;
                mesh = triangulate(domain, max_area, res.min_angle)?;
            }
            Ok(mesh)
        }
        (None, None) => bail!("resolution: give cells (a target triangle count) or max_area"),
    }
}
