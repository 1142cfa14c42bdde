//! The user guide (docs/, an mdBook) stays whole and complete:
//! - every key of `pycno schema` is documented in the scenario reference chapter;
//! - every relative link and `#anchor` in docs/src resolves (mdbook itself checks only that
//!   the chapters of SUMMARY.md and the `{{#include}}`d files exist), and every chapter
//!   file is in SUMMARY.md.
//!
//! CI also builds the book with mdbook (`.ci/run`).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

mod common;
use common::cli::{expect_ok, pycno_np};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every property name anywhere in a JSON Schema (its `$defs` included).
fn property_names(v: &serde_json::Value, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(serde_json::Value::Object(props)) = m.get("properties") {
                out.extend(props.keys().cloned());
            }
            m.values().for_each(|x| property_names(x, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| property_names(x, out)),
        _ => {}
    }
}

/// The keys the schema names that `chapter` does not mention as code (`` `key` ``).
fn undocumented(schema: &serde_json::Value, chapter: &str) -> Vec<String> {
    let mut keys = BTreeSet::new();
    property_names(schema, &mut keys);
    assert!(keys.len() > 40, "the schema's keys were not found: {keys:?}");
    keys.into_iter().filter(|k| !chapter.contains(&format!("`{k}`"))).collect()
}

#[test]
fn every_key_of_pycno_schema_is_in_the_scenario_reference() {
    let o = expect_ok(pycno_np(0, None, &["schema"], &[]));
    let schema: serde_json::Value = serde_json::from_slice(&o.stdout).expect("pycno schema prints JSON");
    let chapter = read(&src().join("scenario.md"));
    let missing = undocumented(&schema, &chapter);
    assert!(missing.is_empty(), "keys of `pycno schema` not documented in docs/src/scenario.md: {missing:?}");
    // The check itself can fail: a chapter without one of the keys is caught.
    let without = chapter.replace("`manning`", "manning");
    assert_eq!(undocumented(&schema, &without), ["manning"]);
}

/// The text of a chapter with its `{{#include FILE}}` lines replaced by the file (relative
/// to the chapter), as mdbook renders it.
fn expanded(file: &Path) -> String {
    let mut out = String::new();
    for line in read(file).lines() {
        match line.trim().strip_prefix("{{#include ").and_then(|l| l.strip_suffix("}}")) {
            Some(inc) => out.push_str(&expanded(&file.parent().unwrap().join(inc.trim()))),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The lines of `text` outside fenced code blocks, with inline code spans removed (links
/// and headings there are not links and headings).
fn prose(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push(String::new());
            continue;
        }
        if fenced {
            out.push(String::new());
            continue;
        }
        let mut kept = String::new();
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                kept.push(c);
            }
        }
        out.push(kept);
    }
    out
}

/// mdbook's id of a heading: its text without markup, lower case, spaces as `-`, other
/// punctuation dropped (`normalize_id`); a repeated id gets `-1`, `-2`, ...
fn heading_ids(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut ids = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        // Link text stays, the target goes: [text](url) -> text.
        let mut plain = String::new();
        let mut rest = title;
        while let Some(open) = rest.find("](") {
            let close = rest[open..].find(')').map(|c| open + c + 1).unwrap_or(rest.len());
            plain.push_str(&rest[..open]);
            rest = &rest[close..];
        }
        plain.push_str(rest);
        let id: String = plain
            .chars()
            .filter_map(|c| {
                if c.is_alphanumeric() || c == '_' || c == '-' {
                    Some(c.to_ascii_lowercase())
                } else if c.is_whitespace() {
                    Some('-')
                } else {
                    None
                }
            })
            .collect();
        let n = seen.entry(id.clone()).or_insert(0);
        ids.insert(if *n == 0 { id.clone() } else { format!("{id}-{n}") });
        *n += 1;
    }
    ids
}

/// The targets of the inline links and images `[text](target)` in `line`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(k) = rest.find("](") {
        rest = &rest[k + 2..];
        let end = rest.find(')').unwrap_or(rest.len());
        // `[text](target "title")`: the target is the first word.
        out.push(rest[..end].split_whitespace().next().unwrap_or("").to_string());
        rest = &rest[end..];
    }
    out
}

/// Every broken relative link or anchor in the markdown files under `root`, as
/// "file:line: target: why".
fn broken_links(root: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                files.push(p);
            }
        }
    }
    files.sort();
    let root = root.canonicalize().unwrap();
    let mut broken = Vec::new();
    for file in &files {
        let text = expanded(file);
        for (n, line) in prose(&text).iter().enumerate() {
            for target in link_targets(line) {
                let at = format!("{}:{}: {target}", file.strip_prefix(&root).unwrap_or(file).display(), n + 1);
                if target.is_empty() {
                    broken.push(format!("{at}: empty link"));
                    continue;
                }
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let dest = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
                let Ok(dest) = dest.canonicalize() else {
                    broken.push(format!("{at}: no such file"));
                    continue;
                };
                // The book holds docs/src only: a link out of it is broken in the book.
                if !dest.starts_with(&root) {
                    broken.push(format!("{at}: outside docs/src (name the file as `code` instead)"));
                    continue;
                }
                if let Some(anchor) = anchor {
                    if dest.extension().is_some_and(|x| x == "md") && !heading_ids(&expanded(&dest)).contains(anchor) {
                        broken.push(format!("{at}: no heading with the id {anchor:?}"));
                    }
                }
            }
        }
    }
    broken
}

#[test]
fn every_link_and_anchor_in_the_guide_resolves() {
    let broken = broken_links(&src());
    assert!(broken.is_empty(), "broken links in docs/src:\n{}", broken.join("\n"));
}

#[test]
fn the_link_check_finds_broken_links_and_anchors() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("src");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(d.path().join("x.md"), "# Outside the book\n").unwrap();
    std::fs::write(
        root.join("a.md"),
        "# A chapter\n\n## stats.json\n\n## MPI: several ranks\n\n\
         [ok](b.md) [ok](#statsjson) [ok](b.md#the-end) [ok](#mpi-several-ranks) [web](https://example.org)\n\
         `[code](nowhere.md)`\n\n```sh\n[fenced](nowhere.md)\n```\n\
         [gone](c.md) [no anchor](b.md#nope) [out](../x.md)\n",
    )
    .unwrap();
    std::fs::write(root.join("b.md"), "# B\n\n## The `end`\n").unwrap();
    let broken = broken_links(&root);
    let why: Vec<&str> = broken.iter().map(|b| b.rsplit(": ").next().unwrap()).collect();
    assert_eq!(broken.len(), 3, "{broken:#?}");
    assert_eq!(why[0], "no such file", "{broken:#?}");
    assert!(why[1].starts_with("no heading"), "{broken:#?}");
    assert!(why[2].starts_with("outside docs/src"), "{broken:#?}");
}

#[test]
fn every_chapter_is_in_the_summary_and_every_entry_exists() {
    let summary = read(&src().join("SUMMARY.md"));
    let listed: BTreeSet<String> = prose(&summary).iter().flat_map(|l| link_targets(l)).collect();
    for entry in &listed {
        assert!(src().join(entry).is_file(), "SUMMARY.md lists {entry}, which does not exist");
    }
    for e in std::fs::read_dir(src()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "SUMMARY.md" {
            assert!(listed.contains(&name), "docs/src/{name} is not in SUMMARY.md, so the book leaves it out");
        }
    }
}
