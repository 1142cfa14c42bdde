//! The shear limit (`physics.shear_limit`, `physics/shear.rs`): the interlayer stress of
//! Castro, Fernández-Nieto, González-Vida and Parés (2011) that keeps each cell's shear within
//! the two-layer system's hyperbolicity bound `|u1 - u2|² ≤ κ g (1 - r) (h1 + h2)`.
//!
//! **Checked.** Cell by cell, on random states: a shear beyond the bound comes back to it, the
//! total momentum `r q1 + q2` is kept, the kinetic energy falls, and a state within the bound
//! (or with a layer absent) keeps its bits; `shear_limit: 0` leaves every state alone. On the
//! shipped strait study at order 1 over its first 9 hours (the dense water's first spill down
//! the sill, a frame every hour): without the limit the lower layer reaches 6 m/s and more,
//! beyond what the density difference can give it, with hyperbolicity fallbacks in at least
//! 1e-4 of the edge evaluations; with the default limit it stays under `√(2 g' H)` (5.6 m/s for
//! 800 m) and the fallbacks under 1e-6; water at rest stays exactly at rest with it (the
//! validation tests). The scenario field's errors name it.
//!
//! **Measured** (2026-11-29, the shipped strait example, f32, CPU, 72 h, hourly frames):
//! order 1 9.40 m/s without the limit, 3.84 m/s with it; order 2 12.36 and 3.94 m/s;
//! hyperbolicity fallbacks 0.34% and 1.4% of edge evaluations without, 0 and 2.5e-8 with.

mod common;
#[path = "common/physics.rs"]
mod physics_common;
use common::ocean::max_speed;
use physics_common::Rng;
use pycno::physics::{source, Model, Physics, Side};
use pycno::scenario::Scenario;

fn model(p: Physics) -> Model<f64> {
    Model::new(&Physics { reference: Some(pycno::physics::Reference { surface: 0.0, interface: -1.0 }), ..p }).unwrap()
}

fn shear(s: &Side<f64>, h1: f64, h2: f64) -> f64 {
    (s.q1[0] / h1 - s.q2[0] / h2).hypot(s.q1[1] / h1 - s.q2[1] / h2)
}

#[test]
fn a_shear_beyond_the_bound_comes_back_to_it_keeping_momentum() {
    let r = 0.9;
    let m = model(Physics { r, ..Physics::default() });
    assert_eq!(Physics::default().shear_limit, 1.0, "the default is the bound itself");
    let off = model(Physics { r, shear_limit: 0.0, ..Physics::default() });
    let mut rng = Rng::new(0x5eed_1234_abcd);
    let (mut limited, mut kept) = (0, 0);
    for k in 0..20000 {
        let depth = rng.range(0.5, 50.0);
        let h1 = depth * rng.unit();
        // One in ten with a layer at or below the dry tolerance.
        let h1 = if k % 10 == 0 { 0.0 } else { h1 };
        let h2 = depth - h1;
        let c = (9.81 * (1.0 - r) * depth).sqrt();
        let u = |rng: &mut Rng| [rng.range(-1.2, 1.2) * c, rng.range(-1.2, 1.2) * c];
        let (u1, u2) = (u(&mut rng), u(&mut rng));
        let q1 = if h1 > 0.0 { [h1 * u1[0], h1 * u1[1]] } else { [0.0; 2] };
        let before = Side::from_thickness(&m, h1, q1, h2, [h2 * u2[0], h2 * u2[1]], depth);
        let mut s = before;
        source(&m, &mut s, 1.0);
        let mut untouched = before;
        source(&off, &mut untouched, 1.0);
        assert_eq!((untouched.q1, untouched.q2), (before.q1, before.q2), "shear_limit 0 changed a state");
        let (h1, h2) = (before.h1(&m), before.h2(&m));
        let wet = h1 > m.dry_tolerance && h2 > m.dry_tolerance;
        let bound = (9.81 * (1.0 - r) * (h1 + h2)).sqrt();
        if !wet || shear(&before, h1, h2) <= bound * (1.0 - 1e-12) {
            assert_eq!((s.q1, s.q2), (before.q1, before.q2), "a state within the bound changed: {before:?}");
            kept += 1;
            continue;
        }
        limited += 1;
        let after = shear(&s, h1, h2);
        assert!((after - bound).abs() <= 1e-12 * bound, "shear {after} against the bound {bound}");
        for d in 0..2 {
            let (p0, p1) = (r * before.q1[d] + before.q2[d], r * s.q1[d] + s.q2[d]);
            let scale = r * before.q1[d].abs() + before.q2[d].abs();
            assert!((p1 - p0).abs() <= 1e-13 * scale, "momentum changed: {p0} to {p1}");
        }
        let energy =
            |s: &Side<f64>| r * (s.q1[0].powi(2) + s.q1[1].powi(2)) / h1 + (s.q2[0].powi(2) + s.q2[1].powi(2)) / h2;
        assert!(energy(&s) < energy(&before), "the kinetic energy grew");
    }
    eprintln!("{limited} states limited, {kept} kept");
    assert!(limited > 3000 && kept > 3000, "the samples missed a side: {limited} limited, {kept} kept");
}

