//! The part of YAML that training configs are written in (TRL's and
//! transformers' `--config` files, Axolotl's, LLaMA-Factory's, accelerate's
//! `default_config.yaml`): block maps nested by indentation, plain and
//! quoted scalars, a scalar on the line after its key, block lists
//! (`- item`, also lists of maps), flow lists `[a, b]`, `#` comments,
//! `---` at the top, and block scalars (`|`, `>`) skipped as text.
//! Anchors, aliases, tags and flow maps are refused with the line, never
//! guessed at. A JSON config (DeepSpeed's `ds_config.json`) is read by
//! `serde_json` into the same flat entries. Linear in the text.

use crate::clip::{clip, QUOTE};
use std::collections::HashMap;

/// One value of a config, by its dotted path (`zero_optimization.stage`;
/// a list of maps' keys are under `name[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub value: Value,
    /// The line it is on (1-based; 0 in a JSON text).
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A scalar as written, unquoted (`null`/`~`/nothing: empty).
    Scalar(String),
    List(Vec<String>),
}

impl Value {
    /// The scalar, or the list joined by commas.
    pub fn text(&self) -> String {
        match self {
            Value::Scalar(s) => s.clone(),
            Value::List(items) => items.join(","),
        }
    }
}

struct Frame {
    indent: usize,
    path: String,
}

/// Reads `text` as a YAML block map.
pub fn read(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    // Each list's entry, by its path: an item finds it at once.
    let mut lists: HashMap<String, usize> = HashMap::new();
    // A key with nothing after its colon: (its entry, its indent).
    let mut open: Option<(usize, usize)> = None;
    // A block scalar's key indent: lines deeper than it are its text.
    let mut block: Option<usize> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let content = strip_comment(raw);
        let trimmed = content.trim();
        if trimmed.is_empty() {
            continue;
        }
        let indent = content.len() - content.trim_start_matches(' ').len();
        if let Some(b) = block {
            if indent > b {
                continue;
            }
            block = None;
        }
        if content[indent..].starts_with('\t') {
            return Err(format!(
                "line {line}: a tab in the indentation (YAML indents with spaces)"
            ));
        }
        if line_is_marker(trimmed, &entries) {
            continue;
        }
        if trimmed == "..." {
            break;
        }
        if let Some(item) = trimmed
            .strip_prefix("- ")
            .or((trimmed == "-").then_some(""))
        {
            open = None;
            while stack.last().is_some_and(|f| f.indent > indent) {
                stack.pop();
            }
            let Some(owner) = stack.last().map(|f| f.path.clone()) else {
                return Err(format!(
                    "line {line}: a list at the top level, not a config's settings"
                ));
            };
            let at = (&mut entries, &mut lists);
            list_item(item.trim(), &owner, indent, line, at, &mut stack)?;
            continue;
        }
        let Some((key, value)) = split_key(trimmed) else {
            // A plain scalar on the lines after its key.
            if let Some((i, key_indent)) = open {
                if indent > key_indent {
                    if let Some(Entry {
                        value: Value::Scalar(s),
                        ..
                    }) = entries.get_mut(i)
                    {
                        if !s.is_empty() {
                            s.push(' ');
                        }
                        s.push_str(&unquote(trimmed));
                        continue;
                    }
                }
            }
            return Err(format!(
                "line {line}: `{}` is not `key: value`",
                clip(trimmed, QUOTE)
            ));
        };
        while stack.last().is_some_and(|f| f.indent >= indent) {
            stack.pop();
        }
        let path = match stack.last() {
            Some(f) => format!("{}.{key}", f.path),
            None => key.to_string(),
        };
        open = None;
        let parsed = scalar_or_list(value, line)?;
        match parsed {
            Parsed::Open => {
                stack.push(Frame {
                    indent,
                    path: path.clone(),
                });
                open = Some((entries.len(), indent));
            }
            Parsed::Block => block = Some(indent),
            Parsed::Value(_) => {}
        }
        entries.push(parsed.entry(path, line));
    }
    // Keys that opened a nested map are not settings themselves.
    let parents: std::collections::HashSet<String> = entries
        .iter()
        .filter_map(|e| {
            e.path
                .rsplit_once('.')
                .map(|(p, _)| p.trim_end_matches("[]").to_string())
        })
        .collect();
    entries.retain(|e| !(e.value == Value::Scalar(String::new()) && parents.contains(&e.path)));
    Ok(entries)
}

/// `---` before any entry (a document's start).
fn line_is_marker(trimmed: &str, entries: &[Entry]) -> bool {
    trimmed == "---" && entries.is_empty()
}

