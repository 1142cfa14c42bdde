//! Scenario files at the library level: every documented shape parses, every bad input is
//! rejected with a message that names the field's path and what was expected, and the
//! paper benchmark written as JSON is `Scenario::paper_benchmark`.

use pycno::scenario::{Bathymetry, Field, Initial, Level, Scenario, Shape};
use serde_json::{json, Value};

/// A small valid scenario; tests replace parts of it.
fn base() -> Value {
    json!({
        "name": "t",
        "domain": { "outer": [[0, 0], [4, 0], [4, 2], [0, 2]] },
        "resolution": { "cells": 200 },
        "bathymetry": { "type": "constant", "depth": 5.0 },
        "initial": { "type": "at_rest", "interface": -2.0 },
        "physics": { "r": 0.98 },
        "time": { "end": 0.1 }
    })
}

/// `base()` with the value at JSON pointer `ptr` set to `v` (parents must exist).
fn with(ptr: &str, v: Value) -> Value {
    let mut b = base();
    set(&mut b, ptr, v);
    b
}

fn set(doc: &mut Value, ptr: &str, v: Value) {
    let (parent, key) = ptr.rsplit_once('/').expect("pointer");
    let p = doc.pointer_mut(parent).unwrap_or_else(|| panic!("no parent {parent}"));
    p.as_object_mut().unwrap_or_else(|| panic!("{parent} is not an object")).insert(key.to_string(), v);
}

fn remove(doc: &mut Value, ptr: &str) {
    let (parent, key) = ptr.rsplit_once('/').expect("pointer");
    doc.pointer_mut(parent).unwrap().as_object_mut().unwrap().remove(key);
}

fn parse(v: &Value) -> Scenario {
    let text = serde_json::to_string_pretty(v).unwrap();
    Scenario::from_json(&text).unwrap_or_else(|e| panic!("rejected a valid scenario: {e:#}\n{text}"))
}

/// The error message of a scenario that must be rejected.
fn reject_text(text: &str) -> String {
    match Scenario::from_json(text) {
        Ok(s) => panic!("accepted an invalid scenario: {s:?}\n{text}"),
        Err(e) => format!("{e:#}"),
    }
}

fn reject(v: &Value) -> String {
    reject_text(&serde_json::to_string_pretty(v).unwrap())
}

/// Assert that `msg` contains every one of `parts`.
#[track_caller]
fn has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "error message {msg:?} should contain {p:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Valid scenarios

#[test]
fn base_scenario_parses_with_defaults() {
    let s = parse(&base());
    assert_eq!(s.name, "t");
    assert_eq!(s.resolution.cells, Some(200));
    assert_eq!(s.resolution.min_angle, 25.0);
    assert_eq!(s.physics.r, 0.98);
    assert_eq!(s.physics.g, 9.81);
    assert_eq!(s.physics.gamma, 0.9);
    assert_eq!(s.output.dir, std::path::PathBuf::from("out/t"), "default: out/<name>");
    assert_eq!(s.output_times(), vec![0.1]);
}

#[test]
fn circular_dam_break_parses_with_paper_defaults() {
    let s = parse(&with("/initial", json!({ "type": "circular_dam_break" })));
    match s.initial {
        Initial::CircularDamBreak { center, radius, h1_inside, h1_outside, surface } => {
            assert_eq!((center, radius, h1_inside, h1_outside, surface), ([0.0, 0.0], 1.5, 0.5, 4.0, 0.0));
        }
        other => panic!("wrong variant {other:?}"),
    }
    let s = parse(&with(
        "/initial",
        json!({ "type": "circular_dam_break", "center": [1, 1], "radius": 0.5, "h1_inside": 1, "h1_outside": 2, "surface": 0.1 }),
    ));
    match s.initial {
        Initial::CircularDamBreak { center, radius, h1_inside, h1_outside, surface } => {
            assert_eq!((center, radius, h1_inside, h1_outside, surface), ([1.0, 1.0], 0.5, 1.0, 2.0, 0.1));
        }
        other => panic!("wrong variant {other:?}"),
    }
}

