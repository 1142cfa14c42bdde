//! The halo exchange and the multi-rank step loop without `mpirun`: N ranks as N threads
//! of this process (`comm::threads::ThreadComm`), each running the real run driver
//! (`app::run::simulate`) on its submesh with the real exchange (`solver::exchange::Halo`,
//! both Algorithm 1 and Algorithm 2 of de la Asunción et al. 2012), must end in the state of
//! the one-rank run, bit for bit (the runs' `state_checksum`s are equal).

use pycno::app::run::{simulate, stored_cells, BackendChoice, Precision, RunOptions, Setup};
use pycno::app::{scenario_mesh, PreparedMesh};
use pycno::comm::threads::ThreadComm;
use pycno::comm::{Comm, Single};
use pycno::partition::{metis, submesh};
use pycno::physics::StoredCell;
use pycno::scenario::{initial, Scenario};
use pycno::solver::exchange::{ExchangeMode, GpuExchange};

struct Case {
    s: Scenario,
    pm: PreparedMesh,
    depth: Vec<f64>,
    state: Vec<StoredCell>,
}

fn case(cells: u64, t_end: f64) -> Case {
    let mut s = Scenario::paper_benchmark(cells);
    s.time.end = t_end;
    let pm = scenario_mesh(&s).unwrap();
    let (depth, state) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let state = stored_cells(&s, &depth, &state);
    Case { s, pm, depth, state }
}

fn options(precision: Precision, exchange: ExchangeMode) -> RunOptions {
    RunOptions { no_vtk: true, quiet: true, precision, exchange, backend: BackendChoice::Cpu, ..Default::default() }
}

/// The one-rank run of `c` in `precision` (overlapped exchange: there is none to overlap).
fn one_rank(c: &Case, precision: Precision) -> pycno::app::stats::RunStats {
    let setup = Setup::new(&c.s, &c.pm, &c.depth, &c.state);
    simulate(&setup, &options(precision, ExchangeMode::Overlap), BackendChoice::Cpu, &Single, None).unwrap()
}

/// The submeshes of `c` split by `owner` over `ranks`, with the rings of receive cells its
/// order needs.
fn subs_for(c: &Case, owner: &[u32], ranks: usize) -> Vec<pycno::partition::Submesh> {
    let rings = pycno::partition::rings_for_order(c.s.physics.order);
    submesh::build_rings(&c.pm.topo, owner, ranks, c.pm.fingerprint(), rings).unwrap()
}

