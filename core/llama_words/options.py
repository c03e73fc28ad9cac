"""Every option of llama.cpp 0c1e570's llama-server, llama-cli and llama-completion, and what it does to memory.

The table is llama.cpp's own option list (common/arg.cpp `common_params_parser_init`, the `add_opt`
calls whose examples include the server, the CLI or completion), one row an option:

    spellings | negative spellings | values it takes | programs | effect

Rule 1: an option is **priced** (it changes memory, placement or speed and this tool prices it;
        the word after `priced` is the setting it fills, `reader.LlamaSettings`), **unpriced**
        (it changes memory and this tool does not price it: the reason is said beside every answer
        that gives it), or **ignored** (it changes nothing this tool prices; the word after
        `ignored` is the kind: sampling, chat, …, each said in `IGNORED_REASONS`).
Rule 2: spellings are matched exactly, as llama.cpp does (common/arg.cpp
        `common_params_parse_ex`); a `--long_name` is read as `--long-name` first; a negative
        spelling turns a flag off.
Rule 3: programs: `all`, or the ones named (`server`, `cli`, `completion`); an option of
        another program is one line naming it, as llama.cpp's "invalid argument" would be.
Rule 4: tests/test_llama_options.py reads each program's `--help` from the CI build and fails
        when an option there has no row, so a new llama.cpp option is classified before it is
        silently read as unknown.
Rule 5: older llama.cpp spellings that published commands still carry (`--no-mmap`, `--mmap`,
        `--mlock`, `-dio`) are `LEGACY`: read as this build's `-lm` modes, and said so.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from gguf_budget.core.vocab import TextEnum


class Effect(TextEnum):
    PRICED = "priced"
    UNPRICED = "unpriced"
    IGNORED = "ignored"


class Program(TextEnum):
    """The llama.cpp programs whose command lines are read; the value is the binary's name."""

    SERVER = "llama-server"
    CLI = "llama-cli"
    COMPLETION = "llama-completion"


_PROGRAM_WORDS = {"server": Program.SERVER, "cli": Program.CLI, "completion": Program.COMPLETION}

IGNORED_REASONS: Mapping[str, str] = MappingProxyType({
    "info": "prints and exits",
    "output": "output and logging",
    "affinity": "CPU affinity, priority and polling",
    "prompt": "the prompt and the tokens to generate (priced by --prompt-tokens)",
    "sampling": "sampling",
    "chat": "chat, prompt and context handling",
    "rope": "RoPE and YaRN scaling",
    "speculative": "speculative-decoding tuning",
    "server": "the server's network, API and slot handling",
    "media": "media decoding",
    "load": "checks and warm-up at load",
    "download": "downloads and tokens",
})


@dataclass(frozen=True)
class LlamaOption:
    """One row of the table (Rule 1)."""

    spellings: tuple[str, ...]
    negatives: tuple[str, ...]
    values: int
    programs: frozenset[Program]
    effect: Effect
    detail: str
    """The setting it fills (priced), why it is not priced (unpriced), or the kind of thing it sets (ignored)."""

    @property
    def name(self) -> str:
        """The long spelling, as llama.cpp's --help lists it last."""
        return self.spellings[-1]

    @property
    def reason(self) -> str:
        """In words, for an unpriced or ignored option."""
        if self.effect is Effect.IGNORED:
            return f"{IGNORED_REASONS[self.detail]}: no memory"
        if self.effect is Effect.UNPRICED:
            return f"changes memory, not priced here: {self.detail}"
        return f"priced ({self.detail})"