#[test]
fn dam_break_x_parses() {
    let s = parse(&with(
        "/initial",
        json!({ "type": "dam_break_x", "x0": 2, "interface_left": -1, "interface_right": -3 }),
    ));
    match s.initial {
        Initial::DamBreakX { x0, interface_left, interface_right, surface } => {
            assert_eq!((x0, interface_left, interface_right, surface), (2.0, -1.0, -3.0, 0.0));
        }
        other => panic!("wrong variant {other:?}"),
    }
}

#[test]
fn at_rest_parses() {
    let s = parse(&with("/initial", json!({ "type": "at_rest", "interface": -1.5, "surface": 0.25 })));
    match s.initial {
        Initial::AtRest { interface, surface } => assert_eq!((interface, surface), (Level::Number(-1.5), 0.25)),
        other => panic!("wrong variant {other:?}"),
    }
}

#[test]
fn layers_with_constant_circle_and_step_thickness_parse() {
    let s = parse(&with(
        "/initial",
        json!({
            "type": "layers",
            "layer1": { "thickness": 2.0, "velocity": [0.1, -0.2] },
            "layer2": { "thickness": { "type": "circle", "center": [2, 1], "radius": 0.5, "inside": 2.5, "outside": 3 } }
        }),
    ));
    match &s.initial {
        Initial::Layers { layer1, layer2 } => {
            assert!(matches!(layer1.thickness, Field::Constant(x) if x == 2.0), "{:?}", layer1.thickness);
            assert_eq!(layer1.velocity, [0.1, -0.2]);
            assert_eq!(layer2.velocity, [0.0, 0.0]);
            match &layer2.thickness {
                Field::Shape(Shape::Circle { center, radius, inside, outside }) => {
                    assert_eq!((*center, *radius, *inside, *outside), ([2.0, 1.0], 0.5, 2.5, 3.0));
                }
                other => panic!("wrong thickness {other:?}"),
            }
        }
        other => panic!("wrong variant {other:?}"),
    }
    let s = parse(&with(
        "/initial",
        json!({
            "type": "layers",
            "layer1": { "thickness": { "type": "step_x", "x0": 2, "left": 1, "right": 1.5 } },
            "layer2": { "thickness": 3, "velocity": [0.5, 0] }
        }),
    ));
    match &s.initial {
        Initial::Layers { layer1, layer2 } => {
            match &layer1.thickness {
                Field::Shape(Shape::StepX { x0, left, right }) => assert_eq!((*x0, *left, *right), (2.0, 1.0, 1.5)),
                other => panic!("wrong thickness {other:?}"),
            }
            assert!(matches!(layer2.thickness, Field::Constant(x) if x == 3.0));
            assert_eq!(layer2.velocity, [0.5, 0.0]);
        }
        other => panic!("wrong variant {other:?}"),
    }
}

#[test]
fn every_bathymetry_type_parses() {
    let s = parse(&with("/bathymetry", json!({ "type": "constant", "depth": 7 })));
    assert!(matches!(s.bathymetry, Bathymetry::Constant { depth } if depth == 7.0));
    let s = parse(&with(
        "/bathymetry",
        json!({ "type": "gaussian_bump", "depth": 5, "height": 2, "center": [2, 1], "width": 0.5 }),
    ));
    match s.bathymetry {
        Bathymetry::GaussianBump { depth, height, center, width } => {
            assert_eq!((depth, height, center, width), (5.0, 2.0, [2.0, 1.0], 0.5));
        }
        other => panic!("wrong variant {other:?}"),
    }
    let s = parse(&with("/bathymetry", json!({ "type": "slope", "depth": 5, "gradient": [0.1, 0] })));
    match s.bathymetry {
        Bathymetry::Slope { depth, gradient } => assert_eq!((depth, gradient), (5.0, [0.1, 0.0])),
        other => panic!("wrong variant {other:?}"),
    }
    // Absent: the default.
    let mut b = base();
    remove(&mut b, "/bathymetry");
    assert!(matches!(parse(&b).bathymetry, Bathymetry::Constant { depth } if depth == 5.0));
}

