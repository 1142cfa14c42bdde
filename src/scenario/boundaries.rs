//! The scenario's `boundaries` section: a condition per boundary tag, and the run's
//! boundary table built from it (`physics::Boundaries`). A tag with no entry is a
//! wall; an entry naming a tag the domain or mesh does not have is an error listing the
//! known ones.
//!
//! ```json
//! "boundaries": {
//!   "atlantic": { "type": "elevation", "surface": { "mean": 0, "tides": [{ "amplitude": 0.5, "period": 44714 }] } },
//!   "river":    { "type": "discharge", "layer2": 120.0 },
//!   "east":     { "type": "open" },
//!   "north":    { "type": "wall" }
//! }
//! ```
//!
//! A value over time (`surface`, `interface`, `layer1`, `layer2`) is a number, tides
//! (`{"mean", "tides": [{"amplitude", "period", "phase"}]}`, phase in degrees), or a CSV
//! file (`{"file": "series.csv"}`: lines `time,value`, times increasing, interpolated
//! linearly and constant beyond the ends; `#` comments and a header line are skipped).

use super::physics_ranges::show;
use super::tagged;
use crate::physics::{Boundaries, BoundaryKind, BoundarySpec, Constituent, Reference, TimeFunction};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One tag's condition: `wall` (the default), `open` (outgoing waves leave), `elevation`
/// (prescribed free-surface and/or interface elevation) or `discharge` (volume flux into the
/// domain per layer). The schema mirrors the hand-written deserializer below.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[schemars(deny_unknown_fields)]
pub enum Condition {
    Wall,
    Open,
    /// Free-surface and/or interface elevation (m above the reference level); one not given
    /// is taken from the cell.
    Elevation {
        #[serde(skip_serializing_if = "Option::is_none")]
        surface: Option<Forcing>,
        #[serde(skip_serializing_if = "Option::is_none")]
        interface: Option<Forcing>,
    },
    /// Volume flux into the domain per layer (m³/s over the whole tag); a layer not given is
    /// open.
    Discharge {
        #[serde(skip_serializing_if = "Option::is_none")]
        layer1: Option<Forcing>,
        #[serde(skip_serializing_if = "Option::is_none")]
        layer2: Option<Forcing>,
    },
}

impl Condition {
    /// The shortest period (s) of the tides this condition gives, if any: a period of a few
    /// seconds is most often hours written as seconds (the run's report says so).
    pub fn shortest_tide_period(&self) -> Option<f64> {
        let forcings = match self {
            Condition::Elevation { surface, interface } => [surface, interface],
            Condition::Discharge { layer1, layer2 } => [layer1, layer2],
            Condition::Wall | Condition::Open => return None,
        };
        forcings
            .into_iter()
            .flatten()
            .filter_map(|f| match f {
                Forcing::Tides { tides, .. } => tides.iter().map(|t| t.period).reduce(f64::min),
                _ => None,
            })
            .reduce(f64::min)
    }
}

/// A value over time as the scenario gives it: a number, tides
/// `{"mean", "tides": [{"amplitude", "period", "phase"}]}`, or a CSV file `{"file"}`.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum Forcing {
    Constant(f64),
    Tides {
        #[serde(default)]
        mean: f64,
        tides: Vec<Tide>,
    },
    File {
        file: PathBuf,
    },
}

/// A tidal constituent: `amplitude cos(2 pi t / period - phase)`, phase in degrees.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tide {
    pub amplitude: f64,
    pub period: f64,
    #[serde(default)]
    pub phase: f64,
}

impl Condition {
    pub fn kind(&self) -> BoundaryKind {
        match self {
            Condition::Wall => BoundaryKind::Wall,
            Condition::Open => BoundaryKind::Open,
            Condition::Elevation { .. } => BoundaryKind::Elevation,
            Condition::Discharge { .. } => BoundaryKind::Discharge,
        }
    }

