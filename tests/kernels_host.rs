//! The second-order kernels (`kernels/order2.cu` over `kernels/reconstruct.cuh` and the other
//! physics headers) compiled as host C++ by g++ and run one thread after another
//! (`tests/host/steps.cpp`, built-ins stood in by `tests/host/prelude.h`), against the CPU
//! backend at order 2: without fused multiply-adds (`-ffp-contract=off`) and with IEEE division
//! and square roots, the mirror must give the CPU's state bit for bit (every deviation, low
//! part and momentum), the same time steps and fallbacks, and the same reconstructed edge
//! values. This checks the kernels' logic (the reconstruction, the
//! quiet edges, the positivity fallback, the interior term, Heun's compensated average, the
//! buffer sets) on any machine with g++, CI included; on a GPU the same kernels differ from
//! the CPU by rounding only (`tests/gpu.rs`). Skips where g++ is missing.

mod common;
use common::scenario;
use pycno::app::scenario_mesh;
use pycno::comm::Single;
use pycno::physics::{Model, Real};
use pycno::scenario::{initial, Scenario};
use pycno::solver::backend::Cells;
use pycno::solver::cuda::device::KERNEL_SOURCES;
use pycno::solver::cuda::tiles::Tiles;
use pycno::solver::layout::reconstruction_sets;
use pycno::solver::stepper::{step_loop, Event};
use pycno::solver::{Backend, CpuBackend, Layout};
use std::path::{Path, PathBuf};
use std::process::Command;

fn bytes<S>(x: &[S]) -> Vec<u8> {
    // SAFETY: plain numbers and #[repr(C)] structs of them, read as the bytes they are.
    unsafe { std::slice::from_raw_parts(x.as_ptr() as *const u8, std::mem::size_of_val(x)) }.to_vec()
}

/// Build the host program in `dir` (None: no g++ here).
fn build(dir: &Path) -> Option<PathBuf> {
    if Command::new("g++").arg("--version").output().is_err() {
        common::skip::skipped("no g++ to compile the kernels for the host");
        return None;
    }
    // The physics headers, solver.cu (Arrays, the time step) and order2.cu: not the
    // device-resident, peer or probe kernels.
    let src: String = KERNEL_SOURCES
        .iter()
        .filter(|(name, _)| !matches!(*name, "resident.cu" | "peer.cu" | "probe.cu"))
        .map(|(name, text)| format!("// ---- {name}\n{text}\n"))
        .collect();
    std::fs::write(dir.join("kernels.cu"), src).unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/host");
    for f in ["prelude.h", "steps.cpp"] {
        std::fs::copy(here.join(f), dir.join(f)).unwrap();
    }
    let exe = dir.join("steps");
    let out = Command::new("g++")
        .args(["-O2", "-std=c++17", "-ffp-contract=off", "-fno-fast-math", "-w", "-o"])
        .arg(&exe)
        .arg(dir.join("steps.cpp"))
        .output()
        .unwrap();
    assert!(out.status.success(), "g++ could not compile the kernels:\n{}", String::from_utf8_lossy(&out.stderr));
    Some(exe)
}