/// One `- item` under `owner`: a scalar joins its list; `k: v` starts a map.
fn list_item(
    item: &str,
    owner: &str,
    indent: usize,
    line: usize,
    (entries, lists): (&mut Vec<Entry>, &mut HashMap<String, usize>),
    stack: &mut Vec<Frame>,
) -> Result<(), String> {
    if let Some((key, value)) = split_key(item) {
        let base = format!("{owner}[]");
        stack.push(Frame {
            indent: indent + 1,
            path: base.clone(),
        });
        let path = format!("{base}.{key}");
        let parsed = scalar_or_list(value, line)?;
        if matches!(parsed, Parsed::Open) {
            stack.push(Frame {
                indent: indent + 2,
                path: path.clone(),
            });
        }
        entries.push(parsed.entry(path, line));
        return Ok(());
    }
    refuse_special(item, line)?;
    let value = unquote(item);
    // The key that opened the list is, the first time, its last entry of
    // that path; then the list's entry is remembered.
    let at = match lists.get(owner) {
        Some(&i) => Some(i),
        None => entries.iter().rposition(|e| e.path == owner),
    };
    let at = at.unwrap_or_else(|| {
        entries.push(Entry {
            path: owner.to_string(),
            value: Value::Scalar(String::new()),
            line,
        });
        entries.len() - 1
    });
    lists.insert(owner.to_string(), at);
    match entries.get_mut(at) {
        Some(e) => match &mut e.value {
            Value::List(items) => items.push(value),
            Value::Scalar(s) if s.is_empty() => e.value = Value::List(vec![value]),
            Value::Scalar(_) => {
                return Err(format!(
                    "line {line}: a list item under `{}`, which has a value",
                    clip(owner, QUOTE)
                ))
            }
        },
        None => entries.push(Entry {
            path: owner.to_string(),
            value: Value::List(vec![value]),
            line,
        }),
    }
    Ok(())
}

enum Parsed {
    /// Nothing after the colon: a nested map, a list or a scalar follows.
    Open,
    /// `|` or `>`: a block of text follows.
    Block,
    Value(Value),
}

impl Parsed {
    /// Its entry at `path`: an open key is an empty scalar until what
    /// follows fills it, a block of text stands as `(text)`.
    fn entry(self, path: String, line: usize) -> Entry {
        let value = match self {
            Parsed::Open => Value::Scalar(String::new()),
            Parsed::Block => Value::Scalar("(text)".into()),
            Parsed::Value(v) => v,
        };
        Entry { path, value, line }
    }
}

fn scalar_or_list(value: &str, line: usize) -> Result<Parsed, String> {
    let v = value.trim();
    if v.is_empty() {
        return Ok(Parsed::Open);
    }
    if v.starts_with('|') || v.starts_with('>') {
        return Ok(Parsed::Block);
    }
    refuse_special(v, line)?;
    if let Some(inner) = v.strip_prefix('[') {
        let Some(inner) = inner.strip_suffix(']') else {
            return Err(format!(
                "line {line}: a flow list `[` not closed on its line"
            ));
        };
        if inner.contains(['[', '{']) {
            return Err(format!("line {line}: nested flow collections are not read"));
        }
        let items = inner
            .split(',')
            .map(|s| unquote(s.trim()))
            .filter(|s| !s.is_empty())
            .collect();
        return Ok(Parsed::Value(Value::List(items)));
    }
    if v.starts_with('{') {
        if v == "{}" {
            return Ok(Parsed::Value(Value::Scalar(String::new())));
        }
        return Err(format!(
            "line {line}: flow maps `{{...}}` are not read: write the map as indented lines"
        ));
    }
    let s = unquote(v);
    Ok(Parsed::Value(Value::Scalar(if s == "null" || s == "~" {
        String::new()
    } else {
        s
    })))
}

/// Anchors, aliases and tags: refused rather than half-read.
fn refuse_special(v: &str, line: usize) -> Result<(), String> {
    match v.chars().next() {
        Some('&' | '*') => Err(format!(
            "line {line}: YAML anchors and aliases (`&`, `*`) are not read"
        )),
        Some('!') => Err(format!("line {line}: YAML tags (`!`) are not read")),
        Some('%' | '@' | '`') => Err(format!(
            "line {line}: `{}` is not a plain YAML value",
            clip(v, QUOTE)
        )),
        _ => Ok(()),
    }
}