#[test]
fn domain_with_holes_mesh_file_and_max_area_parse() {
    let s = parse(&with(
        "/domain",
        json!({ "outer": [[0, 0], [4, 0], [4, 2], [0, 2]], "holes": [[[1, 0.5], [1.5, 0.5], [1.5, 1]], [[3, 1], [3.5, 1], [3.5, 1.5], [3, 1.5]]] }),
    ));
    assert_eq!(s.domain.as_ref().unwrap().holes.len(), 2);

    let mut b = base();
    remove(&mut b, "/domain");
    remove(&mut b, "/resolution");
    set(&mut b, "/mesh", json!("channel.msh"));
    let s = parse(&b);
    assert_eq!(s.mesh.as_deref(), Some(std::path::Path::new("channel.msh")));
    assert!(s.domain.is_none());

    let s = parse(&with("/resolution", json!({ "max_area": 0.05, "min_angle": 30 })));
    assert_eq!((s.resolution.cells, s.resolution.max_area, s.resolution.min_angle), (None, Some(0.05), 30.0));
}

#[test]
fn output_interval_and_output_times_parse() {
    let s = parse(&with("/time", json!({ "end": 1.0, "output_interval": 0.25 })));
    assert_eq!(s.output_times(), vec![0.25, 0.5, 0.75, 1.0]);
    let s = parse(&with("/time", json!({ "end": 1.0, "output_times": [0.1, 0.5] })));
    assert_eq!(s.output_times(), vec![0.1, 0.5, 1.0]);
}

// ---------------------------------------------------------------------------------------
// Rejected scenarios

#[test]
fn unknown_key_at_top_level_is_rejected() {
    let m = reject(&with("/colour", json!("blue")));
    has(&m, &["colour", "unknown field"]);
}

#[test]
fn unknown_nested_key_is_rejected_with_its_path() {
    let m = reject(&with("/physics/rr", json!(0.5)));
    has(&m, &["physics", "rr", "unknown field"]);
    let m = reject(&with("/time/ends", json!(0.5)));
    has(&m, &["time", "ends"]);
    let m = reject(&with("/domain/hole", json!([])));
    has(&m, &["domain", "hole"]);
    let m = reject(&with("/initial/interfase", json!(-1)));
    has(&m, &["initial", "interfase"]);
    let m = reject(&with("/bathymetry/dept", json!(5)));
    has(&m, &["bathymetry", "dept"]);
}

#[test]
fn unknown_initial_and_bathymetry_types_are_rejected() {
    let m = reject(&with("/initial", json!({ "type": "tsunami" })));
    has(&m, &["initial", "tsunami"]);
    let m = reject(&with("/bathymetry", json!({ "type": "fractal", "depth": 5 })));
    has(&m, &["bathymetry", "fractal"]);
}

#[test]
fn wrong_types_are_rejected_with_the_path() {
    let m = reject(&with("/physics/r", json!("x")));
    has(&m, &["physics.r", "invalid type", "string"]);
    let m = reject(&with("/time/end", json!([1])));
    has(&m, &["time.end", "invalid type", "sequence"]);
    let m = reject(&with("/resolution/cells", json!(-5)));
    has(&m, &["resolution.cells"]);
    let m = reject(&with("/domain/outer", json!([[0, 0], [1, 0], [1]])));
    has(&m, &["domain.outer"]);
}

#[test]
fn missing_required_sections_are_rejected() {
    let mut b = base();
    remove(&mut b, "/time");
    has(&reject(&b), &["time"]);
    let mut b = base();
    remove(&mut b, "/initial");
    has(&reject(&b), &["initial"]);
    let m = reject(&with("/time", json!({ "output_interval": 0.1 })));
    has(&m, &["time", "end"]);
}

/// The doc comment of `src/scenario/mod.rs` promises the field's path for wrong types;
/// inside `initial` (an internally tagged enum) the path must still reach the field.
#[test]
fn wrong_type_inside_initial_names_the_field() {
    let m = reject(&with("/initial", json!({ "type": "circular_dam_break", "h1_inside": "deep" })));
    has(&m, &["initial.h1_inside"]);
    let m = reject(&with(
        "/bathymetry",
        json!({ "type": "gaussian_bump", "depth": 5, "height": "2", "center": [0, 0], "width": 1 }),
    ));
    has(&m, &["bathymetry.height"]);
}

