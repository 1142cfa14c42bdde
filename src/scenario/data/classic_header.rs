//! A walk over the header of a classic NetCDF file (CDF-1, CDF-2) before the `netcdf3`
//! crate parses it: that crate reserves memory for as many dimensions, attributes and
//! variables as a count in the header says, so one flipped header byte asked for 68 GB and
//! aborted the run. Here every count and length is checked against the bytes the file has
//! left, so whatever the crate then reserves is bounded by the file's size, and a damaged
//! header gets a short message naming the byte offset instead of the crate's debug dump.
//!
//! Layout (NetCDF classic format specification): `CDF` version, numrecs, then the
//! dimension, global attribute and variable lists, each `ABSENT` (eight zero bytes) or a
//! tag, a count and the elements; names and values are padded to 4 bytes; big endian.

use anyhow::{bail, Result};

const DIMENSION: u32 = 0x0A;
const VARIABLE: u32 = 0x0B;
const ATTRIBUTE: u32 = 0x0C;

struct Walk<'a> {
    b: &'a [u8],
    at: usize,
    /// Bytes of the whole file (`b` may be only its start).
    file_len: u64,
}

/// The walk ran past the bytes read so far: read more of the file and walk again.
#[derive(Debug)]
pub struct NeedMore;

enum Stop {
    More,
    Bad(String),
}

impl Walk<'_> {
    fn u32(&mut self) -> std::result::Result<u32, Stop> {
        let Some(x) = self.b.get(self.at..self.at + 4) else {
            return Err(if (self.at as u64 + 4) <= self.file_len {
                Stop::More
            } else {
                Stop::Bad(format!("the header ends at byte {} with the file", self.file_len))
            });
        };
        self.at += 4;
        Ok(u32::from_be_bytes(x.try_into().unwrap()))
    }

    fn skip(&mut self, n: u64) -> std::result::Result<(), Stop> {
        let end = self.at as u64 + n;
        if end > self.file_len {
            return Err(Stop::Bad(format!(
                "at byte {}: {n} bytes asked for, but the file has {} left",
                self.at,
                self.file_len.saturating_sub(self.at as u64)
            )));
        }
        if end > self.b.len() as u64 {
            return Err(Stop::More);
        }
        self.at = end as usize;
        Ok(())
    }

    /// A count of elements of at least `min_bytes` each: no more than the file can hold.
    fn count(&mut self, what: &str, min_bytes: u64) -> std::result::Result<u64, Stop> {
        let at = self.at;
        let n = u64::from(self.u32()?);
        let left = self.file_len.saturating_sub(self.at as u64);
        if n > i32::MAX as u64 || n * min_bytes > left {
            return Err(Stop::Bad(format!(
                "at byte {at}: {n} {what}, more than the {left} bytes left in the file can hold (a damaged header)"
            )));
        }
        Ok(n)
    }

    fn padded(n: u64) -> u64 {
        n.div_ceil(4) * 4
    }

    fn name(&mut self) -> std::result::Result<(), Stop> {
        let n = self.count("bytes of a name", 1)?;
        self.skip(Self::padded(n))
    }

    /// A list's tag and count: 0 elements for ABSENT.
    fn list(&mut self, tag: u32, what: &str, min_bytes: u64) -> std::result::Result<u64, Stop> {
        let at = self.at;
        let t = self.u32()?;
        if t == 0 {
            let n = self.u32()?;
            if n != 0 {
                return Err(Stop::Bad(format!("at byte {at}: an absent list of {what} with a count of {n}")));
            }
            return Ok(0);
        }
        if t != tag {
            return Err(Stop::Bad(format!("at byte {at}: expected the tag of a list of {what}, found {t:#x}")));
        }
        self.count(what, min_bytes)
    }

    fn type_size(&mut self) -> std::result::Result<u64, Stop> {
        let at = self.at;
        match self.u32()? {
            1 | 2 => Ok(1),
            3 => Ok(2),
            4 | 5 => Ok(4),
            6 => Ok(8),
            t => Err(Stop::Bad(format!("at byte {at}: unknown data type {t}"))),
        }
    }

    fn attributes(&mut self) -> std::result::Result<(), Stop> {
        for _ in 0..self.list(ATTRIBUTE, "attributes", 12)? {
            self.name()?;
            let size = self.type_size()?;
            let n = self.count("attribute values", size)?;
            self.skip(Self::padded(n * size))?;
        }
        Ok(())
    }

    fn header(&mut self, version: u8) -> std::result::Result<(), Stop> {
        self.skip(4)?; // CDF and the version
        self.skip(4)?; // numrecs
        for _ in 0..self.list(DIMENSION, "dimensions", 8)? {
            self.name()?;
            self.u32()?;
        }
        self.attributes()?;
        let offset = if version == 2 { 8 } else { 4 };
        for _ in 0..self.list(VARIABLE, "variables", 24)? {
            self.name()?;
            let dims = self.count("dimensions of a variable", 4)?;
            self.skip(4 * dims)?;
            self.attributes()?;
            self.type_size()?;
            self.skip(4 + offset)?; // vsize, begin
        }
        Ok(())
    }
}

/// Check the header of a classic file of `file_len` bytes whose first bytes are `start`
/// (version byte 1 or 2): `Err(NeedMore)` inside `Ok` when `start` ends before the header.
pub fn check(start: &[u8], file_len: u64) -> Result<std::result::Result<(), NeedMore>> {
    let version = start.get(3).copied().unwrap_or(1);
    let mut w = Walk { b: start, at: 0, file_len };
    match w.header(version) {
        Ok(()) => Ok(Ok(())),
        Err(Stop::More) => Ok(Err(NeedMore)),
        Err(Stop::Bad(m)) => bail!("not a readable classic NetCDF file: {m}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CDF-1 file: one dimension `x` of 3, no attributes, one int variable `v(x)`.
    fn header() -> Vec<u8> {
        let mut b = b"CDF\x01".to_vec();
        let words = |b: &mut Vec<u8>, xs: &[u32]| xs.iter().for_each(|x| b.extend_from_slice(&x.to_be_bytes()));
        words(&mut b, &[0, DIMENSION, 1, 1]);
        b.extend_from_slice(b"x\0\0\0");
        words(&mut b, &[3, 0, 0, VARIABLE, 1, 1]);
        b.extend_from_slice(b"v\0\0\0");
        // One dimension (id 0), no attributes, int, vsize 12, begin.
        let begin = b.len() as u32 + 7 * 4;
        words(&mut b, &[1, 0, 0, 0, 4, 12, begin]);
        b.extend_from_slice(&[0; 12]);
        b
    }

    #[test]
    fn a_good_header_passes_and_a_huge_count_is_refused() {
        let h = header();
        assert!(matches!(check(&h, h.len() as u64), Ok(Ok(()))));
        assert!(matches!(check(&h[..20], h.len() as u64), Ok(Err(NeedMore))));
        // The dimension count (bytes 12..16) flipped to 2^31 - 1.
        let mut bad = h.clone();
        bad[12..16].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
        let e = check(&bad, bad.len() as u64).unwrap_err().to_string();
        assert!(e.contains("at byte 12") && e.contains("dimensions") && e.contains("damaged header"), "{e}");
    }
}
