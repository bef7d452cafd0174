//! The part of TOML (v1.0.0) that torchtitan's `train_configs/*.toml` are
//! written in, read into the same flat entries as a YAML config
//! (`parallelism.tensor_parallel_degree`, with its line): `[table]` and
//! `[a.b]` headers (`[[a]]` as `a[]`), `key = value` with dotted keys,
//! basic and literal strings (also multi-line), integers, floats,
//! booleans and dates as written, arrays (over several lines too; an
//! item that is an array or an inline table is kept as its text), inline
//! tables flattened into their keys, and `#` comments. Anything else is
//! refused with its line, never guessed at. One pass over the bytes:
//! linear in the text, nesting at most [`MAX_DEPTH`] deep.

use super::yaml::{Entry, Value};
use crate::clip::{clip, QUOTE};

/// Arrays and inline tables nested deeper than this are refused (a
/// config nests two at most).
const MAX_DEPTH: usize = 16;

/// The first table a text's first setting line opens (`[job]`: `job`),
/// if that line is a TOML table header: what tells a TOML paste from the
/// other formats, which never start so.
pub fn first_table(text: &str) -> Option<&str> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))?;
    let inner = line
        .strip_prefix("[[")
        .and_then(|l| l.strip_suffix("]]"))
        .or_else(|| line.strip_prefix('[').and_then(|l| l.strip_suffix(']')))?
        .trim();
    let bare = |k: &str| {
        !k.is_empty()
            && k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    inner
        .split('.')
        .map(str::trim)
        .all(bare)
        .then(|| inner.split('.').next().map_or(inner, str::trim))
}

/// Reads `text` as TOML into flat entries, in the order written.
pub fn read(text: &str) -> Result<Vec<Entry>, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
        line: 1,
        out: Vec::new(),
    };
    let mut table = String::new();
    loop {
        p.skip_blank(true);
        let Some(b) = p.peek() else {
            return Ok(p.out);
        };
        if b == b'[' {
            table = p.header()?;
        } else {
            let line = p.line;
            let key = p.key()?;
            p.skip_blank(false);
            p.expect(b'=', "`=` after the key")?;
            p.skip_blank(false);
            let path = join(&table, &key);
            p.value(path, line, 0)?;
        }
        p.end_of_line()?;
    }
}

fn join(table: &str, key: &str) -> String {
    if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    }
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    line: usize,
    out: Vec<Entry>,
}

/// What one value is: a scalar's text or an array's items' texts.
enum Parsed {
    Scalar(String),
    List(Vec<String>),
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn at(&self, lit: &str) -> bool {
        self.s[self.i..].starts_with(lit.as_bytes())
    }

    fn err(&self, what: &str) -> String {
        format!("line {}: {what}", self.line)
    }

    /// The rest of the current line, quoted in a message.
    fn here(&self) -> String {
        let rest = self.text.get(self.i..).unwrap_or("");
        clip(rest.lines().next().unwrap_or(""), QUOTE)
    }

