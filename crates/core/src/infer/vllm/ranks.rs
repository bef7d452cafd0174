//! How vLLM 0.33 lays one model over its GPUs: `tensor_parallel_size`
//! ranks per pipeline stage, `pipeline_parallel_size` stages of layers,
//! `data_parallel_size` replicas, a mixture's routed experts over the
//! tensor × data parallel ranks (sharded, or whole with
//! `enable_expert_parallel`).
//!
//! Source: the vLLM 0.33.0 release wheel (`distributed/utils.py`,
//! `model_executor/layers/fused_moe/config.py`,
//! `model_executor/layers/fused_moe/expert_map_manager.py`).

use crate::infer::run::Vllm;

/// The parallel sizes of one vLLM deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ranks {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    /// `enable_expert_parallel`.
    pub ep: bool,
}

impl Ranks {
    /// The sizes `v` asks for.
    pub fn of(v: &Vllm) -> Ranks {
        Ranks {
            tp: v.tensor_parallel_size.get(),
            pp: v.pipeline_parallel_size.get(),
            dp: v.data_parallel_size.get(),
            ep: v.enable_expert_parallel,
        }
    }

    /// The GPUs of the deployment: `tp × pp × dp` (`world_size × dp`,
    /// `config/parallel.py`).
    pub fn gpus(self) -> u128 {
        u128::from(self.tp) * u128::from(self.pp) * u128::from(self.dp)
    }

    /// How a mixture's routed experts are split on one GPU: `(experts
    /// divisor, width divisor)`. The MoE layer's ranks are the tensor ×
    /// data parallel ones (`FusedMoEParallelConfig.flatten_tp_across_dp_and_pcp`,
    /// `fused_moe/config.py:1106-1114`); without expert parallelism each
    /// expert's intermediate width is split over them, with it (and more
    /// than one rank) each rank holds `ceil(E / ranks)` whole experts
    /// (`FusedMoEParallelConfig.make`, `:1198-1243`: `ep_size = tp_size`,
    /// the MoE's own tp 1; `determine_expert_map`,
    /// `expert_map_manager.py:67-69`: the first `E % ep` ranks one more).
    pub fn experts_split(self) -> (u128, u128) {
        let ranks = u128::from(self.tp) * u128::from(self.dp);
        if self.ep && ranks > 1 {
            (ranks, 1)
        } else {
            (1, ranks)
        }
    }
}

/// One pipeline stage: its layers `start..end` and whether it holds the
/// embedding (the first) and the final norm and head (the last).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    /// Its rank among the stages, from 0.
    pub rank: u32,
    pub start: u32,
    pub end: u32,
    pub first: bool,
    pub last: bool,
}

impl Stage {
    /// The whole model on one stage.
    pub const fn whole(layers: u32) -> Stage {
        Stage {
            rank: 0,
            start: 0,
            end: layers,
            first: true,
            last: true,
        }
    }

    /// The stage's layers.
    pub fn layers(self) -> u32 {
        self.end - self.start
    }

    /// Stage `rank` of `pp` over `layers` decoder layers, as vLLM splits
    /// them (`get_pp_indices`, `distributed/utils.py:198-241`): `layers /
    /// pp` each; the remainder one more each to the stages before the
    /// last, counted back from the second-to-last
    /// (`partitions[-i] += 1` for `i` in `2..remainder + 2`). Uneven
    /// splits are accepted (vLLM logs "Hidden layers were unevenly
    /// partitioned"); `VLLM_PP_LAYER_PARTITION` is not modelled.
    pub fn of(layers: u32, rank: u32, pp: u32) -> Stage {
        let pp = pp.max(1);
        let rank = rank.min(pp - 1);
        let (base, rest) = (layers / pp, layers % pp);
        // Stage p gets one more when pp - 1 - rest <= p <= pp - 2.
        let extra = |p: u32| u32::from(p + 1 + rest >= pp && p + 1 < pp);
        let before = |p: u32| -> u32 {
            // Extra layers among stages 0..p.
            let lo = (pp - 1).saturating_sub(rest);
            let hi = p.min(pp - 1);
            hi.saturating_sub(lo)
        };
        let start = base * rank + before(rank);
        Stage {
            rank,
            start,
            end: start + base + extra(rank),
            first: rank == 0,
            last: rank + 1 == pp,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `get_pp_indices` as vLLM writes it, for comparison.
    fn vllm_indices(layers: u32, rank: u32, pp: u32) -> (u32, u32) {
        let mut parts = vec![layers / pp; pp as usize];
        let rest = layers % pp;
        for i in 2..rest + 2 {
            parts[(pp - i) as usize] += 1;
        }
        let start: u32 = parts[..rank as usize].iter().sum();
        (start, start + parts[rank as usize])
    }

    /// Every stage of every split up to 40 stages and 130 layers is the
    /// one vLLM's loop gives.
    #[test]
    fn stages_are_get_pp_indices() {
        for pp in 1..=40 {
            for layers in 0..=130 {
                for rank in 0..pp {
                    let s = Stage::of(layers, rank, pp);
                    assert_eq!(
                        (s.start, s.end),
                        vllm_indices(layers, rank, pp),
                        "{layers} layers, stage {rank} of {pp}"
                    );
                }
            }
        }
    }
}