    /// The two values of the kind (`physics::BoundarySpec`) with their field names.
    fn values(&self) -> [(&'static str, Option<&Forcing>); 2] {
        match self {
            Condition::Elevation { surface, interface } => {
                [("surface", surface.as_ref()), ("interface", interface.as_ref())]
            }
            Condition::Discharge { layer1, layer2 } => [("layer1", layer1.as_ref()), ("layer2", layer2.as_ref())],
            _ => [("", None), ("", None)],
        }
    }

    fn values_mut(&mut self) -> [Option<&mut Forcing>; 2] {
        match self {
            Condition::Elevation { surface, interface } => [surface.as_mut(), interface.as_mut()],
            Condition::Discharge { layer1, layer2 } => [layer1.as_mut(), layer2.as_mut()],
            _ => [None, None],
        }
    }

    /// Checks that need no file: errors name `field` (`boundaries.TAG`).
    pub fn validate(&self, field: &str) -> Result<()> {
        match self {
            Condition::Elevation { surface: None, interface: None } => {
                bail!("{field}: an elevation boundary needs surface, interface or both")
            }
            Condition::Discharge { layer1: None, layer2: None } => {
                bail!("{field}: a discharge boundary needs layer1, layer2 or both (m³/s into the domain)")
            }
            _ => {}
        }
        let bound = self.bound();
        for (name, f) in self.values() {
            if let Some(f) = f {
                f.validate(&format!("{field}.{name}"))?;
                if let Some((limit, what)) = bound {
                    f.check_bound(&format!("{field}.{name}"), limit, what)?;
                }
            }
        }
        Ok(())
    }

    /// The largest magnitude this kind's values may reach, and what they are.
    fn bound(&self) -> Option<(f64, &'static str)> {
        match self {
            Condition::Elevation { .. } => Some((MAX_ELEVATION, "an elevation in m")),
            Condition::Discharge { .. } => Some((MAX_DISCHARGE, "a discharge in m³/s")),
            _ => None,
        }
    }

    /// Make relative file names relative to `dir` (the scenario file's directory).
    pub fn resolve_files(&mut self, dir: &Path) {
        for f in self.values_mut().into_iter().flatten() {
            if let Forcing::File { file } = f {
                if file.is_relative() {
                    *file = dir.join(&*file);
                }
            }
        }
    }
}

impl Forcing {
    /// Refuse values (a constant, or the mean plus the amplitudes of tides) beyond `limit`
    /// in magnitude; a file's values are checked when it is read.
    fn check_bound(&self, field: &str, limit: f64, what: &str) -> Result<()> {
        let (reach, shown) = match self {
            Forcing::Constant(x) => (x.abs(), show(*x)),
            Forcing::Tides { mean, tides } => {
                let r = mean.abs() + tides.iter().map(|t| t.amplitude.abs()).sum::<f64>();
                (r, format!("a mean and amplitudes that reach {}", show(r)))
            }
            Forcing::File { .. } => return Ok(()),
        };
        if reach > limit {
            bail!("{field}: expected {what} of magnitude at most {}, found {shown}", show(limit));
        }
        Ok(())
    }

    fn validate(&self, field: &str) -> Result<()> {
        match self {
            Forcing::Constant(x) if !x.is_finite() => bail!("{field}: expected a finite number, found {x}"),
            Forcing::Tides { mean, tides } => {
                if !mean.is_finite() {
                    bail!("{field}.mean: expected a finite number, found {mean}");
                }
                if tides.is_empty() {
                    bail!("{field}.tides: expected at least one constituent");
                }
                for (k, t) in tides.iter().enumerate() {
                    if !t.amplitude.is_finite() {
                        bail!("{field}.tides[{k}].amplitude: expected a finite number, found {}", t.amplitude);
                    }
                    if !(t.period.is_finite() && t.period > 0.0) {
                        bail!("{field}.tides[{k}].period: expected a positive period in seconds, found {}", t.period);
                    }
                    if !t.phase.is_finite() {
                        bail!("{field}.tides[{k}].phase: expected a finite phase in degrees, found {}", t.phase);
                    }
                }
            }
            Forcing::File { file } if file.as_os_str().is_empty() => bail!("{field}.file: expected a file name"),
            _ => {}
        }
        Ok(())
    }

