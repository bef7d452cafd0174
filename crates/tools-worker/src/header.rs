//! Reading a GGUF file's header from the start of the file, a part at a
//! time: a picked file's slices or a Hub file's range requests (the
//! worker's [`Source`]s), never the whole file. The first read is
//! [`FIRST`] bytes; while the header runs past what was read
//! ([`gguf_reply`] asks for at least so many bytes from the start), the
//! next read goes past what it asks by as much as was read (at least
//! doubling it), so a header of a few MiB takes two to four reads, and
//! no more than the first read or twice the header is read in all. Each read asks only for
//! the bytes not read yet. A header that needs more than [`CAP`] bytes is
//! refused rather than read.
//!
//! Plain Rust over any [`Source`]: tested natively against the core's GGUF
//! fixtures; the worker's sources are browser calls.

use vramfit_core::tools::{gguf_reply, ToolReply};

/// The first read: the headers of small and mid-sized models fit in it
/// (the vocabulary is most of a header: Llama 3's 128,256 tokens and
/// their merges take about 7 MiB, so large vocabularies take a second
/// read).
pub const FIRST: u64 = 1 << 20;

/// The most of a file's start read for its header. Real headers are under
/// 16 MiB (a 256k-token vocabulary with merges); a header asking for more
/// is a damaged or hostile file, and is not read.
pub const CAP: u64 = 64 << 20;

/// Where a file's bytes come from.
pub trait Source {
    /// The file's bytes `from..to`: fewer when the file ends before `to`,
    /// none when it ends at or before `from`. `Err` says why the file could
    /// not be read, naming it: the message shown.
    async fn read(&mut self, from: u64, to: u64) -> Result<Vec<u8>, String>;
}

/// The tools worker's reply for the file `name` (`hf:repo/path` for a Hub
/// file, the file's own name for one picked from disk), read from
/// `source` by parts, the first `first` bytes long ([`FIRST`] in the
/// worker).
pub async fn read_header(source: &mut impl Source, name: &str, first: u64) -> ToolReply {
    let mut have: Vec<u8> = Vec::new();
    let mut want = first.clamp(1, CAP);
    let mut ended = false;
    loop {
        let from = len(&have);
        if from < want && !ended {
            let chunk = match source.read(from, want).await {
                Ok(chunk) => chunk,
                Err(why) => return refused(why),
            };
            let asked = want - from;
            ended = len(&chunk) < asked;
            // A source that sent more than asked (a server ignoring the
            // range's end) is cut to what was asked.
            let take = usize::try_from(asked).map_or(chunk.len(), |a| a.min(chunk.len()));
            have.extend_from_slice(&chunk[..take]);
        }
        let at_least = match gguf_reply(&have, name) {
            Ok(reply) => return reply,
            Err(at_least) => at_least,
        };
        if at_least > CAP {
            return refused(format!(
                "{}: its header would take more than the first {} MiB of the file to read \
                 ({at_least} bytes); vramfit reads no more than that of a file, so it is not \
                 read. Choose the model and the weights' file type by hand instead.",
                quote(name),
                CAP >> 20
            ));
        }
        if ended || at_least <= len(&have) {
            return refused(if have.is_empty() {
                format!("{}: the file is empty.", quote(name))
            } else {
                format!(
                    "{}: the file ends inside its GGUF header (after {} bytes): it is not a \
                     whole GGUF file (an interrupted download?).",
                    quote(name),
                    have.len()
                )
            });
        }
        // At least double, and past what was asked by as much as was read:
        // a long value's length is known at once, and more header follows.
        let read = len(&have);
        want = at_least
            .saturating_add(read)
            .max(read.saturating_mul(2))
            .min(CAP);
    }
}

fn len(bytes: &[u8]) -> u64 {
    u64::try_from(bytes.len()).unwrap_or(u64::MAX)
}

/// A file's name as messages quote it: the core's rule
/// ([`vramfit_core::tools::name_shown`]), whole as the link records it.
pub fn quote(name: &str) -> String {
    vramfit_core::tools::name_shown(name)
}

