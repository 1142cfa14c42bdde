//! `pycno schema`: the scenario format as a JSON Schema (draft 2020-12), derived from the
//! very types the scenario is read into (`schemars` follows their serde attributes), so it
//! cannot drift from what `pycno run` accepts. Editors use it for completion and checks:
//! `pycno schema > pycno.schema.json`, then `"$schema": "pycno.schema.json"` in a scenario.
//! `tests/cli.rs` validates every example against it with the `jsonschema` Python package,
//! and a wrong scenario must fail.

use crate::scenario::Scenario;

pub fn scenario_schema() -> String {
    let mut schema = serde_json::to_value(schemars::schema_for!(Scenario)).expect("a schema is JSON");
    schema["title"] = "pycno scenario".into();
    serde_json::to_string_pretty(&schema).expect("a schema is JSON")
}