_TABLE = """
-h --help --usage                                                   |                                        | 0 | all                   | ignored info
--version                                                           |                                        | 0 | all                   | ignored info
-cl --cache-list                                                    |                                        | 0 | all                   | ignored info
--completion-bash                                                   |                                        | 0 | all                   | ignored info
--server-base                                                       |                                        | 1 | cli                   | ignored server
--verbose-prompt                                                    |                                        | 0 | cli+completion        | ignored output
--display-prompt                                                    | --no-display-prompt                    | 0 | cli+completion        | ignored output
-co --color                                                         |                                        | 1 | cli+completion        | ignored output
-t --threads                                                        |                                        | 1 | all                   | priced threads
-tb --threads-batch                                                 |                                        | 1 | all                   | priced threads_batch
-C --cpu-mask                                                       |                                        | 1 | all                   | ignored affinity
-Cr --cpu-range                                                     |                                        | 1 | all                   | ignored affinity
--cpu-strict                                                        |                                        | 1 | all                   | ignored affinity
--prio                                                              |                                        | 1 | all                   | ignored affinity
--poll                                                              |                                        | 1 | all                   | ignored affinity
-Cb --cpu-mask-batch                                                |                                        | 1 | all                   | ignored affinity
-Crb --cpu-range-batch                                              |                                        | 1 | all                   | ignored affinity
--cpu-strict-batch                                                  |                                        | 1 | all                   | ignored affinity
--prio-batch                                                        |                                        | 1 | all                   | ignored affinity
--poll-batch                                                        |                                        | 1 | all                   | ignored affinity
-lcs --lookup-cache-static                                          |                                        | 1 | server                | unpriced lookup-decoding caches
-lcd --lookup-cache-dynamic                                         |                                        | 1 | server                | unpriced lookup-decoding caches
-c --ctx-size                                                       |                                        | 1 | all                   | priced ctx
--kv-unified-per-slot                                               |                                        | 1 | server                | unpriced a per-slot context limit in a unified cache
-n --predict --n-predict                                            |                                        | 1 | all                   | ignored prompt
-b --batch-size                                                     |                                        | 1 | all                   | priced batch
-ub --ubatch-size                                                   |                                        | 1 | all                   | priced ubatch
--keep                                                              |                                        | 1 | all                   | ignored chat
--swa-full                                                          |                                        | 0 | all                   | priced swa_full
-ctxcp --ctx-checkpoints --swa-checkpoints                          |                                        | 1 | cli+server            | priced ctx_checkpoints
-cms --checkpoint-min-step                                          |                                        | 1 | server                | unpriced spacing of context checkpoints
-cram --cache-ram                                                   |                                        | 1 | cli+server            | priced cache_ram
-kvu --kv-unified                                                   | -no-kvu --no-kv-unified                | 0 | server                | priced kv_unified
--cache-idle-slots                                                  | --no-cache-idle-slots                  | 0 | server                | unpriced idle slots saved to the prompt cache
--context-shift                                                     | --no-context-shift                     | 0 | cli+completion+server | ignored chat
-fa --flash-attn                                                    |                                        | 1 | all                   | priced flash_attn
-p --prompt                                                         |                                        | 1 | all                   | ignored prompt
-sys --system-prompt                                                |                                        | 1 | cli+completion        | ignored prompt
--perf                                                              | --no-perf                              | 0 | all                   | ignored output
--show-timings                                                      | --no-show-timings                      | 0 | cli                   | ignored output
-f --file                                                           |                                        | 1 | all                   | ignored prompt
-sysf --system-prompt-file                                          |                                        | 1 | cli+completion        | ignored prompt
-bf --binary-file                                                   |                                        | 1 | all                   | ignored prompt
-e --escape                                                         | --no-escape                            | 0 | all                   | ignored output
-ptc --print-token-count                                            |                                        | 1 | completion            | ignored output
--prompt-cache                                                      |                                        | 1 | completion            | unpriced llama-completion's prompt-cache file
--prompt-cache-all                                                  |                                        | 0 | completion            | ignored chat
--prompt-cache-ro                                                   |                                        | 0 | completion            | ignored chat
-r --reverse-prompt                                                 |                                        | 1 | cli+completion+server | ignored chat
-sp --special                                                       |                                        | 0 | cli+completion+server | ignored output
-cnv --conversation                                                 | -no-cnv --no-conversation              | 0 | completion            | ignored chat
-st --single-turn                                                   |                                        | 0 | cli+completion        | ignored chat
-i --interactive                                                    |                                        | 0 | completion            | ignored chat
-if --interactive-first                                             |                                        | 0 | completion            | ignored chat
-mli --multiline-input                                              |                                        | 0 | cli+completion        | ignored chat
--in-prefix-bos                                                     |                                        | 0 | completion            | ignored chat
--in-prefix                                                         |                                        | 1 | completion            | ignored chat
--in-suffix                                                         |                                        | 1 | completion            | ignored chat
--warmup                                                            | --no-warmup                            | 0 | cli+completion+server | ignored load
--spm-infill                                                        |                                        | 0 | server                | ignored chat
--samplers                                                          |                                        | 1 | all                   | ignored sampling
-s --seed                                                           |                                        | 1 | all                   | ignored sampling
--sampler-seq --sampling-seq                                        |                                        | 1 | all                   | ignored sampling
--ignore-eos                                                        |                                        | 0 | all                   | ignored sampling
--temp --temperature                                                |                                        | 1 | all                   | ignored sampling
--top-k                                                             |                                        | 1 | all                   | ignored sampling
--top-p                                                             |                                        | 1 | all                   | ignored sampling
--min-p                                                             |                                        | 1 | all                   | ignored sampling
--top-nsigma --top-n-sigma                                          |                                        | 1 | all                   | ignored sampling
--xtc-probability                                                   |                                        | 1 | all                   | ignored sampling
--xtc-threshold                                                     |                                        | 1 | all                   | ignored sampling
--typical --typical-p                                               |                                        | 1 | all                   | ignored sampling
--repeat-last-n                                                     |                                        | 1 | all                   | ignored sampling
--repeat-penalty                                                    |                                        | 1 | all                   | ignored sampling
--presence-penalty                                                  |                                        | 1 | all                   | ignored sampling
--frequency-penalty                                                 |                                        | 1 | all                   | ignored sampling
--dry-multiplier                                                    |                                        | 1 | all                   | ignored sampling
--dry-base                                                          |                                        | 1 | all                   | ignored sampling
--dry-allowed-length                                                |                                        | 1 | all                   | ignored sampling
--dry-penalty-last-n                                                |                                        | 1 | all                   | ignored sampling
--dry-sequence-breaker                                              |                                        | 1 | all                   | ignored sampling
--adaptive-target                                                   |                                        | 1 | all                   | ignored sampling
--adaptive-decay                                                    |                                        | 1 | all                   | ignored sampling
--dynatemp-range                                                    |                                        | 1 | all                   | ignored sampling
--dynatemp-exp                                                      |                                        | 1 | all                   | ignored sampling
--mirostat                                                          |                                        | 1 | all                   | ignored sampling
--mirostat-lr                                                       |                                        | 1 | all                   | ignored sampling
--mirostat-ent                                                      |                                        | 1 | all                   | ignored sampling
-l --logit-bias                                                     |                                        | 1 | all                   | ignored sampling
--grammar                                                           |                                        | 1 | all                   | ignored sampling
--grammar-file                                                      |                                        | 1 | all                   | ignored sampling
-j --json-schema                                                    |                                        | 1 | all                   | ignored sampling
-jf --json-schema-file                                              |                                        | 1 | all                   | ignored sampling
-bs --backend-sampling                                              |                                        | 0 | all                   | ignored sampling
--pooling                                                           |                                        | 1 | server                | unpriced embedding pooling
--rope-scaling                                                      |                                        | 1 | all                   | ignored rope
--rope-scale                                                        |                                        | 1 | all                   | ignored rope
--rope-freq-base                                                    |                                        | 1 | all                   | ignored rope
--rope-freq-scale                                                   |                                        | 1 | all                   | ignored rope
--yarn-orig-ctx                                                     |                                        | 1 | all                   | ignored rope
--yarn-ext-factor                                                   |                                        | 1 | all                   | ignored rope
--yarn-attn-factor                                                  |                                        | 1 | all                   | ignored rope
--yarn-beta-slow                                                    |                                        | 1 | all                   | ignored rope
--yarn-beta-fast                                                    |                                        | 1 | all                   | ignored rope
-gan --grp-attn-n                                                   |                                        | 1 | completion            | ignored chat
-gaw --grp-attn-w                                                   |                                        | 1 | completion            | ignored chat
-kvo --kv-offload                                                   | -nkvo --no-kv-offload                  | 0 | all                   | priced kv_offload
--repack                                                            | -nr --no-repack                        | 0 | all                   | priced repack
--no-host                                                           |                                        | 0 | all                   | unpriced host buffers of GPU backends (pinned staging copies)
-ctk --cache-type-k                                                 |                                        | 1 | all                   | priced cache_type_k
-ctv --cache-type-v                                                 |                                        | 1 | all                   | priced cache_type_v
-dt --defrag-thold                                                  |                                        | 1 | all                   | ignored load
-np --parallel                                                      |                                        | 1 | all                   | priced parallel
-cb --cont-batching                                                 | -nocb --no-cont-batching               | 0 | server                | ignored server
-mm --mmproj                                                        |                                        | 1 | all                   | priced mmproj
-mmu --mmproj-url                                                   |                                        | 1 | all                   | unpriced a projector by URL: download it and give --mmproj FILE
--mmproj-auto                                                       | --no-mmproj --no-mmproj-auto           | 0 | cli+server            | unpriced the projector of a -hf repository: give --mmproj FILE
--mmproj-offload                                                    | --no-mmproj-offload                    | 0 | all                   | priced mmproj_offload
-mmdev --mmproj-device                                              |                                        | 1 | all                   | unpriced the projector on another device
--image --audio --video                                             |                                        | 1 | cli                   | unpriced the media given to llama-cli: give --image-size
--image-min-tokens                                                  |                                        | 1 | all                   | unpriced an image's token count: give --image-size
--image-max-tokens                                                  |                                        | 1 | all                   | unpriced an image's token count: give --image-size
--mtmd-batch-max-tokens                                             |                                        | 1 | server                | unpriced image tokens per encode batch
--video-fps                                                         |                                        | 1 | all                   | ignored media
--video-timestamp-interval                                          |                                        | 1 | all                   | ignored media
--video-ffmpeg-dir                                                  |                                        | 1 | all                   | ignored media
--rpc                                                               |                                        | 1 | all                   | unpriced devices on RPC servers: describe them with --gpu-total/--gpu-free
-lm --load-mode                                                     |                                        | 1 | all                   | priced load_mode
-lzm --lazy-mode                                                    |                                        | 1 | all                   | unpriced tensors read from disk on demand (per-layer embeddings)
--numa                                                              |                                        | 1 | all                   | unpriced NUMA placement of the mapped weights
-dev --device                                                       |                                        | 1 | all                   | priced device
--list-devices                                                      |                                        | 0 | all                   | ignored info
-ot --override-tensor                                               |                                        | 1 | all                   | priced override_tensor
-cmoe --cpu-moe                                                     |                                        | 0 | all                   | priced cpu_moe
-ncmoe --n-cpu-moe                                                  |                                        | 1 | all                   | priced n_cpu_moe
-ncffn --n-cpu-ffn                                                  |                                        | 1 | all                   | priced n_cpu_ffn
-ngl --gpu-layers --n-gpu-layers                                    |                                        | 1 | all                   | priced gpu_layers
-sm --split-mode                                                    |                                        | 1 | all                   | priced split_mode
-ts --tensor-split                                                  |                                        | 1 | all                   | priced tensor_split
-mg --main-gpu                                                      |                                        | 1 | all                   | priced main_gpu
-fit --fit                                                          |                                        | 1 | all                   | priced fit
-fitt --fit-target                                                  |                                        | 1 | all                   | priced fit_target
-fitc --fit-ctx                                                     |                                        | 1 | all                   | priced fit_ctx
--check-tensors                                                     |                                        | 0 | all                   | ignored load
--override-kv                                                       |                                        | 1 | all                   | unpriced changed model metadata
--op-offload                                                        | --no-op-offload                        | 0 | all                   | priced op_offload
--lora                                                              |                                        | 1 | all                   | unpriced LoRA adapter weights
--lora-scaled                                                       |                                        | 1 | all                   | unpriced LoRA adapter weights
--control-vector                                                    |                                        | 1 | all                   | unpriced control vectors
--control-vector-scaled                                             |                                        | 1 | all                   | unpriced control vectors
--control-vector-layer-range                                        |                                        | 2 | all                   | unpriced control vectors
-a --alias                                                          |                                        | 1 | server                | ignored server
--tags                                                              |                                        | 1 | server                | ignored server
-m --model                                                          |                                        | 1 | all                   | priced model
-mu --model-url                                                     |                                        | 1 | all                   | priced model_url
-dr --docker-repo                                                   |                                        | 1 | all                   | unpriced a model from Docker Hub: give -m FILE
-hf -hfr --hf-repo                                                  |                                        | 1 | all                   | priced hf_repo
-hff --hf-file                                                      |                                        | 1 | all                   | priced hf_file
-hft --hf-token                                                     |                                        | 1 | all                   | ignored download
-o --output --output-file                                           |                                        | 1 | cli                   | ignored output
--embd-normalize                                                    |                                        | 1 | server                | ignored server
--host                                                              |                                        | 1 | server                | ignored server
--port                                                              |                                        | 1 | server                | ignored server
--reuse-port                                                        |                                        | 0 | server                | ignored server
--path                                                              |                                        | 1 | server                | ignored server
--cors-origins                                                      |                                        | 1 | server                | ignored server
--cors-methods                                                      |                                        | 1 | server                | ignored server
--cors-headers                                                      |                                        | 1 | server                | ignored server
--cors-credentials                                                  | --no-cors-credentials                  | 0 | server                | ignored server
--api-prefix                                                        |                                        | 1 | server                | ignored server
--ui-config --webui-config                                          |                                        | 1 | server                | ignored server
--ui-config-file --webui-config-file                                |                                        | 1 | server                | ignored server
--ui-mcp-proxy --webui-mcp-proxy                                    | --no-ui-mcp-proxy --no-webui-mcp-proxy | 0 | server                | ignored server
--tools                                                             |                                        | 1 | server                | ignored server
--tools-runtime                                                     |                                        | 1 | server                | ignored server
--mcp-servers-config                                                |                                        | 1 | server                | ignored server
--mcp-servers-json                                                  |                                        | 1 | server                | ignored server
-ag --agent                                                         | -no-ag --no-agent                      | 0 | server                | ignored server
--ui --webui                                                        | --no-ui --no-webui                     | 0 | server                | ignored server
--embedding --embeddings                                            |                                        | 0 | server                | unpriced embedding outputs
--rerank --reranking                                                |                                        | 0 | server                | unpriced reranking outputs
--api-key                                                           |                                        | 1 | server                | ignored server
--api-key-file                                                      |                                        | 1 | server                | ignored server
--ssl-key-file                                                      |                                        | 1 | server                | ignored server
--ssl-cert-file                                                     |                                        | 1 | server                | ignored server
--chat-template-kwargs                                              |                                        | 1 | cli+server            | ignored chat
-to --timeout                                                       |                                        | 1 | server                | ignored server
--sse-ping-interval                                                 |                                        | 1 | server                | ignored server
--threads-http                                                      |                                        | 1 | server                | ignored server
--cache-prompt                                                      | --no-cache-prompt                      | 0 | server                | ignored server
--cache-reuse                                                       |                                        | 1 | server                | unpriced prompt-cache reuse by shifting
--metrics                                                           |                                        | 0 | server                | ignored server
--props                                                             |                                        | 0 | server                | ignored server
--slots                                                             | --no-slots                             | 0 | server                | ignored server
--slot-save-path                                                    |                                        | 1 | server                | ignored server
--media-path                                                        |                                        | 1 | server                | ignored server
--models-dir                                                        |                                        | 1 | server                | unpriced the router's models
--models-preset                                                     |                                        | 1 | server                | unpriced the router's models
--models-max                                                        |                                        | 1 | server                | unpriced the router's models
--models-autoload                                                   | --no-models-autoload                   | 0 | server                | unpriced the router's models
--jinja                                                             | --no-jinja                             | 0 | cli+completion+server | ignored chat
--reasoning-format                                                  |                                        | 1 | cli+completion+server | ignored chat
-rea --reasoning                                                    |                                        | 1 | cli+completion+server | ignored chat
--reasoning-effort                                                  |                                        | 1 | cli+completion+server | ignored chat
--reasoning-budget                                                  |                                        | 1 | cli+completion+server | ignored chat
--reasoning-budget-message                                          |                                        | 1 | cli+completion+server | ignored chat
--reasoning-preserve                                                | --no-reasoning-preserve                | 0 | cli+completion+server | ignored chat
--chat-template                                                     |                                        | 1 | cli+completion+server | ignored chat
--chat-template-file                                                |                                        | 1 | cli+completion+server | ignored chat
--skip-chat-parsing                                                 | --no-skip-chat-parsing                 | 0 | cli+completion+server | ignored chat
--prefill-assistant                                                 | --no-prefill-assistant                 | 0 | server                | ignored chat
-sps --slot-prompt-similarity                                       |                                        | 1 | server                | ignored server
--lora-init-without-apply                                           |                                        | 0 | server                | ignored server
--sleep-idle-seconds                                                |                                        | 1 | server                | ignored server
--simple-io                                                         |                                        | 0 | cli+completion        | ignored output
--log-disable                                                       |                                        | 0 | all                   | ignored output
--log-file                                                          |                                        | 1 | all                   | ignored output
--log-jsonl                                                         | --no-log-jsonl                         | 0 | all                   | ignored output
--log-prompts-dir                                                   |                                        | 1 | cli+server            | ignored output
--log-colors                                                        |                                        | 1 | all                   | ignored output
-v --verbose --log-verbose                                          |                                        | 0 | all                   | ignored output
--offline                                                           |                                        | 0 | all                   | ignored download
-lv --verbosity --log-verbosity                                     |                                        | 1 | all                   | ignored output
--log-prefix                                                        | --no-log-prefix                        | 0 | all                   | ignored output
--log-timestamps                                                    | --no-log-timestamps                    | 0 | all                   | ignored output
--spec-draft-hf -hfd -hfrd --hf-repo-draft                          |                                        | 1 | cli+server            | unpriced a draft from the Hub: give -md FILE
--spec-draft-threads -td --threads-draft                            |                                        | 1 | cli+server            | ignored affinity
--spec-draft-threads-batch -tbd --threads-batch-draft               |                                        | 1 | cli+server            | ignored affinity
--spec-draft-cpu-mask -Cd --cpu-mask-draft                          |                                        | 1 | cli+server            | ignored affinity
--spec-draft-cpu-range -Crd --cpu-range-draft                       |                                        | 1 | cli+server            | ignored affinity
--spec-draft-cpu-strict --cpu-strict-draft                          |                                        | 1 | cli+server            | ignored affinity
--spec-draft-prio --prio-draft                                      |                                        | 1 | cli+server            | ignored affinity
--spec-draft-poll --poll-draft                                      |                                        | 1 | cli+server            | ignored affinity
--spec-draft-cpu-mask-batch -Cbd --cpu-mask-batch-draft             |                                        | 1 | cli+server            | ignored affinity
--spec-draft-cpu-strict-batch --cpu-strict-batch-draft              |                                        | 1 | cli+server            | ignored affinity
--spec-draft-prio-batch --prio-batch-draft                          |                                        | 1 | cli+server            | ignored affinity
--spec-draft-poll-batch --poll-batch-draft                          |                                        | 1 | cli+server            | ignored affinity
--spec-draft-type-k -ctkd --cache-type-k-draft                      |                                        | 1 | all                   | priced draft_type_k
--spec-draft-type-v -ctvd --cache-type-v-draft                      |                                        | 1 | all                   | priced draft_type_v
--spec-draft-override-tensor -otd --override-tensor-draft           |                                        | 1 | cli+server            | unpriced the draft's tensor overrides
--spec-draft-cpu-moe -cmoed --cpu-moe-draft                         |                                        | 0 | cli+server            | unpriced the draft's experts on the CPU
--spec-draft-n-cpu-moe --spec-draft-ncmoe -ncmoed --n-cpu-moe-draft |                                        | 1 | cli+server            | unpriced the draft's experts on the CPU
--spec-draft-n-max                                                  |                                        | 1 | cli+server            | ignored speculative
--spec-draft-n-min                                                  |                                        | 1 | cli+server            | ignored speculative
--spec-synth-len                                                    |                                        | 1 | cli+server            | ignored speculative
--spec-synth-rates                                                  |                                        | 1 | cli+server            | ignored speculative
--spec-draft-p-split --draft-p-split                                |                                        | 1 | cli+server            | ignored speculative
--spec-draft-p-min --draft-p-min                                    |                                        | 1 | cli+server            | ignored speculative
--spec-draft-backend-sampling                                       | --no-spec-draft-backend-sampling       | 0 | cli+server            | ignored speculative
--spec-draft-device -devd --device-draft                            |                                        | 1 | cli+server            | priced draft_device
--spec-draft-ngl -ngld --gpu-layers-draft --n-gpu-layers-draft      |                                        | 1 | cli+server            | priced draft_gpu_layers
--spec-draft-model -md --model-draft                                |                                        | 1 | cli+server            | priced draft_model
--spec-type                                                         |                                        | 1 | cli+server            | unpriced n-gram speculative decoding state
--spec-ngram-mod-n-min                                              |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-mod-n-max                                              |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-mod-n-match                                            |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-simple-size-n                                          |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-simple-size-m                                          |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-simple-min-hits                                        |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-map-k-size-n                                           |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-map-k-size-m                                           |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-map-k-min-hits                                         |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-map-k4v-size-n                                         |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-map-k4v-size-m                                         |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-map-k4v-min-hits                                       |                                        | 1 | cli+server            | ignored speculative
--draft --draft-n --draft-max                                       |                                        | 1 | cli+server            | ignored speculative
--draft-min --draft-n-min                                           |                                        | 1 | cli+server            | ignored speculative
--spec-ngram-size-n                                                 |                                        | 1 | server                | ignored speculative
--spec-ngram-size-m                                                 |                                        | 1 | server                | ignored speculative
--spec-ngram-min-hits                                               |                                        | 1 | server                | ignored speculative
--embd-gemma-default                                                |                                        | 0 | server                | unpriced a model from the Hub: give -m FILE
--fim-qwen-1.5b-default                                             |                                        | 0 | server                | unpriced a model from the Hub: give -m FILE
--fim-qwen-3b-default                                               |                                        | 0 | server                | unpriced a model from the Hub: give -m FILE
--fim-qwen-7b-default                                               |                                        | 0 | server                | unpriced a model from the Hub: give -m FILE
--fim-qwen-7b-spec                                                  |                                        | 0 | server                | unpriced a model from the Hub: give -m FILE
--fim-qwen-14b-spec                                                 |                                        | 0 | server                | unpriced a model from the Hub: give -m FILE
--fim-qwen-30b-default                                              |                                        | 0 | server                | unpriced a model from the Hub: give -m FILE
--gpt-oss-20b-default                                               |                                        | 0 | cli+server            | unpriced a model from the Hub: give -m FILE
--gpt-oss-120b-default                                              |                                        | 0 | cli+server            | unpriced a model from the Hub: give -m FILE
--vision-gemma-4b-default                                           |                                        | 0 | cli+server            | unpriced a model from the Hub: give -m FILE
--vision-gemma-12b-default                                          |                                        | 0 | cli+server            | unpriced a model from the Hub: give -m FILE
--spec-default                                                      |                                        | 0 | cli+server            | unpriced the default speculative-decoding setup (n-gram state)
"""


