use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use pycno::app::bench::{bench, profile_rows, table_header, table_row, BenchOptions};
use pycno::app::run::{describe_outputs, run, BackendChoice, Precision, RunOptions};
use pycno::app::{count_arg, input_mesh};
use pycno::comm::mpi::{launched_by_mpi, MpiComm};
use pycno::comm::{agreed, Comm, Single};
use pycno::mesh::io;
use pycno::scenario::PAPER_CELLS;
use pycno::solver::exchange::{ExchangeMode, GpuExchange};
use pycno::{say, say_raw};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `pycno --version`: the crate version, the git commit and the cargo profile it was built
/// from (build.rs), so that a report or an installed copy names its source.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("PYCNO_GIT_COMMIT"),
    ", ",
    env!("PYCNO_BUILD_PROFILE"),
    " build)"
);

/// Two-layer shallow-water flow (ocean currents, internal waves, exchange flows) on
/// unstructured triangle meshes, on CPUs and NVIDIA GPUs, with the improved Roe (IR-Roe)
/// scheme of de la Asunción, Mantas, Castro and Fernández-Nieto, "An MPI-CUDA implementation
/// of an improved Roe method for two-layer shallow water systems", J. Parallel Distrib.
/// Comput. 72 (2012).
///
/// Start with `pycno example` (scenarios to copy), `pycno run`, then `pycno plot OUT`.
#[derive(Parser)]
#[command(name = "pycno", version = VERSION, propagate_version = true, args_override_self = true)]
struct Cli {
    #[command(flatten)]
    threads: Threads,
    #[command(subcommand)]
    command: Command,
}

