//! The tools worker's requests and replies (config.json import and JSON
//! export, moved off the page so its wasm carries no JSON parser): each
//! message reads back as written, and the answers are the importer's and
//! `vramfit --json`'s own.

mod common;

use common::{fixture_bytes, hf_fixture};
use proptest::prelude::*;
use vramfit_core::model::hf_config::Reading;
use vramfit_core::tools::{answer, ToolReply, ToolRequest};

fn import(text: &str, reading: Reading) -> ToolReply {
    let request = ToolRequest::Import {
        text: text.to_string(),
        reading,
    };
    // Through the wire both ways, as the page and the worker see it.
    let decoded = ToolRequest::decode(&request.encode()).expect("request decodes");
    assert_eq!(decoded, request);
    let reply = answer(&decoded);
    assert_eq!(ToolReply::decode(&reply.encode()).as_ref(), Some(&reply));
    reply
}

#[test]
fn a_known_config_imports_as_its_preset() {
    let ToolReply::Imported { summary, changes } =
        import(&hf_fixture("qwen2.5-0.5b"), Reading::AsItSays)
    else {
        panic!("imported")
    };
    assert_eq!(
        summary,
        "Imported `qwen2`: 494\u{2009}032\u{2009}768 parameters, the Qwen2.5 0.5B preset."
    );
    assert!(
        changes.contains(&("model".into(), "qwen2.5-0.5b".into())),
        "{changes:?}"
    );
}

/// A config transformers 5.23 refuses as written (meta-llama's Scout:
/// `attn_temperature_tuning` 4, a bool in its strict `Llama4TextConfig`;
/// measured in `scripts/measure/families/strict/raw/check_all.txt`) is
/// imported and the summary says so; the same file with `true`, as
/// transformers loads it, says nothing more.
#[test]
fn a_config_transformers_refuses_is_imported_with_a_note() {
    let scout = hf_fixture("llama4-scout");
    let summary = |text: &str| match import(text, Reading::AsItSays) {
        ToolReply::Imported { summary, .. } => summary,
        other => panic!("imported: {other:?}"),
    };
    let said = summary(&scout);
    assert!(
        said.ends_with(
            " Note: transformers 5.23 refuses this config.json as written: `attn_temperature_tuning` is 4 where the `llama4_text` config class asks for true or false (`from_pretrained` raises StrictDataclassFieldValidationError); the estimate is for the file with `attn_temperature_tuning` true, which loads."
        ),
        "{said}"
    );
    let loads = scout.replace(
        "\"attn_temperature_tuning\": 4",
        "\"attn_temperature_tuning\": true",
    );
    assert_ne!(loads, scout, "the fixture writes 4");
    let fixed = summary(&loads);
    assert!(!fixed.contains("Note:"), "{fixed}");
    assert!(said.starts_with(&fixed), "{said}\n{fixed}");
}

#[test]
fn a_config_it_cannot_read_says_why_and_offers_llama_when_it_can() {
    let bert = r#"{"model_type": "bert", "architectures": ["BertForMaskedLM"],
        "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
        "intermediate_size": 3072, "vocab_size": 30522}"#;
    let ToolReply::Refused { why, .. } = import(bert, Reading::AsItSays) else {
        panic!("refused")
    };
    assert!(why.contains("BertForMaskedLM"), "{why}");
    let unknown = hf_fixture("llama3.2-1b").replace("\"llama\"", "\"my_llama\"");
    assert!(matches!(
        import(&unknown, Reading::AsItSays),
        ToolReply::Refused {
            offer_llama: true,
            ..
        }
    ));
    let ToolReply::Imported { summary, .. } = import(&unknown, Reading::AsLlama) else {
        panic!("imported as Llama-like")
    };
    assert!(
        summary.ends_with("estimated as a Llama-like decoder (your choice)."),
        "{summary}"
    );
}

#[test]
fn the_export_is_the_clis_json_document() {
    let query = "model=llama3.2-1b&batch=4&seq=1024&lora_r=16";
    let ToolReply::Exported { json } = answer(&ToolRequest::Export {
        query: query.to_string(),
    }) else {
        panic!("exported")
    };
    let doc: serde_json::Value = serde_json::from_str(&json).expect("json");
    let s = vramfit_core::decode(&vramfit_core::RawQuery::parse(query)).scenario;
    let e = vramfit_core::Estimates::new(&s);
    let peak = e.primary().expect("estimate").peak_total_bytes.get();
    assert_eq!(doc["peak_total_bytes"], serde_json::json!(peak), "{json}");
    assert!(
        doc["query"]
            .as_str()
            .is_some_and(|q| q.contains("lora_r=16")),
        "{json}"
    );
}