/// `steps` second-order steps of `s` by the host-compiled kernels and by the CPU backend.
fn compare<T: Real>(exe: &Path, dir: &Path, name: &str, s: &Scenario, steps: u64) {
    let pm = scenario_mesh(s).unwrap();
    let (depth, init) = initial::evaluate(s, &pm.topo.cell_centroid).unwrap();
    let mut lay = Layout::<T>::from_topology(&pm.topo, &depth, &init, &s.physics.reference());
    lay.set_boundaries(&pm.topo.edge_tag, &s.boundary_table(&pm.mesh, &pm.topo).unwrap());
    if let Some(v) = &s.physics.viscosity {
        lay.set_viscosity(&pm.topo, v);
    }
    let m = Model::<T>::new(&s.physics).unwrap();
    let (nc, n, ne) = (lay.num_cells(), lay.n_owned, lay.num_edges());
    let w = |f: &str, b: Vec<u8>| std::fs::write(dir.join(f), b).unwrap();
    w("hdr.bin", bytes(&[nc as i64, n as i64, ne as i64]));
    w("model.bin", bytes(std::slice::from_ref(&m)));
    w("v1.bin", bytes(&lay.v1));
    w("v2.bin", bytes(&lay.v2));
    w("lo.bin", bytes(&lay.lo[..n]));
    w("ecells.bin", bytes(&lay.edge_cells));
    w("enormal.bin", bytes(&lay.edge_normal));
    w("boundaries.bin", bytes(&lay.boundaries));
    w("across.bin", bytes(&lay.across));
    w("recon.bin", reconstruction_sets(&lay).unwrap().0);
    // The stencils as CudaBackend::with_order uploads them (src/solver/cuda/order2.rs).
    let (mut wr, mut ln) = (vec![T::zero(); 12 * nc], vec![T::zero(); 6 * nc]);
    for c in 0..nc {
        let st = &lay.stencil[c];
        for k in 0..3 {
            let at = k * nc + c;
            wr[4 * at..4 * at + 4].copy_from_slice(&[st.w[k][0], st.w[k][1], st.r[k][0], st.r[k][1]]);
            ln[2 * at..2 * at + 2].copy_from_slice(&st.ln[k]);
        }
    }
    w("wr.bin", bytes(&wr));
    w("ln.bin", bytes(&ln));
    w("depth.bin", bytes(&lay.v1.iter().map(|r| r[3]).collect::<Vec<T>>()));
    // Tiles of at most 64 edges and cells (many tiles, many cells in two), as order2.rs
    // makes them for a rank holding the whole mesh, with the cells they finish marked (the
    // marks change nothing where the tiles finish nothing).
    let mut tiles = Tiles::build(&lay.edge_cells, &lay.edge_normal, &lay.across, &[0, lay.n_inner_edges, ne], 64);
    let finished = tiles.finishing(nc, n);
    let n_finished = finished.iter().filter(|&&f| f == 1).count();
    // The meshes here have interior cells whose edges are all in one tile: a test of the
    // finishing that finished nothing would pass on its own.
    assert!(n_finished > n / 10, "{name}: only {n_finished} of {n} cells finished by their tiles");
    eprintln!("{name}: {n_finished} of {n} cells finished by their tiles");
    // The cells the second stage's update takes (src/solver/cuda/order2.rs).
    let rest = Tiles::<T>::unfinished(&finished, n);
    w("rest.bin", bytes(&rest));
    // Where the tiles put those cells' words: each place's index in that list.
    w("rest_of.bin", bytes(&tiles.listed_places(&rest, nc)));
    // The cells whose sums the first stage's tiles store, as the update reads them.
    w("summed.bin", bytes(&Tiles::<T>::finished_bits(&finished, n)));
    w("tcap.bin", bytes(&[tiles.cap as i32]));
    w("tcells.bin", bytes(&tiles.cells));
    w("tec.bin", bytes(&tiles.tec));
    w("tloc.bin", bytes(&tiles.tloc));
    w("tnl.bin", bytes(&tiles.tnl));
    // The viscous couplings per edge and per place, empty without viscosity.
    w("evisc.bin", bytes(&lay.edge_viscosity));
    let tvisc = if lay.edge_viscosity.is_empty() { vec![] } else { tiles.per_place(&lay.edge_viscosity, T::zero()) };
    w("tvisc.bin", bytes(&tvisc));
    let gamma = s.physics.gamma.to_string();
    let mut cpu = CpuBackend::new(m, lay).unwrap().with_order(2).unwrap();
    let mut dts = vec![];
    let plan = pycno::solver::stepper::Schedule { t_end: 1e9, ..common::plan(s, Some(steps)) };
    step_loop(&mut cpu, &Single, &plan, &mut |_, ev| {
        if let Event::Step { dt, .. } = ev {
            dts.push(dt);
        }
        Ok(())
    })
    .unwrap();
    // The two kernels, then the tile kernel, then the tile kernel finishing its cells at the
    // second stage, and with that summing them at the first (as the device-resident steps,
    // where the model has no sources).
    assert!(
        !m.has_sources_besides_shear_limit(),
        "{name}: the tiles finish cells only without sources but the shear limit"
    );
    for mode in ["two kernels", "tiles", "finish", "sums"] {
        let mut cmd = Command::new(exe);
        cmd.arg(dir).args([T::NAME, &steps.to_string(), &gamma]);
        if mode != "two kernels" {
            cmd.arg(mode);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{name}: the host kernels failed: {}", String::from_utf8_lossy(&out.stderr));
        check(dir, &format!("{name}, {mode}"), &mut cpu, &dts, steps);
    }
}

/// The host kernels' outputs in `dir` against the CPU backend after its steps (`dts`).
fn check<T: Real>(dir: &Path, name: &str, cpu: &mut CpuBackend<T>, dts: &[f64], steps: u64) {
    let n = cpu.layout().n_owned;

    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let floats = |f: &str| bytemuck::cast_slice::<u8, T>(&read(f)).to_vec();
    let (v1, v2, lo) = (floats("out_v1.bin"), floats("out_v2.bin"), floats("out_lo.bin"));
    let host_dts = bytemuck::cast_slice::<u8, f64>(&read("out_dt.bin")).to_vec();
    let flags = bytemuck::cast_slice::<u8, u64>(&read("out_scratch.bin")).to_vec();
    let bits = |x: &[T]| x.iter().map(|v| v.f64().to_bits()).collect::<Vec<_>>();
    let lay = cpu.layout().clone();
    let differ: Vec<usize> = (0..n)
        .filter(|&c| {
            let cpu = [bits(&lay.v1[c]), bits(&lay.v2[c]), bits(&lay.lo[c])].concat();
            let host = [bits(&v1[4 * c..4 * c + 4]), bits(&v2[4 * c..4 * c + 4]), bits(&lo[2 * c..2 * c + 2])].concat();
            cpu != host
        })
        .collect();
    // The final state's edge values: the kernels' records (d, qx, qy, mean) per cell, slot and
    // layer against the CPU's [T; 9] per layer.
    cpu.reconstruct(Cells::All).unwrap();
    let faces = floats("out_faces.bin");
    let cpu_faces = cpu.faces();
    let faces_differ = (0..n)
        .flat_map(|c| (0..3).flat_map(move |k| (0..2).map(move |layer| (c, k, layer))))
        .filter(|&(c, k, layer)| {
            let at = 4 * (6 * c + 2 * k + layer);
            bits(&faces[at..at + 3]) != bits(&cpu_faces[layer][c][3 * k..3 * k + 3])
        })
        .count();
    let fallbacks = cpu.fallbacks().unwrap();
    eprintln!(
        "{} {name}: {steps} steps; {} of {n} cells differ from the CPU's stored numbers; time steps equal: {}; fallbacks CPU {fallbacks}, host kernels {}",
        T::NAME,
        differ.len(),
        dts == host_dts.as_slice(),
        flags[1]
    );
    for &c in differ.iter().take(3) {
        eprintln!(
            "  cell {c}: CPU {:?} {:?} {:?}, host kernels {:?} {:?} {:?}",
            lay.v1[c],
            lay.v2[c],
            lay.lo[c],
            &v1[4 * c..4 * c + 4],
            &v2[4 * c..4 * c + 4],
            &lo[2 * c..2 * c + 2]
        );
    }
    assert!(differ.is_empty(), "{} {name}: the kernels' state differs from the CPU's", T::NAME);
    assert_eq!(dts, host_dts.as_slice(), "{} {name}: time steps differ", T::NAME);
    assert_eq!((flags[0], flags[1]), (0, fallbacks), "{} {name}: unphysical flag or fallbacks differ", T::NAME);
    assert_eq!(faces_differ, 0, "{} {name}: edge values differ from the CPU's", T::NAME);
}

#[test]
fn order2_kernels_on_the_host_equal_the_cpu_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build(dir.path()) else { return };
    let mut paper = Scenario::paper_benchmark(16040);
    paper.physics.order = 2;
    // Dry cells on the way (quiet edges, the positivity fallback, absent layers), and water at
    // rest around an island.
    let lock = scenario(
        r#"{ "name": "lock", "domain": { "outer": [[0,0],[10,0],[10,0.25],[0,0.25]] }, "resolution": { "cells": 2000 },
             "bathymetry": { "type": "constant", "depth": 0.5 },
             "initial": { "type": "dam_break_x", "x0": 5, "interface_left": 1, "interface_right": -1, "surface": 0 },
             "physics": { "r": 0.98, "dry_tolerance": 1e-4, "order": 2 }, "time": { "end": 3.0 } }"#,
    );
    let island = scenario(
        r#"{ "name": "island", "domain": { "outer": [[-5,-5],[5,-5],[5,5],[-5,5]] }, "resolution": { "cells": 3000 },
             "bathymetry": { "type": "gaussian_bump", "depth": 5, "height": 7, "center": [0.4, -0.3], "width": 1.5 },
             "initial": { "type": "at_rest", "interface": -2.0, "surface": 0.0 },
             "physics": { "r": 0.9, "order": 2 }, "time": { "end": 1000.0 } }"#,
    );
    let ritter = scenario(
        r#"{ "name": "ritter", "domain": { "outer": [[0,0],[40,0],[40,1],[0,1]] }, "resolution": { "cells": 2000 },
             "bathymetry": { "type": "constant", "depth": 1.0 },
             "initial": { "type": "layers", "layer1": { "thickness": 0 },
                          "layer2": { "thickness": { "type": "step_x", "x0": 15, "left": 1, "right": 0 } } },
             "physics": { "g": 9.81, "r": 0.9, "dry_tolerance": 1e-4, "order": 2 }, "time": { "end": 2.0 } }"#,
    );
    // Water running round a re-entrant corner (an L; its walls at the corner take the corner's
    // ghost, `Topology::edge_corner`).
    let corner = scenario(
        r#"{ "name": "corner", "domain": { "outer": [[0,0],[4,0],[4,1],[1,1],[1,4],[0,4]] }, "resolution": { "cells": 2000 },
             "bathymetry": { "type": "constant", "depth": 1.0 },
             "initial": { "type": "dam_break_x", "x0": 2, "interface_left": -0.7, "interface_right": -0.3, "surface": 0 },
             "physics": { "r": 0.98, "order": 2 }, "time": { "end": 10.0 } }"#,
    );
    // Horizontal viscosity (kernels/viscosity.cuh) in the edge kernel and the tiles' three
    // modes: the paper's dam break (no sources, so the tiles finish cells) and the lock
    // exchange (quiet edges and absent layers, where no stress may cross).
    let mut paper_viscous = paper.clone();
    paper_viscous.physics.viscosity = Some(pycno::physics::Viscosity { constant: None, time_scale: Some(0.05) });
    let mut lock_viscous = lock.clone();
    lock_viscous.physics.viscosity = Some(pycno::physics::Viscosity { constant: Some(2e-3), time_scale: None });
    let pm = scenario_mesh(&corner).unwrap();
    assert_eq!(pm.topo.edge_corner.iter().filter(|&&c| c).count(), 2, "the L's two walls at its corner");
    for (name, s, steps) in [
        ("paper benchmark", &paper, 40),
        ("round a corner", &corner, 300),
        ("lock exchange", &lock, 300),
        ("island at rest", &island, 100),
        ("Ritter", &ritter, 300),
        ("paper benchmark, viscous", &paper_viscous, 40),
        ("lock exchange, viscous", &lock_viscous, 300),
    ] {
        compare::<f32>(&exe, dir.path(), name, s, steps);
        compare::<f64>(&exe, dir.path(), name, s, steps);
    }
}
