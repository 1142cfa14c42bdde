//! A cell -> rank map from a file, instead of METIS: one rank per cell, whitespace-separated
//! (one per line in the output of gpmetis or Chaco), in global cell order, i.e. the order of
//! the mesh that `pycno mesh --out` writes.

use anyhow::{bail, Context, Result};
use std::path::Path;

pub fn read_owners(path: &Path, cells: usize, ranks: usize) -> Result<Vec<u32>> {
    let text = crate::util::files::read_regular_to_string(path)
        .with_context(|| format!("cannot read the owner file {}", path.display()))?;
    let mut owner = Vec::with_capacity(cells);
    for (k, line) in text.lines().enumerate() {
        for tok in line.split_whitespace() {
            let r: u32 = tok.parse().map_err(|_| {
                anyhow::anyhow!("{}:{}: expected a rank (a non-negative integer), found {tok:?}", path.display(), k + 1)
            })?;
            if r as usize >= ranks {
                bail!("{}:{}: rank {r} is outside 0..{ranks} (--ranks {ranks})", path.display(), k + 1);
            }
            owner.push(r);
        }
    }
    if owner.len() != cells {
        bail!(
            "{}: {} ranks listed, but the mesh has {cells} cells (one rank per cell, in global cell order)",
            path.display(),
            owner.len()
        );
    }
    Ok(owner)
}