/// A layer thickness is an untagged `Field` (number or shape): a bad one must still say
/// which layer and what was expected, not only "did not match any variant".
#[test]
fn bad_layer_thickness_names_the_layer() {
    let m = reject(&with(
        "/initial",
        json!({ "type": "layers", "layer1": { "thickness": "thick" }, "layer2": { "thickness": 2 } }),
    ));
    has(&m, &["initial.layer1.thickness"]);
    let m = reject(&with(
        "/initial",
        json!({ "type": "layers", "layer1": { "thickness": 1 },
                "layer2": { "thickness": { "type": "circle", "center": [0, 0], "radius": 1, "inside": 2 } } }),
    ));
    has(&m, &["initial.layer2.thickness", "outside"]);
}

#[test]
fn density_ratio_outside_open_unit_interval_is_rejected() {
    for r in [0.0, 1.0, -1.0, 1.5] {
        let m = reject(&with("/physics/r", json!(r)));
        has(&m, &["physics.r", "between 0 and 1"]);
    }
    for r in [1e-6, 0.5, 0.999999] {
        parse(&with("/physics/r", json!(r)));
    }
}

#[test]
fn cfl_outside_zero_one_is_rejected() {
    for g in [0.0, 1.01, -0.5] {
        let m = reject(&with("/physics/gamma", json!(g)));
        has(&m, &["physics.gamma", "(0, 1]"]);
    }
    parse(&with("/physics/gamma", json!(1.0)));
}

#[test]
fn non_positive_gravity_is_rejected() {
    let m = reject(&with("/physics/g", json!(0)));
    has(&m, &["physics.g", "positive"]);
}

#[test]
fn non_positive_thickness_is_rejected() {
    let m = reject(&with("/initial", json!({ "type": "circular_dam_break", "h1_inside": 0 })));
    has(&m, &["initial.h1_inside", "positive"]);
    let m = reject(&with("/initial", json!({ "type": "circular_dam_break", "h1_outside": -2 })));
    has(&m, &["initial.h1_outside", "positive"]);
    let m = reject(&with("/initial", json!({ "type": "circular_dam_break", "radius": 0 })));
    has(&m, &["initial.radius", "positive"]);
    let m = reject(&with(
        "/initial",
        json!({ "type": "layers", "layer1": { "thickness": -1 }, "layer2": { "thickness": 2 } }),
    ));
    // A layer's thickness may be 0 (absent, issue 17), never negative.
    has(&m, &["initial.layer1.thickness", ">= 0", "-1"]);
    let m = reject(&with(
        "/initial",
        json!({ "type": "layers", "layer1": { "thickness": 1 },
                "layer2": { "thickness": { "type": "circle", "center": [0, 0], "radius": 1, "inside": -0.1, "outside": 2 } } }),
    ));
    has(&m, &["initial.layer2.thickness.inside", ">= 0"]);
    let m = reject(&with(
        "/initial",
        json!({ "type": "layers", "layer1": { "thickness": { "type": "step_x", "x0": 1, "left": 1, "right": -0.5 } },
                "layer2": { "thickness": 2 } }),
    ));
    has(&m, &["initial.layer1.thickness.right", ">= 0"]);
}

#[test]
fn bathymetry_width_must_be_positive() {
    let m = reject(&with(
        "/bathymetry",
        json!({ "type": "gaussian_bump", "depth": 5, "height": 2, "center": [0, 0], "width": 0 }),
    ));
    has(&m, &["bathymetry.width", "positive"]);
}

#[test]
fn polygon_with_fewer_than_three_points_is_rejected() {
    for outer in [json!([]), json!([[0, 0]]), json!([[0, 0], [1, 1]])] {
        let m = reject(&with("/domain/outer", outer));
        has(&m, &["domain.outer", "at least 3 points"]);
    }
}

#[test]
fn zero_area_and_collinear_polygons_are_rejected() {
    // Exactly collinear.
    let m = reject(&with("/domain/outer", json!([[0, 0], [1, 0], [2, 0]])));
    has(&m, &["domain.outer", "area"]);
    let m = reject(&with("/domain/outer", json!([[0, 0], [1, 1], [3, 3], [2, 2]])));
    has(&m, &["domain.outer"]);
    // The first point repeated to close the polygon.
    let m = reject(&with("/domain/outer", json!([[0, 0], [1, 0], [1, 1], [0, 0]])));
    has(&m, &["domain.outer", "repeats"]);
}

