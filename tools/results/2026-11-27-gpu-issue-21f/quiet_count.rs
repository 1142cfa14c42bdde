// The share of quiet cells (reconstruct::quiet) at the end of the bench's dam break at order 2
// on the CPU (f32), for BENCHMARKS.md (issue 21). Not part of the suite: copy it to tests/ and
// run `QC=1001898 [QT=0.1] cargo test --release --test quiet_count -- --ignored --nocapture`
// (QC: the cells asked for, QT: the end time).
mod common;
use pycno::app::scenario_mesh;
use pycno::comm::Single;
use pycno::physics::reconstruct;
use pycno::physics::Model;
use pycno::scenario::{initial, Scenario};
use pycno::solver::stepper::{step_loop, Event};
use pycno::solver::{CpuBackend, Layout};

#[test]
#[ignore]
fn count_quiet() {
    let cells: u64 = std::env::var("QC").unwrap().parse().unwrap();
    let mut s = Scenario::paper_benchmark(cells);
    s.physics.order = 2;
    s.time.end = std::env::var("QT").map(|v| v.parse().unwrap()).unwrap_or(0.1);
    let pm = scenario_mesh(&s).unwrap();
    let (depth, init) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let mut lay = Layout::<f32>::from_topology(&pm.topo, &depth, &init, &s.physics.reference());
    lay.set_boundaries(&pm.topo.edge_tag, &s.boundary_table(&pm.mesh, &pm.topo).unwrap());
    let m = Model::<f32>::new(&s.physics).unwrap();
    let mut cpu = CpuBackend::new(m, lay).unwrap().with_order(2).unwrap();
    let plan = common::plan(&s, None);
    let mut k = 0u64;
    step_loop(&mut cpu, &Single, &plan, &mut |_, ev| {
        if let Event::Step { .. } = ev {
            k += 1;
        }
        Ok(())
    })
    .unwrap();
    let lay = cpu.layout();
    let n = lay.n_owned;
    let q = (0..n)
        .filter(|&c| {
            let nb = std::array::from_fn(|j| {
                let o = lay.across[c][j];
                if o >= 0 { (lay.v1[o as usize], lay.v2[o as usize]) } else { (lay.v1[c], lay.v2[c]) }
            });
            reconstruct::quiet(lay.v1[c], lay.v2[c], lay.across[c], &nb)
        })
        .count();
    eprintln!("cells {n} steps {k} t_end {} quiet at the end {q} ({:.1}%)", s.time.end, 100.0 * q as f64 / n as f64);

}