def _row(line: str) -> LlamaOption:
    spell, neg, values, programs, effect = (part.strip() for part in line.split("|"))
    kind, _, detail = effect.partition(" ")
    progs = frozenset(Program) if programs == "all" else frozenset(_PROGRAM_WORDS[p] for p in programs.split("+"))
    return LlamaOption(tuple(spell.split()), tuple(neg.split()), int(values), progs, Effect(kind), detail)


OPTIONS: tuple[LlamaOption, ...] = tuple(_row(line) for line in _TABLE.strip().splitlines())
SPELLINGS: Mapping[str, tuple[LlamaOption, bool]] = MappingProxyType({
    **{s: (o, True) for o in OPTIONS for s in o.spellings},
    **{s: (o, False) for o in OPTIONS for s in o.negatives},
})
PRICED: Mapping[str, LlamaOption] = MappingProxyType({o.detail: o for o in OPTIONS if o.effect is Effect.PRICED})

LEGACY: Mapping[str, tuple[str, str]] = MappingProxyType({
    "--no-mmap": ("--load-mode", "none"),
    "--mmap": ("--load-mode", "mmap"),
    "--mlock": ("--load-mode", "mmap+mlock"),
    "-dio": ("--load-mode", "dio"),
    "--direct-io": ("--load-mode", "dio"),
})
"""Rule 5: older spellings and the `-lm` mode each stands for (`--mlock` beside `--no-mmap`: `mlock`)."""