#[test]
fn what_is_not_a_message_does_not_decode() {
    for bad in [
        "",
        "ready",
        "5:ready1:x",
        "6:import5:other0:",
        "8:imported0:1:9",
    ] {
        assert_eq!(ToolReply::decode(bad), None, "{bad:?}");
        assert_eq!(ToolRequest::decode(bad), None, "{bad:?}");
    }
    assert_eq!(ToolReply::decode("5:ready"), Some(ToolReply::Ready));
}

proptest! {
    #[test]
    fn every_message_reads_back_as_written(
        a in ".*", b in ".*", flag: bool,
        pairs in proptest::collection::vec(("[a-z_]{0,12}", ".{0,20}"), 0..12),
    ) {
        let requests = [
            ToolRequest::Import { text: a.clone(), reading: if flag { Reading::AsLlama } else { Reading::AsItSays } },
            ToolRequest::Export { query: b.clone() },
            ToolRequest::Paste { text: a.clone(), query: b.clone() },
        ];
        for r in requests {
            prop_assert_eq!(ToolRequest::decode(&r.encode()), Some(r));
        }
        let replies = [
            ToolReply::Ready,
            ToolReply::Imported { summary: a.clone(), changes: pairs },
            ToolReply::Refused { why: b.clone(), offer_llama: flag },
            ToolReply::Exported { json: a },
            ToolReply::NotExported { why: b },
            ToolReply::Unreadable,
        ];
        for r in replies {
            prop_assert_eq!(ToolReply::decode(&r.encode()), Some(r));
        }
    }
}

/// A paste, as the page's box sends it: the keys it reads applied over
/// the form's, what was not read, and each figure beside the estimate of
/// the query the form will then hold.
#[test]
fn a_paste_reads_over_the_pages_query() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/pastes/pytorch-oom-23.65gib.txt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture");
    let request = ToolRequest::Paste {
        text,
        query: "model=llama3.1-8b&dtype=bf16&batch=1&seq=512&gpu=rtx-4090".into(),
    };
    let decoded = ToolRequest::decode(&request.encode()).expect("request decodes");
    assert_eq!(decoded, request);
    let reply = answer(&decoded);
    assert_eq!(ToolReply::decode(&reply.encode()).as_ref(), Some(&reply));
    let ToolReply::Imported { summary, changes } = reply else {
        panic!("pasted: {reply:?}")
    };
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "Read PyTorch's out-of-memory message: 2 settings, 2 figures measured, 0 not read.",
            "Understood, now in the form:",
            "  gpu=custom  ← torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free. Including non-…",
            "  capacity_gib=23.65  ← torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free. Including non-…",
        ]
    );
    assert_eq!(lines[4], "Measured, beside vramfit's estimate:");
    assert!(
        lines[5].starts_with("  peak_allocated_bytes: measured 24611756442 bytes"),
        "{summary}"
    );
    assert!(
        lines[5].ends_with("the estimate is at least what the run had reached"),
        "{summary}"
    );
    assert_eq!(lines.len(), 7, "{summary}");
    // The form's model keys come along: the page applies a paste as an
    // import (the model's keys replaced by the changes).
    assert_eq!(
        changes,
        [
            ("model".to_string(), "llama3.1-8b".to_string()),
            ("gpu".to_string(), "custom".to_string()),
            ("capacity_gib".into(), "23.65".into())
        ]
    );
    // A picked file's bytes: binary is refused with the reason.
    let ToolReply::Refused { why, .. } = vramfit_core::tools::paste_bytes_reply(b"GGUF\0\x03", "")
    else {
        panic!("refused")
    };
    assert!(why.starts_with("a binary file"), "{why}");
    // Applied as the page applies it: the form's other keys stay.
    let mut form = vramfit_core::RawQuery::parse("model=llama3.1-8b&batch=1&gpu=rtx-4090");
    vramfit_core::query::apply_import(&mut form, &changes, &[]);
    assert_eq!(
        form.to_query_string(),
        "batch=1&gpu=custom&model=llama3.1-8b&capacity_gib=23.65"
    );
    // A config.json pasted in the same box is imported as the model, as
    // the box always did.
    let config = hf_fixture("qwen2.5-0.5b");
    assert_eq!(
        answer(&ToolRequest::Paste {
            text: config.clone(),
            query: String::new()
        }),
        answer(&ToolRequest::Import {
            text: config.clone(),
            reading: Reading::AsItSays
        })
    );
    assert_eq!(
        vramfit_core::tools::paste_bytes_reply(config.as_bytes(), ""),
        answer(&ToolRequest::Import {
            text: config,
            reading: Reading::AsItSays
        })
    );

    let ToolReply::Refused { why, .. } = answer(&ToolRequest::Paste {
        text: "hello".into(),
        query: String::new(),
    }) else {
        panic!("refused")
    };
    assert!(why.starts_with("not a command, a training config"), "{why}");
}