/// Collinear points whose shoelace area is rounding noise (about 1e-17, not 0) are still
/// an empty domain.
#[test]
fn collinear_polygon_with_rounding_noise_is_rejected() {
    // On the line y = 0.2 x + 0.7; in binary floating point the shoelace sum is 2.8e-17.
    let pts = [[0.1, 0.72], [0.3, 0.76], [0.7, 0.84]];
    let area = pycno::mesh::domain::signed_area(&pts);
    // Keep the test honest: collinear to rounding, and not exactly zero (that case is
    // covered above).
    assert!(area != 0.0 && area.abs() < 1e-15, "{area}");
    let m = reject(&with("/domain/outer", json!(pts)));
    has(&m, &["domain.outer"]);
}

#[test]
fn self_intersecting_polygon_is_rejected() {
    // An asymmetric bow-tie (non-zero signed area).
    let m = reject(&with("/domain/outer", json!([[0, 0], [2, 2], [2, 0], [0, 1]])));
    has(&m, &["domain.outer", "intersects itself"]);
    // A figure eight through a repeated vertex.
    let m = reject(&with("/domain/outer", json!([[0, 0], [1, 1], [2, 0], [2, 2], [1, 1], [0, 2]])));
    has(&m, &["domain.outer"]);
}

/// The symmetric bow-tie has zero signed area; it must still be reported as crossing
/// itself, not as "empty (zero area)", which misleads (it encloses area 1/2).
#[test]
fn symmetric_bow_tie_is_reported_as_self_intersecting() {
    let m = reject(&with("/domain/outer", json!([[0, 0], [1, 1], [1, 0], [0, 1]])));
    has(&m, &["domain.outer", "intersects itself"]);
}

#[test]
fn holes_must_lie_strictly_inside() {
    let outside = json!({ "outer": [[0, 0], [4, 0], [4, 2], [0, 2]], "holes": [[[5, 5], [6, 5], [6, 6]]] });
    let m = reject(&with("/domain", outside));
    has(&m, &["domain.holes[0]", "outside"]);
    let crossing =
        json!({ "outer": [[0, 0], [4, 0], [4, 2], [0, 2]], "holes": [[[3, 1], [5, 1], [5, 1.5], [3, 1.5]]] });
    let m = reject(&with("/domain", crossing));
    has(&m, &["domain.holes[0]", "domain.outer"]);
    let second = json!({ "outer": [[0, 0], [4, 0], [4, 2], [0, 2]],
                         "holes": [[[1, 1], [1.5, 1], [1.5, 1.5]], [[3, -1], [3.5, -1], [3.5, 3]]] });
    let m = reject(&with("/domain", second));
    has(&m, &["domain.holes[1]"]);
    let overlapping = json!({ "outer": [[0, 0], [4, 0], [4, 2], [0, 2]],
                              "holes": [[[1, 0.5], [2, 0.5], [2, 1.5], [1, 1.5]], [[1.5, 1], [2.5, 1], [2.5, 1.8]]] });
    let m = reject(&with("/domain", overlapping));
    has(&m, &["domain.holes[1]", "domain.holes[0]"]);
    let bad_shape = json!({ "outer": [[0, 0], [4, 0], [4, 2], [0, 2]], "holes": [[[1, 1], [2, 1]]] });
    let m = reject(&with("/domain", bad_shape));
    has(&m, &["domain.holes[0]", "at least 3 points"]);
}

#[test]
fn domain_and_mesh_exactly_one() {
    let m = reject(&with("/mesh", json!("a.msh")));
    has(&m, &["domain", "mesh", "not both"]);
    let mut b = base();
    remove(&mut b, "/domain");
    let m = reject(&b);
    has(&m, &["domain", "mesh"]);
}