/// The run on `owner.len()` cells split by `owner` over `ranks` threads: every rank's
/// checksum (they agree) and steps.
fn threaded(c: &Case, owner: &[u32], ranks: usize, opts: &RunOptions) -> (String, u64, usize) {
    let subs = subs_for(c, owner, ranks);
    let gathers = subs.iter().flat_map(|s| &s.sends).filter(|d| d.runs.len() != 1).count();
    let comms = ThreadComm::group(ranks);
    let setup = Setup::new(&c.s, &c.pm, &c.depth, &c.state);
    let results: Vec<(String, u64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = comms
            .into_iter()
            .zip(subs)
            .map(|(comm, sub)| {
                let setup = &setup;
                scope.spawn(move || {
                    let st = simulate(setup, opts, BackendChoice::Cpu, &comm as &dyn Comm, Some(sub)).unwrap();
                    (st.state_checksum, st.steps)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a rank panicked")).collect()
    });
    assert!(results.windows(2).all(|w| w[0] == w[1]), "ranks disagree: {results:?}");
    let (sum, steps) = results.into_iter().next().unwrap();
    (sum, steps, gathers)
}

#[test]
fn thread_ranks_equal_one_rank_bit_for_bit() {
    // First order (one ring of receive cells); second_order_thread_ranks_... runs order 2.
    let mut c = case(3000, 0.2);
    c.s.physics.order = 1;
    for precision in [Precision::F32, Precision::F64] {
        let one = simulate(
            &Setup::new(&c.s, &c.pm, &c.depth, &c.state),
            &options(precision, ExchangeMode::Overlap),
            BackendChoice::Cpu,
            &Single,
            None,
        )
        .unwrap();
        assert!(one.steps > 10, "too short a run to test anything: {} steps", one.steps);
        let mut total_gathers = 0;
        for ranks in [2usize, 3, 4, 7] {
            let metis = metis::partition_cells(&c.pm.topo, ranks).unwrap();
            // Diagonal stripes: many ranks meet at many cells, so some destinations need the
            // gather fallback of the pair ordering.
            let stripe =
                |p: &[f64; 2]| ((((p[0] + 5.0) * 3.0) as i64 + ((p[1] + 5.0) * 2.0) as i64) % ranks as i64) as u32;
            let striped: Vec<u32> = c.pm.topo.cell_centroid.iter().map(stripe).collect();
            for (name, owner) in [("METIS", &metis), ("striped", &striped)] {
                for mode in [ExchangeMode::Overlap, ExchangeMode::Blocking] {
                    let (sum, steps, gathers) = threaded(&c, owner, ranks, &options(precision, mode));
                    eprintln!("{precision:?} {ranks} ranks {name} {mode:?}: {steps} steps, {gathers} gathered destinations, checksum {sum}");
                    total_gathers += gathers;
                    assert_eq!(steps, one.steps, "{precision:?}, {ranks} ranks, {name}, {mode:?}: steps");
                    assert_eq!(
                        sum, one.state_checksum,
                        "{precision:?}, {ranks} ranks, {name}, {mode:?}: state differs"
                    );
                }
            }
        }
        assert!(total_gathers > 0, "no partition needed the gather fallback: it went untested");
    }
}

#[test]
fn a_wrong_exchange_is_caught() {
    // The comparison above can fail: with every receive block left stale (no exchange at
    // all: each rank runs its part as if alone), the state is not the one-rank state.
    let c = case(3000, 0.2);
    let one = one_rank(&c, Precision::F64);
    let owner = metis::partition_cells(&c.pm.topo, 2).unwrap();
    let subs = subs_for(&c, &owner, 2);
    let setup = Setup::new(&c.s, &c.pm, &c.depth, &c.state);
    // Single as the communicator: each rank's submesh steps alone, its receive block frozen.
    // Each run's checksum covers its owned cells; their wrapping sum is the whole state's.
    let total = subs
        .into_iter()
        .map(|sub| {
            simulate(&setup, &options(Precision::F64, ExchangeMode::Overlap), BackendChoice::Cpu, &Single, Some(sub))
        })
        .map(|r| u64::from_str_radix(&r.unwrap().state_checksum, 16).unwrap())
        .fold(0u64, u64::wrapping_add);
    assert_ne!(format!("{total:016x}"), one.state_checksum, "a frozen halo gave the one-rank state");
}

/// An example scenario of `meshes/scenarios`, run to `t_end`.
fn example(name: &str, t_end: f64) -> Case {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("meshes/scenarios/{name}.json"));
    let mut s = Scenario::from_file(&path).unwrap();
    s.time.end = t_end;
    let pm = scenario_mesh(&s).unwrap();
    let (depth, state) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let state = stored_cells(&s, &depth, &state);
    Case { s, pm, depth, state }
}

#[test]
fn wet_dry_fronts_crossing_ranks_equal_one_rank_bit_for_bit() {
    // Wet/dry fronts (issue 17) running across partition boundaries: the lock exchange's two
    // currents (each into a region where its layer is absent) and the beach's run-up onto dry
    // land. The 3 ranks own stripes 0.1 m wide across the fronts' direction, two or three
    // cells each, so every front crosses from rank to rank many times within the run (the
    // lock exchange's fronts move about 0.3 m in 2 s, the beach's several metres in 1 s).
    for (name, t_end) in [("lock_exchange", 2.0), ("beach_runup", 1.0)] {
        let c = example(name, t_end);
        let ranks = 3usize;
        let striped: Vec<u32> =
            c.pm.topo.cell_centroid.iter().map(|p| ((p[0] / 0.1).floor() as i64).rem_euclid(3) as u32).collect();
        for precision in [Precision::F32, Precision::F64] {
            let opts = options(precision, ExchangeMode::Overlap);
            let one = simulate(&Setup::new(&c.s, &c.pm, &c.depth, &c.state), &opts, BackendChoice::Cpu, &Single, None)
                .unwrap();
            assert!(one.steps > 100, "{name}: too short a run to test anything: {} steps", one.steps);
            let metis = metis::partition_cells(&c.pm.topo, ranks).unwrap();
            for (how, owner) in [("striped", &striped), ("METIS", &metis)] {
                for mode in [ExchangeMode::Overlap, ExchangeMode::Blocking] {
                    let (sum, steps, _) = threaded(&c, owner, ranks, &options(precision, mode));
                    eprintln!("{name} {precision:?} {how} {mode:?}: {steps} steps, checksum {sum}");
                    assert_eq!(steps, one.steps, "{name} {precision:?} {how} {mode:?}: steps");
                    assert_eq!(sum, one.state_checksum, "{name} {precision:?} {how} {mode:?}: state differs");
                }
            }
        }
    }
}

/// `--gpu-exchange nccl` or `ipc` on ranks without GPUs: the host-staged exchange runs (the
/// same bits as one rank) and the run records what carried the halo.
#[test]
fn gpu_exchanges_asked_for_on_cpu_ranks_keep_the_host_exchange_and_record_it() {
    for engine in [GpuExchange::Nccl, GpuExchange::Ipc] {
        gpu_exchange_on_cpu_ranks(engine);
    }
}

fn gpu_exchange_on_cpu_ranks(engine: GpuExchange) {
    let c = case(3000, 0.05);
    let opts = RunOptions { gpu_exchange: engine, ..options(Precision::F32, ExchangeMode::Overlap) };
    let setup = Setup::new(&c.s, &c.pm, &c.depth, &c.state);
    let one = simulate(&setup, &opts, BackendChoice::Cpu, &Single, None).unwrap();
    assert_eq!(one.gpu_exchange, None, "one rank exchanges nothing");
    let owner = metis::partition_cells(&c.pm.topo, 2).unwrap();
    let subs = subs_for(&c, &owner, 2);
    let runs: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = ThreadComm::group(2)
            .into_iter()
            .zip(subs)
            .map(|(comm, sub)| {
                let (setup, opts) = (&setup, &opts);
                scope.spawn(move || simulate(setup, opts, BackendChoice::Cpu, &comm as &dyn Comm, Some(sub)).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a rank panicked")).collect()
    });
    for r in &runs {
        assert_eq!(r.gpu_exchange.as_deref(), Some("host"), "{engine:?}");
        assert_eq!(r.state_checksum, one.state_checksum, "{engine:?}");
    }
}

/// Second order (issue 21): each stage exchanges the states of a two-ring receive block and
/// every rank reconstructs its owned cells and the first ring itself. N thread ranks equal
/// one rank bit for bit, overlapped (the inner cells and edges while the messages travel)
/// and blocking, on METIS and striped partitions (cells sent to many ranks, gathers).
#[test]
fn second_order_thread_ranks_equal_one_rank_bit_for_bit() {
    let mut c = case(3000, 0.2);
    c.s.physics.order = 2;
    let mut total_gathers = 0;
    for precision in [Precision::F32, Precision::F64] {
        let setup = Setup::new(&c.s, &c.pm, &c.depth, &c.state);
        let one =
            simulate(&setup, &options(precision, ExchangeMode::Overlap), BackendChoice::Cpu, &Single, None).unwrap();
        assert!(one.steps > 10, "too short a run to test anything: {} steps", one.steps);
        for ranks in [2usize, 3, 7] {
            let metis = metis::partition_cells(&c.pm.topo, ranks).unwrap();
            let stripe =
                |p: &[f64; 2]| ((((p[0] + 5.0) * 3.0) as i64 + ((p[1] + 5.0) * 2.0) as i64) % ranks as i64) as u32;
            let striped: Vec<u32> = c.pm.topo.cell_centroid.iter().map(stripe).collect();
            for (name, owner) in [("METIS", &metis), ("striped", &striped)] {
                for mode in [ExchangeMode::Overlap, ExchangeMode::Blocking] {
                    let (sum, steps, gathers) = threaded(&c, owner, ranks, &options(precision, mode));
                    eprintln!("order 2 {precision:?} {ranks} ranks {name} {mode:?}: {steps} steps, {gathers} gathered destinations, checksum {sum}");
                    total_gathers += gathers;
                    assert_eq!(steps, one.steps, "order 2 {precision:?}, {ranks} ranks, {name}, {mode:?}: steps");
                    assert_eq!(sum, one.state_checksum, "order 2 {precision:?}, {ranks} ranks, {name}, {mode:?}");
                }
            }
        }
    }
    assert!(total_gathers > 0, "no partition needed the gather fallback: it went untested");
}

/// Second order on a partition with one ring of receive cells (made for first order): the
/// first ring cannot be reconstructed, and the backend says so instead of computing with
/// stale edge values.
#[test]
fn second_order_on_one_ring_is_refused() {
    let mut c = case(1000, 0.01);
    c.s.physics.order = 2;
    let owner = metis::partition_cells(&c.pm.topo, 2).unwrap();
    let subs = submesh::build(&c.pm.topo, &owner, 2, c.pm.fingerprint()).unwrap();
    let setup = Setup::new(&c.s, &c.pm, &c.depth, &c.state);
    let comms = ThreadComm::group(2);
    let errors: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = comms
            .into_iter()
            .zip(subs)
            .map(|(comm, sub)| {
                let setup = &setup;
                scope.spawn(move || {
                    let opts = options(Precision::F64, ExchangeMode::Overlap);
                    let e = simulate(setup, &opts, BackendChoice::Cpu, &comm as &dyn Comm, Some(sub)).unwrap_err();
                    format!("{e:#}")
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a rank panicked")).collect()
    });
    assert!(errors.iter().any(|e| e.contains("one ring of receive cells")), "{errors:?}");
}

/// Horizontal viscosity (`physics/viscosity.rs`): every edge's coupling comes from the global
/// geometry, so N thread ranks equal one rank bit for bit at both orders, on METIS and striped
/// partitions; and the viscosity changes the run (else the test would test nothing).
#[test]
fn viscous_thread_ranks_equal_one_rank_bit_for_bit() {
    for order in [1u32, 2] {
        let mut c = case(3000, 0.2);
        c.s.physics.order = order;
        let plain = one_rank(&c, Precision::F64);
        c.s.physics.viscosity = Some(pycno::physics::Viscosity { constant: None, time_scale: Some(0.2) });
        for precision in [Precision::F32, Precision::F64] {
            let one = one_rank(&c, precision);
            if precision == Precision::F64 {
                assert_ne!(one.state_checksum, plain.state_checksum, "order {order}: the viscosity changed nothing");
            }
            let ranks = 3usize;
            let metis = metis::partition_cells(&c.pm.topo, ranks).unwrap();
            let stripe =
                |p: &[f64; 2]| ((((p[0] + 5.0) * 3.0) as i64 + ((p[1] + 5.0) * 2.0) as i64) % ranks as i64) as u32;
            let striped: Vec<u32> = c.pm.topo.cell_centroid.iter().map(stripe).collect();
            for (name, owner) in [("METIS", &metis), ("striped", &striped)] {
                let (sum, steps, _) = threaded(&c, owner, ranks, &options(precision, ExchangeMode::Overlap));
                assert_eq!(steps, one.steps, "viscous order {order} {precision:?} {name}: steps");
                assert_eq!(sum, one.state_checksum, "viscous order {order} {precision:?} {name}: state differs");
            }
        }
    }
}
