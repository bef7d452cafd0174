// Byte-exact memory probe for LoRA adapters in llama.cpp b10488.
//
// Takes llama-server's command line (-m, --lora, --lora-scaled, --lora-init-without-apply, -c,
// -b, -ub, -np, -ngl, -fa, --no-mmap ...), parses it as the server does
// (common_params_parse with LLAMA_EXAMPLE_SERVER), applies the two server-only adjustments
// (n_parallel auto -> 4 + kv_unified, tools/server/server.cpp:151-155; n_outputs_max from
// server_output_limits, tools/server/server-context.cpp:42-54,954-956), then runs
// common_init_from_params exactly as the server does (adapters loaded, applied unless
// --lora-init-without-apply, warm-up decode, which re-reserves the compute graph).
// Prints, in bytes:
//   LORA <i> <buft name> <bytes>          every buffer of every adapter (llama_adapter_lora::bufs)
//   LORA_TENSORS <i> <n tensors>          ab_map.size()*2
//   MODEL|CONTEXT|COMPUTE <buft> <bytes>  llama_get_memory_breakdown (src/llama-ext.h)
// build: see build_probe.sh
#include "arg.h"
#include "common.h"
#include "speculative.h"
#include "llama.h"
#include "llama-ext.h"
#include "llama-adapter.h"
#include "llama-context.h"

#include <cstdio>

int main(int argc, char ** argv) {
    common_params params;
    if (!common_params_parse(argc, argv, params, LLAMA_EXAMPLE_SERVER)) {
        return 1;
    }
    if (params.n_parallel < 0) {
        params.n_parallel = 4;
        params.kv_unified = true;
    }
    {
        auto r = common_speculative_get_output_limits(params.n_batch, params.n_parallel,
                                                      common_speculative_n_max(&params.speculative));
        params.n_outputs_max         = std::max<int32_t>(1, r.total);
        params.n_outputs_max_per_seq = std::max<int32_t>(1, r.per_seq);
    }
    common_init();
    llama_backend_init();
    llama_numa_init(params.numa);

    auto init = common_init_from_params(params);
    llama_context * ctx = init->context();
    if (!ctx) {
        fprintf(stderr, "failed to init\n");
        return 1;
    }
    auto & loras = init->lora();
    for (size_t i = 0; i < loras.size(); i++) {
        llama_adapter_lora * a = loras[i].get();
        for (auto & b : a->bufs) {
            printf("LORA %zu %s %zu\n", i, ggml_backend_buffer_name(b.get()), ggml_backend_buffer_get_size(b.get()));
        }
        printf("LORA_TENSORS %zu %zu\n", i, a->ab_map.size() * 2);
    }
    for (const auto & [buft, mb] : llama_get_memory_breakdown(ctx)) {
        const char * n = ggml_backend_buft_name(buft);
        printf("MODEL %s %zu\nCONTEXT %s %zu\nCOMPUTE %s %zu\n", n, mb.model, n, mb.context, n, mb.compute);
    }
    printf("N_CTX %u N_BATCH %u N_UBATCH %u N_SEQ %u\n", llama_n_ctx(ctx), llama_n_batch(ctx), llama_n_ubatch(ctx), llama_n_seq_max(ctx));
    fflush(stdout);
    return 0;
}