fn refused(why: String) -> ToolReply {
    ToolReply::Refused {
        why,
        offer_llama: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    /// Runs a future whose every await is ready (the fake sources').
    fn now<T>(f: impl Future<Output = T>) -> T {
        let mut cx = Context::from_waker(Waker::noop());
        match pin!(f).poll(&mut cx) {
            Poll::Ready(v) => v,
            Poll::Pending => panic!("a fake source never waits"),
        }
    }

    /// A file in memory that records every read asked of it.
    struct Fake {
        file: Vec<u8>,
        reads: Vec<(u64, u64)>,
    }

    impl Source for Fake {
        async fn read(&mut self, from: u64, to: u64) -> Result<Vec<u8>, String> {
            self.reads.push((from, to));
            let n = self.file.len();
            let at = |x: u64| usize::try_from(x).unwrap_or(n).min(n);
            Ok(self.file[at(from)..at(to)].to_vec())
        }
    }

    fn fixture(name: &str) -> Vec<u8> {
        let dir = env!("CARGO_MANIFEST_DIR");
        std::fs::read(format!("{dir}/../core/tests/fixtures/gguf/{name}")).expect("fixture")
    }

    fn read(file: Vec<u8>, first: u64) -> (ToolReply, Vec<(u64, u64)>) {
        let mut fake = Fake {
            file,
            reads: vec![],
        };
        let reply = now(read_header(&mut fake, "tiny-llama-mixed.gguf", first));
        (reply, fake.reads)
    }

    fn file_bytes_of(reply: &ToolReply) -> Option<&str> {
        match reply {
            ToolReply::Imported { changes, .. } => changes
                .iter()
                .find(|(k, _)| k == "file_bytes")
                .map(|(_, v)| v.as_str()),
            _ => None,
        }
    }

    fn why(reply: &ToolReply) -> &str {
        match reply {
            ToolReply::Refused { why, .. } => why,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_small_file_is_read_in_one_part() {
        let file = fixture("tiny-llama-mixed.gguf");
        let size = len(&file);
        let (reply, reads) = read(file, FIRST);
        assert!(file_bytes_of(&reply).is_some(), "{reply:?}");
        assert_eq!(reads, vec![(0, FIRST)]);
        assert!(size < FIRST);
    }

    #[test]
    fn each_read_asks_for_new_bytes_only_and_at_least_doubles() {
        let file = fixture("tiny-llama-mixed.gguf");
        let (whole, _) = read(file.clone(), FIRST);
        for first in [1, 16, 100, 1000] {
            let (reply, reads) = read(file.clone(), first);
            assert_eq!(reply, whole, "first read of {first} bytes");
            assert_eq!(reads[0], (0, first));
            for pair in reads.windows(2) {
                let ((a, b), (c, d)) = (pair[0], pair[1]);
                assert_eq!(c, b, "contiguous: {reads:?}");
                assert!(d >= 2 * b && d > c && b > a, "grows: {reads:?}");
            }
            // Never more than twice what the header needed, and never the
            // whole file (the data section is most of it).
            let read_to = reads.last().map_or(0, |r| r.1);
            assert!(read_to < len(&file), "{reads:?}");
        }
    }

    /// The fixture with a string value of `n` bytes put first among its
    /// keys (`n` + 32 a multiple of 32: the data section stays aligned)
    /// and `tail` zero bytes after its data: a large header in a larger
    /// file.
    fn with_a_long_value(n: usize, tail: usize) -> Vec<u8> {
        let file = fixture("tiny-llama-mixed.gguf");
        let key = b"vramfit.test.pad";
        let mut out = file[..16].to_vec();
        let keys = u64::from_le_bytes(file[16..24].try_into().expect("8 bytes"));
        out.extend((keys + 1).to_le_bytes());
        out.extend((key.len() as u64).to_le_bytes());
        out.extend(key);
        out.extend(8u32.to_le_bytes());
        out.extend((n as u64).to_le_bytes());
        out.extend(std::iter::repeat_n(b'x', n));
        out.extend(&file[24..]);
        out.extend(std::iter::repeat_n(0, tail));
        out
    }

    #[test]
    fn a_large_header_takes_few_reads_and_never_the_whole_file() {
        let (small, _) = read(fixture("tiny-llama-mixed.gguf"), FIRST);
        let n = (3 << 20) - 32;
        let file = with_a_long_value(n, 16 << 20);
        let header = 24 + 36 + n as u64 + 8000; // the fixture's own header is under 8 kB
        let (reply, reads) = read(file.clone(), FIRST);
        // The same model and the same bytes: the value is only metadata.
        assert_eq!(file_bytes_of(&reply), file_bytes_of(&small));
        assert!(reads.len() <= 3, "{reads:?}");
        let total = reads.last().map_or(0, |r| r.1);
        assert!(
            total < 2 * header && total < len(&file) / 4,
            "{total}: {reads:?}"
        );
    }

    #[test]
    fn a_truncated_or_empty_file_says_so() {
        let file = fixture("tiny-llama-mixed.gguf");
        let (reply, reads) = read(file[..1000].to_vec(), FIRST);
        assert_eq!(
            why(&reply),
            "tiny-llama-mixed.gguf: the file ends inside its GGUF header (after 1000 bytes): \
             it is not a whole GGUF file (an interrupted download?)."
        );
        assert_eq!(reads.len(), 1);
        let (reply, _) = read(file[..1000].to_vec(), 100);
        assert!(why(&reply).contains("after 1000 bytes"), "{reply:?}");
        let (reply, _) = read(vec![], FIRST);
        assert_eq!(why(&reply), "tiny-llama-mixed.gguf: the file is empty.");
    }

    #[test]
    fn not_a_gguf_is_refused_after_one_read() {
        let (reply, reads) = read(b"PK\x03\x04 a zip".to_vec(), FIRST);
        assert_eq!(
            why(&reply),
            "tiny-llama-mixed.gguf: not a GGUF file (no GGUF magic)"
        );
        assert_eq!(reads.len(), 1);
    }

    /// A GGUF v3 header whose first value is a string said to be `n`
    /// bytes long (the file holds none of it).
    fn claims_a_string_of(n: u64) -> Vec<u8> {
        let mut h = b"GGUF".to_vec();
        h.extend(3u32.to_le_bytes());
        h.extend(0u64.to_le_bytes()); // tensors
        h.extend(1u64.to_le_bytes()); // keys
        h.extend(12u64.to_le_bytes());
        h.extend(b"general.name");
        h.extend(8u32.to_le_bytes()); // a string
        h.extend(n.to_le_bytes());
        h
    }

    #[test]
    fn a_header_larger_than_the_cap_is_refused_without_reading_it() {
        let (reply, reads) = read(claims_a_string_of(100 << 20), FIRST);
        let why = why(&reply);
        assert!(
            why.starts_with(
                "tiny-llama-mixed.gguf: its header would take more than the first 64 MiB"
            ),
            "{why}"
        );
        assert_eq!(reads, vec![(0, FIRST)]);
        // Just under the cap it is read (here: the file ends first).
        let (reply, reads) = read(claims_a_string_of(60 << 20), FIRST);
        assert!(why_of(&reply).contains("ends inside its GGUF header"));
        assert_eq!(reads.len(), 1, "the short first read said the file ended");
    }

    fn why_of(reply: &ToolReply) -> String {
        why(reply).to_string()
    }

    #[test]
    fn a_long_name_is_quoted_whole() {
        let name = "hf:Qwen/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf";
        let mut fake = Fake {
            file: fixture("tiny-llama-mixed.gguf"),
            reads: vec![],
        };
        let ToolReply::Imported { summary, .. } = now(read_header(&mut fake, name, FIRST)) else {
            panic!("not read")
        };
        assert!(
            summary.starts_with(&format!("Read {name}'s header: `llama` q4_k_m")),
            "{summary}"
        );
        let mut fake = Fake {
            file: b"not a gguf".to_vec(),
            reads: vec![],
        };
        let reply = now(read_header(&mut fake, name, FIRST));
        assert_eq!(
            why(&reply),
            format!("{name}: not a GGUF file (no GGUF magic)")
        );
    }

    #[test]
    fn a_failed_read_is_the_message() {
        struct Offline;
        impl Source for Offline {
            async fn read(&mut self, _: u64, _: u64) -> Result<Vec<u8>, String> {
                Err("offline".into())
            }
        }
        let reply = now(read_header(&mut Offline, "x.gguf", FIRST));
        assert_eq!(why(&reply), "offline");
    }
}
