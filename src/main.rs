use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use pycno::app::bench::{bench, profile_rows, table_header, table_row, BenchOptions};
use pycno::app::run::{describe_outputs, run, BackendChoice, Precision, RunOptions};
use pycno::app::{count_arg, input_mesh};
use pycno::comm::mpi::{launched_by_mpi, MpiComm};
use pycno::comm::{agreed, Comm, Single};
use pycno::mesh::io;
use pycno::scenario::PAPER_CELLS;
use pycno::solver::exchange::ExchangeMode;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Two-layer shallow-water flow on unstructured triangle meshes (IR-Roe scheme).
#[derive(Parser)]
#[command(name = "pycno", version, about, propagate_version = true, args_override_self = true)]
struct Cli {
    /// Worker threads for the CPU backend (default: all cores).
    #[arg(long, global = true, allow_negative_numbers = true, value_parser = pycno::app::threads_arg)]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (with no file: the paper's circular internal dam break).
    Run {
        /// Scenario file (JSON); see README.md for the format.
        scenario: Option<PathBuf>,
        /// Target number of triangles (overrides the scenario's resolution).
        #[arg(long, allow_negative_numbers = true, value_parser = count_arg::<u64>)]
        cells: Option<u64>,
        /// End time in seconds (overrides time.end).
        #[arg(long, allow_negative_numbers = true)]
        t_end: Option<f64>,
        /// Output directory (overrides output.dir).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Output interval in seconds (overrides time.output_interval / output_times).
        #[arg(long, allow_negative_numbers = true)]
        output_interval: Option<f64>,
        #[arg(long, value_enum, default_value = "f32")]
        precision: Precision,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendChoice,
        /// Stop after this many steps.
        #[arg(long, allow_negative_numbers = true, value_parser = count_arg::<u64>)]
        max_steps: Option<u64>,
        /// End the job when a rank makes no progress for SECONDS (a stopped process, a hung
        /// GPU, file system or node), naming the rank and where it stopped, instead of
        /// waiting for ever. Choose it well above the longest output or checkpoint write.
        #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
        watchdog: Option<f64>,
        /// Write no VTK files (stats.json only).
        #[arg(long)]
        no_vtk: bool,
        /// No progress output.
        #[arg(long, short)]
        quiet: bool,
        /// Partition directory written by `pycno partition` (multi-rank runs under mpirun;
        /// default: partition on the fly).
        #[arg(long, value_name = "DIR")]
        partition: Option<PathBuf>,
        /// Exchange of communication cells in multi-rank runs: overlapped with the
        /// non-communication edges (Algorithm 2 of de la Asunción et al. 2012) or blocking (their Algorithm 1).
        #[arg(long, value_enum, default_value = "overlap")]
        exchange: ExchangeMode,
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
    },
    /// Make, check or convert a mesh: triangulate a scenario's domain or read a mesh file,
    /// check it, print its statistics and optionally write it (.msh, .node, .pmsh).
    Mesh {
        /// Scenario file or mesh file (.msh, .node/.ele, .pmsh); none: the paper's domain.
        input: Option<PathBuf>,
        #[arg(long, allow_negative_numbers = true, value_parser = count_arg::<u64>)]
        cells: Option<u64>,
        /// Write the checked, reordered mesh here (format from the extension).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Partition a mesh for a multi-rank run (METIS): a directory with a manifest, one file
    /// per rank and a VTK view; or check such a directory against the mesh (--check).
    Partition(pycno::app::partition::PartitionArgs),
    /// Benchmark the paper's dam break at several sizes (stepping time only).
    Bench {
        /// Cell counts, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = PAPER_CELLS[..5].to_vec(), allow_negative_numbers = true, value_parser = count_arg::<u64>)]
        cells: Vec<u64>,
        #[arg(long, value_enum, default_value = "f32")]
        precision: Precision,
        /// Runs per size; the median is reported.
        #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = pycno::app::repeat_arg)]
        repeat: usize,
        #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
        t_end: f64,
        /// Print JSON (the stats.json fields per size) instead of a table.
        #[arg(long)]
        json: bool,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendChoice,
        /// Time each GPU kernel and report bandwidth against the card's copy bandwidth.
        #[arg(long)]
        profile: bool,
    },
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).format_target(false).init();
    let cli = Cli::parse();
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
    let threads = cli.threads.or_else(|| {
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
            no_vtk,
            quiet,
            partition,
            exchange,
            checkpoint_every,
            checkpoint_seconds,
            checkpoint_dir,
            checkpoint_keep,
            restart,
        } => {
            if let Some(seconds) = watchdog {
                if !(seconds.is_finite() && seconds > 0.0 && seconds <= 1e7) {
                    bail!("--watchdog {seconds}: expected a number of seconds in (0, 1e7]");
                }
                pycno::comm::watchdog::start(Duration::from_secs_f64(seconds), comm.rank(), comm.size());
            }
            let opts = RunOptions {
                scenario,
                cells,
                t_end,
                out,
                output_interval,
                precision,
                backend,
                max_steps,
                no_vtk,
                quiet,
                kernel_timing: false,
                partition,
                exchange,
                checkpoint_every,
                checkpoint_seconds,
                checkpoint_dir,
                checkpoint_keep,
                restart,
            };
            let stats = run(&opts, comm)?;
            if !quiet && comm.is_root() {
                println!("{}", stats.summary());
                if !no_vtk {
                    println!(
                        "output: {} (open in ParaView), stats: {}",
                        describe_outputs(&stats.output_dir, &stats.name),
                        stats.output_dir.join("stats.json").display()
                    );
                }
            }
        }
        Command::Mesh { input, cells, out } => {
            let (pm, _) = input_mesh(input.as_deref(), cells)?;
            let t = &pm.topo;
            let walls = (0..t.num_edges()).filter(|&e| t.is_boundary(e)).count();
            let (amin, amax) = t.cell_area.iter().fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
            println!(
                "mesh ok: {} vertices, {} triangles, {} edges ({} on the boundary), areas {:.3e} .. {:.3e}, {:.3} s",
                pm.mesh.vertices.len(),
                t.num_cells(),
                t.num_edges(),
                walls,
                amin,
                amax,
                pm.seconds
            );
            if let Some(out) = out {
                io::write_mesh(&out, &pm.mesh)?;
                println!("wrote {}", out.display());
            }
        }
        Command::Partition(args) => pycno::app::partition::command(&args)?,
        Command::Bench { cells, precision, repeat, t_end, json, backend, profile } => {
            let opts = BenchOptions { cells, precision, repeat, t_end, backend, profile };
            opts.validate()?;
            if !json {
                println!("paper benchmark to t = {t_end}, {precision:?}, backend {backend:?}, {} CPU threads, median of {repeat}", rayon::current_num_threads());
                println!("{}", table_header());
            }
            let all = bench(&opts, |s| {
                if !json {
                    println!("{}", table_row(s));
                    for row in profile_rows(s) {
                        println!("{row}");
                    }
                }
            })?;
            if json {
                println!("{}", serde_json::to_string_pretty(&all)?);
            }
        }
    }
    Ok(())
}
