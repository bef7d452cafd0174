//! The messages between the page and the probe's Web Worker, as JSON. The
//! worker holds wgpu; the page holds only these types, so the page's wasm
//! stays small and the probe's code is fetched when someone opens it.

use crate::plan::{Outcome, ProbeConfig, ProbeResult, Progress};
use crate::report::AdapterReport;
use serde::{Deserialize, Serialize};

/// What the page asks of the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Describe the adapter (allocates nothing).
    Report,
    /// Run a probe within this plan.
    Probe { config: ProbeConfig },
    /// Stop the running probe before its next chunk.
    Cancel,
}

/// What the worker tells the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// The worker's wasm is loaded and listening.
    Ready,
    Report {
        report: AdapterReport,
    },
    /// No WebGPU, or no adapter.
    Missing {
        outcome: Outcome,
    },
    Progress {
        progress: Progress,
    },
    Done {
        result: ProbeResult,
    },
}

/// Encodes a message (plain data: serialising cannot fail).
pub fn encode<T: Serialize>(message: &T) -> String {
    serde_json::to_string(message).unwrap_or_default()
}

/// Decodes a message; `None` for anything that is not one.
pub fn decode<'a, T: Deserialize<'a>>(text: &'a str) -> Option<T> {
    serde_json::from_str(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::Bytes;

    #[test]
    fn messages_round_trip_as_json() {
        let cfg = ProbeConfig::new(Bytes(1 << 30), 1 << 30);
        for req in [
            Request::Report,
            Request::Probe { config: cfg },
            Request::Cancel,
        ] {
            assert_eq!(decode::<Request>(&encode(&req)), Some(req));
        }
        let result = ProbeResult::failed(Outcome::NoAdapter);
        for reply in [
            Reply::Ready,
            Reply::Missing {
                outcome: Outcome::Unsupported,
            },
            Reply::Done { result },
        ] {
            assert_eq!(decode::<Reply>(&encode(&reply)), Some(reply));
        }
        assert_eq!(encode(&Request::Cancel), r#""cancel""#);
        assert_eq!(decode::<Request>("not json"), None);
    }
}