// ---------------------------------------------------------------- a GGUF file read

fn gguf_fixture(name: &str) -> Vec<u8> {
    fixture_bytes(&format!("gguf/{name}"))
}

/// The worker's loop: the first `chunk` bytes, then as many as asked.
fn read_header(file: &[u8], name: &str, chunk: usize) -> (ToolReply, usize) {
    let mut have = chunk.min(file.len());
    let mut asks = 0;
    loop {
        match vramfit_core::tools::gguf_reply(&file[..have], name) {
            Ok(reply) => return (reply, asks),
            Err(at_least) => {
                let next = usize::try_from(at_least).expect("small").min(file.len());
                assert!(next > have, "asks for more than it has: {next} > {have}");
                (have, asks) = (next, asks + 1);
            }
        }
    }
}

#[test]
fn a_gguf_header_gives_the_model_and_the_files_exact_bytes() {
    // Source: tests/fixtures/gguf/tiny-llama-mixed.gguf (made with the
    // `gguf` package, README.md there): llama, 2 layers, Q4_K_M, 153,852
    // bytes of tensors (tiny-llama-mixed.expected.json, `tensor_bytes`);
    // 165,120 parameters: the architecture's count (the file's 165,151
    // elements less `rope_freqs` (16) and a made `extra_i32` (15)).
    let file = gguf_fixture("tiny-llama-mixed.gguf");
    for chunk in [16, 1000, 1 << 20] {
        let (reply, _) = read_header(&file, "hf:owner/repo/tiny-llama-mixed.gguf", chunk);
        let ToolReply::Imported { summary, changes } = reply else {
            panic!("read: {reply:?}")
        };
        assert_eq!(
            summary,
            "Read hf:owner/repo/tiny-llama-mixed.gguf's header: `llama` q4_k_m, 165\u{2009}120 parameters."
        );
        let mut raw = vramfit_core::RawQuery::parse("task=infer&engine=llamacpp&gpu=rtx-4090");
        vramfit_core::query::apply_import(&mut raw, &changes, &[]);
        let d = vramfit_core::query::decode(&raw);
        assert_eq!(d.notices, vec![], "{}", raw.to_query_string());
        let e = vramfit_core::Estimates::new(&d.scenario)
            .vramfit
            .expect("an estimate");
        let served = e.served.expect("served");
        assert_eq!(served.weights_bytes.get(), 153_852);
        assert!(
            // Read, not predicted: no caveat about the file.
            !e.caveats.iter().any(|c| c.contains("GGUF")),
            "{:?}",
            e.caveats
        );
        // The link carries the file: it decodes to the same scenario.
        let again = vramfit_core::query::decode(&vramfit_core::RawQuery::parse(
            &vramfit_core::query::encode(&d.scenario).to_query_string(),
        ));
        assert_eq!((again.scenario, again.notices), (d.scenario, vec![]));
    }
}

#[test]
fn a_file_that_is_not_gguf_is_refused_by_name() {
    let (reply, asks) = read_header(b"PK\x03\x04 not a gguf", "notes.zip", 1 << 20);
    assert_eq!(asks, 0);
    assert_eq!(
        reply,
        ToolReply::Refused {
            why: "notes.zip: not a GGUF file (no GGUF magic)".into(),
            offer_llama: false
        }
    );
}