#[test]
fn resolution_is_required_and_sane() {
    let mut b = base();
    remove(&mut b, "/resolution");
    has(&reject(&b), &["resolution", "cells", "max_area"]);
    has(&reject(&with("/resolution", json!({}))), &["resolution", "cells"]);
    has(&reject(&with("/resolution/cells", json!(1))), &["resolution.cells", "at least 2"]);
    has(&reject(&with("/resolution/cells", json!(0))), &["resolution.cells"]);
    has(&reject(&with("/resolution", json!({ "cells": 100, "max_area": 0.1 }))), &["resolution", "not both"]);
    has(&reject(&with("/resolution", json!({ "max_area": 0 }))), &["resolution.max_area", "positive"]);
    has(&reject(&with("/resolution/min_angle", json!(40))), &["resolution.min_angle", "33", "40"]);
    has(&reject(&with("/resolution/min_angle", json!(-1))), &["resolution.min_angle"]);
}

#[test]
fn times_are_checked() {
    has(&reject(&with("/time/end", json!(0))), &["time.end", "positive"]);
    has(&reject(&with("/time/end", json!(-1))), &["time.end", "positive"]);
    has(
        &reject(&with("/time", json!({ "end": 1, "output_times": [0.1, 0.5, 0.5] }))),
        &["time.output_times[2]", "increasing"],
    );
    has(
        &reject(&with("/time", json!({ "end": 1, "output_times": [0.5, 0.2] }))),
        &["time.output_times[1]", "increasing"],
    );
    has(&reject(&with("/time", json!({ "end": 1, "output_times": [0.5, 2] }))), &["time.output_times[1]", "2"]);
    has(&reject(&with("/time", json!({ "end": 1, "output_interval": 0 }))), &["time.output_interval", "positive"]);
    has(
        &reject(&with("/time", json!({ "end": 1, "output_interval": 0.1, "output_times": [0.5] }))),
        &["time", "output_interval", "output_times"],
    );
}

#[test]
fn text_that_is_not_a_json_scenario_is_rejected() {
    has(&reject_text(""), &["EOF"]);
    has(&reject_text("not json"), &["expected"]);
    has(&reject_text("[1, 2]"), &["invalid type"]);
    has(&reject_text("{\"name\": \"x\", "), &["EOF"]);
}

// ---------------------------------------------------------------------------------------
// The paper benchmark

const PAPER_JSON: &str = r#"{
    "name": "dambreak",
    "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] },
    "resolution": { "cells": 4016 },
    "bathymetry": { "type": "constant", "depth": 5.0 },
    "initial": {
        "type": "circular_dam_break",
        "center": [0, 0],
        "radius": 1.5,
        "h1_inside": 0.5,
        "h1_outside": 4.0,
        "surface": 0.0
    },
    "physics": { "g": 9.81, "r": 0.998, "gamma": 0.9 },
    "time": { "end": 0.1 },
    "output": { "dir": "out/dambreak" }
}"#;

fn check_paper(s: &Scenario, cells: u64) {
    let p = Scenario::paper_benchmark(cells);
    assert_eq!(s.name, p.name);
    assert_eq!(s.mesh, p.mesh);
    let (d, pd) = (s.domain.as_ref().unwrap(), p.domain.as_ref().unwrap());
    assert_eq!(d.outer, pd.outer);
    assert_eq!(d.holes, pd.holes);
    assert_eq!(s.resolution.cells, p.resolution.cells);
    assert_eq!(s.resolution.max_area, p.resolution.max_area);
    assert_eq!(s.resolution.min_angle, p.resolution.min_angle);
    match (&s.bathymetry, &p.bathymetry) {
        (Bathymetry::Constant { depth: a }, Bathymetry::Constant { depth: b }) => assert_eq!(a, b),
        other => panic!("bathymetry differs: {other:?}"),
    }
    match (&s.initial, &p.initial) {
        (
            Initial::CircularDamBreak { center: c1, radius: r1, h1_inside: i1, h1_outside: o1, surface: s1 },
            Initial::CircularDamBreak { center: c2, radius: r2, h1_inside: i2, h1_outside: o2, surface: s2 },
        ) => assert_eq!((c1, r1, i1, o1, s1), (c2, r2, i2, o2, s2)),
        other => panic!("initial differs: {other:?}"),
    }
    assert_eq!((s.physics.g, s.physics.r, s.physics.gamma), (p.physics.g, p.physics.r, p.physics.gamma));
    assert_eq!(s.time.end, p.time.end);
    assert_eq!(s.time.output_interval, p.time.output_interval);
    assert_eq!(s.time.output_times, p.time.output_times);
    assert_eq!(s.output.dir, p.output.dir);
    assert_eq!(s.output_times(), p.output_times());
    // And nothing the field list above missed.
    assert_eq!(serde_json::to_value(s).unwrap(), serde_json::to_value(&p).unwrap());
}

