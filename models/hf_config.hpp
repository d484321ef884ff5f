#pragma once
/// Import of a Hugging Face `config.json` as a TransformerConfig, so any released checkpoint of a
/// supported architecture can be simulated without writing a preset.
///
/// Architectures ("architectures"[0], else "model_type"): LlamaForCausalLM (llama), MistralForCausalLM
/// (mistral), MixtralForCausalLM (mixtral), Qwen2ForCausalLM (qwen2), the MoE architectures and
/// NemotronForCausalLM (nemotron) listed in models/README.md, GPT2LMHeadModel (gpt2), BertModel
/// and BertForMaskedLM (bert; counted as BertModel with its pooler, without task heads).
/// Required fields: the shape (hidden size, layers, heads, vocabulary, and the MLP width and position
/// count where the architecture has no default worth trusting); every other field takes the default of
/// the transformers library's config class. Keys parasim does not use are ignored, as transformers
/// does; a required field that is missing, a field of the wrong type, a size <= 0, or a value that would
/// change the model in a way parasim cannot represent (attention_bias, mlp_bias, relative positions) is
/// an InputError naming the file and the field's JSON pointer.
#include <nlohmann/json.hpp>

#include "common/json_document.hpp"
#include "models/graph.hpp"
#include "models/transformer.hpp"
#include "models/zoo.hpp"

namespace parasim::models {

/// True when the document looks like a Hugging Face config (its root has "architectures" or "model_type").
[[nodiscard]] bool is_hf_config(const nlohmann::json& root);

/// The architectures import understands, in the order they are listed in messages.
[[nodiscard]] const std::vector<std::string>& hf_architectures();

/// Maps the config onto a TransformerConfig (seq_len = max_position_embeddings, batch 1, dtype from
/// "torch_dtype"/"dtype" when given). Throws InputError on any fault.
[[nodiscard]] TransformerConfig transformer_config_from_hf(const JsonDocument& doc);

/// Builds the graph of the config under the options (batch, seq_len, dtype; the CNN options are
/// errors). Throws InputError.
[[nodiscard]] Graph build_hf_model(const JsonDocument& doc, const ModelOptions& options);

}  // namespace parasim::models