/// The shipped strait study at order 1 for 9 h with `shear_limit` (`None`: the scenario's,
/// the default): the largest speed over hourly frames and the fraction of edge evaluations
/// in the hyperbolicity fallback.
fn strait(shear_limit: Option<f64>) -> (f64, f64) {
    let path = common::repo_root().join("meshes/scenarios/strait_exchange.json");
    let mut s = Scenario::from_file(&path).expect("the strait example");
    // First order, where the limit's need was measured; the strait tests of
    // `tests/second_order.rs` run order 2 (the default) with it.
    s.physics.order = 1;
    if let Some(k) = shear_limit {
        s.physics.shear_limit = k;
    }
    s.time.end = 9.0 * 3600.0;
    s.gauges = None;
    let times: Vec<f64> = (1..=9).map(|k| 3600.0 * k as f64).collect();
    let mut top = 0.0f64;
    let out = common::run_observed::<f32>(&s, None, &times, &mut |_, _, state| top = top.max(max_speed(&state)));
    (top, out.fallbacks as f64 / (out.stats.steps as f64 * out.pm.topo.num_edges() as f64))
}

#[test]
fn the_strait_study_keeps_its_dense_overflow_within_what_the_density_difference_gives() {
    let (free, free_fallbacks) = strait(Some(0.0));
    let (limited, fallbacks) = strait(None);
    let most = (2.0 * 9.81 * (1.0 - 0.998) * 800.0f64).sqrt();
    eprintln!(
        "strait, order 1, 9 h: without the limit {free:.2} m/s, fallbacks {free_fallbacks:.2e}; \
         with it {limited:.2} m/s, fallbacks {fallbacks:.2e} (sqrt(2 g' H) = {most:.2} m/s)"
    );
    assert!(free > 6.0 && free_fallbacks > 1e-4, "the overflow no longer outruns the bound without the limit");
    assert!(limited < most, "with the limit the overflow reached {limited} m/s");
    assert!(fallbacks < 1e-6, "with the limit {fallbacks:e} of edge evaluations fell back");
}

#[test]
fn the_shear_limit_field_is_checked() {
    for (value, ok) in [("0", true), ("1", true), ("2.5", true), ("-1", false), ("11", false), ("\"x\"", false)] {
        let json = format!(
            r#"{{ "domain": {{ "outer": [[0,0],[1,0],[1,1],[0,1]] }}, "resolution": {{ "cells": 50 }},
                "bathymetry": {{ "type": "constant", "depth": 1 }},
                "initial": {{ "type": "at_rest", "interface": -0.5, "surface": 0 }},
                "physics": {{ "shear_limit": {value} }}, "time": {{ "end": 1 }} }}"#
        );
        let got = Scenario::from_json(&json);
        match (got, ok) {
            (Ok(_), true) => {}
            (Err(e), false) => {
                let e = format!("{e:#}");
                assert!(e.contains("physics.shear_limit") || e.contains("shear_limit"), "{value}: {e}");
            }
            (got, _) => panic!("shear_limit {value}: {:?}", got.map(|_| ())),
        }
    }
}