#[test]
fn paper_benchmark_json_equals_paper_benchmark() {
    let s = Scenario::from_json(PAPER_JSON).unwrap_or_else(|e| panic!("{e:#}"));
    check_paper(&s, 4016);
    Scenario::paper_benchmark(4016).validate().unwrap();
}

#[test]
fn paper_benchmark_with_defaults_only_equals_paper_benchmark() {
    let minimal = r#"{
        "name": "dambreak",
        "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] },
        "resolution": { "cells": 4016 },
        "initial": { "type": "circular_dam_break" },
        "time": { "end": 0.1 }
    }"#;
    check_paper(&Scenario::from_json(minimal).unwrap_or_else(|e| panic!("{e:#}")), 4016);
}

#[test]
fn paper_benchmark_round_trips_through_json() {
    let p = Scenario::paper_benchmark(16040);
    let text = serde_json::to_string(&p).unwrap();
    check_paper(&Scenario::from_json(&text).unwrap_or_else(|e| panic!("{e:#}\n{text}")), 16040);
}

#[test]
fn shipped_paper_scenario_file_equals_paper_benchmark() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes/scenarios/dambreak_paper.json");
    let mut s = Scenario::from_file(&path).unwrap_or_else(|e| panic!("{e:#}"));
    // Its own output directory, so that it and the default run never write over each other.
    assert_eq!(s.output.dir, std::path::Path::new("out/dambreak_paper"));
    s.output.dir = "out/dambreak".into();
    check_paper(&s, 4016);
}

/// `physics.reference`, the rest state the solver stores deviations from: given, it is
/// kept; absent, it is the initial condition's rest levels (so water at rest is stored as
/// exact zeros), written into the scenario so that a checkpoint's copy restarts with it.
#[test]
fn physics_reference_is_kept_or_taken_from_the_initial_rest_levels() {
    use pycno::scenario::Reference;
    let s = parse(&with("/physics/reference", json!({ "surface": 0.5, "interface": -1.25 })));
    assert_eq!(s.physics.reference, Some(Reference { surface: 0.5, interface: -1.25 }));
    let cases = [
        (json!({ "type": "at_rest", "interface": -2.0, "surface": 0.25 }), (0.25, -2.0)),
        (json!({ "type": "dam_break_x", "x0": 1, "interface_left": -1, "interface_right": -3 }), (0.0, -3.0)),
        (json!({ "type": "circular_dam_break", "h1_outside": 1.5, "surface": 0.5 }), (0.5, -1.0)),
        (json!({ "type": "layers", "layer1": { "thickness": 1 }, "layer2": { "thickness": 2 } }), (0.0, 0.0)),
    ];
    for (initial, (surface, interface)) in cases {
        let s = parse(&with("/initial", initial.clone()));
        assert_eq!(s.physics.reference, Some(Reference { surface, interface }), "for {initial}");
        let again = Scenario::from_json(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(again.physics.reference, s.physics.reference, "not kept through JSON for {initial}");
    }
}

#[test]
fn physics_reference_errors_name_the_field() {
    let msg = reject(&with("/physics/reference", json!({ "surface": 0.0 })));
    has(&msg, &["physics.reference", "interface"]);
    let msg = reject(&with("/physics/reference", json!({ "surface": 0.0, "interface": -1.0, "level": 2 })));
    has(&msg, &["physics.reference", "level"]);
    let msg = reject(&with("/physics/reference", json!({ "surface": "high", "interface": -1.0 })));
    has(&msg, &["physics.reference.surface"]);
    let p = pycno::physics::Physics {
        reference: Some(pycno::physics::Reference { surface: f64::NAN, interface: 0.0 }),
        ..Default::default()
    };
    has(&format!("{:#}", p.validate().unwrap_err()), &["physics.reference.surface", "finite"]);
}