/// `--threads`, before the command or on the commands that compute (not a global option:
/// `pycno example --help` and the like offered it, where it means nothing).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
struct Threads {
    /// Worker threads for the CPU backend (default: all cores).
    #[arg(long, allow_negative_numbers = true, value_parser = pycno::app::threads_arg)]
    threads: Option<usize>,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario: mesh it, step it to its end time and write the results (VTK series,
    /// stats.json, the resolved scenario.json, and gauges, NetCDF and maximum maps where the
    /// scenario asks). With no file: the paper's circular internal dam break.
    Run {
        /// Scenario file (JSON): `pycno example` writes one to start from, `pycno schema`
        /// prints the format.
        scenario: Option<PathBuf>,
        /// Target number of triangles (overrides the scenario's resolution).
        #[arg(long, allow_negative_numbers = true, value_parser = count_arg::<u64>)]
        cells: Option<u64>,
        /// End time in seconds (overrides time.end).
        #[arg(long, allow_negative_numbers = true)]
        t_end: Option<f64>,
        /// Output directory (overrides output.dir; default out/<name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace the results of an earlier run in the output directory: its files (those
        /// its .pycno-outputs lists, and its checkpoints) are removed first; nothing else is.
        #[arg(long)]
        overwrite: bool,
        /// Output interval in seconds (overrides time.output_interval / output_times).
        #[arg(long, allow_negative_numbers = true)]
        output_interval: Option<f64>,
        /// Floating-point precision of the computation.
        #[arg(long, value_enum, default_value = "f32")]
        precision: Precision,
        /// Where to compute.
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendChoice,
        /// Stop after this many steps (the state reached is written as a last frame).
        #[arg(long, allow_negative_numbers = true, value_parser = count_arg::<u64>)]
        max_steps: Option<u64>,
        /// End the job when a rank makes no progress for SECONDS (a stopped process, a hung
        /// GPU, file system or node), naming the rank and where it stopped, instead of
        /// waiting for ever. Choose it well above the longest output or checkpoint write.
        #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
        watchdog: Option<f64>,
        /// Stop the run as gone wrong when water moves faster than M m/s (default: ten times
        /// the fastest long wave, 10 √(g H_max)).
        #[arg(long, value_name = "M", allow_negative_numbers = true)]
        max_speed: Option<f64>,
        /// Do not stop a run whose time step collapses, whose hyperbolicity fallbacks pile up
        /// or whose water passes --max-speed (it still stops when it goes unphysical).
        #[arg(long)]
        no_health_checks: bool,
        /// Write no VTK files (stats.json only).
        #[arg(long)]
        no_vtk: bool,
        /// No progress output and no summary.
        #[arg(long, short)]
        quiet: bool,
        /// Partition directory written by `pycno partition` (multi-rank runs under mpirun;
        /// default: partition on the fly).
        #[arg(long, value_name = "DIR")]
        partition: Option<PathBuf>,
        /// How ranks trade the cells on their borders each step: while the interior is being
        /// computed (overlap), or before it (blocking, slower; for comparison). These are
        /// Algorithms 2 and 1 of de la Asunción et al. (2012).
        #[arg(long, value_enum, default_value = "overlap")]
        exchange: ExchangeMode,
        /// What carries the cells between GPUs of a multi-rank run: NCCL from GPU to GPU
        /// with the time step reduced on the GPUs (auto: where all ranks share one node and
        /// NCCL loads), or the host (pinned copies and MPI messages; any network).
        #[arg(long, value_enum, default_value = "auto")]
        gpu_exchange: GpuExchange,
        /// Write a checkpoint every STEPS steps (each rank its cells; the newest
        /// --checkpoint-keep complete ones are kept).
        #[arg(long, value_name = "STEPS", allow_negative_numbers = true, value_parser = count_arg::<u64>)]
        checkpoint_every: Option<u64>,
        /// Write a checkpoint every SECONDS of wall-clock time.
        #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
        checkpoint_seconds: Option<f64>,
        /// Checkpoint directory (default: OUT/checkpoints).
        #[arg(long, value_name = "DIR")]
        checkpoint_dir: Option<PathBuf>,
        /// Complete checkpoints to keep.
        #[arg(long, value_name = "K", default_value_t = 2, allow_negative_numbers = true, value_parser = count_arg::<usize>)]
        checkpoint_keep: usize,
        /// Resume from a checkpoint: a checkpoint directory (step_*) or a directory of them
        /// (the newest complete one). Works on any rank count and backend.
        #[arg(long, value_name = "DIR")]
        restart: Option<PathBuf>,
        #[command(flatten)]
        threads: Threads,
    },
    /// Make, check or convert a mesh: triangulate a scenario's domain or read a mesh file,
    /// check it, print its statistics and optionally write it (.msh, .node, .pmsh).
    Mesh {
        /// Scenario file or mesh file (.msh, .node/.ele, .pmsh); none: the paper's domain.
        input: Option<PathBuf>,
        /// Target number of triangles when triangulating a domain (not for mesh files).
        #[arg(long, allow_negative_numbers = true, value_parser = count_arg::<u64>)]
        cells: Option<u64>,
        /// Write the checked, reordered mesh here (format from the extension).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        threads: Threads,
    },
    /// Partition a mesh for a multi-rank run (METIS): a directory with a manifest, one file
    /// per rank and a VTK view; or check such a directory against the mesh (--check).
    Partition {
        #[command(flatten)]
        args: pycno::app::partition::PartitionArgs,
        #[command(flatten)]
        threads: Threads,
    },
    /// Benchmark the paper's dam break at several sizes (stepping time only).
    Bench {
        /// Cell counts, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = PAPER_CELLS[..5].to_vec(), allow_negative_numbers = true, value_parser = count_arg::<u64>)]
        cells: Vec<u64>,
        /// Floating-point precision of the computation.
        #[arg(long, value_enum, default_value = "f32")]
        precision: Precision,
        /// Runs per size; the median is reported.
        #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = pycno::app::repeat_arg)]
        repeat: usize,
        /// Simulated time of each run, in seconds (default 0.1; with --study 600).
        #[arg(long, allow_negative_numbers = true)]
        t_end: Option<f64>,
        /// The study benchmark: a strait-like channel 170 km by 20 km with a tide, an open
        /// end, friction, Coriolis, gauges and max maps, instead of the paper's dam break.
        #[arg(long)]
        study: bool,
        /// Print JSON (the stats.json fields per size) instead of a table.
        #[arg(long)]
        json: bool,
        /// Where to compute.
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendChoice,
        /// Time each GPU kernel and report bandwidth against the card's copy bandwidth.
        #[arg(long)]
        profile: bool,
        /// Order of the scheme (`physics.order`): 1 (here the default: the paper's scheme,
        /// whose figures the benchmark compares with), or 2 (second order in space and
        /// time, a run's default).
        #[arg(long, default_value_t = 1)]
        order: u32,
        #[command(flatten)]
        threads: Threads,
    },
    /// Write a shipped example scenario to start from (with the mesh files it reads); with
    /// no NAME, list them.
    Example {
        /// The example's name (see `pycno example`).
        name: Option<String>,
        /// Directory to write it into (made if missing; default: the current directory).
        dir: Option<PathBuf>,
    },
    /// Print the scenario format as a JSON Schema, for editors' completion and checks
    /// (`pycno schema > pycno.schema.json`).
    Schema,
    /// Pictures of a run's output directory: a map of a frame (colour limits, colour map,
    /// aspect for long channels), an animation, a transect along a polyline, the max maps,
    /// the gauge time series. `pycno plot --help` lists the options.
    #[command(disable_help_flag = true)]
    Plot {
        /// DIR and the picture's options (see `pycno plot --help`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    pycno::util::stdout::ignore_write_signals();
    let cli = Cli::parse();
    // `run -q` prints warnings and errors only (an INFO line slipped through it before).
    let level = if matches!(cli.command, Command::Run { quiet: true, .. }) { "warn" } else { "info" };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level)).format_target(false).init();
    // The picture tool's exit status is the command's (2: a bad command line, as here).
    if let Command::Plot { args } = &cli.command {
        return match pycno::app::plot::command(args) {
            Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    // MPI starts only for `run` under an MPI launcher; every other command and a plain run
    // never touch it.
    let mpi = if matches!(cli.command, Command::Run { .. }) && launched_by_mpi() {
        match MpiComm::init() {
            Ok(m) => Some(m),
            Err(e) => {
                eprintln!("error: cannot start MPI: {e:#}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    let comm: &dyn Comm = match &mpi {
        Some(m) => m,
        None => &Single,
    };
    if matches!(cli.command, Command::Run { .. }) && comm.size() == 1 {
        pycno::app::run::interrupt::install();
    }
    match real_main(cli, comm) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match (agreed(&e), &mpi) {
            // Every rank knows: the one that saw it reports, all exit non-zero.
            (Some(a), _) => {
                if a.print {
                    eprintln!("error: {e:#}");
                }
                ExitCode::FAILURE
            }
            // Only this rank knows: report and take the whole job down, so no rank waits.
            (None, Some(m)) if m.size() > 1 => {
                eprintln!("error (rank {} of {}): {e:#}", m.rank(), m.size());
                m.abort(1)
            }
            _ => {
                eprintln!("error: {e:#}");
                ExitCode::FAILURE
            }
        },
    }
}

fn real_main(cli: Cli, comm: &dyn Comm) -> Result<()> {
    // Ranks that share a node share its cores.
    let (_, on_node) = comm.node_rank();
    let here = match &cli.command {
        Command::Run { threads, .. }
        | Command::Mesh { threads, .. }
        | Command::Partition { threads, .. }
        | Command::Bench { threads, .. } => threads.threads,
        _ => None,
    };
    let threads = here.or(cli.threads.threads).or_else(|| {
        (on_node > 1).then(|| (std::thread::available_parallelism().map_or(1, |n| n.get()) / on_node).max(1))
    });
    if let Some(n) = threads {
        rayon::ThreadPoolBuilder::new().num_threads(n).build_global().context("cannot start the thread pool")?;
    }
    match cli.command {
        Command::Run {
            scenario,
            cells,
            t_end,
            out,
            output_interval,
            precision,
            backend,
            max_steps,
            watchdog,
            max_speed,
            no_health_checks,
            no_vtk,
            quiet,
            partition,
            exchange,
            gpu_exchange,
            checkpoint_every,
            checkpoint_seconds,
            checkpoint_dir,
            checkpoint_keep,
            restart,
            overwrite,
            ..
        } => {
            if let Some(seconds) = watchdog {
                if !(seconds.is_finite() && seconds > 0.0 && seconds <= 1e7) {
                    bail!("--watchdog {seconds}: expected a number of seconds in (0, 1e7]");
                }
                pycno::comm::watchdog::start(Duration::from_secs_f64(seconds), comm.rank(), comm.size());
            }
            if let Some(m) = max_speed.filter(|m| !(m.is_finite() && *m > 0.0)) {
                bail!("--max-speed {m}: expected a speed in m/s above 0");
            }
            let opts = RunOptions {
                scenario,
                cells,
                t_end,
                out,
                overwrite,
                output_interval,
                precision,
                backend,
                max_steps,
                no_vtk,
                quiet,
                kernel_timing: false,
                partition,
                exchange,
                gpu_exchange,
                checkpoint_every,
                checkpoint_seconds,
                checkpoint_dir,
                checkpoint_keep,
                restart,
                max_speed,
                no_health_checks,
                ..Default::default()
            };
            let stats = run(&opts, comm)?;
            if !quiet && comm.is_root() {
                say!("{}", stats.summary())?;
                if !no_vtk {
                    say!(
                        "output: {} (open in ParaView), stats: {}",
                        describe_outputs(&stats.output_dir, &stats.name),
                        stats.output_dir.join("stats.json").display()
                    )?;
                }
            }
        }
        Command::Mesh { input, cells, out, .. } => {
            let (pm, _) = input_mesh(input.as_deref(), cells)?;
            let t = &pm.topo;
            let walls = (0..t.num_edges()).filter(|&e| t.is_boundary(e)).count();
            let (amin, amax) = t.cell_area.iter().fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
            say!(
                "mesh ok: {} vertices, {} triangles, {} edges ({} on the boundary), areas {:.3e} .. {:.3e}, {:.3} s",
                pm.mesh.vertices.len(),
                t.num_cells(),
                t.num_edges(),
                walls,
                amin,
                amax,
                pm.seconds
            )?;
            if let Some(out) = out {
                io::write_mesh(&out, &pm.mesh)?;
                say!("wrote {}", out.display())?;
            }
        }
        Command::Partition { args, .. } => pycno::app::partition::command(&args)?,
        Command::Example { name: None, .. } => say_raw!("{}", pycno::app::example::listing())?,
        Command::Example { name: Some(name), dir } => {
            let dir = dir.unwrap_or_else(|| PathBuf::from("."));
            let files = pycno::app::example::write(&name, &dir)?;
            for f in &files {
                say!("wrote {}", f.display())?;
            }
            say!("run it: pycno run {}", files[0].display())?;
        }
        Command::Schema => say!("{}", pycno::app::schema::scenario_schema())?,
        Command::Plot { .. } => unreachable!("handled in main"),
        Command::Bench { cells, precision, repeat, t_end, study, json, backend, profile, order, .. } => {
            let t_end = t_end.unwrap_or(pycno::app::bench::default_t_end(study));
            let opts = BenchOptions { cells, precision, repeat, t_end, backend, profile, order, study };
            opts.validate()?;
            if !json {
                let what = if study { "study benchmark" } else { "paper benchmark" };
                say!(
                    "{what} to t = {t_end}, {precision:?}, backend {backend:?}, {} CPU threads, median of {repeat}",
                    rayon::current_num_threads()
                )?;
                say!("{}", table_header())?;
            }
            let all = bench(&opts, |s| {
                if !json {
                    say!("{}", table_row(s))?;
                    for row in profile_rows(s) {
                        say!("{row}")?;
                    }
                }
                Ok(())
            })?;
            if json {
                say!("{}", serde_json::to_string_pretty(&all)?)?;
            }
        }
    }
    Ok(())
}
