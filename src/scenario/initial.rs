//! Bathymetry and initial state evaluated at cell centroids (first-order cell averages).

use super::{Bathymetry, Field, Initial, Level, Scenario, Shape};
use crate::physics::CellState;
use anyhow::{anyhow, bail, Result};

/// Depth of an analytic bathymetry at `p`; `None` for a file or a list (see [`depths`]).
pub fn depth_at(b: &Bathymetry, p: [f64; 2]) -> Option<f64> {
    Some(match *b {
        Bathymetry::Constant { depth } => depth,
        Bathymetry::GaussianBump { depth, height, center, width } => {
            let r2 = (p[0] - center[0]).powi(2) + (p[1] - center[1]).powi(2);
            depth - height * (-r2 / (width * width)).exp()
        }
        Bathymetry::Slope { depth, gradient } => depth + gradient[0] * p[0] + gradient[1] * p[1],
        Bathymetry::Sill { x0, y0, height, width, depth } => {
            let d = match (x0, y0) {
                (Some(x0), _) => p[0] - x0,
                (None, Some(y0)) => p[1] - y0,
                (None, None) => 0.0,
            };
            depth - height * (-(d * d) / (width * width)).exp()
        }
        Bathymetry::File(_) | Bathymetry::Sum(_) => return None,
    })
}

/// Depth at every centroid: an analytic shape evaluated there, a file read once and
/// sampled, a list summed in its order (H = H_1 + H_2 + ..., the same on every rank).
pub fn depths(b: &Bathymetry, centroids: &[[f64; 2]]) -> Result<Vec<f64>> {
    match b {
        Bathymetry::File(f) => {
            let z = f.elevations(centroids).map_err(|e| anyhow!("bathymetry: {e:#}"))?;
            Ok(z.into_iter().map(|z| -z).collect())
        }
        Bathymetry::Sum(parts) => {
            let mut total = depths(&parts[0], centroids)?;
            for part in &parts[1..] {
                for (t, h) in total.iter_mut().zip(depths(part, centroids)?) {
                    *t += h;
                }
            }
            Ok(total)
        }
        _ => Ok(centroids.iter().map(|&p| depth_at(b, p).expect("an analytic shape")).collect()),
    }
}

fn field_at(f: &Field, p: [f64; 2]) -> f64 {
    match *f {
        Field::Constant(x) => x,
        Field::Shape(Shape::Circle { center, radius, inside, outside }) => {
            let r2 = (p[0] - center[0]).powi(2) + (p[1] - center[1]).powi(2);
            if r2 <= radius * radius {
                inside
            } else {
                outside
            }
        }
        Field::Shape(Shape::StepX { x0, left, right }) => {
            if p[0] < x0 {
                left
            } else {
                right
            }
        }
    }
}

/// Water at rest with a free surface and an interface at these elevations over a bottom at
/// depth `h_bottom`, each clipped to the bottom: an interface below the bottom leaves no
/// lower layer, one above the surface no upper layer, and a bottom above the surface is dry
/// land. Where nothing is clipped, the thicknesses are `surface - interface` and
/// `h_bottom + interface`, as always (so the stored deviations are exact zeros there).
fn levels(surface: f64, interface: f64, h_bottom: f64) -> CellState {
    let bottom = -h_bottom;
    if bottom >= surface {
        CellState::at_rest(0.0, 0.0)
    } else if interface <= bottom {
        CellState::at_rest(surface + h_bottom, 0.0)
    } else if interface >= surface {
        CellState::at_rest(0.0, h_bottom + surface)
    } else {
        CellState::at_rest(surface - interface, h_bottom + interface)
    }
}

/// State at point `p` over a bottom at depth `h_bottom`; `interface` is the interface
/// elevation read from a file there, if `init` reads one.
pub fn state_at(init: &Initial, h_bottom: f64, p: [f64; 2], interface: Option<f64>) -> CellState {
    let rest = CellState::at_rest;
    match *init {
        Initial::CircularDamBreak { center, radius, h1_inside, h1_outside, surface } => {
            let r2 = (p[0] - center[0]).powi(2) + (p[1] - center[1]).powi(2);
            let h1 = if r2 <= radius * radius { h1_inside } else { h1_outside };
            rest(h1, surface + h_bottom - h1)
        }
        Initial::DamBreakX { x0, interface_left, interface_right, surface } => {
            let z = if p[0] < x0 { interface_left } else { interface_right };
            levels(surface, z, h_bottom)
        }
        Initial::AtRest { interface: Level::Number(z), surface } => levels(surface, z, h_bottom),
        Initial::AtRest { interface: Level::File(_), surface } => {
            levels(surface, interface.expect("interface elevations read from the file"), h_bottom)
        }
        Initial::Layers { ref layer1, ref layer2 } => {
            let (h1, h2) = (field_at(&layer1.thickness, p), field_at(&layer2.thickness, p));
            CellState::with_velocities(h1, layer1.velocity, h2, layer2.velocity)
        }
    }
}

/// Depth and state at every centroid. Fails, naming the first offending cell, where a
/// layer would have negative thickness (0 is an absent layer).
pub fn evaluate(s: &Scenario, centroids: &[[f64; 2]]) -> Result<(Vec<f64>, Vec<CellState>)> {
    let depth = depths(&s.bathymetry, centroids)?;
    let interface = match &s.initial {
        Initial::AtRest { interface: Level::File(f), .. } => {
            Some(f.elevations(centroids).map_err(|e| anyhow!("initial.interface: {e:#}"))?)
        }
        _ => None,
    };
    let state: Vec<CellState> = (0..centroids.len())
        .map(|c| state_at(&s.initial, depth[c], centroids[c], interface.as_ref().map(|z| z[c])))
        .collect();
    for (c, st) in state.iter().enumerate() {
        for (layer, h) in [(1, st.h1), (2, st.h2)] {
            if !(h.is_finite() && h >= 0.0) {
                let p = centroids[c];
                bail!(
                    "initial: layer {layer} would have thickness {h} at cell {c} (x = {}, y = {}, bottom depth H = {}); \
                     expected a thickness >= 0 everywhere (check initial and bathymetry)",
                    p[0], p[1], depth[c]
                );
            }
        }
    }
    Ok((depth, state))
}
