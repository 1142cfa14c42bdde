//! The model (`pycno::physics::model`): validation of the scenario's physics section.

#[path = "common/physics.rs"]
mod shared;
#[allow(unused_imports)]
use nalgebra::{Complex, Matrix4, Vector4};
#[allow(unused_imports)]
use pycno::physics::boundary::mirror;
#[allow(unused_imports)]
use pycno::physics::eigen::{eigenvalues, eigenvector, wave_strengths, Eigenvalues};
#[allow(unused_imports)]
use pycno::physics::{numerical_flux, EdgeFlux, Model, Physics, Real, Side};
use shared::*;

// ---------------------------------------------------------------------------------------
// 10. Params validation.
// ---------------------------------------------------------------------------------------

#[test]
fn params_validate() {
    for r in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        let e = Model::<f64>::new(&Physics { g: G, r, ..Default::default() }).expect_err(&format!("r = {r} accepted"));
        assert!(format!("{e:#}").contains("physics.r"), "message for r={r}: {e:#}");
        let e = Model::<f32>::new(&Physics { g: G, r, ..Default::default() })
            .expect_err(&format!("r = {r} accepted (f32)"));
        assert!(format!("{e:#}").contains("physics.r"), "message for r={r}: {e:#}");
    }
    for g in [0.0, -9.81, f64::NAN, f64::INFINITY, -0.0] {
        let e =
            Model::<f64>::new(&Physics { g, r: 0.998, ..Default::default() }).expect_err(&format!("g = {g} accepted"));
        assert!(format!("{e:#}").contains("physics.g"), "message for g={g}: {e:#}");
    }
    // The dry tolerance: a thickness in [1e-12, 1) m (float32's velocities never divide by a
    // subnormal thickness on the GPU).
    for tol in [0.0, -1e-3, 1e-13, 1e-40, 1.0, f64::NAN] {
        let e = Model::<f32>::new(&Physics { g: G, r: 0.998, dry_tolerance: Some(tol), ..Default::default() })
            .expect_err(&format!("dry_tolerance = {tol} accepted"));
        assert!(format!("{e:#}").contains("physics.dry_tolerance"), "message for {tol}: {e:#}");
    }
    for tol in [1e-12, 1e-4, 0.5] {
        let p = Model::<f32>::new(&Physics { g: G, r: 0.998, dry_tolerance: Some(tol), ..Default::default() }).unwrap();
        assert_eq!(p.dry_tolerance, tol as f32);
    }
    for (g, r) in [(9.81, 0.998), (1.0, 0.5), (9.81, 1e-6), (9.81, 0.999999)] {
        let p = Model::<f64>::new(&Physics { g, r, ..Default::default() }).unwrap();
        assert_eq!((p.g, p.r), (g, r));
        let p = Model::<f32>::new(&Physics { g, r, ..Default::default() }).unwrap();
        assert_eq!((p.g, p.r), (g as f32, r as f32));
    }
}