    fn expect(&mut self, b: u8, what: &str) -> Result<(), String> {
        if self.peek() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(&format!("{what} expected at `{}`", self.here())))
        }
    }

    /// Spaces, tabs and comments; newlines too when `newlines`.
    fn skip_blank(&mut self, newlines: bool) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'\n' if newlines => {
                    self.i += 1;
                    self.line += 1;
                }
                b'#' => {
                    while self.peek().is_some_and(|b| b != b'\n') {
                        self.i += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// After a header or a key's value: nothing but a comment to the line's end.
    fn end_of_line(&mut self) -> Result<(), String> {
        self.skip_blank(false);
        match self.peek() {
            None => Ok(()),
            Some(b'\n') => {
                self.i += 1;
                self.line += 1;
                Ok(())
            }
            Some(_) => Err(self.err(&format!(
                "`{}` after a value (one `key = value` a line)",
                self.here()
            ))),
        }
    }

    /// `[a.b]` (the table `a.b`) or `[[a]]` (`a[]`, an array of tables).
    fn header(&mut self) -> Result<String, String> {
        let array = self.at("[[");
        self.i += if array { 2 } else { 1 };
        self.skip_blank(false);
        let key = self.key()?;
        self.skip_blank(false);
        let close = if array { "]]" } else { "]" };
        if !self.at(close) {
            return Err(self.err(&format!("`{close}` expected at `{}`", self.here())));
        }
        self.i += close.len();
        Ok(if array { format!("{key}[]") } else { key })
    }

    /// A dotted key: bare (`a-z A-Z 0-9 _ -`) or quoted parts.
    fn key(&mut self) -> Result<String, String> {
        let mut parts: Vec<String> = Vec::new();
        loop {
            self.skip_blank(false);
            let part = match self.peek() {
                Some(b'"') => self.basic_string()?,
                Some(b'\'') => self.literal_string()?,
                _ => {
                    let start = self.i;
                    while self
                        .peek()
                        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                    {
                        self.i += 1;
                    }
                    if start == self.i {
                        return Err(self.err(&format!("a key expected at `{}`", self.here())));
                    }
                    self.text[start..self.i].to_string()
                }
            };
            parts.push(part);
            self.skip_blank(false);
            if self.peek() == Some(b'.') {
                self.i += 1;
            } else {
                return Ok(parts.join("."));
            }
        }
    }

    /// A value after `path =`: its entry, or an inline table's entries.
    fn value(&mut self, path: String, line: usize, depth: usize) -> Result<(), String> {
        if self.peek() == Some(b'{') {
            return self.inline_table(&path, depth + 1);
        }
        let value = match self.parsed(depth)? {
            Parsed::Scalar(s) => Value::Scalar(s),
            Parsed::List(items) => Value::List(items),
        };
        self.out.push(Entry { path, value, line });
        Ok(())
    }

    fn parsed(&mut self, depth: usize) -> Result<Parsed, String> {
        match self.peek() {
            Some(b'[') => self.array(depth + 1).map(Parsed::List),
            Some(b'"') if self.at("\"\"\"") => self.multiline("\"\"\"").map(Parsed::Scalar),
            Some(b'\'') if self.at("'''") => self.multiline("'''").map(Parsed::Scalar),
            Some(b'"') => self.basic_string().map(Parsed::Scalar),
            Some(b'\'') => self.literal_string().map(Parsed::Scalar),
            Some(b'{') => Err(self.err("an inline table where a value is read")),
            _ => self.bare().map(Parsed::Scalar),
        }
    }

    /// `{ k = v, ... }`: each `k` an entry under `path`.
    fn inline_table(&mut self, path: &str, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested deeper than a config is"));
        }
        self.i += 1;
        self.skip_blank(false);
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            let line = self.line;
            let key = self.key()?;
            self.skip_blank(false);
            self.expect(b'=', "`=` after the key")?;
            self.skip_blank(false);
            self.value(join(path, &key), line, depth)?;
            self.skip_blank(false);
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_blank(false);
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(self.err(&format!("`,` or `}}` expected at `{}`", self.here()))),
            }
        }
    }

    /// `[a, "b", [c]]` over any lines: each item's text (a nested array
    /// or an inline table as written, its strings unquoted).
    fn array(&mut self, depth: usize) -> Result<Vec<String>, String> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested deeper than a config is"));
        }
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.skip_blank(true);
            if self.peek() == Some(b']') {
                self.i += 1;
                return Ok(items);
            }
            let item = if self.peek() == Some(b'{') {
                let start = self.out.len();
                self.inline_table("", depth + 1)?;
                let kv: Vec<String> = self
                    .out
                    .drain(start..)
                    .map(|e| format!("{}={}", e.path, e.value.text()))
                    .collect();
                format!("{{{}}}", kv.join(","))
            } else {
                match self.parsed(depth)? {
                    Parsed::Scalar(s) => s,
                    Parsed::List(l) => format!("[{}]", l.join(",")),
                }
            };
            items.push(item);
            self.skip_blank(true);
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {}
                _ => return Err(self.err(&format!("`,` or `]` expected at `{}`", self.here()))),
            }
        }
    }

    /// `"..."` on one line, its escapes decoded.
    fn basic_string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while self
                .peek()
                .is_some_and(|b| b != b'"' && b != b'\\' && b != b'\n')
            {
                self.i += 1;
            }
            out.push_str(&self.text[start..self.i]);
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => out.push(self.escape()?),
                _ => return Err(self.err("a string not closed on its line")),
            }
        }
    }

    /// The escape at `\`: one character.
    fn escape(&mut self) -> Result<char, String> {
        self.i += 1;
        let c = match self.peek() {
            Some(b'b') => '\u{8}',
            Some(b't') => '\t',
            Some(b'n') => '\n',
            Some(b'f') => '\u{c}',
            Some(b'r') => '\r',
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(u @ (b'u' | b'U')) => {
                let n = if u == b'u' { 4 } else { 8 };
                let hex = self.text.get(self.i + 1..self.i + 1 + n).unwrap_or("");
                let c = u32::from_str_radix(hex, 16)
                    .ok()
                    .filter(|_| hex.len() == n && hex.bytes().all(|b| b.is_ascii_hexdigit()))
                    .and_then(char::from_u32)
                    .ok_or_else(|| self.err("a `\\u` escape that is no character"))?;
                self.i += n;
                c
            }
            _ => return Err(self.err(&format!("an escape TOML has not: `{}`", self.here()))),
        };
        self.i += 1;
        Ok(c)
    }

    /// `'...'` on one line, as written.
    fn literal_string(&mut self) -> Result<String, String> {
        self.i += 1;
        let start = self.i;
        while self.peek().is_some_and(|b| b != b'\'' && b != b'\n') {
            self.i += 1;
        }
        if self.peek() != Some(b'\'') {
            return Err(self.err("a string not closed on its line"));
        }
        let s = self.text[start..self.i].to_string();
        self.i += 1;
        Ok(s)
    }

    /// `"""..."""` or `'''...'''` over any lines, as written (a newline
    /// right after the opening dropped; escapes kept as text).
    fn multiline(&mut self, delim: &str) -> Result<String, String> {
        let opened = self.line;
        self.i += delim.len();
        if self.at("\r\n") {
            self.i += 2;
            self.line += 1;
        } else if self.at("\n") {
            self.i += 1;
            self.line += 1;
        }
        let start = self.i;
        let escapes = delim.starts_with('"');
        while !self.at(delim) {
            let Some(b) = self.peek() else {
                return Err(format!("line {opened}: a multi-line string never closed"));
            };
            // A `\` in a basic string escapes the byte after it.
            let step = if b == b'\\' && escapes { 2 } else { 1 };
            let end = (self.i + step).min(self.s.len());
            self.line += self.s[self.i..end].iter().filter(|&&c| c == b'\n').count();
            self.i = end;
        }
        let s = self.text.get(start..self.i).unwrap_or("").to_string();
        self.i += delim.len();
        Ok(s)
    }

    /// A number, a boolean or a date, as written (an integer without its
    /// `_` separators and leading `+`).
    fn bare(&mut self) -> Result<String, String> {
        let start = self.i;
        while self.peek().is_some_and(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.' | b'_' | b':')
        }) {
            self.i += 1;
        }
        let token = &self.text[start..self.i];
        let word = matches!(
            token,
            "true" | "false" | "inf" | "nan" | "+inf" | "-inf" | "+nan" | "-nan"
        );
        let number = token
            .trim_start_matches(['+', '-'])
            .starts_with(|c: char| c.is_ascii_digit());
        if !word && !number {
            self.i = start;
            return Err(self.err(&format!(
                "`{}` is not a TOML value (a string is quoted)",
                self.here()
            )));
        }
        let digits = token.trim_start_matches(['+', '-']);
        if digits.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
            let sign = if token.starts_with('-') { "-" } else { "" };
            return Ok(format!("{sign}{}", digits.replace('_', "")));
        }
        Ok(token.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::{first_table, read, Value};

    fn flat(text: &str) -> Vec<(String, String, usize)> {
        read(text)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"))
            .into_iter()
            .map(|e| {
                let v = match e.value {
                    Value::Scalar(s) => s,
                    Value::List(l) => format!("[{}]", l.join("|")),
                };
                (e.path, v, e.line)
            })
            .collect()
    }

    /// Each construct of the subset (written here in the style of
    /// torchtitan v0.2.2's `train_configs/*.toml`) and its flat entries.
    #[test]
    fn reads_the_subset_configs_use() {
        // (path, value, line) of each entry.
        type Flat<'a> = &'a [(&'a str, &'a str, usize)];
        let cases: &[(&str, Flat)] = &[
            (
                "# NOTE: a preset\n\n[job]\ndump_folder = \"./outputs\"\n[model]\nname = \"llama3\"  # c\nflavor = '8B'\n",
                &[("job.dump_folder", "./outputs", 4), ("model.name", "llama3", 6), ("model.flavor", "8B", 7)],
            ),
            (
                "[training]\nlocal_batch_size=1\nlr = 3e-4\nsteps = 1_000\nneg = -1\nplus = +8\nenable=false\n",
                &[
                    ("training.local_batch_size", "1", 2),
                    ("training.lr", "3e-4", 3),
                    ("training.steps", "1000", 4),
                    ("training.neg", "-1", 5),
                    ("training.plus", "8", 6),
                    ("training.enable", "false", 7),
                ],
            ),
            (
                "[quantize.linear.float8]\nfilter_fqns = [\"output\"]\n[compile]\ncomponents = [\n  \"model\",  # the model\n  'loss',\n]\n",
                &[
                    ("quantize.linear.float8.filter_fqns", "[output]", 2),
                    ("compile.components", "[model|loss]", 4),
                ],
            ),
            (
                "[parallelism]\nmodule_fqns_per_model_part = [[\"tok_embeddings\", \"layers.0\"], [\"layers.1\"]]\nempty = []\n",
                &[
                    ("parallelism.module_fqns_per_model_part", "[[tok_embeddings,layers.0]|[layers.1]]", 2),
                    ("parallelism.empty", "[]", 3),
                ],
            ),
            (
                "a.b = 1\n\"quoted key\" = \"a \\\"q\\\" \\u00e9\\n\"\n[t]\nx = { y = 2, z.w = 'v' }\nd = 1979-05-27T07:32:00Z\n[[arr]]\nk = true\n",
                &[
                    ("a.b", "1", 1),
                    ("quoted key", "a \"q\" é\n", 2),
                    ("t.x.y", "2", 4),
                    ("t.x.z.w", "v", 4),
                    ("t.d", "1979-05-27T07:32:00Z", 5),
                    ("arr[].k", "true", 7),
                ],
            ),
            (
                "[job]\ndescription = \"\"\"\nLlama 3 8B\ntraining\"\"\"\nafter = 1\nlit = '''a\\b'''\n",
                &[
                    ("job.description", "Llama 3 8B\ntraining", 2),
                    ("job.after", "1", 5),
                    ("job.lit", "a\\b", 6),
                ],
            ),
        ];
        for (text, want) in cases {
            let want: Vec<(String, String, usize)> = want
                .iter()
                .map(|(p, v, l)| (p.to_string(), v.to_string(), *l))
                .collect();
            assert_eq!(flat(text), want, "{text:?}");
        }
    }

    /// Each thing outside the subset is refused with its line.
    #[test]
    fn refuses_with_the_line() {
        for (text, msg) in [
            (
                "[a]\nname = llama3\n",
                "line 2: `llama3` is not a TOML value (a string is quoted)",
            ),
            (
                "[a]\nx = ./out # c\n",
                "line 2: `./out # c` is not a TOML value (a string is quoted)",
            ),
            (
                "[a]\nx = 1 2\n",
                "line 2: `2` after a value (one `key = value` a line)",
            ),
            ("[a\n", "line 1: `]` expected at ``"),
            (
                "[a]\nx = \"open\n",
                "line 2: a string not closed on its line",
            ),
            ("x = [1, 2\n", "line 2: `,` or `]` expected at ``"),
            ("x = \"\\q\"\n", "line 1: an escape TOML has not: `q\"`"),
            (
                "x = \"\\u12\"\n",
                "line 1: a `\\u` escape that is no character",
            ),
            (
                "x = \"\"\"\nnever\n",
                "line 1: a multi-line string never closed",
            ),
            ("= 1\n", "line 1: a key expected at `= 1`"),
            ("x 1\n", "line 1: `=` after the key expected at `1`"),
            (
                "x = {a = 1 b = 2}\n",
                "line 1: `,` or `}` expected at `b = 2}`",
            ),
            (
                "x = \n",
                "line 1: `` is not a TOML value (a string is quoted)",
            ),
        ] {
            assert_eq!(read(text), Err(msg.to_string()), "{text:?}");
        }
        let deep = format!("x = {}{}\n", "[".repeat(40), "]".repeat(40));
        assert_eq!(
            read(&deep),
            Err("line 1: nested deeper than a config is".into())
        );
        let deep_tables = format!("x = {}\n", "{a = ".repeat(40));
        assert_eq!(
            read(&deep_tables),
            Err("line 1: nested deeper than a config is".into())
        );
    }

    #[test]
    fn a_first_table_header_tells_toml() {
        for (text, table) in [
            ("# preset\n\n[job]\nx = 1\n", Some("job")),
            ("[quantize.linear.float8]\n", Some("quantize")),
            ("[[ arr ]]\n", Some("arr")),
            ("[2025-01-01 10:00:00] INFO start\n", None),
            ("[INFO] x\n", None),
            ("model_name_or_path: x\n[job]\n", None),
            ("[a, b]\n", None),
            ("", None),
        ] {
            assert_eq!(first_table(text), table, "{text:?}");
        }
    }

    /// Any text: read or refused, never a panic; long inputs in one pass.
    #[test]
    fn hostile_texts_never_panic() {
        let texts = [
            "\"".to_string(),
            "'".to_string(),
            "x = \"\\u".to_string(),
            "x = \"\\U0011FFFF\"".to_string(),
            "x = '''".to_string(),
            "x = \"\"\"\\".to_string(),
            "[[".to_string(),
            "x = [".to_string(),
            "x = {".to_string(),
            "x = é".to_string(),
            "é = 1".to_string(),
            "x = \"é\\".to_string(),
            format!("x = [{}]", "1,".repeat(200_000)),
            "[t]\nk = 1\n".repeat(50_000),
        ];
        for t in &texts {
            let _ = read(t);
        }
    }
}
