//! Physically generous bounds on the finite values of the `physics` section (issue 46):
//! `manning: 1e300` or `wind_stress: [1e300, 0]` were accepted and then blew the run up
//! without naming the field. Each bound is far beyond any real water body or laboratory
//! tank, so only typos and unit mix-ups meet it. (`physics::Physics::validate` checks signs
//! and finiteness; these are the scenario's word on what is plausible.)

use crate::physics::Physics;
use anyhow::{bail, Result};

/// Manning's n (s/m^(1/3)): 0.01-0.05 for sea beds, 0.15 for dense vegetation.
pub const MAX_MANNING: f64 = 1.0;
/// The quadratic interlayer drag coefficient: 1e-4 to 1e-2 in estuaries and straits.
pub const MAX_INTERLAYER_FRICTION: f64 = 1.0;
/// The Coriolis parameter (1/s): the Earth's is at most 1.46e-4; rotating laboratory tanks
/// reach about 1.
pub const MAX_F0: f64 = 10.0;
/// Its northward gradient (1/(m s)): the Earth's is at most 2.3e-11; a laboratory tank's
/// topographic beta about 1e-2.
pub const MAX_BETA: f64 = 1.0;
/// The kinematic wind stress tau / rho1 (m²/s²): a hurricane's is about 5e-3.
pub const MAX_WIND_STRESS: f64 = 1.0;
/// The linear drag velocity (m/s).
pub const MAX_LINEAR_FRICTION: f64 = 10.0;
/// A constant horizontal eddy viscosity (m²/s): global ocean models at 1° take 1e4 to 1e5.
pub const MAX_VISCOSITY: f64 = 1e7;

/// `x` as a person reads it in a message: 1e300 as "1e300", not 301 digits.
pub(crate) fn show(x: f64) -> String {
    if x != 0.0 && !(1e-4..1e7).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

pub fn check(p: &Physics) -> Result<()> {
    let mut checks = vec![
        ("physics.manning", p.manning, MAX_MANNING, "s/m^(1/3)"),
        ("physics.interlayer_friction", p.interlayer_friction, MAX_INTERLAYER_FRICTION, "(dimensionless)"),
        ("physics.linear_friction", p.linear_friction, MAX_LINEAR_FRICTION, "m/s"),
    ];
    if let Some(c) = &p.coriolis {
        if let Some(f) = c.f0 {
            checks.push(("physics.coriolis.f0", f, MAX_F0, "1/s"));
        }
        if let Some(b) = c.beta {
            checks.push(("physics.coriolis.beta", b, MAX_BETA, "1/(m s)"));
        }
    }
    if let Some(nu) = p.viscosity.and_then(|v| v.constant) {
        checks.push(("physics.viscosity.constant", nu, MAX_VISCOSITY, "m²/s"));
    }
    if let Some(w) = p.wind_stress {
        checks.push(("physics.wind_stress", w[0].hypot(w[1]), MAX_WIND_STRESS, "m²/s² (kinematic stress tau / rho1)"));
    }
    for (field, x, limit, unit) in checks {
        if x.abs() > limit {
            bail!(
                "{field}: {} is beyond the physically plausible {} {unit}; check the value and its unit",
                show(x),
                show(limit)
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_finite_values_are_refused_naming_the_field() {
        let ok = Physics { manning: 0.03, interlayer_friction: 1e-3, ..Default::default() };
        check(&ok).unwrap();
        let cases: [(&str, Physics); 5] = [
            (
                "physics.viscosity.constant",
                Physics {
                    viscosity: Some(crate::physics::Viscosity { constant: Some(1e300), time_scale: None }),
                    ..Default::default()
                },
            ),
            ("physics.manning", Physics { manning: 1e300, ..Default::default() }),
            ("physics.interlayer_friction", Physics { interlayer_friction: 1e300, ..Default::default() }),
            ("physics.wind_stress", Physics { wind_stress: Some([1e300, 0.0]), ..Default::default() }),
            (
                "physics.coriolis.beta",
                Physics {
                    coriolis: Some(crate::physics::model::Coriolis {
                        f0: Some(1e-4),
                        beta: Some(1e300),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ),
        ];
        for (field, p) in cases {
            let e = check(&p).unwrap_err().to_string();
            assert!(e.starts_with(field) && e.contains("1e300"), "{e}");
        }
    }
}