    /// The value over time, reading a series file (errors name `field` and the file).
    pub fn function(&self, field: &str) -> Result<TimeFunction> {
        Ok(match self {
            Forcing::Constant(x) => TimeFunction::Constant(*x),
            Forcing::Tides { mean, tides } => TimeFunction::Tides {
                mean: *mean,
                constituents: tides
                    .iter()
                    .map(|t| Constituent { amplitude: t.amplitude, period: t.period, phase: t.phase })
                    .collect(),
            },
            Forcing::File { file } => {
                let (t, v) = read_series(file).with_context(|| format!("{field}.file"))?;
                TimeFunction::Series { t, v }
            }
        })
    }
}

/// A CSV time series: `time,value` per line (comma, semicolon or white space between),
/// times strictly increasing, every number finite; blank lines and `#` comments skipped, and
/// a first line that is not numbers (a header).
pub fn read_series(path: &Path) -> Result<(Vec<f64>, Vec<f64>)> {
    let data = crate::util::files::read_regular(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = String::from_utf8(data).map_err(|_| anyhow!("{}: expected a text (UTF-8) CSV file", path.display()))?;
    let (mut t, mut v) = (Vec::new(), Vec::new());
    for (k, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> =
            line.split(|c: char| c == ',' || c == ';' || c.is_whitespace()).filter(|f| !f.is_empty()).collect();
        let nums: Vec<Option<f64>> = fields.iter().map(|f| f.parse::<f64>().ok()).collect();
        if t.is_empty() && nums.iter().any(|x| x.is_none()) && k == first_content_line(&text) {
            continue; // a header
        }
        let at = || format!("{}:{}", path.display(), k + 1);
        if fields.len() != 2 {
            bail!("{}: expected two columns `time,value`, found {} fields", at(), fields.len());
        }
        let (Some(a), Some(b)) = (nums[0], nums[1]) else {
            bail!("{}: expected two numbers `time,value`, found {line:?}", at());
        };
        if !(a.is_finite() && b.is_finite()) {
            bail!("{}: expected finite numbers, found {line:?}", at());
        }
        if let Some(&last) = t.last() {
            if a <= last {
                bail!("{}: time {a} is not after the previous time {last}: expected increasing times", at());
            }
        }
        t.push(a);
        v.push(b);
    }
    if t.is_empty() {
        bail!("{}: no `time,value` rows", path.display());
    }
    Ok((t, v))
}

fn first_content_line(text: &str) -> usize {
    text.lines().position(|l| !l.split('#').next().unwrap_or("").trim().is_empty()).unwrap_or(0)
}

/// The boundary table of a run: one entry per scenario entry (in the section's order, after
/// entry 0, the walls), each tag pointed at its entry. `tags` maps the names a scenario may
/// use to tag numbers (`"7"` always works for tag 7), `lengths` each tag's total boundary
/// length (a discharge is spread over it), `rest` the reference levels (elevations are
/// stored as deviations from them). `source` names the domain or mesh in errors.
pub fn table(
    section: &BTreeMap<String, Condition>,
    tags: &BTreeMap<String, u32>,
    lengths: &BTreeMap<u32, f64>,
    rest: &Reference,
    source: &str,
) -> Result<Boundaries> {
    let mut b = Boundaries::default();
    for (name, c) in section {
        let field = format!("boundaries.{name}");
        let Some(&tag) = tags.get(name) else {
            let known: Vec<&str> = tags.keys().map(|s| s.as_str()).collect();
            bail!(
                "{field}: {source} has no boundary tag {name:?}; known tags: {}",
                if known.is_empty() { "none (every boundary is an untagged wall)".into() } else { known.join(", ") }
            );
        };
        let length = lengths.get(&tag).copied().unwrap_or(0.0);
        if c.kind() == BoundaryKind::Discharge && length <= 0.0 {
            bail!("{field}: the tag has no boundary edges to spread the discharge over");
        }
        let mut values = [None, None];
        for (k, (value_name, f)) in c.values().into_iter().enumerate() {
            if let Some(f) = f {
                let function = f.function(&format!("{field}.{value_name}"))?;
                if let (TimeFunction::Series { v, .. }, Some((limit, what))) = (&function, c.bound()) {
                    if let Some(x) = v.iter().find(|x| x.abs() > limit) {
                        bail!(
                            "{field}.{value_name}.file: expected {what} of magnitude at most {}, found {}",
                            show(limit),
                            show(*x)
                        );
                    }
                }
                values[k] = Some(function);
            }
        }
        let (offset, scale) = match c.kind() {
            BoundaryKind::Elevation => ([rest.surface, rest.interface], 1.0),
            BoundaryKind::Discharge => ([0.0; 2], 1.0 / length),
            _ => ([0.0; 2], 1.0),
        };
        if b.index_of_tag.insert(tag, b.specs.len() as i32).is_some() {
            bail!("{field}: tag {tag} has another entry in boundaries already (by number or by name)");
        }
        b.specs.push(BoundarySpec { kind: c.kind(), values, offset, scale });
        b.names.push(name.clone());
    }
    Ok(b)
}

/// The boundary types, as a scenario names them.
const KINDS: [&str; 4] = ["wall", "open", "elevation", "discharge"];

/// The largest elevation (m above the reference level, either sign) a boundary may
/// prescribe: the deepest ocean is 11 km. More is a typo or a unit mix-up (mm for m), which
/// blew up without naming the field (issue 46).
pub const MAX_ELEVATION: f64 = 1e4;
/// The largest discharge (m³/s, either sign) through one boundary tag: the Antarctic
/// Circumpolar Current carries about 1.5e8 m³/s; the Amazon 2e5.
pub const MAX_DISCHARGE: f64 = 1e9;

impl<'de> Deserialize<'de> for Condition {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let parse = || -> Result<Condition, String> {
            let o = tagged::Obj::new(&v, "an object with a \"type\"")?;
            Ok(match o.kind(&KINDS)? {
                "wall" => {
                    o.only(&[])?;
                    Condition::Wall
                }
                "open" => {
                    o.only(&[])?;
                    Condition::Open
                }
                "elevation" => {
                    o.only(&["surface", "interface"])?;
                    Condition::Elevation { surface: o.opt("surface", None)?, interface: o.opt("interface", None)? }
                }
                "discharge" => {
                    o.only(&["layer1", "layer2"])?;
                    Condition::Discharge { layer1: o.opt("layer1", None)?, layer2: o.opt("layer2", None)? }
                }
                // `kind` returns one of KINDS; a type added there without an arm here is
                // refused rather than read as another kind (issue 45).
                other => {
                    return Err(tagged::err(
                        "type",
                        format!("unknown type {other:?}, expected one of: {}", KINDS.join(", ")),
                    ))
                }
            })
        };
        parse().map_err(<D::Error as serde::de::Error>::custom)
    }
}

impl<'de> Deserialize<'de> for Forcing {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let parse = || -> Result<Forcing, String> {
            if let Some(x) = v.as_f64() {
                return Ok(Forcing::Constant(x));
            }
            let what = "a number, tides ({\"mean\", \"tides\": [...]}) or a file ({\"file\": \"series.csv\"})";
            let o = tagged::Obj::new(&v, what)?;
            let map = v.as_object().expect("an object");
            if map.contains_key("file") {
                o.only(&["file"])?;
                Ok(Forcing::File { file: o.req("file")? })
            } else if map.contains_key("tides") {
                o.only(&["mean", "tides"])?;
                Ok(Forcing::Tides { mean: o.opt("mean", 0.0)?, tides: o.req("tides")? })
            } else {
                Err(tagged::err("", format!("expected {what}, found {v}")))
            }
        };
        parse().map_err(<D::Error as serde::de::Error>::custom)
    }
}
