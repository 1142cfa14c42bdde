//! Hand-written deserialization for the scenario's tagged sections (`"type": ...`).
//! serde's derived internally tagged and untagged enums buffer their input and lose the
//! path of the field that was wrong; users need `initial.h1_inside: expected f64`, not
//! `initial: invalid type`. Errors travel as `MARK path MARK message` so that
//! [`super::Scenario::from_json`] can join the outer path with the inner one.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub const MARK: char = '\u{1}';

/// An error at `path` (relative to the section being deserialized).
pub fn err(path: &str, msg: impl std::fmt::Display) -> String {
    format!("{MARK}{path}{MARK}{msg}")
}

/// Split an error produced by [`err`] into (relative path, message).
pub fn split(msg: &str) -> Option<(&str, &str)> {
    let rest = msg.strip_prefix(MARK)?;
    let (path, msg) = rest.split_once(MARK)?;
    Some((path, msg))
}

pub fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        // A list index: `bathymetry[1]`, not `bathymetry.[1]`.
        _ if b.starts_with('[') => format!("{a}{b}"),
        _ => format!("{a}.{b}"),
    }
}

pub struct Obj<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    pub fn new(v: &'a Value, what: &str) -> Result<Obj<'a>, String> {
        match v.as_object() {
            Some(map) => Ok(Obj { map }),
            None => Err(err("", format!("expected {what}, found {v}"))),
        }
    }

    /// The `type` key, one of `variants`.
    pub fn kind(&self, variants: &[&str]) -> Result<&'a str, String> {
        let expected = variants.join(", ");
        match self.map.get("type") {
            Some(Value::String(s)) if variants.contains(&s.as_str()) => Ok(s),
            Some(v) => Err(err("type", format!("unknown type {v}, expected one of: {expected}"))),
            None => Err(err("type", format!("missing field `type`, expected one of: {expected}"))),
        }
    }

    /// Reject keys other than `type` and `keys`.
    pub fn only(&self, keys: &[&str]) -> Result<(), String> {
        for k in self.map.keys() {
            if k != "type" && !keys.contains(&k.as_str()) {
                return Err(err(k, format!("unknown field `{k}`, expected one of: {}", keys.join(", "))));
            }
        }
        Ok(())
    }

    pub fn req<T: DeserializeOwned>(&self, key: &str) -> Result<T, String> {
        match self.map.get(key) {
            Some(v) => value(key, v),
            None => Err(err(key, format!("missing field `{key}`"))),
        }
    }

    pub fn opt<T: DeserializeOwned>(&self, key: &str, default: T) -> Result<T, String> {
        match self.map.get(key) {
            Some(v) => value(key, v),
            None => Ok(default),
        }
    }
}

/// Deserialize `v`, found at `key`, keeping the path of any error inside it.
pub fn value<T: DeserializeOwned>(key: &str, v: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let inner = e.path().to_string();
        let inner = if inner == "." { String::new() } else { inner };
        let msg = e.into_inner().to_string();
        match split(&msg) {
            Some((deeper, m)) => err(&join(&join(key, &inner), deeper), m),
            None => err(&join(key, &inner), msg),
        }
    })
}
