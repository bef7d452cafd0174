//! Invariants of the caching allocator's port (`vramfit_core::caching`),
//! on random programs: what the allocator holds covers what is allocated,
//! which covers what was requested; everything returns when everything is
//! freed; the least capacity completes and one page less does not.

use proptest::prelude::*;
use vramfit_core::caching::{self, Allocator, Config, Event, Handle, Stream, ROUND_LARGE};

/// A program: sizes spanning both pools and the three segment rules, and
/// frees of earlier allocations (by position among the live ones).
fn program() -> impl Strategy<Value = Vec<Event>> {
    let size = prop_oneof![
        1u64..=1 << 20,
        (1u64 << 20)..10 << 20,
        (10u64 << 20)..300 << 20
    ];
    prop::collection::vec((size, any::<bool>(), any::<u16>()), 1..120).prop_map(|steps| {
        let mut live: Vec<u32> = Vec::new();
        let mut events = Vec::new();
        for (id, (bytes, frees, pick)) in steps.into_iter().enumerate() {
            if frees && !live.is_empty() {
                let gone = live.swap_remove(usize::from(pick) % live.len());
                events.push(Event::Free { id: gone });
            }
            let id = id as u32;
            events.push(Event::Alloc {
                id,
                bytes,
                stream: Stream(0),
            });
            live.push(id);
        }
        events
    })
}

fn configs() -> [Config; 3] {
    [
        Config::default(),
        Config {
            expandable_segments: true,
            max_split_size: None,
        },
        Config {
            expandable_segments: false,
            max_split_size: Some(64 << 20),
        },
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn held_covers_allocated_covers_requested(events in program()) {
        for cfg in configs() {
            let mut a = Allocator::new(cfg, u64::MAX);
            let mut live: Vec<(u32, Handle)> = Vec::new();
            for e in &events {
                match *e {
                    Event::Alloc { id, bytes, stream } => {
                        let h = a.malloc(bytes, stream).expect("no limit");
                        live.push((id, h));
                    }
                    Event::Free { id } => {
                        let i = live.iter().position(|(l, _)| *l == id).expect("live");
                        a.free(live.swap_remove(i).1);
                    }
                    Event::Place { addr } => a.place_next_segment(addr),
                }
                let s = a.stats();
                prop_assert!(s.reserved >= s.allocated && s.allocated >= s.requested, "{cfg:?} {s:?}");
            }
            for (_, h) in live.drain(..) {
                a.free(h);
            }
            let s = a.stats();
            prop_assert_eq!((s.allocated, s.requested), (0, 0));
        }
    }

    #[test]
    fn the_least_capacity_completes_and_a_page_less_does_not(events in program()) {
        for cfg in configs() {
            let roomy = caching::replay(&events, cfg, u64::MAX).expect("no limit");
            let min = caching::min_capacity(&events, cfg).expect("no limit");
            prop_assert!(min <= roomy.peak_reserved.div_ceil(ROUND_LARGE) * ROUND_LARGE);
            prop_assert!(min >= roomy.peak_requested);
            prop_assert!(caching::replay(&events, cfg, min).is_ok(), "{cfg:?}");
            prop_assert!(caching::replay(&events, cfg, min - ROUND_LARGE).is_err(), "{cfg:?}");
        }
    }
}