/// `key: value` or `key:` (the key unquoted), outside quotes.
fn split_key(s: &str) -> Option<(String, &str)> {
    let (key, rest) = if let Some(q @ ('"' | '\'')) = s.chars().next() {
        let end = s[1..].find(q)? + 1;
        let rest = s[end + 1..].strip_prefix(':')?;
        (s[1..end].to_string(), rest)
    } else {
        let i = s
            .find(": ")
            .or_else(|| s.ends_with(':').then(|| s.len() - 1))?;
        (s[..i].trim().to_string(), &s[i + 1..])
    };
    if key.is_empty() || key.starts_with(['[', '{', '&', '*', '!']) {
        return None;
    }
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, rest))
}

/// A line without its comment (`#` at its start or after a space, outside
/// quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '#' && prev.is_whitespace() => return &line[..i],
            None if (c == '"' || c == '\'')
                && (prev.is_whitespace() || prev == ':' || prev == '[' || prev == ',') =>
            {
                quote = Some(c)
            }
            None => {}
        }
        prev = c;
    }
    line.trim_end_matches('\r')
}

fn unquote(s: &str) -> String {
    if s.len() >= 2 {
        if let Some(inner) = s.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
            return inner.replace("''", "'");
        }
        if let Some(inner) = s.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
            return inner.replace("\\\"", "\"").replace("\\\\", "\\");
        }
    }
    s.to_string()
}

/// A JSON config's values as entries (objects by dotted path, lists of
/// scalars as lists, lists of objects under `name[]`).
pub fn read_json(text: &str) -> Result<Vec<Entry>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let serde_json::Value::Object(map) = v else {
        return Err("a JSON config is an object `{...}`".into());
    };
    let mut out = Vec::new();
    for (k, v) in map {
        json_entries(k, v, &mut out);
    }
    Ok(out)
}

fn json_entries(path: String, v: serde_json::Value, out: &mut Vec<Entry>) {
    use serde_json::Value as J;
    let scalar = |v: &J| match v {
        J::Null => Some(String::new()),
        J::Bool(b) => Some(b.to_string()),
        J::Number(n) => Some(n.to_string()),
        J::String(s) => Some(s.clone()),
        J::Array(_) | J::Object(_) => None,
    };
    match v {
        J::Object(map) => {
            for (k, v) in map {
                json_entries(format!("{path}.{k}"), v, out);
            }
        }
        J::Array(items) => {
            let scalars: Option<Vec<String>> = items.iter().map(scalar).collect();
            match scalars {
                Some(list) => out.push(Entry {
                    path,
                    value: Value::List(list),
                    line: 0,
                }),
                None => {
                    for item in items {
                        json_entries(format!("{path}[]"), item, out);
                    }
                }
            }
        }
        other => {
            let s = scalar(&other).unwrap_or_default();
            out.push(Entry {
                path,
                value: Value::Scalar(s),
                line: 0,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{read, Value};

    fn flat(text: &str) -> Vec<(String, String)> {
        read(text)
            .expect("the test's YAML reads")
            .into_iter()
            .map(|e| {
                let v = match e.value {
                    Value::Scalar(s) => s,
                    Value::List(l) => format!("[{}]", l.join("|")),
                };
                (e.path, v)
            })
            .collect()
    }

    #[test]
    fn reads_block_maps_lists_and_scalars() {
        let text = "---\n# c\nmodel_name_or_path:\n  Qwen/Qwen2.5-0.5B\nbf16: true # on\nlora_target_modules:\n- q_proj\n- 'v_proj'\nds:\n  zero_optimization:\n    stage: 3\n  x: [a, \"b\"]\ndatasets:\n  - path: foo\n    type: alpaca\nnote: |\n  text: here\n  more\nlast: 'it''s'\n";
        assert_eq!(
            flat(text),
            [
                ("model_name_or_path", "Qwen/Qwen2.5-0.5B"),
                ("bf16", "true"),
                ("lora_target_modules", "[q_proj|v_proj]"),
                ("ds.zero_optimization.stage", "3"),
                ("ds.x", "[a|b]"),
                ("datasets[].path", "foo"),
                ("datasets[].type", "alpaca"),
                ("note", "(text)"),
                ("last", "it's"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }

    #[test]
    fn refuses_what_it_does_not_read() {
        for (text, why) in [
            ("a: &x 1", "anchors"),
            ("a: *x", "aliases"),
            ("a: !!python/object foo", "tags"),
            ("a: {b: 1}", "flow maps"),
            ("- a\n- b", "a list at the top"),
            ("just words", "is not `key: value`"),
            ("a:\n\tb: 1", "tab"),
            ("a: [1, 2", "not closed"),
        ] {
            let e = read(text).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }
}
