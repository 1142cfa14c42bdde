//! `pycno example [NAME] [DIR]`: the shipped example scenarios (`meshes/scenarios/`), built
//! into the binary so that an installed `pycno` can hand them out anywhere. Each is written
//! as `DIR/NAME.json` with the mesh files it reads beside it and its `mesh` path rewritten
//! to them, so the copy runs from any directory.

use crate::util::atomic::write_bytes_atomic;
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// A shipped example: its scenario text and the mesh files it reads (as the scenario names
/// them, and the file's bytes).
pub struct Example {
    pub name: &'static str,
    pub about: &'static str,
    pub json: &'static str,
    pub meshes: &'static [(&'static str, &'static str)],
}

/// Every file of `meshes/scenarios/` (`tests/cli.rs` checks that none is missing here).
pub const EXAMPLES: &[Example] = &[
    Example {
        name: "dambreak_paper",
        about: "the paper's circular internal dam break on [-5, 5]^2 (4016 cells)",
        json: include_str!("../../meshes/scenarios/dambreak_paper.json"),
        meshes: &[],
    },
    Example {
        name: "channel_internal_dambreak",
        about: "a quasi-1D internal dam break in a 20 x 1 channel",
        json: include_str!("../../meshes/scenarios/channel_internal_dambreak.json"),
        meshes: &[],
    },
    Example {
        name: "channel_gmsh_mesh",
        about: "an internal dam break on a Gmsh mesh file (channel_v41.msh, written beside it)",
        json: include_str!("../../meshes/scenarios/channel_gmsh_mesh.json"),
        meshes: &[("../channel_v41.msh", include_str!("../../meshes/channel_v41.msh"))],
    },
    Example {
        name: "island_exchange",
        about: "a two-layer exchange flow past an island (a hole in the domain)",
        json: include_str!("../../meshes/scenarios/island_exchange.json"),
        meshes: &[],
    },
    Example {
        name: "lake_at_rest_bump",
        about: "water at rest over a seamount: stays at rest (well-balancing)",
        json: include_str!("../../meshes/scenarios/lake_at_rest_bump.json"),
        meshes: &[],
    },
    Example {
        name: "lock_exchange",
        about: "the laboratory lock exchange, full depth: two gravity currents into layers that are absent",
        json: include_str!("../../meshes/scenarios/lock_exchange.json"),
        meshes: &[],
    },
    Example {
        name: "thin_slick",
        about: "a 5 cm upper patch spreading on a lower layer; the upper layer absent elsewhere",
        json: include_str!("../../meshes/scenarios/thin_slick.json"),
        meshes: &[],
    },
    Example {
        name: "seamount_piercing",
        about: "an internal wave passing over a seamount that pierces the interface",
        json: include_str!("../../meshes/scenarios/seamount_piercing.json"),
        meshes: &[],
    },
    Example {
        name: "dense_current_slope",
        about: "a dense current running down a slope under a light layer",
        json: include_str!("../../meshes/scenarios/dense_current_slope.json"),
        meshes: &[],
    },
    Example {
        name: "beach_runup",
        about: "a two-layer wave running up a beach with dry land",
        json: include_str!("../../meshes/scenarios/beach_runup.json"),
        meshes: &[],
    },
    Example {
        name: "strait_sill_from_file",
        about: "an internal bore over a sill, bathymetry from an ESRI grid plus a sill shape",
        json: include_str!("../../meshes/scenarios/strait_sill_from_file.json"),
        meshes: &[("strait_bathymetry.asc", include_str!("../../meshes/scenarios/strait_bathymetry.asc"))],
    },
    Example {
        name: "strait_exchange",
        about: "the two-layer exchange through a strait with a sill: tide, open end, friction, Coriolis (Gmsh mesh)",
        json: include_str!("../../meshes/scenarios/strait_exchange.json"),
        meshes: &[
            ("../strait/strait.msh", include_str!("../../meshes/strait/strait.msh")),
            ("../strait/strait.geo", include_str!("../../meshes/strait/strait.geo")),
        ],
    },
];

/// The list `pycno example` prints with no name.
pub fn listing() -> String {
    let mut s = String::from("Example scenarios (pycno example NAME [DIR] writes DIR/NAME.json):\n");
    for e in EXAMPLES {
        s.push_str(&format!("  {:<27} {}\n", e.name, e.about));
    }
    s
}

/// Write example `name` into `dir` (made if missing): `NAME.json` and its mesh files. An
/// existing file is never overwritten. Returns the files written, the scenario first.
pub fn write(name: &str, dir: &Path) -> Result<Vec<PathBuf>> {
    let name = name.strip_suffix(".json").unwrap_or(name);
    let Some(e) = EXAMPLES.iter().find(|e| e.name == name) else {
        let names: Vec<&str> = EXAMPLES.iter().map(|e| e.name).collect();
        bail!("no example named {name:?}; the examples are: {}", names.join(", "));
    };
    let mut json = e.json.to_string();
    let mut files = vec![(dir.join(format!("{}.json", e.name)), String::new())];
    for (reference, text) in e.meshes {
        let file = Path::new(reference).file_name().expect("a mesh file name").to_string_lossy().into_owned();
        // The scenario names its mesh relative to itself: beside it now.
        json = json.replace(&format!("\"{reference}\""), &format!("\"{file}\""));
        files.push((dir.join(file), text.to_string()));
    }
    files[0].1 = json;
    for (path, _) in &files {
        if std::fs::symlink_metadata(path).is_ok() {
            bail!(
                "{} exists already: pycno example never overwrites a file; remove it or give another DIR",
                path.display()
            );
        }
    }
    std::fs::create_dir_all(dir).map_err(|err| anyhow::anyhow!("cannot create {}: {err}", dir.display()))?;
    for (path, text) in &files {
        write_bytes_atomic(path, text.as_bytes())?;
    }
    Ok(files.into_iter().map(|f| f.0).collect())
}
